// A suite's command-line options, declared once: each option's names, help, the member of the
// suite's args it sets and how CLI11 checks it. add() registers them on the suite's subcommand;
// command() writes a filled args back as the `sieve bench ...` line that repeats it (what `sieve
// bench all` runs and records), naming the positional argument and then, in the declared order,
// the options whose values differ from a default-constructed Args: the struct's initialisers are
// the one definition of each default. The fields and options every suite shares (--csv, --json;
// the scene suites' scene, --backend and --set) are declared here once.
#pragma once

#include <core/memory.hpp>
#include <report.hpp>
#include <rows.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <concepts>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sieve::bench {

// The args of a suite that renders or traces a scene (trace, render): the scene file, its
// overrides, the backend; and, as every suite's, the result files.
struct scene_suite_args : report::result_files {
  std::string scene;
  std::string backend = "auto";  // auto: the GPU when there is one
  std::vector<std::string> set;  // key=value overrides of the scene file

  // The scene (read) and the result files (written), registered before any work: an output that
  // is the scene is refused.
  void add_files_to(report::output_set& outputs) const {
    outputs.add_input(scene);
    add_to(outputs);
  }
};

// Memory admission, as `sieve render` has it (renderer/core/memory.hpp): a suite estimates the bytes
// it holds at once before it allocates them; more than the machine has available is one error naming
// both (`what` says what needs them), not the OOM killer halfway through.
inline void admit_memory(double bytes, const std::string& what) {
  const std::optional<std::uint64_t> available = render::memory::host_available();
  if (!available || bytes <= static_cast<double>(*available)) return;
  const auto needed = static_cast<std::uint64_t>(std::min(bytes, 1.8e19));
  throw sieve::error(what + " need about " + render::memory::size_text(needed) + " of memory (" +
                     render::memory::size_text(*available) + " available): too large for this machine");
}

// An unsigned option refuses a negative value as a usage error (CLI11 would wrap -1 to 2^64 - 1).
inline std::string non_negative(std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  return first != std::string::npos && s[first] == '-' ? "'" + s + "' is negative (a count or a seed is 0 or more)" : "";
}

template <class Args>
class option_schema {
 public:
  using configure = std::function<void(CLI::Option*)>;  // checks, required, ...

  // The words after the program that name the suite: "bench trace".
  explicit option_schema(std::string subcommand) : subcommand_(std::move(subcommand)) {}

  // The positional argument (a scene file): always written, first.
  option_schema& positional(std::string Args::*member, std::string name, std::string help, configure c = {}) {
    entries_.push_back({[=](CLI::App& cmd, Args& a) { apply(cmd.add_option(name, a.*member, help), c); },
                        [=](std::string& out, const Args& a, const Args&) {
                          if (!(a.*member).empty()) out += " " + report::shell_quote(a.*member);
                        },
                        true});
    return *this;
  }

  // An option taking one value, or a comma-separated list (std::vector members). names: CLI11's
  // "--name,--alias"; the first one is written.
  template <class T>
  option_schema& option(T Args::*member, std::string names, std::string help, configure c = {}) {
    const std::string name = first_name(names);
    entries_.push_back({[=](CLI::App& cmd, Args& a) {
                          CLI::Option* o = cmd.add_option(names, a.*member, help);
                          if constexpr (is_vector<T>::value) o->delimiter(',');
                          if constexpr (std::is_unsigned_v<element_t<T>>) o->check(CLI::Validator(non_negative, "", "non-negative"));
                          apply(o, c);
                        },
                        [=](std::string& out, const Args& a, const Args& d) {
                          if (a.*member == d.*member) return;
                          if constexpr (is_vector<T>::value) {
                            std::string joined;
                            for (const auto& v : a.*member) joined += (joined.empty() ? "" : ",") + text(v);
                            if (!joined.empty()) out += " " + name + " " + report::shell_quote(joined);
                          } else {
                            out += " " + name + " " + report::shell_quote(text(a.*member));
                          }
                        },
                        false});
    return *this;
  }

  // An option given once per value (--set key=value --set ...).
  option_schema& repeated(std::vector<std::string> Args::*member, std::string names, std::string help) {
    const std::string name = first_name(names);
    entries_.push_back({[=](CLI::App& cmd, Args& a) { cmd.add_option(names, a.*member, help); },
                        [=](std::string& out, const Args& a, const Args& d) {
                          if (a.*member == d.*member) return;
                          for (const auto& v : a.*member) out += " " + name + " " + report::shell_quote(v);
                        },
                        false});
    return *this;
  }

  option_schema& flag(bool Args::*member, std::string names, std::string help) {
    const std::string name = first_name(names);
    entries_.push_back({[=](CLI::App& cmd, Args& a) { cmd.add_flag(names, a.*member, help); },
                        [=](std::string& out, const Args& a, const Args& d) {
                          if (a.*member != d.*member) out += a.*member ? " " + name : " " + name + "=false";
                        },
                        false});
    return *this;
  }

  option_schema& backend(std::string Args::*member) {
    return option(member, "--backend", "auto (the GPU when there is one), cpu or cuda",
                  [](CLI::Option* x) { x->check(CLI::IsMember({"auto", "cpu", "cuda"})); });
  }

  // The scene suites' first arguments: the scene file, --backend, --set.
  option_schema& scene()
    requires std::derived_from<Args, scene_suite_args>
  {
    positional(&Args::scene, "scene", "scene file (.toml) or a model alone (.obj, .gltf, .glb, .ply); the measured ones: "
                                      "scenes/procedural/sphere-room.toml, scenes/third-party/sponza/sponza.toml", [](CLI::Option* x) { x->required(); });
    backend(&Args::backend);
    return repeated(&Args::set, "--set", "override a scene key, key=value (repeatable)");
  }

  // --csv and --json (report::result_files).
  option_schema& outputs(std::string json_help = "write the results, machine and command as JSON")
    requires std::derived_from<Args, report::result_files>
  {
    option(static_cast<std::string Args::*>(&report::result_files::csv), "--csv", "write the results as CSV");
    return option(static_cast<std::string Args::*>(&report::result_files::json), "--json", std::move(json_help));
  }

  void add(CLI::App& cmd, Args& a) const {
    for (const auto& e : entries_) e.add(cmd, a);
  }

  // `program` and the subcommand ("sieve bench trace"), then the arguments.
  std::string command(const std::string& program, const Args& a) const {
    const Args defaults{};
    std::string out = program + " " + subcommand_;
    for (const auto& e : entries_)
      if (e.positional) e.write(out, a, defaults);
    for (const auto& e : entries_)
      if (!e.positional) e.write(out, a, defaults);
    return out;
  }

 private:
  struct entry {
    std::function<void(CLI::App&, Args&)> add;
    std::function<void(std::string&, const Args&, const Args&)> write;
    bool positional = false;
  };

  template <class T>
  struct is_vector : std::false_type {
    using element = T;
  };
  template <class T, class A>
  struct is_vector<std::vector<T, A>> : std::true_type {
    using element = T;
  };
  template <class T>
  using element_t = typename is_vector<T>::element;

  static void apply(CLI::Option* o, const configure& c) {
    if (c) c(o);
  }
  static std::string first_name(const std::string& names) { return names.substr(0, names.find(',')); }

  // A value as the parser takes it back exactly.
  template <class T>
  static std::string text(const T& v) {
    if constexpr (std::is_floating_point_v<T>)
      return report::exact_number(v);
    else if constexpr (std::is_arithmetic_v<T>)
      return std::to_string(v);
    else
      return std::string(v);
  }

  std::string subcommand_;
  std::vector<entry> entries_;
};

}  // namespace sieve::bench
