// checkpoint_file.cpp - the byte layout of checkpoint_file.h: writing it atomically, and reading it
// back with every length bounds-checked before anything in the model or optimizer changes.
#include "checkpoint_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include "../autograd/engine/grad_mode.h"
#include "../core/atomic_file.h"
#include "../core/error.h"

namespace heed {

namespace {

constexpr char kMagic[8] = {'H', 'E', 'E', 'D', 'C', 'K', 'P', 'T'};
constexpr size_t kHeaderBytes = 24;  // magic, version, element size, file size
constexpr size_t kChecksumBytes = 8;
using RealBits = std::conditional_t<sizeof(real) == 4, uint32_t, uint64_t>;  // a real's bit pattern
static_assert(sizeof(RealBits) == sizeof(real), "real must be a 4- or 8-byte IEEE type");

// FNV-1a, 64-bit (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/):
//   h = 14695981039346656037;  for each byte b:  h = (h xor b) * 1099511628211  (mod 2^64)
// Both steps are bijections of h, so any one changed byte changes the result. It guards
// against corruption (bit rot, a torn copy), not against deliberate tampering.
uint64_t fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Appends the fields of the layout to a byte buffer.
class Writer {
 public:
  std::vector<uint8_t> bytes;
  void u8(uint8_t v) { bytes.push_back(v); }
  void u32(uint32_t v) { put_le(grow(4), v, 4); }
  void u64(uint64_t v) { put_le(grow(8), v, 8); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void str(const std::string& s) {
    u32(uint32_t(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void tensor(const std::string& name, const Tensor& t) {  // name, rank, dims, data
    str(name);
    u32(uint32_t(t.dim()));
    for (int64_t d : t.shape()) u64(uint64_t(d));
    uint8_t* out = grow(size_t(t.numel()) * sizeof(real));
    const real* x = t.data();
    for (int64_t i = 0; i < t.numel(); ++i) {
      RealBits bits;
      std::memcpy(&bits, &x[i], sizeof(real));
      put_le(out + i * sizeof(real), bits, sizeof(real));
    }
  }

 private:
  uint8_t* grow(size_t n) {
    bytes.resize(bytes.size() + n);
    return bytes.data() + bytes.size() - n;
  }
};

template <class... Parts>
[[noreturn]] void refuse(const std::string& path, const Parts&... parts) {
  fail("load_checkpoint", "'", path, "': ", parts...);
}

// Reads the fields back from [pos, end), refusing any that would run past `end`.
class Reader {
 public:
  Reader(const std::vector<uint8_t>& bytes, size_t pos, size_t end, const std::string& path)
      : p_(bytes.data()), pos_(pos), end_(end), path_(path) {}
  size_t pos() const { return pos_; }
  uint8_t u8(const char* what) { return *take(1, what); }
  uint32_t u32(const char* what) { return uint32_t(get_le(take(4, what), 4)); }
  uint64_t u64(const char* what) { return get_le(take(8, what), 8); }
  int64_t i64(const char* what) {
    const uint64_t v = u64(what);
    int64_t s;
    std::memcpy(&s, &v, 8);
    return s;
  }
  double f64(const char* what) {
    const uint64_t v = u64(what);
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  }
  std::string str(const char* what) {
    const uint32_t n = u32(what);
    const uint8_t* s = take(n, what);
    return std::string(reinterpret_cast<const char*>(s), n);
  }
  // A count of items of at least `min_bytes` each: more than could fit is corrupt.
  uint64_t count(const char* what, uint64_t min_bytes) {
    const uint64_t n = u64(what);
    if (n > (end_ - pos_) / min_bytes)
      refuse(path_, "corrupt: ", what, " ", n, " at byte ", pos_ - 8, " cannot fit in the ", end_ - pos_,
             " bytes that remain");
    return n;
  }
  std::pair<std::string, Tensor> tensor() {
    std::string name = str("a tensor name");
    const uint32_t rank = u32("a tensor rank");
    if (rank > uint32_t(kMaxDims))
      refuse(path_, "corrupt: tensor '", name, "' has rank ", rank, " (at most ", kMaxDims, ")");
    Shape shape;
    const uint64_t room = (end_ - pos_) / sizeof(real);  // elements that could still fit
    uint64_t numel = 1;
    for (uint32_t i = 0; i < rank; ++i) {
      const uint64_t d = u64("a tensor dim");
      if (d > uint64_t(std::numeric_limits<int64_t>::max()) || (d != 0 && numel > room / d))
        refuse(path_, "corrupt: tensor '", name, "' has dim ", i, " of size ", d,
               ", more data than the file holds");
      numel *= d;
      shape.push_back(int64_t(d));
    }
    const uint8_t* in = take(numel * sizeof(real), "tensor data");
    Tensor t = empty(shape);
    real* x = t.data();
    for (uint64_t i = 0; i < numel; ++i) {
      const RealBits bits = RealBits(get_le(in + i * sizeof(real), sizeof(real)));
      std::memcpy(&x[i], &bits, sizeof(real));
    }
    return {std::move(name), t};
  }

 private:
  const uint8_t* take(uint64_t n, const char* what) {
    if (n > end_ - pos_)
      refuse(path_, "corrupt: ", what, " at byte ", pos_, " needs ", n, " bytes but only ", end_ - pos_,
             " remain before the checksum");
    const uint8_t* at = p_ + pos_;
    pos_ += size_t(n);
    return at;
  }
  const uint8_t* p_;
  size_t pos_, end_;
  const std::string& path_;
};

// The model's parameters then buffers, each name once.
NamedTensors model_tensors(const nn::Module& model, const char* op) {
  NamedTensors out = model.named_parameters();
  for (auto& nt : model.named_buffers()) out.push_back(nt);
  std::set<std::string> seen;
  for (const auto& [n, t] : out) {
    HEED_CHECK(seen.insert(n).second, op, "the model has two tensors named '", n, "'");
    HEED_CHECK(t.defined(), op, "the model's tensor '", n, "' is undefined");
  }
  return out;
}

std::string hex(uint64_t v) {
  char s[19];
  std::snprintf(s, sizeof s, "0x%016llx", static_cast<unsigned long long>(v));
  return s;
}

void save(const std::string& path, const nn::Module& model, const optim::Optimizer* opt) {
  Writer w;
  for (char c : kMagic) w.u8(uint8_t(c));
  w.u32(kCheckpointVersion);
  w.u32(uint32_t(sizeof(real)));
  w.u64(0);  // the file size, filled in below
  const NamedTensors tensors = model_tensors(model, "save_checkpoint");
  w.u64(tensors.size());
  for (const auto& [n, t] : tensors) w.tensor(n, t);
  w.u8(opt ? 1 : 0);
  if (opt) {
    w.str(opt->name());
    w.u64(uint64_t(opt->step_count()));
    w.u64(opt->param_groups().size());
    for (const optim::ParamGroup& g : opt->param_groups()) w.f64(g.lr());
    const NamedTensors state = opt->state();
    w.u64(state.size());
    for (const auto& [n, t] : state) w.tensor(n, t);
  }
  put_le(w.bytes.data() + 16, w.bytes.size() + kChecksumBytes, 8);
  w.u64(fnv1a64(w.bytes.data(), w.bytes.size()));

  write_file_atomically("save_checkpoint", path, w.bytes);
}

// The file's bytes, read only after its fixed header checks out, and never more than the
// header declares and the file's size confirms; only a regular file is read (RegularFile).
std::vector<uint8_t> read_file(const std::string& path) {
  const RegularFile f("load_checkpoint", path);
  const size_t size = size_t(f.size());

  // 1. The header, field by field: a short prefix of a checkpoint is "truncated", anything
  //    else that does not start with the magic is "not a heed checkpoint".
  uint8_t h[kHeaderBytes];
  const size_t head = f.read_at(h, std::min(size, kHeaderBytes), 0);
  auto need = [&](size_t n) {
    if (head < n) refuse(path, "truncated: ", size, " bytes, shorter than the ", kHeaderBytes, "-byte header");
  };
  if (head > 0 && std::memcmp(h, kMagic, std::min(head, sizeof kMagic)) != 0)
    refuse(path, "not a heed checkpoint (wrong magic; expected \"HEEDCKPT\")");
  need(12);
  const uint32_t version = uint32_t(get_le(&h[8], 4));
  if (version != kCheckpointVersion)
    refuse(path, "unsupported format version ", version, " (this build reads version ", kCheckpointVersion, ")");
  need(16);
  const uint32_t elem = uint32_t(get_le(&h[12], 4));
  if (elem != sizeof(real))
    refuse(path, "dtype mismatch: saved with ", elem, "-byte elements, but this build of heed uses ",
           sizeof(real), "-byte ", sizeof(real) == 4 ? "float" : "double",
           " (load it with the matching build; heed does not convert)");
  need(kHeaderBytes);
  const uint64_t declared = get_le(&h[16], 8);
  if (size < declared) refuse(path, "truncated: ", size, " of its ", declared, " bytes");
  if (size > declared || declared < kHeaderBytes + kChecksumBytes)
    refuse(path, "corrupt: the header declares ", declared, " bytes but the file has ", size);

  // 2. The whole file, now known to be `declared` bytes: one allocation of that size, and
  //    a file that shrinks or grows meanwhile is refused.
  return f.read_exactly(declared);
}

void load(const std::string& path, nn::Module& model, optim::Optimizer* opt) {
  const std::vector<uint8_t> b = read_file(path);  // its header checked
  const size_t size = b.size();

  // 2. The checksum, over everything before it.
  const size_t end = size - kChecksumBytes;
  const uint64_t stored = get_le(&b[end], 8), computed = fnv1a64(b.data(), end);
  if (stored != computed)
    refuse(path, "checksum mismatch (stored ", hex(stored), ", computed ", hex(computed),
           "): the file is corrupt");

  // 3. The records.
  Reader r(b, kHeaderBytes, end, path);
  NamedTensors saved, state;
  const uint64_t n = r.count("model tensor count", 8);
  for (uint64_t i = 0; i < n; ++i) saved.push_back(r.tensor());
  const uint8_t has_opt = r.u8("optimizer flag");
  if (has_opt > 1) refuse(path, "corrupt: optimizer flag ", int(has_opt), " at byte ", r.pos() - 1);
  std::string opt_name;
  int64_t steps = 0;
  std::vector<double> lrs;
  if (has_opt) {
    opt_name = r.str("optimizer name");
    steps = r.i64("step count");
    const uint64_t groups = r.count("param group count", 8);
    for (uint64_t g = 0; g < groups; ++g) lrs.push_back(r.f64("a learning rate"));
    const uint64_t m = r.count("optimizer state count", 8);
    for (uint64_t i = 0; i < m; ++i) state.push_back(r.tensor());
  }
  if (r.pos() != end) refuse(path, "corrupt: ", end - r.pos(), " unread bytes before the checksum");

  // 4. Against the model: every tensor once, each with its shape.
  const NamedTensors in_model = model_tensors(model, "load_checkpoint");
  std::map<std::string, Tensor> ours(in_model.begin(), in_model.end());
  std::set<std::string> seen;
  for (const auto& [name, t] : saved) {
    const auto it = ours.find(name);
    if (it == ours.end())
      refuse(path, "unexpected tensor '", name, "' (the model has no parameter or buffer of that name)");
    if (!seen.insert(name).second) refuse(path, "corrupt: tensor '", name, "' appears twice");
    if (t.shape() != it->second.shape())
      refuse(path, "shape mismatch for '", name, "': ", t.shape(), " in the checkpoint, ", it->second.shape(),
             " in the model");
  }
  for (const auto& [name, t] : in_model)  // in registration order: the first one missing
    if (!seen.count(name)) refuse(path, "missing tensor '", name, "' (the model has it, the checkpoint does not)");

  // 5. Against the optimizer; load_state checks the state and changes nothing if it throws.
  if (opt) {
    if (!has_opt) refuse(path, "it holds no optimizer state (it was saved from the model alone)");
    if (opt_name != opt->name())
      refuse(path, "optimizer type mismatch: it holds ", opt_name, " state, but the optimizer is ", opt->name());
    if (lrs.size() != opt->param_groups().size())
      refuse(path, "it holds ", lrs.size(), " param groups, but the ", opt->name(), " optimizer has ",
             opt->param_groups().size());
    try {
      opt->load_state(state, steps);
    } catch (const Error& e) {
      refuse(path, e.what());
    }
    for (size_t g = 0; g < lrs.size(); ++g) opt->param_groups()[g].set_lr(lrs[g]);
  }
  NoGradGuard no_grad;  // parameters require grad; this copy is not part of any graph
  for (const auto& [name, t] : saved) ours.at(name).copy_(t);
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model) { save(path, model, nullptr); }
void save_checkpoint(const std::string& path, const nn::Module& model, const optim::Optimizer& optimizer) {
  save(path, model, &optimizer);
}
void reseal_checkpoint(std::vector<uint8_t>& b) {
  HEED_CHECK(b.size() >= kHeaderBytes + kChecksumBytes, "reseal_checkpoint", "an image of ",
             b.size(), " bytes is shorter than header and checksum (", kHeaderBytes + kChecksumBytes, ")");
  put_le(&b[16], b.size(), 8);
  put_le(&b[b.size() - kChecksumBytes], fnv1a64(b.data(), b.size() - kChecksumBytes), 8);
}

void load_checkpoint(const std::string& path, nn::Module& model) { load(path, model, nullptr); }
void load_checkpoint(const std::string& path, nn::Module& model, optim::Optimizer& optimizer) {
  load(path, model, &optimizer);
}

}  // namespace heed
