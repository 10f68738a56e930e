#!/usr/bin/env python3
"""tests/programs_test.py ROOT: every external program that the build, the tests and the scripts run is
listed in scripts/programs.txt, and each listed program comes from a package that scripts/setup installs,
from the minimal system (Debian 12 minbase: packages of priority `required`) or from the starting point
(git, make).

The scan reads CMake files (find_program, execute_process and add_test COMMANDs, `sh -c` strings), the
Makefile's recipes, shell scripts (the first word of every command), Python scripts (their #! line and
literal subprocess argument lists) and C++ (any process launch, which scripts/programs.txt must name
with `@ FILE`). The package half resolves each program on PATH, asks `dpkg -S` which package owns it and
accepts it when that package is one setup lists, one those depend on (at any depth), or part of the
minimal system. Exit 0: all hold; 1: a finding, one line each; 77: not a Debian system (no dpkg-query).
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SKIP = 77

# Shell keywords and builtins: never external programs.
SHELL_WORDS = {
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in",
    "function", "select", "time", "!", "{", "}", "[[", "]]", "[", "test", "echo", "printf", "cd", "set",
    "unset", "export", "local", "declare", "readonly", "return", "exit", "read", "shift", "true", "false",
    "eval", "source", ".", "trap", "wait", "break", "continue", "type", "command", "exec", "builtin",
    "kill", "pwd", "umask", "hash", "getopts", "let", "shopt", "mapfile", "printf", ":", "((", "))",
}
# Words that run the word after them.
PREFIXES = {"exec", "command", "time", "nice", "nohup", "env", "sudo"}


def read_manifest(root):
    programs, launchers = {}, {}
    for n, line in enumerate((root / "scripts/programs.txt").read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] == "@":
            launchers[words[1]] = set(words[2:])
        elif len(words) < 2:
            raise SystemExit(f"scripts/programs.txt:{n}: a line needs a program and a package")
        else:
            programs[words[0]] = words[1]
    return programs, launchers


def setup_packages(root):
    text = (root / "scripts/setup").read_text()
    m = re.search(r"^packages=\((.*?)^\)", text, re.S | re.M)
    if not m:
        raise SystemExit("scripts/setup: no packages=( ... ) list")
    return {w for line in m.group(1).splitlines() for w in line.split("#", 1)[0].split()}


def tracked_files(root):
    """The files git tracks (outside a checkout: every file but build folders)."""
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True)
    if out.returncode == 0 and out.stdout:
        return [root / p for p in out.stdout.decode().split("\0") if p]
    return [Path(d) / f for d, dirs, files in os.walk(root)
            if not any(part == ".git" or part.startswith("build") for part in Path(d).relative_to(root).parts)
            for f in files]


def balanced(text, i):
    """The end of the parenthesised group that opens at text[i] == '('."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j
    return len(text) - 1


def lex(text):
    """The shell text with comments, quoted strings and expansions replaced by placeholders, and the
    texts of the command substitutions ($(...), `...`) found anywhere in it, quotes included."""
    out, inner, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            out.append(" ")
            i += 2
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;("):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "'":
            j = text.find("'", i + 1)
            out.append("''")
            i = n if j < 0 else j + 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 2
                elif text.startswith("$((", j):
                    j = balanced(text, j + 1) + 1
                elif text.startswith("$(", j):
                    k = balanced(text, j + 1)
                    inner.append(text[j + 2:k])
                    j = k + 1
                elif text[j] == "`":
                    k = text.find("`", j + 1)
                    k = n if k < 0 else k
                    inner.append(text[j + 1:k])
                    j = k + 1
                else:
                    j += 1
            out.append('""')
            i = j + 1
        elif text.startswith("$((", i) or text.startswith("((", i):
            out.append("$V")
            i = balanced(text, i + (1 if c == "$" else 0)) + 1
        elif text.startswith("$(", i):
            k = balanced(text, i + 1)
            inner.append(text[i + 2:k])
            out.append("$V")
            i = k + 1
        elif text.startswith("${", i):
            j = text.find("}", i)
            out.append("$V")
            i = n if j < 0 else j + 1
        elif c == "`":
            k = text.find("`", i + 1)
            k = n if k < 0 else k
            inner.append(text[i + 1:k])
            out.append("$V")
            i = k + 1
        else:
            out.append(c)
            i += 1
    return "".join(out), inner


def shell_commands(text, functions=None):
    """The first word of every command in a shell text (a script, a recipe, an `sh -c` string)."""
    if functions is None:
        functions = set(re.findall(r"^\s*([A-Za-z_][\w-]*)\s*\(\)\s*\{", text, re.M))
    # Here-documents are data (a Python program, lines to print): keep only their command line.
    text = re.sub(r"<<-?\s*['\"]?(\w+)['\"]?([^\n]*)\n.*?^\s*\1\s*$", r"\2", text, flags=re.S | re.M)
    text, inner = lex(text)
    found = set()
    for t in inner:
        found |= shell_commands(t, functions)
    text = re.sub(r"\b[A-Za-z_]\w*=\([^)]*\)", "", text)               # array assignments
    text = re.sub(r"^\s*[\w*|.-]+\)", "", text, flags=re.M)            # case labels
    for piece in re.split(r"\|\||&&|[;|&()\n{}!]|\bthen\b|\bdo\b|\belse\b|\bif\b|\bwhile\b", text):
        words = piece.split()
        while words and (re.match(r"^[A-Za-z_]\w*=", words[0]) or words[0] in PREFIXES or words[0].startswith("-")):
            words = words[1:]
        if not words:
            continue
        w = words[0].lstrip("@")
        if w in SHELL_WORDS or w in functions or not re.match(r"^[A-Za-z][\w.+-]*$", w):
            continue
        found.add(w)
    return found


def makefile_recipes(text):
    """The Makefile's recipe lines as shell text, make's $(VAR) and $(function ...) taken out."""
    lines = "\n".join(l[1:] for l in text.splitlines() if l.startswith("\t"))
    while True:
        stripped = re.sub(r"\$\([^()]*\)", "$V", lines)
        if stripped == lines:
            return stripped.replace("$$", "$")
        lines = stripped


def scan(root):
    """program -> places; C++ files that start processes."""
    found, launching, targets = {}, set(), set()

    def add(words, where):
        for w in words:
            found.setdefault(w, set()).add(where)

    for path in tracked_files(root):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("bench/results/", "scenes/", "tests/fuzz/corpus/", "docs/")) or not path.is_file():
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        first = text.split("\n", 1)[0]
        if path.name == "CMakeLists.txt" or path.suffix == ".cmake":
            targets |= set(re.findall(r"add_executable\(\s*([A-Za-z][\w.+-]*)", text))
            add(re.findall(r"find_program\(\s*\w+\s+(?:NAMES\s+)?([A-Za-z][\w.+-]*)", text), rel)
            add(re.findall(r"COMMAND\s+([A-Za-z][\w.+-]*)", text), rel)
            for s in re.findall(r'COMMAND\s+sh\s+-c\s+"((?:[^"\\]|\\.)*)"', text):
                add(shell_commands(re.sub(r"\$\{\w+\}|\$<[^>]*>", "$V", s.replace('\\"', '"'))), rel)
        elif path.name == "Makefile":
            add(shell_commands(makefile_recipes(text)), rel)
        elif re.match(r"#!.*\b(ba)?sh\b", first) or rel == ".ci/run":
            add(shell_commands(text), rel)
            add(re.findall(r"#!\S*env\s+(\S+)", first) or [Path(first[2:].split()[0]).name] if first.startswith("#!") else [], rel)
        elif path.suffix == ".py" or re.match(r"#!.*python", first):
            add(re.findall(r"#!\S*env\s+(\S+)", first), rel)
            add(re.findall(r"subprocess\.\w+\(\s*\[\s*[\"']([A-Za-z][\w.+-]*)[\"']", text), rel)
            add(re.findall(r"shutil\.which\(\s*[\"']([A-Za-z][\w.+-]*)[\"']", text), rel)
        elif path.suffix in (".cpp", ".hpp", ".cu", ".cuh", ".c", ".h"):
            if re.search(r"\b(std::system|popen|execv|execvp|execlp|posix_spawnp?)\s*\(", text):
                launching.add(rel)
    return {p: w for p, w in found.items() if p not in targets}, launching


def dpkg_graph():
    """Installed packages: name -> (priority, essential, dependencies)."""
    out = subprocess.run(["dpkg-query", "-W", "-f",
                          "${db:Status-Abbrev}\t${Package}\t${Priority}\t${Essential}\t${Pre-Depends}, ${Depends}\n"],
                         capture_output=True, text=True, check=True).stdout
    graph = {}
    for line in out.splitlines():
        status, name, priority, essential, deps = (line.split("\t") + [""] * 5)[:5]
        if not status.startswith("ii"):
            continue
        names = {re.split(r"[\s:(]", alt.strip())[0] for d in deps.split(",") for alt in d.split("|") if alt.strip()}
        graph[name] = (priority, essential == "yes", names)
    return graph


def closure(graph, start):
    seen, todo = set(), [p for p in start if p in graph]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(d for d in graph[p][2] if d in graph and d not in seen)
    return seen


# Where a fresh Debian finds programs: what /usr/local or a user's own PATH adds does not count.
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def owners(programs):
    """program -> the packages that own it on the system's PATH (links followed), None when not found."""
    paths, result = {}, {}
    for prog in programs:
        found = shutil.which(prog, path=SYSTEM_PATH)
        if not found:
            result[prog] = None
            continue
        cands = []
        for p in (found, os.path.realpath(found)):
            cands += [p, re.sub(r"^/usr/", "/", p), p if p.startswith("/usr/") else "/usr" + p]
        paths[prog] = list(dict.fromkeys(cands))
    owned = {}
    every = sorted({c for cands in paths.values() for c in cands})
    out = subprocess.run(["dpkg", "-S", *every], capture_output=True, text=True).stdout if every else ""
    for line in out.splitlines():
        if line.startswith("diversion"):
            continue
        pkgs, _, path = line.partition(": ")
        owned.setdefault(path.strip(), set()).update(p.strip().split(":")[0] for p in pkgs.split(","))
    for prog, cands in paths.items():
        result[prog] = next((owned[c] for c in cands if c in owned), set())
    return result


def check(root):
    """The findings for the tree at root, one line each."""
    programs, launchers = read_manifest(root)
    errors = []
    found, launching = scan(root)
    for prog, places in sorted(found.items()):
        if prog not in programs:
            errors.append(f"{prog} (run in {', '.join(sorted(places))}) is not in scripts/programs.txt")
    for rel in sorted(launching):
        if rel not in launchers:
            errors.append(f"{rel} starts processes but scripts/programs.txt has no `@ {rel}` line")
    for rel, progs in launchers.items():
        errors += [f"scripts/programs.txt: `@ {rel}` runs {p}, which has no line of its own"
                   for p in sorted(progs - programs.keys())]

    setup = setup_packages(root)
    graph = dpkg_graph()
    installed_by_setup = closure(graph, setup)
    minimal = closure(graph, {p for p, (prio, ess, _) in graph.items() if prio == "required" or ess})
    given = closure(graph, {"git", "make"})
    owner = owners([p for p, pkg in programs.items() if pkg not in ("cuda", "project")])
    for prog, pkg in sorted(programs.items()):
        if pkg in ("cuda", "project"):
            continue
        if pkg not in ("minimal", "given", "optional") and pkg not in setup:
            errors.append(f"{prog}: its package {pkg} is not in scripts/setup's list")
            continue
        own = owner[prog]
        if own is None:
            if pkg != "optional":
                errors.append(f"{prog} is not installed (scripts/programs.txt names {pkg})")
            continue
        if not own:
            errors.append(f"{prog} ({shutil.which(prog, path=SYSTEM_PATH)}) belongs to no Debian package")
            continue
        allowed = {"minimal": minimal, "given": given | minimal, "optional": own}.get(pkg, installed_by_setup)
        if not own & allowed:
            where = {"minimal": "the minimal system", "given": "git or make"}.get(pkg, "what scripts/setup installs")
            errors.append(f"{prog} comes from {', '.join(sorted(own))}, which is not part of {where}")
    return errors, len(programs), len(found), len(setup)


def planted(root):
    """The check fails where it must: a copy of the tree's scripts with a program run without its package,
    a package taken out of setup, and a program claimed for the minimal system that is not in it."""
    import tempfile
    failures = []
    cases = {
        "a new program in a script": ("scripts/new-step", "#!/usr/bin/env bash\nzstd -d x.zst | sort\n", None, "zstd (run in"),
        "a new program in CMake": ("cmake/New.cmake", "execute_process(COMMAND xz -d x.xz)\n", None, "xz (run in"),
        "a package taken out of setup": (None, None, ("  file dpkg-dev", "  dpkg-dev"), "file: its package file is not"),
        "a program that the minimal system lacks": (None, None, ("ps               procps", "ps               minimal"),
                                                    "ps comes from procps, which is not part of the minimal system"),
    }
    for name, (path, text, edit, want) in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            for rel in ("scripts/setup", "scripts/programs.txt"):
                (t / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(root / rel, t / rel)
            if path:
                (t / path).parent.mkdir(parents=True, exist_ok=True)
                (t / path).write_text(text)
            if edit:
                for rel in ("scripts/setup", "scripts/programs.txt"):
                    (t / rel).write_text((t / rel).read_text().replace(*edit))
            errors = check(t)[0]
            if not any(want in e for e in errors):
                failures.append(f"planted: {name}: no finding '{want}' (found: {errors})")
    return failures


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    if not shutil.which("dpkg-query"):
        print("SKIPPED: not a Debian system (no dpkg-query): the check asks dpkg which package owns each program")
        return SKIP
    errors, listed, found, packages = check(root)
    errors += planted(root)
    for e in errors:
        print("programs_test: " + e, file=sys.stderr)
    print(f"programs_test: {listed} programs listed, {found} found in the sources, {packages} packages in "
          f"scripts/setup, 4 planted faults: {'FAILED' if errors else 'every program provided, every fault found'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
