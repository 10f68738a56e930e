// sieve: one command, subcommands per job.
//   sieve render SCENE [options]       render a scene (.toml) or model (.obj, .ply, .gltf, .glb): PNG, EXR, JSON report
//   sieve check SCENE [--set K=V]      load a scene without rendering: what it holds, its warnings
//   sieve bench compaction [options]   the compaction benchmark grid (see --help)
//   sieve bench trace SCENE [options]  rays per second through the BVH
//   sieve bench setup SCENE [options]  the load (MB/s) and the BVH build by phase, per thread count
//   sieve bench sort [options]         GPU radix sort: own onesweep vs CUB
//   sieve bench multisplit [options]   N-way split by bucket id: the library's designs vs CUB, std
//   sieve bench render SCENE [options] the renderer per compaction strategy: compaction's share, per bounce
//   sieve bench all [--quick|--smoke]   every suite of the backends present, then bench/results/<device>/report.md
//   sieve info [--json]                 version, commit, devices, data folder, strategies
//   sieve --version                     version and commit
// Exit status: 0 done; 1 a runtime error (a file, a scene, a strategy that cannot serve, a failed
// check); 2 a usage error (the command line does not parse). Either is one line `sieve: ...` on stderr.
#include "all/all.hpp"
#include <report.hpp>
#include "compaction/suite.hpp"
#include "sort/suite.hpp"
#include "multisplit/suite.hpp"
#include "render/render_bench.hpp"
#include "check.hpp"
#include "mpi.hpp"
#include "render.hpp"
#include "setup/setup.hpp"
#include "trace/trace.hpp"

#include <sieve/compaction.hpp>
#include <sieve/compaction/backend.hpp>
#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/names.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <scene/load.hpp>

#include <algorithm>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <vector>

namespace {

std::string forms_of(const sieve::strategy_info& s, sieve::backend b) {
  std::string out;
  for (std::size_t f = 0; f < sieve::form_count; ++f)
    if (s.takes(b, static_cast<sieve::form>(f)))
      out += (out.empty() ? "" : ", ") + std::string(sieve::to_string(static_cast<sieve::form>(f)));
  return out.empty() ? "-" : out;
}

nlohmann::json forms_json(const sieve::strategy_info& s, sieve::backend b) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t f = 0; f < sieve::form_count; ++f)
    if (s.takes(b, static_cast<sieve::form>(f))) out.push_back(sieve::to_string(static_cast<sieve::form>(f)));
  return out;
}

// `sieve info`: what this build is and what it can run, as text or (--json) one JSON object.
void print_info(bool json) {
  std::string data;
  try {
    data = sieve::report::find_data().scenes.parent_path().string();
  } catch (const std::exception& e) {
    data = std::string("not found: ") + e.what();
  }
  const nlohmann::json machine = sieve::report::machine_info(false);
  if (json) {
    nlohmann::json j = sieve::report::run_info("");
    j.erase("command");
    j.erase("date");
    j["data"] = data;
    j["devices"] = {{"cpu", {{"name", machine["cpu"]}, {"threads", machine["tbb_threads"]}}},
                    {"cuda", {{"available", sieve::cuda::available()}, {"name", sieve::cuda::device_description()}}}};
    j["default_backend"] = sieve::resolve_backend("auto");
    j["strategies"] = nlohmann::json::array();
    for (const auto& s : sieve::compaction_strategies())
      j["strategies"].push_back({{"name", s.name},
                                 {"summary", s.summary},
                                 {"in_this_build", forms_of(s, sieve::backend::cpu) != "-" || forms_of(s, sieve::backend::cuda) != "-"},
                                 {"cpu", forms_json(s, sieve::backend::cpu)},
                                 {"cuda", forms_json(s, sieve::backend::cuda)},
                                 {"stable", s.stable},
                                 {"in_place", s.in_place},
                                 {"out_of_place", s.out_of_place}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << sieve::report::version_line() << "\n"
            << "CPU: " << machine["cpu"].get<std::string>() << ", " << machine["tbb_threads"] << " threads\n"
            << "CUDA: " << sieve::cuda::device_description() << "\n"
            << "default backend (--backend auto): " << sieve::resolve_backend("auto") << "\n"
            << "data (scenes, bench/report.py): " << data << "\n\n";
  // A build without the CUDA backend lists the CUDA-only strategies as absent, not as strategies without forms.
  const bool cuda_built = sieve::cuda::device_description().find("no CUDA backend") == std::string::npos;
  for (const auto& s : sieve::compaction_strategies()) {
    const std::string cpu = forms_of(s, sieve::backend::cpu), cuda = forms_of(s, sieve::backend::cuda);
    if (cpu == "-" && cuda == "-") {
      std::cout << s.name << ": not in this build (CUDA only; built without the CUDA backend): " << s.summary << "\n";
      continue;
    }
    std::cout << s.name << ": " << s.summary << "\n"
              << "    cpu: " << cpu << "\n"
              << "    cuda: " << (cuda_built ? cuda : std::string("- (no CUDA backend in this build)")) << "\n"
              << "    " << (s.stable ? "stable" : "unstable") << ", "
              << (s.in_place && s.out_of_place ? "in place or out of place"
                  : s.in_place                 ? "in place"
                                               : "out of place")
              << "\n";
  }
}

// Under mpirun with several ranks, errors name the rank that hit them.
std::string rank_prefix() {
  const auto& w = sieve::app::mpi::world();
  return w.launched && w.size > 1 ? "rank " + std::to_string(w.rank) + ": " : "";
}

// An error line, written whole in one call: under mpirun, another process's output (mpirun's own
// notice that a rank failed) must not land inside it.
// Control characters (from a scene, a path, a name a user's file gave) are written as \xNN: a
// message never moves the cursor, changes colours or forges another line.
void say(std::string line) {
  line = sieve::report::printable(line) + '\n';
  std::cerr.flush();
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

// A parse error as one line: CLI11's messages may span lines.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// The first word where a subcommand belongs that names none ("sieve frobnicate", "sieve bench
// frobnicate"), as one usage line; empty when every such word names one. CLI11 alone would say
// that a subcommand is required, not which word it did not know.
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = "sieve";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') continue;  // the levels above a leaf take flags only
    const CLI::App* next = nullptr;
    for (const CLI::App* s : at->get_subcommands([](const CLI::App*) { return true; }))
      if (s->get_name() == word) next = s;
    if (!next) {
      std::string names;
      std::vector<std::string> list;
      for (const CLI::App* s : at->get_subcommands([](const CLI::App*) { return true; })) {
        names += (names.empty() ? "" : ", ") + s->get_name();
        list.push_back(s->get_name());
      }
      return "unknown subcommand '" + word + "' of '" + path + "'" + sieve::did_you_mean(word, list) + "; subcommands: " + names;
    }
    if (next->get_subcommands([](const CLI::App*) { return true; }).empty()) return "";  // a leaf: its own arguments follow
    at = next;
    path += " " + word;
  }
  return "";
}

// The options of the subcommands the command line selected, and of those above them (what falls
// through): the names a mistyped flag is compared with.
void option_names(const CLI::App& app, std::vector<std::string>& names) {
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) option_names(*sub, names);
}

// A parse error with a suggestion where a word looks mistyped: an option no selected subcommand
// has ("--stratgy": did you mean --strategy?), or a value outside a list of names ("--queue
// apend": did you mean 'append'?).
std::string with_suggestion(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::string text = one_line(e.what());
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> names;
    option_names(app, names);
    for (int i = 1; i < argc; ++i) {
      std::string word = argv[i];
      if (word.rfind("--", 0) != 0) continue;
      word = word.substr(0, word.find('='));
      if (std::find(names.begin(), names.end(), word) != names.end()) continue;
      if (const std::string hint = sieve::did_you_mean(word, names, ""); !hint.empty()) return text + hint;
    }
    return text;
  }
  // CLI11's IsMember: "--queue: apend not in {pass,index,append}".
  const std::size_t not_in = text.find(" not in {");
  const std::size_t close = text.find('}', not_in);
  if (not_in == std::string::npos || close == std::string::npos) return text;
  const std::size_t start = text.rfind(' ', not_in - 1);
  const std::string value = text.substr(start == std::string::npos ? 0 : start + 1, not_in - (start == std::string::npos ? 0 : start + 1));
  std::vector<std::string> names;
  std::string list = text.substr(not_in + 9, close - not_in - 9);
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    names.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return text + sieve::did_you_mean(value, names);
}

// std::cout's buffer: write(2) on descriptor 1, keeping the first write's failure and its errno, so
// that the reason is the one the write got, however much ran between it and the end (errno itself
// is overwritten by then). What follows a failure is dropped.
class stdout_buffer : public std::streambuf {
 public:
  stdout_buffer() { setp(data_, data_ + sizeof data_); }
  int error() const { return error_; }

 private:
  bool drain() {
    for (const char* p = pbase(); p < pptr() && error_ == 0;) {
      const ssize_t n = ::write(STDOUT_FILENO, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) error_ = n < 0 ? errno : EIO;
      else p += n;
    }
    setp(data_, data_ + sizeof data_);
    return error_ == 0;
  }
  int_type overflow(int_type c) override {
    const bool ok = drain();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return ok ? traits_type::not_eof(c) : traits_type::eof();
  }
  int sync() override { return drain() ? 0 : -1; }

  char data_[1 << 14];
  int error_ = 0;
};

// Never destroyed: std::cout is flushed at exit, after the function-local statics are gone.
stdout_buffer& checked_stdout() {
  static stdout_buffer* const buffer = new stdout_buffer;
  return *buffer;
}

// Runs `command` and then flushes stdout: output that could not be written (a full disk, a closed
// pipe) is an error naming the reason the write got, not a silent success.
template <class F>
int with_stdout_checked(F&& command) {
  const int rc = command();
  std::cout.flush();
  const int err = checked_stdout().error();
  const bool failed = err != 0 || !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return rc;
  say(std::string("sieve: cannot write to standard output") + (err ? std::string(": ") + std::strerror(err) : ""));
  return rc ? rc : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // The command as recorded in reports: `sieve` and the arguments quoted for a POSIX shell, so it
  // runs as printed wherever sieve is on PATH (not the path of the binary that ran it).
  std::string command_line = "sieve";
  for (int i = 1; i < argc; ++i) command_line += " " + sieve::report::shell_quote(argv[i]);
  std::cout.rdbuf(&checked_stdout());  // every write on stdout checked (with_stdout_checked)

  CLI::App app{"sieve: stream compaction on the CPU and GPU, measured in isolation and inside a path tracer"};
  app.option_defaults()->always_capture_default();  // --help shows every default
  app.require_subcommand(1);
  app.set_version_flag("--version", sieve::report::version_line(), "print the version and the commit, then exit");
  bool dry_run = false;
  app.add_flag("--dry-run", dry_run,
               "check the command line (every option and value) and exit 0: nothing is loaded or run "
               "(`sieve check SCENE` loads a scene)");
  auto* render = app.add_subcommand("render", "render a scene with the wavefront path tracer");
  sieve::app::render_args render_args;
  sieve::app::add_render_options(*render, render_args);
  auto* check = app.add_subcommand("check", "load a scene without rendering it: triangles, materials, textures, lights, camera, warnings");
  sieve::app::check_args check_args;
  sieve::app::add_check_options(*check, check_args);
  auto* info = app.add_subcommand("info", "version, commit, devices, the strategies and their capabilities");
  bool info_json = false;
  info->add_flag("--json", info_json, "print one JSON object");
  auto* bench = app.add_subcommand("bench", "run a benchmark suite");
  bench->require_subcommand(1);
  auto* bench_compaction = bench->add_subcommand("compaction", "time the compaction strategies over a grid");
  sieve::bench::compaction_args compaction_args;
  sieve::bench::compaction_options().add(*bench_compaction, compaction_args);
  auto* bench_trace = bench->add_subcommand("trace", "rays per second through the BVH (DFS, BFS), validated against DFS");
  sieve::bench::trace_args trace_args;
  sieve::bench::trace_options().add(*bench_trace, trace_args);
  auto* bench_setup = bench->add_subcommand("setup", "what comes before the first sample: the load (MB/s) and the BVH build by phase, per thread count");
  sieve::bench::setup_args setup_args;
  sieve::bench::setup_options().add(*bench_setup, setup_args);
  auto* bench_sort = bench->add_subcommand("sort", "time the GPU radix sorts: own onesweep vs cub::DeviceRadixSort");
  sieve::bench::sort_args sort_args;
  sieve::bench::sort_options().add(*bench_sort, sort_args);
  auto* bench_multisplit =
      bench->add_subcommand("multisplit", "time the N-way split by bucket id: the library's designs vs CUB and std");
  sieve::bench::multisplit_args multisplit_args;
  sieve::bench::multisplit_options().add(*bench_multisplit, multisplit_args);
  auto* bench_render = bench->add_subcommand("render", "the renderer per compaction strategy: time, Mrays/s, compaction share per bounce");
  sieve::bench::render_bench_args render_bench_args;
  sieve::bench::render_bench_options().add(*bench_render, render_bench_args);
  auto* bench_all =
      bench->add_subcommand("all", "every suite of the backends present, then the report with plots and images");
  sieve::bench::all_args all_args;
  sieve::bench::add_all_options(*bench_all, all_args);

  // --dry-run (and --help) also after the subcommand: what a subcommand does not know goes up.
  for (CLI::App* sub : {render, check, info, bench, bench_compaction, bench_trace, bench_setup, bench_sort, bench_multisplit,
                        bench_render, bench_all})
    sub->fallthrough();
  if (const std::string unknown = unknown_subcommand(app, argc, argv); !unknown.empty()) {
    say("sieve: " + unknown + " (see sieve --help)");
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return with_stdout_checked([&] { return app.exit(e); });
  } catch (const CLI::ParseError& e) {
    say("sieve: " + with_suggestion(app, e, argc, argv) + " (see sieve --help)");
    return 2;
  }
  if (dry_run) {  // what the run would refuse before it loads anything is refused here too, with its exit status
    try {
      if (*render) sieve::app::check_render_args(render_args, true);
      if (*check) sieve::render::check_scene_file(check_args.scene);
    } catch (const sieve::usage_error& e) {
      say("sieve: " + one_line(e.what()) + " (see sieve --help)");
      return 2;
    } catch (const std::exception& e) {
      say("sieve: " + one_line(e.what()));
      return 1;
    }
    return with_stdout_checked([] {
      std::cout << "sieve: --dry-run: the command line is valid; nothing was loaded or run (sieve check SCENE loads a scene)\n";
      return 0;
    });
  }
  return with_stdout_checked([&]() -> int {
    try {
      if (*info) {
        print_info(info_json);
        return 0;
      }
      if (*check) return sieve::app::run_check(check_args);
      if (*render) {
        const sieve::app::mpi::session mpi;  // under mpirun: this process is one rank of the render
        return sieve::app::run_render(render_args, command_line);
      }
      if (*bench_compaction) return sieve::bench::run_compaction_bench(compaction_args, command_line);
      if (*bench_sort) return sieve::bench::run_sort_bench(sort_args, command_line);
      if (*bench_multisplit) return sieve::bench::run_multisplit_bench(multisplit_args, command_line);
      if (*bench_render) return sieve::bench::run_render_bench(render_bench_args, command_line);
      if (*bench_trace) return sieve::bench::run_trace_bench(trace_args, command_line);
      if (*bench_setup) return sieve::bench::run_setup_bench(setup_args, command_line);
      if (*bench_all) return sieve::bench::run_bench_all(all_args, command_line);
    } catch (const sieve::usage_error& e) {
      say("sieve: " + rank_prefix() + one_line(e.what()) + " (see sieve --help)");
      return 2;
    } catch (const std::bad_alloc&) {  // what the memory model (renderer/core/memory.hpp) did not foresee
      say("sieve: " + rank_prefix() + "out of memory");
      return 1;
    } catch (const std::exception& e) {
      say("sieve: " + rank_prefix() + e.what());
      return 1;
    } catch (const sieve::app::mpi::peer_failed&) {  // another rank failed and said why
      return 1;
    }
    return 0;
  });
}
