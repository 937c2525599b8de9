// args.h - command-line options for the examples: `--name value`, `--name=value`, `--flag`.
//
//   args::Parser p(argc, argv);                   // throws args::UsageError on a stray word
//   opt.epochs = p.get_int("epochs", opt.epochs, 1, 1000);
//   p.finish();                                    // throws for any option nobody asked for
//
// Every mistake (an unknown option, a missing or malformed value, one out of range) is an
// args::UsageError with a one-line message; main() prints it and exits with status 2.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace args {

struct UsageError : std::runtime_error {
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

class Parser {
 public:
  // `flags` lists the options that take no value, e.g. {"help", "smoke"}.
  Parser(int argc, char** argv, const std::vector<std::string>& flags) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.size() < 3 || a.compare(0, 2, "--") != 0) throw UsageError("unexpected argument '" + a + "'");
      a = a.substr(2);
      std::string value;
      bool has_value = false;
      if (size_t eq = a.find('='); eq != std::string::npos) value = a.substr(eq + 1), a = a.substr(0, eq), has_value = true;
      bool is_flag = std::find(flags.begin(), flags.end(), a) != flags.end();
      if (is_flag && has_value) throw UsageError("--" + a + " takes no value");
      if (!is_flag && !has_value) {
        if (i + 1 >= argc) throw UsageError("--" + a + " needs a value");
        value = argv[++i];
      }
      given_[a] = is_flag ? "1" : value;
    }
  }

  bool flag(const std::string& name) { return take(name) != nullptr; }
  bool given(const std::string& name) const { return given_.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback) {
    const std::string* v = take(name);
    return v ? *v : fallback;
  }
  int64_t get_int(const std::string& name, int64_t fallback, int64_t lo, int64_t hi) {
    return get_number<int64_t>(name, fallback, lo, hi, "an integer", [](const std::string& v, size_t* used) {
      return int64_t(std::stoll(v, used));
    });
  }
  double get_double(const std::string& name, double fallback, double lo, double hi) {
    return get_number<double>(name, fallback, lo, hi, "a number",
                              [](const std::string& v, size_t* used) { return std::stod(v, used); });
  }
  // Throws for the first option that no get/flag call asked for.
  void finish() const {
    for (const auto& [name, value] : given_)
      if (!used_.count(name)) throw UsageError("unknown option --" + name);
  }

 private:
  // The value of --name read whole by `convert` (std::stoll, std::stod) and checked to be in [lo, hi].
  template <class T, class Convert>
  T get_number(const std::string& name, T fallback, T lo, T hi, const char* kind, Convert convert) {
    const std::string* v = take(name);
    if (!v) return fallback;
    size_t used = 0;
    T x = 0;
    try { x = convert(*v, &used); } catch (const std::exception&) { used = 0; }
    if (used != v->size() || used == 0) throw UsageError("--" + name + " needs " + kind + ", got '" + *v + "'");
    if (!(x >= lo && x <= hi))
      throw UsageError("--" + name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + *v);
    return x;
  }
  const std::string* take(const std::string& name) {
    used_[name] = true;
    auto it = given_.find(name);
    return it == given_.end() ? nullptr : &it->second;
  }
  std::map<std::string, std::string> given_;
  std::map<std::string, bool> used_;
};

}  // namespace args
