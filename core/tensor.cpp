#include "tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <ios>
#include <ostream>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "allocator.h"
#include "error.h"
#include "grad_flag.h"
#include "parallel.h"
#include "random.h"

namespace heed {

// ---------------------------------------------------------------- storage

// With the shared_ptr's control block (16 bytes), one 64-byte block of the allocator.
static_assert(sizeof(Storage) <= 48, "Storage outgrew its 64-byte block");

static bool fits_inline(int64_t numel) { return numel * int64_t(sizeof(real)) <= Storage::kInlineBytes; }

Storage::Storage(int64_t n) : data(reinterpret_cast<real*>(inline_)) {
  if (!fits_inline(n)) {
    data = static_cast<real*>(alloc::allocate(static_cast<std::size_t>(n) * sizeof(real)));
    heap_numel = n;
    return;
  }
#if defined(__SANITIZE_ADDRESS__)
  // As the allocator does for a block's slack: a read past the end of an inline buffer is
  // reported (the whole block is poisoned again when it is freed).
  ASAN_POISON_MEMORY_REGION(inline_ + n * sizeof(real), kInlineBytes - n * sizeof(real));
#endif
}

Storage::~Storage() {
  if (data != reinterpret_cast<real*>(inline_) && heap_numel != kBorrowed)
    alloc::deallocate(data, static_cast<std::size_t>(heap_numel) * sizeof(real));
}

// ---------------------------------------------------------------- metadata

void Tensor::fail_undefined() { fail("Tensor", "use of an undefined tensor"); }

int64_t Tensor::size(int64_t d) const { return shape()[wrap_dim("size", d, dim())]; }
int64_t Tensor::numel() const { return shape().numel(); }

real Tensor::item() const {
  HEED_CHECK(numel() == 1, "item", "only a one-element tensor has an item; shape is ", shape());
  return data()[0];
}

real Tensor::at(std::initializer_list<int64_t> index) const {
  HEED_CHECK(static_cast<int>(index.size()) == dim(), "at", "got ", index.size(),
             " indices for a tensor of shape ", shape());
  int64_t off = 0, d = 0;
  for (int64_t i : index) {
    HEED_CHECK(i >= -shape()[d] && i < shape()[d], "at", "index ", i, " out of range for dim ", d,
               " of shape ", shape());
    off = off * shape()[d] + (i < 0 ? i + shape()[d] : i);
    ++d;
  }
  return data()[off];
}

std::vector<real> Tensor::to_vector() const { return {data(), data() + numel()}; }

// ---------------------------------------------------------------- in-place updates

uint64_t Tensor::version() const {
  if (!impl_) fail_undefined();
  return impl_->storage->version.load(std::memory_order_relaxed);
}

void Tensor::bump_version() const {
  if (!impl_) fail_undefined();
  impl_->storage->bump();
}

// Every in-place update starts here: refuses a tensor in a graph being recorded, and bumps
// the version counter (a backward that saved this storage will see the write). It reads
// TensorImpl's inline requires_grad(), not Tensor's (autograd/engine/engine.cpp), so core/ calls
// nothing defined above it; bump_version() reports an undefined tensor.
static void check_inplace(const char* op, const Tensor& t) {
  detail::check_writable(op, t);
  HEED_CHECK(!(GradMode::enabled() && t.defined() && t.impl()->requires_grad()), op,
             "in-place update of a tensor that requires grad while grad mode is on; "
             "wrap it in heed::NoGradGuard (shape ", t.shape(), ")");
  t.bump_version();
}

static std::string view_name(const ViewMark& v) {
  return std::string(v.op) + (v.dim >= 0 ? "(dim " + std::to_string(v.dim) + ")" : "");
}

void detail::check_writable(const char* op, const Tensor& t) {
  if (!t.defined()) return;  // the caller's own check names the op
  const ViewMark& v = t.impl()->view;
  if (!v.op) return;
  HEED_CHECK(v.shares, op, "this tensor is a copy made by ", view_name(v), ", not a view of its "
             "input (heed copies views that are not contiguous blocks); write into the original "
             "with index_put_ or narrow along dim 0, or clone() first to write into the copy");
  HEED_CHECK(!(GradMode::enabled() && t.impl()->requires_grad()), op, "this tensor is a view made by ",
             view_name(v), " sharing its input's storage, and it is in a graph being recorded "
             "(it or its input requires grad, grad mode on); write a parameter's view under "
             "heed::NoGradGuard, or clone() first to write into a copy (shape ", t.shape(), ")");
}

void detail::check_no_overlap(const char* op, const Tensor& out, const Tensor& in, bool any_overlap) {
  if (!out.defined() || !in.defined() || out.impl()->storage != in.impl()->storage) return;
  // every tensor is a contiguous run of its storage: [begin, end) in elements
  const int64_t a0 = out.impl()->offset, a1 = a0 + out.numel();
  const int64_t b0 = in.impl()->offset, b1 = b0 + in.numel();
  if (a0 == a1 || b0 == b1 || a1 <= b0 || b1 <= a0) return;  // nothing shared
  if (!any_overlap && a0 == b0 && a1 == b1) return;           // the same elements
  fail(op, "some elements of the input (shape ", in.shape(), ", storage elements [", b0, ", ",
            b1, ")) and of the written-to tensor (shape ", out.shape(), ", storage elements [", a0,
            ", ", a1, ")) are the same memory; clone() the input first (PyTorch refuses this too)");
}

void detail::mark_view(const Tensor& y, const char* op, int dim, bool shares) {
  y.impl()->view = ViewMark{op, dim, shares};
}

Tensor detail::share_block(const Tensor& x, int64_t offset, const Shape& shape, const char* op, int dim) {
  auto impl = std::allocate_shared<TensorImpl>(CachingAllocator<TensorImpl>());
  impl->storage = x.impl()->storage;
  impl->offset = x.impl()->offset + offset;
  impl->shape = shape;
  impl->view = ViewMark{op, dim, true};
  return Tensor(std::move(impl));
}

void detail::mark_copy(const Tensor& y, const Tensor& x, const char* op, int dim) {
  const ViewMark& xv = x.impl()->view;
  y.impl()->view = xv.op && !xv.shares ? xv : ViewMark{op, dim, false};
}

// add_, mul_ and the other updates that may be recorded are in autograd/ops/inplace.cpp.
static void fill_in_place(const char* op, const Tensor& t, real v) {
  check_inplace(op, t);
  real* p = t.data();
  parallel_for(t.numel(), kGrainElementwise, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
}

const Tensor& Tensor::zero_() const {
  fill_in_place("zero_", *this, 0);
  return *this;
}

const Tensor& Tensor::fill_(real v) const {
  fill_in_place("fill_", *this, v);
  return *this;
}

const Tensor& Tensor::copy_(const Tensor& src) const {
  check_inplace("copy_", *this);
  HEED_CHECK(src.numel() == numel(), "copy_", "shapes ", shape(), " and ", src.shape(),
             " have different numbers of elements");
  detail::check_no_overlap("copy_", *this, src);
  if (src.data() != data()) std::memcpy(data(), src.data(), sizeof(real) * numel());
  return *this;
}

// ---------------------------------------------------------------- factories

// Every factory allocates here; `op` names the factory the user called in errors
// ("zeros: negative size -1 in shape (-1,3) ...").
static Tensor empty_for(const char* op, const Shape& shape) {
  const int64_t n = shape.checked_numel(op);
  auto impl = std::allocate_shared<TensorImpl>(CachingAllocator<TensorImpl>());
  impl->storage = std::allocate_shared<Storage>(CachingAllocator<Storage>(), n);
  impl->shape = shape;
  return Tensor(std::move(impl));
}

static Tensor full_for(const char* op, const Shape& shape, real value) {
  Tensor t = empty_for(op, shape);
  real* p = t.data();
  parallel_for(t.numel(), kGrainElementwise,
               [&](int64_t b, int64_t e) { std::fill(p + b, p + e, value); });
  return t;
}

Tensor empty(const Shape& shape) { return empty_for("empty", shape); }
Tensor full(const Shape& shape, real value) { return full_for("full", shape, value); }
Tensor zeros(const Shape& shape) { return full_for("zeros", shape, 0); }
Tensor ones(const Shape& shape) { return full_for("ones", shape, 1); }
Tensor scalar_tensor(real value) { return full(Shape{}, value); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape()); }
Tensor full_like(const Tensor& t, real value) { return full(t.shape(), value); }
Tensor randn_like(const Tensor& t) { return randn(t.shape()); }
Tensor rand_like(const Tensor& t) { return rand(t.shape()); }

Tensor arange(real end) { return arange(0, end, 1); }

Tensor arange(real start, real end, real step) {
  HEED_CHECK(std::isfinite(double(start)) && std::isfinite(double(end)) && std::isfinite(double(step)),
             "arange", "start, end and step must be finite; got ", start, ", ", end, ", ", step);
  HEED_CHECK(step != 0, "arange", "step must be non-zero");
  HEED_CHECK(start == end || (end > start) == (step > 0), "arange", "end ", end,
             " lies on the wrong side of start ", start, " for step ", step, " (as PyTorch, an error)");
  const double n = std::ceil((double(end) - double(start)) / double(step));  // >= 0 now
  HEED_CHECK(n <= double(kMaxElements), "arange", "(end - start) / step = ", n,
             " elements, more than the ", kMaxElements, " any buffer can hold");
  Tensor t = empty_for("arange", Shape{int64_t(n)});
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(double(start) + i * double(step));
  return t;
}

Tensor randn(const Shape& shape) {
  Tensor t = empty_for("randn", shape);
  Draws d;
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(d.normal());
  return t;
}

Tensor rand(const Shape& shape) {
  Tensor t = empty_for("rand", shape);
  Draws d;
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = real(d.uniform());
  return t;
}

// The ids of randint: floor(low + u (high - low)) for u uniform in [0, 1), kept below high.
static std::vector<int64_t> random_integers(int64_t low, int64_t high, const Shape& shape) {
  HEED_CHECK(low < high, "randint", "random_ expects 'from' to be less than 'to', but got from=", low,
             " >= to=", high);
  std::vector<int64_t> v(size_t(shape.checked_numel("randint")));
  const double range = double(high) - double(low);
  Draws d;
  for (int64_t& x : v) x = std::min(low + int64_t(d.uniform() * range), high - 1);
  return v;
}

IndexTensor randint(int64_t low, int64_t high, const Shape& shape) {
  return IndexTensor(random_integers(low, high, shape), shape);
}
IndexTensor randint(int64_t high, const Shape& shape) { return randint(0, high, shape); }

Tensor randint(int64_t low, int64_t high, const Shape& shape, const TensorOptions& o) {
  detail::check_dtype("randint", o);
  const std::vector<int64_t> ids = random_integers(low, high, shape);
  Tensor t = empty_for("randint", shape);
  for (size_t i = 0; i < ids.size(); ++i) t.data()[i] = real(ids[i]);
  return detail::with_options(t, o);
}
Tensor randint(int64_t high, const Shape& shape, const TensorOptions& o) { return randint(0, high, shape, o); }

Tensor from_vector(const std::vector<real>& values, const Shape& shape) {
  HEED_CHECK(int64_t(values.size()) == shape.checked_numel("from_vector"), "from_vector",
             values.size(), " values do not fill shape ", shape);
  Tensor t = empty_for("from_vector", shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

void detail::check_dtype(const char* op, const TensorOptions& o) {
  static const char* const names[] = {"kFloat", "kDouble", "kLong", "kInt", "kBool"};
  const ScalarType t = o.dtype();
  if (t == ScalarType::Long || t == ScalarType::Int || t == ScalarType::Bool)
    fail(op, "dtype ", names[int(t)], ": a heed Tensor holds real numbers; integer ids are "
         "heed::IndexTensor (IndexTensor::full(shape, id), IndexTensor::from_blob), and masks are 0/1 real tensors");
  const bool is_double = sizeof(real) == sizeof(double);
  HEED_CHECK((t == ScalarType::Double) == is_double, op, "dtype ", names[int(t)], ": this is "
             "heed's ", is_double ? "double library (libheed_f64.a)" : "float library (libheed.a)",
             "; link ", is_double ? "libheed.a for float" : "libheed_f64.a for double");
}

void detail::check_device(const char* op, const Device& d) {
  HEED_CHECK(d.is_cpu(), op, "device ", d.str(), ": heed runs on the CPU only (heed::kCPU)");
}

Tensor Tensor::to(const Device& device) const {
  detail::check_device("to", device);
  return *this;
}

Tensor Tensor::to(ScalarType type) const {
  detail::check_dtype("to", TensorOptions(type));
  return *this;
}

Tensor from_blob(real* data, const Shape& shape, const std::function<void(void*)>& deleter,
                 const TensorOptions& o) {
  shape.checked_numel("from_blob");
  HEED_CHECK(data != nullptr || shape.numel() == 0, "from_blob", "a null pointer for shape ", shape);
  detail::check_dtype("from_blob", o);
  detail::check_device("from_blob", o.device());
  auto impl = std::allocate_shared<TensorImpl>(CachingAllocator<TensorImpl>());
  // the Storage never frees `data`; the shared_ptr's deleter hands it to the caller's
  impl->storage = std::shared_ptr<Storage>(new Storage(data, Storage::Borrowed{}), [deleter](Storage* s) {
    real* p = s->data;
    delete s;
    if (deleter) deleter(p);
  });
  impl->shape = shape;
  Tensor t(std::move(impl));
  if (o.requires_grad()) t.requires_grad_();
  return t;
}

Tensor from_blob(real* data, const Shape& shape, const TensorOptions& o) {
  return from_blob(data, shape, std::function<void(void*)>(), o);
}

// torch::tensor's forms: a number, a list, a list of equal rows.
Tensor tensor(double value, const TensorOptions& o) {
  return detail::with_options(full(Shape(), real(value)), o);
}
IndexTensor detail::id_scalar(int64_t value, const TensorOptions& o) {
  HEED_CHECK(o.dtype() == kLong, "tensor", "an integer (", value, ") makes an id, an IndexTensor of "
             "kLong; for a float scalar write tensor(double(", value, "))");
  check_device("tensor", o.device());
  HEED_CHECK(!o.requires_grad(), "tensor", "ids (an integer scalar) cannot require grad");
  return IndexTensor(std::vector<int64_t>{value}, Shape{});
}
Tensor tensor(std::initializer_list<double> values, const TensorOptions& o) {
  return detail::with_options(from_vector(std::vector<real>(values.begin(), values.end()),
                                          Shape{int64_t(values.size())}), o);
}
Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, const TensorOptions& o) {
  const int64_t n = int64_t(rows.size()), m = n ? int64_t(rows.begin()->size()) : 0;
  std::vector<real> values;
  for (const auto& row : rows) {
    HEED_CHECK(int64_t(row.size()) == m, "tensor", "rows of different lengths (", m, " and ",
               row.size(), ")");
    values.insert(values.end(), row.begin(), row.end());
  }
  return detail::with_options(from_vector(values, {n, m}), o);
}
Tensor tensor(const std::vector<real>& values, const TensorOptions& o) {
  return detail::with_options(from_vector(values, Shape{int64_t(values.size())}), o);
}

// ---------------------------------------------------------------- printing
// libtorch's layout (ATen's Formatting.cpp, at::print), rebuilt from its rules: one format
// (width, notation, scale) per 1-D tensor or per matrix, values printed as doubles.

namespace {

// Restores the stream's flags, precision and fill when the print ends.
class FormatGuard {
 public:
  explicit FormatGuard(std::ostream& os) : os_(os), saved_(nullptr) { saved_.copyfmt(os); }
  ~FormatGuard() { os_.copyfmt(saved_); }

 private:
  std::ostream& os_;
  std::ios saved_;
};

struct Format {
  double scale = 1;  // values are printed divided by it, under a line "scale *"
  int width = 0;
};

// With e(v) = floor(log10 |v|) + 1 (1 for 0), e_max and e_min of the finite values:
//   all whole numbers:  width e_max + 1, default notation (scientific, width 11, past e_max 9)
//   e_max - e_min > 4:  scientific, 4 decimals, width 11 (12 past e99)
//   e_max > 5 or < 0:   fixed, 4 decimals, width 7, divided by scale 10^(e_max - 1)
//   otherwise:          fixed, 4 decimals, width e_max + 6 (7 when e_max is 0)
// As libtorch, e_max starts from the first finite value's magnitude and only a larger
// positive value raises it (a larger negative one does not).
Format choose_format(std::ostream& os, const std::vector<double>& v) {
  const int64_t n = int64_t(v.size());
  bool whole = true;
  for (double z : v)
    if (std::isfinite(z) && z != std::ceil(z)) whole = false;
  int64_t first = 0;
  while (first < n && !std::isfinite(v[first])) ++first;
  double lo = 1, hi = 1;
  if (first < n) {
    lo = hi = std::fabs(v[first]);
    for (int64_t i = first; i < n; ++i) {
      const double z = std::fabs(v[i]);
      if (!std::isfinite(z)) continue;
      if (z < lo) lo = z;
      if (v[i] > hi) hi = z;
    }
    lo = lo != 0 ? std::floor(std::log10(lo)) + 1 : 1;
    hi = hi != 0 ? std::floor(std::log10(hi)) + 1 : 1;
  }
  Format f;
  if (whole) {
    if (hi > 9) {
      f.width = 11;
      os << std::scientific << std::setprecision(4);
    } else {
      f.width = int(hi) + 1;
      os.unsetf(std::ios_base::floatfield);
    }
  } else if (hi - lo > 4) {
    f.width = std::fabs(hi) > 99 || std::fabs(lo) > 99 ? 12 : 11;
    os << std::scientific << std::setprecision(4);
  } else {
    f.width = hi > 5 || hi < 0 ? 7 : hi == 0 ? 7 : int(hi) + 6;
    if (hi > 5 || hi < 0) f.scale = std::pow(10, hi - 1);
    os << std::fixed << std::setprecision(4);
  }
  return f;
}

void print_scale(std::ostream& os, double scale) {
  FormatGuard guard(os);
  os.unsetf(std::ios_base::floatfield);
  os << scale << " *\n";
}

// An (R, C) matrix: rows of `width`-wide values separated by a space, as many columns as fit
// 80 characters; wider rows in blocks headed "Columns a to b" (libtorch's own spacing: the
// header runs into the first row). indent: 1 inside a higher-dimensional tensor.
void print_matrix(std::ostream& os, const double* m, int64_t R, int64_t C, int indent) {
  const Format f = choose_format(os, std::vector<double>(m, m + R * C));
  const std::string pad(indent, ' ');
  os << pad;
  const int64_t per_line = (80 - indent) / (f.width + 1);
  for (int64_t c0 = 0; c0 < C; c0 += per_line) {
    const int64_t c1 = std::min(c0 + per_line, C) - 1;
    if (per_line < C) {
      if (c0 != 0) os << '\n';
      os << "Columns " << c0 + 1 << " to " << c1 + 1 << pad;
    }
    if (f.scale != 1) {
      print_scale(os, f.scale);
      os << pad;
    }
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = c0; c <= c1; ++c) {
        os << std::setw(f.width) << m[r * C + c] / f.scale;
        if (c < c1) {
          os << ' ';
          continue;
        }
        os << '\n';
        if (r != R - 1) os << pad << (f.scale != 1 ? " " : "");
      }
  }
}

// The values, then "[ CPUFloatType{2,3} ]".
void print_libtorch(std::ostream& os, const std::vector<double>& v, const Shape& s, const char* type) {
  FormatGuard guard(os);
  const int rank = s.size();
  if (rank == 0) {
    os.unsetf(std::ios_base::floatfield);
    os << v[0] << '\n';
  } else if (rank == 1 && !v.empty()) {
    const Format f = choose_format(os, v);
    if (f.scale != 1) print_scale(os, f.scale);
    for (double z : v) os << std::setw(f.width) << z / f.scale << '\n';
  } else if (rank == 2 && !v.empty()) {
    print_matrix(os, v.data(), s[0], s[1], 0);
  } else if (!v.empty()) {
    // One matrix per index of the leading dims, the first dim counting fastest (libtorch's
    // order): "(1,1,.,.) = ", "(2,1,.,.) = ", ...
    const int lead = rank - 2;
    const int64_t R = s[rank - 2], C = s[rank - 1];
    const Shape st = contiguous_strides(s);
    std::vector<int64_t> at(lead, 0);
    for (int64_t k = 0; k < int64_t(v.size()) / (R * C); ++k) {
      if (k > 0) {
        os << '\n';
        for (int d = 0; d < lead && ++at[d] == s[d]; ++d) at[d] = 0;
      }
      int64_t off = 0;
      os << '(';
      for (int d = 0; d < lead; ++d) {
        os << at[d] + 1 << ',';
        off += at[d] * st[d];
      }
      os << ".,.) = \n";
      print_matrix(os, v.data() + off, R, C, 1);
    }
  }
  os << "[ " << type << '{';
  for (int d = 0; d < rank; ++d) os << (d ? "," : "") << s[d];
  os << "} ]";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  const real* p = t.data();
  print_libtorch(os, std::vector<double>(p, p + t.numel()), t.shape(),
                 sizeof(real) == sizeof(double) ? "CPUDoubleType" : "CPUFloatType");
  return os;
}

std::ostream& operator<<(std::ostream& os, const IndexTensor& t) {
  if (!t.defined()) return os << "[ Tensor (undefined) ]";
  print_libtorch(os, std::vector<double>(t.data(), t.data() + t.numel()), t.shape(), "CPULongType");
  return os;
}

void detail::fail_item_range(double value, const char* type) {
  fail("item", "the value ", value, " does not fit ", type);
}

// ---------------------------------------------------------------- IndexTensor
// The constructors and check_range; the operations are in index_tensor.cpp.

IndexTensor::IndexTensor(std::vector<int64_t> ids)
    : ids_(std::move(ids)), shape_{int64_t(ids_.size())}, defined_(true) {}

IndexTensor::IndexTensor(std::vector<int64_t> ids, const Shape& shape)
    : ids_(std::move(ids)), shape_(shape), defined_(true) {
  HEED_CHECK(int64_t(ids_.size()) == shape.checked_numel("IndexTensor"), "IndexTensor", ids_.size(),
             " ids do not fill shape ", shape);
}

int64_t IndexTensor::size(int64_t d) const { return shape_[wrap_dim("size", d, dim())]; }

void IndexTensor::check_range(const char* op, int64_t bound) const {
  for (int64_t i = 0; i < numel(); ++i)
    HEED_CHECK(ids_[i] >= 0 && ids_[i] < bound, op, "index ", ids_[i], " at position ", i,
               " is out of range [0, ", bound, ")");
}

}  // namespace heed
