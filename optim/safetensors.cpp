// safetensors.cpp - the format of safetensors.h: writing it, and reading it back with each of
// the reference's validation rules as a named check. The JSON header is parsed by nlohmann's
// json (Debian's nlohmann-json3-dev), included here only, so heed's headers do not need it.
#include "safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_set>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "../core/atomic_file.h"
#include "../core/error.h"

namespace heed::safetensors {

namespace {

using json = nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100000000;  // the reference's MAX_HEADER_SIZE
// The header's deepest nesting: the object, a tensor's entry, its shape or data_offsets array.
constexpr int kMaxDepth = 3;

// Every dtype the reference defines, with its size in bytes: a file may hold any of them, and
// the layout rules are checked for all; only the four float types convert to heed's real.
const std::map<std::string, uint64_t>& dtype_sizes() {
  static const std::map<std::string, uint64_t> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},   {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"F8_E8M0", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2},  {"BF16", 2},    {"I32", 4},     {"U32", 4},
      {"F32", 4},  {"F64", 8}, {"I64", 8},  {"U64", 8},     {"C64", 8}};
  return sizes;
}

constexpr const char* kRealDtype = sizeof(real) == 4 ? "F32" : "F64";

template <class To, class From>
To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast: sizes differ");
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}

// IEEE 754 binary16 -> float: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Normal numbers
// re-bias the exponent to float's 127; subnormals (exponent 0) are m * 2^-24 exactly; exponent
// 31 is inf (m = 0) or NaN (payload kept).
float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    const float mag = std::ldexp(float(mant), -24);
    return sign ? -mag : mag;
  }
  if (exp == 31) return bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// bfloat16 is the top half of a float32.
float bf16_to_float(uint16_t b) { return bit_cast<float>(uint32_t(b) << 16); }

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
// Returns the offset of the first bad byte, or npos.
size_t first_bad_utf8(const uint8_t* s, size_t n) {
  for (size_t i = 0; i < n;) {
    const uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    const int len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > n) return i;
    uint32_t cp = c & (0xff >> (len + 1));
    for (int k = 1; k < len; ++k) {
      if ((s[i + k] >> 6) != 2) return i;
      cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    const uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::string::npos;
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

template <class... Parts>
[[noreturn]] void refuse(const std::string& what, const Parts&... parts) {
  fail("safetensors", "'", what, "': ", parts...);
}

// One tensor's entry in the header.
struct Info {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
};

// A checked file: its metadata, its tensors sorted by offset, and the start of their data.
struct Layout {
  Metadata metadata;
  std::vector<Info> infos;
  const uint8_t* data;
};

// The header's JSON read as a stream of events (nlohmann's SAX interface), each checked as it
// comes and each tensor's entry kept as it closes: linear in the header's length, and no
// JSON tree is built. (nlohmann's tree parser with a checking callback, the obvious way, is
// quadratic in the number of entries: 20,000 tensors took 113 s to load.)
// `depth` counts the open containers: 1 inside the header object, 2 inside an entry, 3
// inside an entry's shape or data_offsets array; nothing opens deeper (a "JSON bomb" such
// as "[[[[...]]]]" a hundred million deep stops at its fourth bracket).
class HeaderEvents : public json::json_sax_t {
 public:
  explicit HeaderEvents(const std::string& what) : what_(what) {}
  Metadata metadata;
  std::vector<Info> infos;  // in header order

  bool start_object(std::size_t) override { return open("object"); }
  bool start_array(std::size_t) override { return open("array"); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    if (depth_ == 1) {
      entry_ = k;
      in_metadata_ = k == "__metadata__";
      if (!names_.insert(k).second) refuse_("duplicate name: '", k, "' appears twice in the header");
    } else if (depth_ == 2) {
      field_ = k;
      if (!fields_.insert(k).second) refuse_("invalid JSON header: '", entry_, "' has the field '", k, "' twice");
    }
    return true;
  }
  bool string(string_t& s) override { return scalar("string", nullptr, &s); }
  bool number_unsigned(number_unsigned_t v) override { return scalar("number", &v, nullptr); }
  bool number_integer(number_integer_t) override { return scalar("number", nullptr, nullptr); }
  bool number_float(number_float_t, const string_t&) override { return scalar("number", nullptr, nullptr); }
  bool boolean(bool) override { return scalar("boolean", nullptr, nullptr); }
  bool null() override { return scalar("null", nullptr, nullptr); }
  bool binary(binary_t&) override { return scalar("binary", nullptr, nullptr); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    refuse_("invalid JSON header: ", e.what());
  }

 private:
  template <class... Parts>
  [[noreturn]] void refuse_(const Parts&... parts) const {
    refuse(what_, parts...);
  }
  [[noreturn]] void bad_entry(const char* why) const { refuse_("invalid JSON header: tensor '", entry_, "': ", why); }
  [[noreturn]] void bad_field() const {
    if (field_ == "dtype") bad_entry("dtype must be a string");
    if (field_ == "shape") bad_entry("shape must be an array of non-negative integers");
    bad_entry("data_offsets must be an array of two non-negative integers [begin, end]");
  }
  bool known_field() const { return field_ == "dtype" || field_ == "shape" || field_ == "data_offsets"; }

  // An entry, or a value in one, that is not of the format's type; depth as before it opens.
  [[noreturn]] void wrong_type(const char* type) const {
    if (in_metadata_ && depth_ == 1) refuse_("invalid JSON header: __metadata__ must be an object of strings, got ", type);
    if (in_metadata_) refuse_("invalid JSON header: __metadata__ value of '", field_, "' must be a string, got ", type);
    if (depth_ == 1) bad_entry("its entry must be an object with dtype, shape and data_offsets");
    bad_field();
  }

  bool open(const char* type) {
    if (depth_ >= kMaxDepth) refuse_("invalid JSON header: nested deeper than the format's ", kMaxDepth, " levels");
    const bool object = type[0] == 'o';
    if (depth_ == 1 && !object) wrong_type(type);
    if (depth_ == 1) {  // an entry begins
      fields_.clear();
      info_ = Info();
      info_.name = entry_;
    }
    if (depth_ == 2 && (in_metadata_ || (known_field() && (object || field_ == "dtype")))) wrong_type(type);
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (depth_ != 1 || in_metadata_) return true;
    // A tensor's entry ends: every field there, of its type.
    if (!fields_.count("dtype")) bad_entry("dtype must be a string");
    if (!fields_.count("shape")) bad_entry("shape must be an array of non-negative integers");
    if (offsets_ != 2 || !fields_.count("data_offsets")) {
      field_ = "data_offsets";
      bad_field();
    }
    offsets_ = 0;
    infos.push_back(std::move(info_));
    return true;
  }

  bool scalar(const char* type, const uint64_t* u, const std::string* s) {
    if (depth_ <= 1) wrong_type(type);
    if (depth_ == 2 && in_metadata_) {
      if (!s) wrong_type(type);
      metadata[field_] = *s;
    } else if (depth_ == 2 && field_ == "dtype" && s) {
      info_.dtype = *s;
      if (!dtype_sizes().count(*s)) refuse_("invalid JSON header: tensor '", entry_, "' has unknown dtype '", *s, "'");
    } else if (depth_ == 2 && known_field()) {
      wrong_type(type);
    } else if (depth_ == 3 && field_ == "shape") {
      if (!u) bad_field();
      info_.shape.push_back(*u);
    } else if (depth_ == 3 && field_ == "data_offsets") {
      if (!u || offsets_ == 2) bad_field();
      (offsets_++ ? info_.end : info_.begin) = *u;
    }
    return true;  // anything else is a field the format does not define: ignored, as the reference does
  }

  const std::string& what_;
  int depth_ = 0, offsets_ = 0;
  bool in_metadata_ = false;
  std::string entry_, field_;
  Info info_;
  std::unordered_set<std::string> names_;
  std::set<std::string> fields_;
};
class Parser {
 public:
  Parser(const uint8_t* bytes, size_t size, const std::string& what) : b_(bytes), size_(size), what_(what) {}

  // Steps 1-4: every rule checked; the tensors, sorted by offset, and where their bytes are.
  Layout run() const {
    // 1. The header's length, checked against the limit and the file before anything else.
    if (size_ < 8) refuse("header too small: ", size_, " bytes, fewer than the 8-byte header length");
    const uint64_t n = get_le(b_, 8);
    if (n > kMaxHeaderBytes)
      refuse("header too large: it declares ", n, " bytes (the format's limit is ", kMaxHeaderBytes, ")");
    if (n > size_ - 8)
      refuse("invalid header length: it declares ", n, " bytes but only ", size_ - 8, " follow the length");
    const uint8_t* h = b_ + 8;
    // 2. The header's text: UTF-8, an object, valid JSON.
    const size_t bad = first_bad_utf8(h, n);
    if (bad != std::string::npos) refuse("invalid header: not UTF-8 (bad byte at header offset ", bad, ")");
    if (n == 0 || h[0] != '{') refuse("invalid header start: the header must begin with '{'");
    // nlohmann's lexer takes a NUL byte for the end of its input, so a header padded with
    // NULs would pass; the reference's JSON parser refuses it, and so does this check.
    if (const void* nul = std::memchr(h, 0, n))
      refuse("invalid header: a NUL byte at header offset ", static_cast<const uint8_t*>(nul) - h,
             " (the header may be padded with spaces only)");
    HeaderEvents header(what_);
    json::sax_parse(h, h + n, &header);
    // 3. Each entry was checked as it was read (HeaderEvents): the metadata map, or a tensor's
    //    dtype, shape and offsets.
    Layout out{std::move(header.metadata), std::move(header.infos), h + n};
    std::vector<Info>& infos = out.infos;
    // 4. The layout, as the reference's Metadata::validate: sorted by offsets, every tensor
    //    starts where the previous ended, spans exactly its shape's bytes, and the last ends
    //    at the end of the file.
    std::sort(infos.begin(), infos.end(), [](const Info& a, const Info& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    uint64_t start = 0;
    for (const Info& t : infos) {
      if (t.begin != start || t.end < t.begin)
        refuse("invalid offset for tensor '", t.name, "': data_offsets [", t.begin, ", ", t.end, "], but it must begin at ",
               start, " (where the previous tensor ends) and end at or after its begin");
      start = t.end;
      const uint64_t bytes = byte_size(t);
      if (t.end - t.begin != bytes)
        refuse("tensor invalid info for '", t.name, "': dtype ", t.dtype, " shape ", shape_text(t.shape), " is ", bytes,
               " bytes, but its data_offsets [", t.begin, ", ", t.end, "] span ", t.end - t.begin);
    }
    const uint64_t data_bytes = size_ - 8 - n;
    if (start != data_bytes)
      refuse("metadata incomplete buffer: the tensors cover ", start, " bytes of data, but the file has ", data_bytes,
             " after the header");
    return out;
  }

  // 5. A tensor's values, converted to heed's real; `data` is the Layout's.
  Tensor convert(const Info& t, const uint8_t* data) const {
    if (t.dtype != "F32" && t.dtype != "F64" && t.dtype != "F16" && t.dtype != "BF16")
      refuse("tensor '", t.name, "' has dtype ", t.dtype, ", which heed does not load (it loads F32, F64, F16 and BF16)");
    if (t.shape.size() > size_t(kMaxDims))
      refuse("tensor '", t.name, "' has ", t.shape.size(), " dims; heed tensors have at most ", kMaxDims);
    Shape shape;
    for (uint64_t d : t.shape) {
      if (d > uint64_t(std::numeric_limits<int64_t>::max()))
        refuse("tensor '", t.name, "' has a dim of size ", d, ", more than heed can index");
      shape.push_back(int64_t(d));
    }
    Tensor out = empty(shape);
    real* x = out.data();
    const uint8_t* p = data + t.begin;
    const int64_t n = out.numel();
    if (t.dtype == "F32")
      for (int64_t i = 0; i < n; ++i) x[i] = real(bit_cast<float>(uint32_t(get_le(p + 4 * i, 4))));
    else if (t.dtype == "F64")
      for (int64_t i = 0; i < n; ++i) x[i] = real(bit_cast<double>(get_le(p + 8 * i, 8)));
    else if (t.dtype == "F16")
      for (int64_t i = 0; i < n; ++i) x[i] = real(half_to_float(uint16_t(get_le(p + 2 * i, 2))));
    else
      for (int64_t i = 0; i < n; ++i) x[i] = real(bf16_to_float(uint16_t(get_le(p + 2 * i, 2))));
    return out;
  }

 private:
  template <class... Parts>
  [[noreturn]] void refuse(const Parts&... parts) const {
    safetensors::refuse(what_, parts...);
  }

  uint64_t byte_size(const Info& t) const {  // shape product times dtype size, overflow-checked
    uint64_t count = 1;
    for (uint64_t d : t.shape)
      if (d != 0 && count > std::numeric_limits<uint64_t>::max() / d)
        refuse("validation overflow: tensor '", t.name, "' of shape ", shape_text(t.shape), " has more than 2^64 elements");
      else count *= d;
    const uint64_t size = dtype_sizes().at(t.dtype);
    if (count > std::numeric_limits<uint64_t>::max() / size)
      refuse("validation overflow: tensor '", t.name, "' of shape ", shape_text(t.shape), " and dtype ", t.dtype,
             " has more than 2^64 bytes");
    return count * size;
  }

  const uint8_t* b_;
  size_t size_;
  const std::string& what_;
};

}  // namespace

// The header is written as text, entry after entry: linear in the number of tensors.
// (nlohmann's ordered_json object, the obvious way, finds each new key by a linear search,
// quadratic overall.) json's own dump quotes each string, escaping it and refusing one that
// is not UTF-8.
std::vector<uint8_t> serialize(const NamedTensors& tensors, const Metadata& metadata) {
  const char* op = "safetensors::save_file";
  auto quoted = [&](const auto& v) {
    try {
      return json(v).dump();
    } catch (const json::exception& e) {  // a name or metadata that is not UTF-8
      fail(op, "the header cannot be written as JSON: ", e.what());
    }
  };
  std::string text = "{";
  if (!metadata.empty()) text += "\"__metadata__\":" + quoted(metadata);
  std::unordered_set<std::string> names;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    HEED_CHECK(name != "__metadata__", op, "a tensor cannot be named '__metadata__' (the header's metadata key)");
    HEED_CHECK(names.insert(name).second, op, "two tensors are named '", name, "'");
    HEED_CHECK(t.defined(), op, "tensor '", name, "' is undefined");
    std::string shape;
    for (int64_t d : t.shape()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const uint64_t bytes = uint64_t(t.numel()) * sizeof(real);
    text += (text.size() > 1 ? "," : "") + quoted(name) + ":{\"dtype\":\"" + kRealDtype + "\",\"shape\":[" + shape +
            "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  text += "}";
  text.append((8 - text.size() % 8) % 8, ' ');  // the reference pads to 8 bytes
  std::vector<uint8_t> out(8 + text.size() + offset);
  put_le(out.data(), text.size(), 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  uint8_t* p = out.data() + 8 + text.size();
  using Bits = std::conditional_t<sizeof(real) == 4, uint32_t, uint64_t>;
  for (const auto& [name, t] : tensors) {
    const real* x = t.data();
    for (int64_t i = 0; i < t.numel(); ++i, p += sizeof(real)) put_le(p, bit_cast<Bits>(x[i]), sizeof(real));
  }
  return out;
}

Contents deserialize(const uint8_t* bytes, size_t size, const std::string& what) {
  const Parser parser(bytes, size, what);
  const Layout layout = parser.run();
  Contents out{{}, layout.metadata};
  for (const Info& t : layout.infos) out.tensors.emplace_back(t.name, parser.convert(t, layout.data));
  return out;
}

void save_file(const NamedTensors& tensors, const std::string& path, const Metadata& metadata) {
  write_file_atomically("safetensors::save_file", path, serialize(tensors, metadata));
}

Contents load_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_regular_file("safetensors::load_file", path);
  return deserialize(bytes.data(), bytes.size(), path);
}

void save_model(const nn::Module& module, const std::string& path, const Metadata& metadata) {
  save_file(module.state_dict(), path, metadata);
}

// Only the entries the module has are converted: one it does not use goes to load_state_dict
// as an empty placeholder, listed among the unexpected keys (an error with strict), never
// read, so its dtype does not matter (Hugging Face files hold I64 buffers like position_ids).
nn::IncompatibleKeys load_model(nn::Module& module, const std::string& path, bool strict) {
  const std::vector<uint8_t> bytes = read_regular_file("safetensors::load_file", path);
  const Parser parser(bytes.data(), bytes.size(), path);
  const Layout layout = parser.run();
  std::unordered_set<std::string> used;
  for (const auto& [name, t] : module.state_dict()) used.insert(name);
  const Tensor unused = empty({0});
  NamedTensors tensors;
  for (const Info& t : layout.infos)
    tensors.emplace_back(t.name, used.count(t.name) ? parser.convert(t, layout.data) : unused);
  try {
    return module.load_state_dict(tensors, strict);
  } catch (const Error& e) {
    fail("safetensors::load_model", "'", path, "': ", e.what());
  }
}

}  // namespace heed::safetensors
