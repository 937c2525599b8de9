// golden.h - read PyTorch golden files (tests/golden/*.bin) and check heed against them.
//
// The files are written by tests/golden/golden.py (the format is documented there):
// named cases, each an ordered list of named float64 arrays. A case made by
// GoldenWriter.case holds
//   <input>...      the inputs, float32 values stored as float64
//   out             torch's output, computed in float64
//   dy              a fixed random upstream gradient
//   grad_<input>    d sum(out * dy) / d input, computed in float64
// and one call checks heed against all of it:
//
//   const heed::golden::File f("tests/golden/core.bin");   // paths are relative to the
//   heed::golden::check_case(f, "softmax_dim0", {"x"},      // repo root, where tests run
//       [](const std::vector<Tensor>& in) { return heed::softmax(in[0], 0); });
//
// Header-only: the Makefile compiles only tests/main.cpp and tests/test_*.cpp.
// Every length field in a file is bounds-checked; a missing, truncated or malformed file,
// and an unknown case or array name, is a heed::Error naming the file.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <heed/autograd/engine/gradcheck.h>
#include <heed/core/error.h>
#include <heed/core/tensor.h>

namespace heed::golden {

struct Array {
  std::string name;
  Shape shape;
  std::vector<double> data;  // row-major, shape.numel() values
};

struct Case {
  std::string name;
  std::vector<Array> arrays;  // in file order
};

namespace detail {

// A cursor over the file's bytes: every read checks that the bytes are there, and
// decodes little-endian explicitly (so the reader does not depend on the host's order).
class Cursor {
 public:
  Cursor(const std::string& path, const std::string& bytes) : path_(path), bytes_(bytes) {}

  size_t left() const { return bytes_.size() - pos_; }

  const unsigned char* take(size_t n, const std::string& what) {
    if (n > left())
      fail("golden", path_, ": truncated at byte ", pos_, " reading ", what, " (need ", n,
           " bytes, ", left(), " left)");
    const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes_.data()) + pos_;
    pos_ += n;
    return p;
  }
  uint64_t le(int nbytes, const std::string& what) {
    const unsigned char* p = take(nbytes, what);
    uint64_t v = 0;
    for (int i = nbytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  uint32_t u32(const std::string& what) { return static_cast<uint32_t>(le(4, what)); }
  int64_t i64(const std::string& what) { return static_cast<int64_t>(le(8, what)); }
  double f64(const std::string& what) {
    const uint64_t bits = le(8, what);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::string str(const std::string& what) {  // uint32 length, then that many bytes
    const uint32_t n = u32(what + " length");
    return std::string(reinterpret_cast<const char*>(take(n, what)), n);
  }

 private:
  const std::string& path_;
  const std::string& bytes_;
  size_t pos_ = 0;
};

inline Array read_array(Cursor& in, const std::string& path, const std::string& where) {
  Array a;
  a.name = in.str(where + " array name");
  const std::string what = where + " array '" + a.name + "'";
  const uint32_t rank = in.u32(what + " rank");
  if (rank > uint32_t(kMaxDims))
    fail("golden", path, ": ", what, " has rank ", rank, " (heed supports ", kMaxDims, ")");
  for (uint32_t d = 0; d < rank; ++d) {
    const int64_t n = in.i64(what + " dims");
    if (n < 0) fail("golden", path, ": ", what, " has negative size ", n, " in dim ", d);
    a.shape.push_back(n);
  }
  // numel * 8 must fit in the bytes left: checked dim by dim, so corrupt dims can neither
  // overflow numel nor ask for a huge allocation (any 0 dim makes the array empty).
  const uint64_t max_numel = in.left() / 8;
  uint64_t numel = 1;
  for (int64_t n : a.shape) numel = n == 0 ? 0 : numel;
  for (int64_t n : a.shape) {
    if (numel != 0 && numel > max_numel / uint64_t(n))
      fail("golden", path, ": truncated: ", what, " of shape ", a.shape, " needs more than the ",
           in.left(), " bytes left");
    numel *= uint64_t(n);
  }
  a.data.resize(numel);
  for (uint64_t i = 0; i < numel; ++i) a.data[i] = in.f64(what + " data");
  return a;
}

}  // namespace detail

class File {
 public:
  explicit File(const std::string& path) : path_(path) {
    std::ifstream file(path, std::ios::binary);
    if (!file)
      fail("golden", path, ": cannot open (tests run from the repo root; regenerate with "
           "`make goldens`)");
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (file.bad()) fail("golden", path, ": read error");

    detail::Cursor in(path_, bytes);
    const unsigned char* magic = in.take(8, "the magic");
    if (std::memcmp(magic, "HEEDGLD1", 8) != 0)
      fail("golden", path, ": wrong magic (not a heed golden file, or another version)");
    const uint32_t count = in.u32("the case count");
    for (uint32_t c = 0; c < count; ++c) {  // no reserve: `count` is not trusted
      Case k;
      k.name = in.str("case " + std::to_string(c) + " name");
      if (find_case(k.name)) fail("golden", path, ": duplicate case '", k.name, "'");
      const std::string where = "case '" + k.name + "'";
      const uint32_t narrays = in.u32(where + " array count");
      for (uint32_t i = 0; i < narrays; ++i) {
        Array a = detail::read_array(in, path_, where);
        for (const Array& b : k.arrays)
          if (b.name == a.name) fail("golden", path, ": ", where, " has two arrays '", a.name, "'");
        k.arrays.push_back(std::move(a));
      }
      cases_.push_back(std::move(k));
    }
    if (in.left() != 0) fail("golden", path, ": ", in.left(), " trailing bytes after the last case");
  }

  const std::string& path() const { return path_; }
  bool has(const std::string& case_name) const { return find_case(case_name) != nullptr; }
  bool has(const std::string& case_name, const std::string& array) const {
    const Case* k = find_case(case_name);
    return k && find_array(*k, array);
  }
  std::vector<std::string> cases() const {
    std::vector<std::string> names;
    for (const Case& k : cases_) names.push_back(k.name);
    return names;
  }
  std::vector<std::string> arrays(const std::string& case_name) const {
    std::vector<std::string> names;
    for (const Array& a : get(case_name).arrays) names.push_back(a.name);
    return names;
  }
  const Array& array(const std::string& case_name, const std::string& array) const {
    const Case& k = get(case_name);
    const Array* a = find_array(k, array);
    if (!a) fail("golden", path_, ": case '", case_name, "' has no array '", array, "'");
    return *a;
  }
  // The array as a heed Tensor (float64 -> real; exact for the float32-drawn inputs).
  Tensor tensor(const std::string& case_name, const std::string& name) const {
    const Array& a = array(case_name, name);
    return from_vector(std::vector<real>(a.data.begin(), a.data.end()), a.shape);
  }
  // An array of whole numbers (ids, targets stored by GoldenWriter.case consts) as indices.
  IndexTensor indices(const std::string& case_name, const std::string& name) const {
    const Array& a = array(case_name, name);
    std::vector<int64_t> ids;
    for (double v : a.data) {
      if (!(v == std::floor(v) && std::fabs(v) < 9.0e15))
        fail("golden", path_, ": case '", case_name, "' array '", name, "' holds ", v,
             ", not an index");
      ids.push_back(static_cast<int64_t>(v));
    }
    return IndexTensor(ids, a.shape);
  }

 private:
  const Case* find_case(const std::string& name) const {
    for (const Case& k : cases_)
      if (k.name == name) return &k;
    return nullptr;
  }
  static const Array* find_array(const Case& k, const std::string& name) {
    for (const Array& a : k.arrays)
      if (a.name == name) return &a;
    return nullptr;
  }
  const Case& get(const std::string& name) const {
    const Case* k = find_case(name);
    if (!k) fail("golden", path_, ": no case '", name, "' (regenerate with `make goldens`?)");
    return *k;
  }

  std::string path_;
  std::vector<Case> cases_;
};

// ---- comparing heed with a golden ----
//
// Element i of heed's `actual` matches torch's `expected` when
//   |a_i - e_i| <= rtol * |e_i| + atol * scale,     scale = max(1, max_j |e_j|)
// that is, close relative to the element itself, or close on the scale of the whole
// array. The second term is for values near zero: a float32 result built from O(scale)
// terms (a cancelling sum, 1 - tanh^2, Phi(x) - 1) carries O(eps * scale) absolute
// rounding however small the value. An infinity must be matched exactly, NaN by NaN.
// The defaults, rtol 1e-5 and atol 1e-6, are ~80 and ~8 float32 epsilons.
struct Tolerance {
  Tolerance& rtol(double v) { rtol_ = v; return *this; }
  Tolerance& atol(double v) { atol_ = v; return *this; }
  double rtol_ = 1e-5, atol_ = 1e-6;
};

struct Check {
  bool ok = true;
  double worst = 0;     // the largest |a - e| / allowed over the elements (<= 1 when ok)
  std::string message;  // "<what>: ..." naming the worst element when not ok
};

namespace detail {

// "[1,0,3]": the multi-index of flat position i in shape s.
inline std::string index_str(const Shape& s, int64_t i) {
  std::vector<int64_t> idx(s.size());
  for (int d = s.size() - 1; d >= 0; --d) {
    idx[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  std::string out = "[";
  for (size_t d = 0; d < idx.size(); ++d) out += (d ? "," : "") + std::to_string(idx[d]);
  return out + "]";
}

}  // namespace detail

// heed's tensor against a golden array, compared in double (the golden keeps torch's
// float64 values unrounded).
inline Check compare(const Tensor& actual, const Array& expected, const std::string& what,
                     const Tolerance& tol = Tolerance()) {
  Check r;
  std::ostringstream msg;
  msg.precision(9);
  if (!actual.defined()) {
    r.ok = false;
    r.message = what + ": heed gave no tensor (undefined)";
    return r;
  }
  if (actual.shape() != expected.shape) {
    r.ok = false;
    msg << what << ": heed shape " << actual.shape() << ", torch shape " << expected.shape;
    r.message = msg.str();
    return r;
  }
  const real* a = actual.data();
  const double* e = expected.data.data();
  const int64_t n = actual.numel();
  double scale = 1;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(e[i])) scale = std::max(scale, std::fabs(e[i]));
  const double abs_allowed = tol.atol_ * scale;

  int64_t worst_i = -1;
  bool special_mismatch = false;  // an inf or NaN on one side not matched on the other
  for (int64_t i = 0; i < n && !special_mismatch; ++i) {
    const double x = a[i], y = e[i];
    double ratio;
    if (std::isnan(x) || std::isnan(y)) {
      ratio = std::isnan(x) && std::isnan(y) ? 0 : INFINITY;
    } else if (std::isinf(x) || std::isinf(y)) {
      ratio = x == y ? 0 : INFINITY;
    } else {
      ratio = std::fabs(x - y) / (tol.rtol_ * std::fabs(y) + abs_allowed);
    }
    if (worst_i < 0 || ratio > r.worst) {
      r.worst = ratio;
      worst_i = i;
    }
    special_mismatch = std::isinf(ratio);
  }
  r.ok = r.worst <= 1;
  if (worst_i >= 0) {
    const double x = a[worst_i], y = e[worst_i];
    msg << what << ": " << (r.ok ? "ok, worst" : "MISMATCH at") << " element "
        << detail::index_str(expected.shape, worst_i) << " of " << expected.shape
        << ": heed " << x << " vs torch " << y << " (|diff| " << std::fabs(x - y) << ", allowed "
        << tol.rtol_ * std::fabs(y) + abs_allowed << ")";
  } else {
    msg << what << ": ok (empty)";
  }
  r.message = msg.str();
  return r;
}

// The same, against a tensor (e.g. a hand-computed expectation).
inline Check compare(const Tensor& actual, const Tensor& expected, const std::string& what,
                     const Tolerance& tol = Tolerance()) {
  const std::vector<real> v = expected.to_vector();
  return compare(actual, Array{what, expected.shape(), std::vector<double>(v.begin(), v.end())}, what, tol);
}

// Runs one case of the pattern GoldenWriter.case writes:
//   leaves = the arrays named in `inputs`, in that order; an input requires grad when
//            the case has grad_<name> for it (the others are constants: masks, targets)
//   out = fn(leaves)                   compared with "out"
//   out.backward(dy)                   each leaf's grad compared with "grad_<name>"
// Returns the comparisons, out first. Throws heed::Error when `inputs` does not account
// for every array of the case, so a test cannot silently skip one.
inline std::vector<Check> run_case(const File& f, const std::string& name,
                                   const std::vector<std::string>& inputs, const TensorFn& fn,
                                   const Tolerance& tol = Tolerance()) {
  for (const std::string& array : f.arrays(name)) {
    bool known = array == "out" || array == "dy";
    for (const std::string& in : inputs) known = known || array == in || array == "grad_" + in;
    if (!known)
      fail("golden", f.path(), ": case '", name, "' has array '", array,
           "' that the test does not name as an input");
  }
  std::vector<Tensor> leaves;
  for (const std::string& in : inputs) {
    Tensor t = f.tensor(name, in);
    if (f.has(name, "grad_" + in)) t.requires_grad_();
    leaves.push_back(t);
  }

  std::vector<Check> checks;
  const Tensor out = fn(leaves);
  checks.push_back(compare(out, f.array(name, "out"), name + " out", tol));
  if (!out.defined() || out.shape() != f.array(name, "out").shape) return checks;
  out.backward(f.tensor(name, "dy"));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!leaves[i].requires_grad()) continue;
    const Tensor g = leaves[i].grad().defined() ? leaves[i].grad() : zeros_like(leaves[i]);
    checks.push_back(compare(g, f.array(name, "grad_" + inputs[i]), name + " grad_" + inputs[i], tol));
  }
  return checks;
}

// run_case, reporting each comparison to doctest.
inline void check_case(const File& f, const std::string& name, const std::vector<std::string>& inputs,
                       const TensorFn& fn, const Tolerance& tol = Tolerance()) {
  for (const Check& c : run_case(f, name, inputs, fn, tol)) CHECK_MESSAGE(c.ok, c.message);
}

}  // namespace heed::golden
