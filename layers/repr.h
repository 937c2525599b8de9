// repr.h - internal: print values the way Python prints them, so that each layer's
// repr() reads exactly as PyTorch's (1e-05, 0.5, 1.0, True, (3, 4)). Not public API.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace heed::nn::detail {

inline std::string py_bool(bool b) { return b ? "True" : "False"; }

// Python's repr(float): the shortest digits that read back to the same double, in
// fixed notation when the decimal exponent is in [-4, 16), else as 1e-05 / 1.5e+16.
inline std::string py_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[40];
  for (int p = 0; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // buf is "[-]d[.ddd]e[+-]xx": split it into sign, digits and exponent.
  std::string s(buf), sign, digits;
  if (s[0] == '-') { sign = "-"; s.erase(0, 1); }
  const size_t epos = s.find('e');
  const int exp = std::atoi(s.c_str() + epos + 1);
  for (size_t i = 0; i < epos; ++i)
    if (s[i] != '.') digits += s[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (exp < -4 || exp >= 16) {
    std::string m = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char e[16];
    std::snprintf(e, sizeof e, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return sign + m + e;
  }
  if (exp < 0) return sign + "0." + std::string(-exp - 1, '0') + digits;
  if (int(digits.size()) <= exp + 1) return sign + digits + std::string(exp + 1 - digits.size(), '0') + ".0";
  return sign + digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
}

// A Python tuple of ints: (4,) or (3, 4).
inline std::string py_tuple(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

}  // namespace heed::nn::detail
