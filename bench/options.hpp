// A suite's command-line options, declared once: each option's names, help, the member of the
// suite's args it sets and how CLI11 checks it. add() registers them on the suite's subcommand;
// command() writes a filled args back as the `sieve bench ...` line that repeats it (what `sieve
// bench all` runs and records), naming the positional argument and then, in the declared order,
// the options whose values differ from a default-constructed Args: the struct's initialisers are
// the one definition of each default.
#pragma once

#include <report.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace sieve::bench {

template <class Args>
class option_schema {
 public:
  using configure = std::function<void(CLI::Option*)>;  // checks, required, ...

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

  void add(CLI::App& cmd, Args& a) const {
    for (const auto& e : entries_) e.add(cmd, a);
  }

  // `program` and the subcommand ("sieve bench trace"), then the arguments.
  std::string command(const std::string& program, const Args& a) const {
    const Args defaults{};
    std::string out = program;
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
  struct is_vector : std::false_type {};
  template <class T, class A>
  struct is_vector<std::vector<T, A>> : std::true_type {};

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

  std::vector<entry> entries_;
};

}  // namespace sieve::bench
