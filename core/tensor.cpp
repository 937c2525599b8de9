#include "tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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
// TensorImpl's inline requires_grad(), not Tensor's (autograd/engine.cpp), so core/ calls
// nothing defined above it; bump_version() reports an undefined tensor.
static void check_inplace(const char* op, const Tensor& t) {
  HEED_CHECK(!(GradMode::enabled() && t.defined() && t.impl()->requires_grad()), op,
             "in-place update of a tensor that requires grad while grad mode is on; "
             "wrap it in heed::NoGradGuard (shape ", t.shape(), ")");
  t.bump_version();
}

// add_, mul_ and the other updates that may be recorded are in autograd/inplace.cpp.
const Tensor& Tensor::zero_() const { return fill_(0); }

const Tensor& Tensor::fill_(real v) const {
  check_inplace("fill_", *this);
  real* p = data();
  parallel_for(numel(), kGrainElementwise, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
  return *this;
}

const Tensor& Tensor::copy_(const Tensor& src) const {
  check_inplace("copy_", *this);
  HEED_CHECK(src.numel() == numel(), "copy_", "shapes ", shape(), " and ", src.shape(),
             " have different numbers of elements");
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

namespace {

// Print dims [d, rank) of the block starting at element `off`, PyTorch's way: entries of the
// last dim separated by ", ", rows by ",\n" and the indent, blocks of rows by a blank line
// more per dim. `edge` > 0 shows only the first and last `edge` entries of each dim.
template <class T>
void print_block(std::ostream& os, const T* p, const Shape& s, const Shape& strides, int d,
                 int64_t off, int64_t edge) {
  const int rank = s.size();
  os << '[';
  const int64_t n = s[d];
  const bool cut = edge > 0 && n > 2 * edge;
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == edge) {
      i = n - edge;  // skip to the last `edge` entries
      os << (d == rank - 1 ? "..., " : "...");
      if (d < rank - 1) {
        os << ',' << std::string(rank - d - 1, '\n') << std::string(d + 1, ' ');
      }
    }
    if (d == rank - 1) os << p[off + i];
    else print_block(os, p, s, strides, d + 1, off + i * strides[d], edge);
    if (i + 1 < n) {
      if (d == rank - 1) os << ", ";
      else os << ',' << std::string(rank - d - 1, '\n') << std::string(d + 1, ' ');
    }
  }
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  os << "Tensor" << t.shape() << (t.dim() >= 2 ? "\n" : " ");
  if (t.dim() == 0) os << t.data()[0];
  else print_block(os, t.data(), t.shape(), contiguous_strides(t.shape()), 0, 0,
                   t.numel() > 1000 ? 3 : 0);
  if (t.requires_grad()) os << " requires_grad";
  return os;
}

std::ostream& operator<<(std::ostream& os, const IndexTensor& t) {
  if (!t.defined()) return os << "IndexTensor(undefined)";
  os << "IndexTensor" << t.shape() << (t.dim() >= 2 ? "\n" : " ");
  if (t.dim() == 0) os << t.data()[0];
  else print_block(os, t.data(), t.shape(), contiguous_strides(t.shape()), 0, 0,
                   t.numel() > 1000 ? 3 : 0);
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
