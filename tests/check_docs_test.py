#!/usr/bin/env python3
"""tests/check_docs_test.py SCRIPT: scripts/check-docs on small planted trees. A clean tree passes;
each kind of finding (a word about how the work was organised, in the text or a file's name, a
dead link or anchor, a recorded command from a build folder, naming a machine's folder, holding
a number in exponent form or running no program the project has, a file README.md names that is
not there, a list of model formats that leaves one out) fails with a line naming the file."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = None

CLEAN = {
    "README.md": "# sieve\n\nSee [the docs](docs/cli.md#exit-status) and ![a figure](bench/results/gpu/fig.png).\n"
                 "Links to [the web](https://example.org/issues/12) are not followed.\n",
    "docs/cli.md": "# The command\n\n## Exit status\n\n0 done. [Back](../README.md).\n",
    "bench/results/gpu/fig.png": "png",
    "bench/results/gpu/render.json": json.dumps({"run": {"command": "sieve render scenes/a.toml --json bench/results/gpu/render.json"}}),
    "bench/results/gpu/render.txt": "# command: sieve render scenes/a.toml --n 1048576\n",
}


def run(files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
        return p.returncode, p.stdout


class CheckDocs(unittest.TestCase):
    def test_clean_tree_passes(self):
        rc, out = run(CLEAN)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out, "")

    def planted(self, path, text, expect):
        rc, out = run({**CLEAN, path: text})
        self.assertEqual(rc, 1, f"{path}: nothing found")
        self.assertIn(path, out)
        self.assertIn(expect, out)

    def test_words(self):
        self.planted("docs/cli.md", "# The command\n\n## Exit status\n\nAs issue 14 asked.\n", "issue number")
        self.planted("docs/cli.md", "# The command\n\n## Exit status\n\nMeasured in session 3.\n", "session")
        self.planted("docs/cli.md", "# The command\n\n## Exit status\n\nOn the lent H100.\n", "lent")
        self.planted("bench/results/gpu/a.txt", "with 3 other helpers' builds\n", "helper")
        self.planted("bench/results/gpu/check-session24.txt", "fine\n", "file's name")

    def test_links(self):
        self.planted("docs/cli.md", "# The command\n\n## Exit status\n\n[gone](missing.md)\n", "missing file")
        self.planted("docs/cli.md", "# The command\n\n## Exit status\n\n[x](../README.md#nowhere)\n", "missing anchor")

    def test_recorded_commands(self):
        self.planted("bench/results/gpu/render.json",
                     json.dumps({"run": {"command": "build-r5/renderer/app/sieve render a.toml"}}), "build folder")
        self.planted("bench/results/gpu/render.json",
                     json.dumps({"run": {"command": "sieve render a.toml --json /tmp/a/render.json"}}), "machine's folder")
        self.planted("bench/results/gpu/render.txt", "# command: sieve bench compaction --n 1.04858e+06\n", "exponent")
        self.planted("bench/results/gpu/render.json", json.dumps({"run": {"command": "sort_bench --n 4096"}}),
                     "runs no program")

    def test_readme_names_files_that_are_there(self):
        self.planted("README.md", "# sieve\n\n`sieve render DamagedHelmet.glb` renders it.\n", "not there: DamagedHelmet.glb")
        self.planted("README.md", "# sieve\n\nSee `scenes/gone/gone.toml`.\n", "not there: scenes/gone/gone.toml")
        rc, out = run({**CLEAN, "README.md": "# sieve\n\n`sieve render SCENE.toml`, `sieve check scenes/a.toml`\n",
                       "scenes/a.toml": "name = 'a'\n"})
        self.assertEqual(rc, 0, out)

    def test_model_format_lists(self):
        self.planted("docs/cli.md", "# The command\n\n## Exit status\n\nA model (.obj, .gltf, .glb).\n", "without .ply")
        self.planted("app/render.cpp", 'cmd.add_option("scene", s, "scene (.toml) or model (.obj, .gltf)");\n', "without .ply")
        self.planted("python/sieve/__init__.py", '"""Render a scene file (.toml, .obj, .gltf)."""\n', "without .ply")
        rc, out = run({**CLEAN, "app/render.cpp": '"model (.obj, .ply, .gltf, .glb)"; "box.obj, box.gltf"\n'})
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    SCRIPT = sys.argv.pop(1)
    unittest.main()
