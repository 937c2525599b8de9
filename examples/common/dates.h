// dates.h - the translation task of examples/translate.cpp: human-written dates -> ISO dates.
//
//   "Tuesday, 3 March 2021"  "mar 3 21"  "03.03.2021"  "the 3rd of March, 2021"  ->  "2021-03-03"
//
// Every date from 1950-01-01 to 2049-12-31 (36,525 days) can be written in any of the
// kFormats surface forms below. Two-digit years mean 1950..2049 (yy < 50 -> 20yy). The
// separators decide the field order, so no string means two dates: dots are day-first
// (03.03.21), slashes month-first (3/3/21, US), a 4-digit year first is ISO order.
//
// Splits are disjoint by *day*: the test and validation days are never seen in training in
// any format, so the test measures generalisation to new dates, not memorised strings.
//
// Vocabularies are character level:
//   source  0 = <pad>, then printable ASCII ' '..'~' (ids 1..95)
//   target  0 = <pad>, 1 = <s> (start), 2 = </s> (end), then '0'..'9' and '-'
#pragma once
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace dates {

// ---- calendar ----
struct Date {
  int year, month, day;  // month 1..12, day 1..31
};

// Days since 1970-01-01 (negative before), Howard Hinnant's days_from_civil.
inline int64_t days_from_civil(Date d) {
  int y = d.year - (d.month <= 2);
  int era = (y >= 0 ? y : y - 399) / 400;
  int yoe = y - era * 400;
  int doy = (153 * (d.month + (d.month > 2 ? -3 : 9)) + 2) / 5 + d.day - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return int64_t(era) * 146097 + doe - 719468;
}

inline Date civil_from_days(int64_t z) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int day = int(doy - (153 * mp + 2) / 5 + 1);
  int month = int(mp < 10 ? mp + 3 : mp - 9);
  return {int(yoe + era * 400 + (month <= 2)), month, day};
}

constexpr int kFirstYear = 1950, kLastYear = 2049;
inline int64_t first_day() { return days_from_civil({kFirstYear, 1, 1}); }
inline int64_t num_days() { return days_from_civil({kLastYear + 1, 1, 1}) - first_day(); }

inline std::string iso(Date d) {
  char s[16];
  std::snprintf(s, sizeof s, "%04d-%02d-%02d", d.year, d.month, d.day);
  return s;
}

// ---- surface forms ----
inline const char* month_name(int m) {
  static const char* names[] = {"January", "February", "March",     "April",   "May",      "June",
                                "July",    "August",   "September", "October", "November", "December"};
  return names[m - 1];
}
inline const char* weekday_name(Date d) {  // 1970-01-01 was a Thursday
  static const char* names[] = {"Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"};
  int64_t k = days_from_civil(d) % 7;
  return names[k < 0 ? k + 7 : k];
}
inline std::string lower(std::string s) { for (char& c : s) c = char(std::tolower(c)); return s; }
inline std::string upper(std::string s) { for (char& c : s) c = char(std::toupper(c)); return s; }
inline std::string first3(const std::string& s) { return s.substr(0, 3); }
inline std::string ordinal(int d) {  // 1st 2nd 3rd 4th ... 11th 12th 13th ... 21st 22nd 23rd
  const char* suffix = (d / 10 == 1) ? "th" : d % 10 == 1 ? "st" : d % 10 == 2 ? "nd" : d % 10 == 3 ? "rd" : "th";
  return std::to_string(d) + suffix;
}

// Formatting codes, expanded by format(): d day, dd 2-digit day, o ordinal day (3rd),
// m month, mm 2-digit month, MMMM March, MMM Mar, yyyy 2021, yy 21, WWWW Tuesday, WWW Tue.
// A leading '^' upper-cases the result, '_' lower-cases it.
inline const std::vector<std::string>& formats() {
  static const std::vector<std::string> f = {
      "d MMMM yyyy",       "dd MMMM yyyy",        "d MMM yyyy",         "_MMM d yy",
      "MMMM d, yyyy",      "MMM d, yyyy",         "MMMM o, yyyy",       "the o of MMMM, yyyy",
      "o MMMM yyyy",       "WWWW, d MMMM yyyy",   "WWW, d MMM yyyy",    "WWWW, MMMM d, yyyy",
      "_WWWW d MMMM yyyy", "dd.mm.yyyy",          "d.m.yyyy",           "dd.mm.yy",
      "mm/dd/yyyy",        "m/d/yyyy",            "m/d/yy",             "yyyy-mm-dd",
      "yyyy/mm/dd",        "yyyymmdd",            "dd-mm-yyyy",         "^d MMM yyyy",
      "^MMM d yyyy",       "d. MMMM yyyy",        "MMM. d, yyyy",       "d-MMM-yyyy",
      "^dd-MMM-yy",        "yyyy MMMM d",         "yyyy, MMM d",        "WWWW o MMMM yyyy",
      "WWW dd.mm.yyyy",    "_d MMMM, yyyy",       "_MMMM o yyyy",       "^d MMMM yyyy",
      "yyyy.mm.dd",        "MMMM the o, yyyy",    "WWWW the o of MMMM yyyy", "d/MMM/yyyy",
      "_WWW MMM d yyyy",   "MMM yyyy, d",
  };
  return f;
}

inline std::string format(Date d, const std::string& fmt) {
  auto two = [](int v) { char s[8]; std::snprintf(s, sizeof s, "%02d", v); return std::string(s); };
  std::string out;
  size_t i = fmt[0] == '^' || fmt[0] == '_' ? 1 : 0;
  auto run = [&](char c) { size_t n = 0; while (i + n < fmt.size() && fmt[i + n] == c) ++n; return n; };
  while (i < fmt.size()) {
    char c = fmt[i];
    size_t n = (c == 'd' || c == 'm' || c == 'M' || c == 'y' || c == 'W') ? run(c) : 0;
    if (c == 'o' && (i + 1 >= fmt.size() || fmt[i + 1] == ' ' || fmt[i + 1] == ',')
        && (i == 0 || fmt[i - 1] == ' ')) { out += ordinal(d.day); i += 1; continue; }
    if (c == 'd' && n >= 1 && n <= 2 && (i + n >= fmt.size() || !std::isalpha(fmt[i + n]))) {
      out += n == 2 ? two(d.day) : std::to_string(d.day); i += n; continue;
    }
    if (c == 'm' && n <= 2 && n >= 1) { out += n == 2 ? two(d.month) : std::to_string(d.month); i += n; continue; }
    if (c == 'M' && n == 4) { out += month_name(d.month); i += 4; continue; }
    if (c == 'M' && n == 3) { out += first3(month_name(d.month)); i += 3; continue; }
    if (c == 'y' && n == 4) { out += std::to_string(d.year); i += 4; continue; }
    if (c == 'y' && n == 2) { out += two(d.year % 100); i += 2; continue; }
    if (c == 'W' && n == 4) { out += weekday_name(d); i += 4; continue; }
    if (c == 'W' && n == 3) { out += first3(weekday_name(d)); i += 3; continue; }
    out += c;
    ++i;
  }
  if (fmt[0] == '^') return upper(out);
  if (fmt[0] == '_') return lower(out);
  return out;
}

// ---- vocabularies ----
constexpr int64_t kPad = 0, kStart = 1, kEnd = 2;
constexpr int64_t kSourceVocab = 96;   // <pad> + ' '..'~'
constexpr int64_t kTargetVocab = 14;   // <pad> <s> </s> 0-9 -
constexpr int64_t kTargetLen = 11;     // "YYYY-MM-DD" + </s>
constexpr int64_t kMaxSourceLen = 48;

// The source ids of `text`; throws std::invalid_argument for a character outside ' '..'~'
// or a text longer than kMaxSourceLen (the program turns that into a one-line error).
inline std::vector<int64_t> encode_source(const std::string& text) {
  if (text.empty() || int64_t(text.size()) > kMaxSourceLen)
    throw std::invalid_argument("a date must have 1.." + std::to_string(kMaxSourceLen) + " characters, got " +
                                std::to_string(text.size()));
  std::vector<int64_t> ids;
  for (unsigned char c : text) {
    if (c < ' ' || c > '~') throw std::invalid_argument("character code " + std::to_string(int(c)) +
                                                        " is not printable ASCII");
    ids.push_back(int64_t(c) - ' ' + 1);
  }
  return ids;
}
inline std::vector<int64_t> encode_target(const std::string& iso_text) {  // + </s>
  std::vector<int64_t> ids;
  for (char c : iso_text) ids.push_back(c == '-' ? 13 : 3 + (c - '0'));
  ids.push_back(kEnd);
  return ids;
}
inline std::string target_token(int64_t id) {
  if (id == kPad) return "<pad>";
  if (id == kStart) return "<s>";
  if (id == kEnd) return "</s>";
  return std::string(1, id == 13 ? '-' : char('0' + id - 3));
}
inline std::string decode_target(const std::vector<int64_t>& ids) {  // up to </s>
  std::string s;
  for (int64_t id : ids) { if (id == kEnd) break; s += target_token(id); }
  return s;
}

// ---- the data set ----
struct Example {
  std::string source, target;  // "mar 3 21", "2021-03-03"
};
struct Splits {
  std::vector<Example> train, valid, test;
};

// Deterministic for a seed: the days are shuffled once and cut into test | valid | train;
// each example then draws a random day of its split and a random format.
inline Splits make_splits(uint64_t seed, int64_t n_train, int64_t n_valid, int64_t n_test) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> days(num_days());
  for (int64_t i = 0; i < num_days(); ++i) days[i] = first_day() + i;
  std::shuffle(days.begin(), days.end(), rng);
  const int64_t held = n_valid + n_test;
  if (held >= num_days()) throw std::invalid_argument("too many validation and test dates");
  // Held-out splits take each of their days once (1,000 test dates are 1,000 different
  // days); train draws its days with replacement.
  auto draw = [&](int64_t begin, int64_t end, int64_t n, bool each_once) {
    std::vector<Example> out;
    for (int64_t k = 0; k < n; ++k) {
      int64_t day = each_once ? days[begin + k] : days[begin + int64_t(rng() % uint64_t(end - begin))];
      const std::string& fmt = formats()[rng() % formats().size()];
      Date d = civil_from_days(day);
      out.push_back({format(d, fmt), iso(d)});
    }
    return out;
  };
  Splits s;
  s.test = draw(0, n_test, n_test, true);
  s.valid = draw(n_test, held, n_valid, true);
  s.train = draw(held, num_days(), n_train, false);
  return s;
}

}  // namespace dates
