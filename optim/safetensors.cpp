// safetensors.cpp - the format of safetensors.h: writing it, and reading it back with each of
// the reference's validation rules as a named check. The JSON header is parsed by nlohmann's
// json (Debian's nlohmann-json3-dev), included here only, so heed's headers do not need it.
#include "safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "../core/error.h"
#include "atomic_file.h"

namespace heed::safetensors {

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

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

// One tensor's entry in the header.
struct Info {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
};

class Parser {
 public:
  Parser(const uint8_t* bytes, size_t size, const std::string& what) : b_(bytes), size_(size), what_(what) {}

  Contents run() {
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
    const json header = parse_json(h, n);
    // 3. Each entry: the metadata map, or a tensor's dtype, shape and offsets.
    Contents out;
    std::vector<Info> infos;
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") out.metadata = read_metadata(it.value());
      else infos.push_back(read_info(it.key(), it.value()));
    }
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
    // 5. The values, converted to heed's real.
    const uint8_t* data = h + n;
    for (const Info& t : infos) out.tensors.emplace_back(t.name, convert(t, data + t.begin));
    return out;
  }

 private:
  template <class... Parts>
  [[noreturn]] void refuse(const Parts&... parts) const {
    fail("safetensors", "'", what_, "': ", parts...);
  }

  // nlohmann's parser with a callback that refuses a second tensor of the same name, or a
  // field twice in one entry (a plain parse would keep the last silently), and nesting deeper
  // than the format has before it is built: "[[[[...]]]]" a hundred million deep stops at
  // the fourth bracket. Depths as nlohmann counts them: 0 the header object, 1 its keys and
  // the entries' objects, 2 their fields and the shape and offsets arrays, 3 their numbers.
  json parse_json(const uint8_t* h, uint64_t n) const {
    std::set<std::string> names, fields;
    std::string entry;
    auto check = [&](int depth, json::parse_event_t event, json& parsed) {
      const bool starts = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
      if (starts && depth >= kMaxDepth)
        refuse("invalid JSON header: nested deeper than the format's ", kMaxDepth, " levels");
      if (starts && depth == 1) fields.clear();
      if (event == json::parse_event_t::key && depth == 1) {
        entry = parsed.get<std::string>();
        if (!names.insert(entry).second) refuse("duplicate name: '", entry, "' appears twice in the header");
      }
      if (event == json::parse_event_t::key && depth == 2 && !fields.insert(parsed.get<std::string>()).second)
        refuse("invalid JSON header: '", entry, "' has the field '", parsed.get<std::string>(), "' twice");
      return true;
    };
    try {
      return json::parse(h, h + n, check);
    } catch (const json::exception& e) {
      refuse("invalid JSON header: ", e.what());
    }
  }

  Metadata read_metadata(const json& m) const {
    if (!m.is_object()) refuse("invalid JSON header: __metadata__ must be an object of strings, got ", m.type_name());
    Metadata out;
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (!it.value().is_string())
        refuse("invalid JSON header: __metadata__ value of '", it.key(), "' must be a string, got ", it.value().type_name());
      out[it.key()] = it.value().get<std::string>();
    }
    return out;
  }

  Info read_info(const std::string& name, const json& e) const {
    auto bad = [&](const char* why) { refuse("invalid JSON header: tensor '", name, "': ", why); };
    if (!e.is_object()) bad("its entry must be an object with dtype, shape and data_offsets");
    Info t;
    t.name = name;
    const auto dtype = e.find("dtype"), shape = e.find("shape"), offsets = e.find("data_offsets");
    if (dtype == e.end() || !dtype->is_string()) bad("dtype must be a string");
    t.dtype = dtype->get<std::string>();
    if (!dtype_sizes().count(t.dtype)) refuse("invalid JSON header: tensor '", name, "' has unknown dtype '", t.dtype, "'");
    if (shape == e.end() || !shape->is_array()) bad("shape must be an array of non-negative integers");
    for (const json& d : *shape) {
      if (!d.is_number_unsigned()) bad("shape must be an array of non-negative integers");
      t.shape.push_back(d.get<uint64_t>());
    }
    if (offsets == e.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
      bad("data_offsets must be an array of two non-negative integers [begin, end]");
    t.begin = (*offsets)[0].get<uint64_t>();
    t.end = (*offsets)[1].get<uint64_t>();
    return t;
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

  // Called after the layout checks: the tensor's bytes are within the file.
  Tensor convert(const Info& t, const uint8_t* p) const {
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

  const uint8_t* b_;
  size_t size_;
  const std::string& what_;
};

}  // namespace

std::vector<uint8_t> serialize(const NamedTensors& tensors, const Metadata& metadata) {
  const char* op = "safetensors::save_file";
  ordered_json header = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json m = ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = m;
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    HEED_CHECK(name != "__metadata__", op, "a tensor cannot be named '__metadata__' (the header's metadata key)");
    HEED_CHECK(names.insert(name).second, op, "two tensors are named '", name, "'");
    HEED_CHECK(t.defined(), op, "tensor '", name, "' is undefined");
    ordered_json e = ordered_json::object();
    e["dtype"] = kRealDtype;
    e["shape"] = ordered_json::array();
    for (int64_t d : t.shape()) e["shape"].push_back(d);
    const uint64_t bytes = uint64_t(t.numel()) * sizeof(real);
    e["data_offsets"] = {offset, offset + bytes};
    offset += bytes;
    header[name] = e;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const ordered_json::exception& e) {  // a name or metadata that is not UTF-8
    fail(op, "the header cannot be written as JSON: ", e.what());
  }
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
  return Parser(bytes, size, what).run();
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

nn::IncompatibleKeys load_model(nn::Module& module, const std::string& path, bool strict) {
  const Contents c = load_file(path);
  try {
    return module.load_state_dict(c.tensors, strict);
  } catch (const Error& e) {
    fail("safetensors::load_model", "'", path, "': ", e.what());
  }
}

}  // namespace heed::safetensors
