// test_golden_reader.cpp - the golden-file reader and comparison (tests/golden/golden.h).
//
// Files are built here byte by byte (the format is documented in tests/golden/golden.py),
// or copied from tests/golden/core.bin and damaged, under /tmp.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>

#include "golden/golden.h"
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/compare.h>
#include <heed/autograd/ops/linalg.h>
#include "helpers.h"

using namespace heed;
using heed::test::error_of;

namespace {

// A golden file's little-endian pieces, appended in order.
struct Bytes {
  std::string b;
  Bytes& raw(const std::string& s) { b += s; return *this; }
  Bytes& u32(uint32_t v) { return le(v, 4); }
  Bytes& i64(int64_t v) { return le(static_cast<uint64_t>(v), 8); }
  Bytes& f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return le(bits, 8);
  }
  Bytes& str(const std::string& s) { return u32(uint32_t(s.size())).raw(s); }
  Bytes& le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b += char((v >> (8 * i)) & 0xff);
    return *this;
  }
};

// One case "c" with s = 2.5 (shape ()), m = [[0,1,2],[3,4,-inf]] (2,3), e (2,0) (no data),
// i = [0,3,2] (3) (ids).
std::string small_file() {
  Bytes f;
  f.raw("HEEDGLD1").u32(1);
  f.str("c").u32(4);
  f.str("s").u32(0).f64(2.5);
  f.str("m").u32(2).i64(2).i64(3);
  for (double v : {0.0, 1.0, 2.0, 3.0, 4.0, -std::numeric_limits<double>::infinity()}) f.f64(v);
  f.str("e").u32(2).i64(2).i64(0);
  f.str("i").u32(1).i64(3).f64(0).f64(3).f64(2);
  return f.b;
}

// A file under /tmp, removed when it goes out of scope.
struct TempFile {
  TempFile(const std::string& tag, const std::string& bytes)
      : path("/tmp/heed_golden_" + std::to_string(getpid()) + "_" + tag + ".bin") {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("golden reader: decodes a hand-built file") {
  TempFile t("small", small_file());
  const golden::File f(t.path);
  CHECK(f.cases() == std::vector<std::string>{"c"});
  CHECK(f.arrays("c") == std::vector<std::string>{"s", "m", "e", "i"});
  CHECK(f.has("c"));
  CHECK(f.has("c", "m"));
  CHECK_FALSE(f.has("c", "x"));
  CHECK_FALSE(f.has("d"));
  Tensor s = f.tensor("c", "s");
  CHECK(s.shape() == Shape{});
  CHECK(s.item() == 2.5);
  Tensor m = f.tensor("c", "m");
  CHECK(m.shape() == Shape{2, 3});
  CHECK(m.at({1, 1}) == 4);
  CHECK(m.at({1, 2}) == -std::numeric_limits<real>::infinity());
  CHECK(f.array("c", "e").shape == Shape{2, 0});
  CHECK(f.array("c", "e").data.empty());
  CHECK(f.indices("c", "i").vec() == std::vector<int64_t>{0, 3, 2});
  CHECK(contains(error_of([&] { f.indices("c", "m"); }), "not an index"));  // -inf
}

TEST_CASE("golden reader: rejects every truncation of a file") {
  const std::string full = small_file();
  for (size_t n = 0; n < full.size(); ++n) {
    TempFile t("prefix", full.substr(0, n));
    const std::string e = error_of([&] { golden::File f(t.path); });
    CHECK_MESSAGE(contains(e, t.path), "prefix of " << n << " bytes: '" << e << "'");
  }
  const std::string core = read_bytes("tests/golden/core.bin");
  for (size_t n : {core.size() / 2, core.size() - 1}) {
    TempFile t("core_truncated", core.substr(0, n));
    const std::string e = error_of([&] { golden::File f(t.path); });
    CHECK_MESSAGE(contains(e, "truncated"), "core.bin cut to " << n << " bytes: '" << e << "'");
  }
}

TEST_CASE("golden reader: rejects a wrong magic") {
  std::string bytes = read_bytes("tests/golden/core.bin");
  bytes[7] = '2';  // HEEDGLD2
  TempFile t("magic", bytes);
  CHECK(contains(error_of([&] { golden::File f(t.path); }), "wrong magic"));
}

TEST_CASE("golden reader: reports a missing file, case or array") {
  CHECK(contains(error_of([] { golden::File f("/tmp/heed_golden_no_such_file.bin"); }), "cannot open"));
  const golden::File f("tests/golden/core.bin");
  CHECK_FALSE(f.has("no_such_case"));
  CHECK(contains(error_of([&] { f.tensor("no_such_case", "x"); }), "no case 'no_such_case'"));
  CHECK(contains(error_of([&] { f.tensor("softmax_dim0", "nope"); }), "no array 'nope'"));
}

TEST_CASE("golden reader: rejects corrupt length and size fields") {
  const auto error_for = [](const std::string& tag, const std::string& bytes) {
    TempFile t(tag, bytes);
    return error_of([&] { golden::File f(t.path); });
  };
  Bytes huge_name;
  huge_name.raw("HEEDGLD1").u32(1).u32(0xffffffffu);
  CHECK(contains(error_for("huge_name", huge_name.b), "truncated"));

  Bytes huge_count;  // a case count far larger than the file: no allocation, just "truncated"
  huge_count.raw("HEEDGLD1").u32(0xffffffffu);
  CHECK(contains(error_for("huge_count", huge_count.b), "truncated"));

  Bytes rank;
  rank.raw("HEEDGLD1").u32(1).str("c").u32(1).str("a").u32(9);
  CHECK(contains(error_for("rank", rank.b), "rank 9"));

  Bytes huge_dims;  // 2^31 x 2^31 elements would overflow a naive numel * 8
  huge_dims.raw("HEEDGLD1").u32(1).str("c").u32(1).str("a").u32(2).i64(1ll << 31).i64(1ll << 31);
  CHECK(contains(error_for("huge_dims", huge_dims.b), "truncated"));

  Bytes negative;
  negative.raw("HEEDGLD1").u32(1).str("c").u32(1).str("a").u32(1).i64(-1);
  CHECK(contains(error_for("negative", negative.b), "negative size"));

  CHECK(contains(error_for("trailing", small_file() + "x"), "1 trailing bytes"));

  Bytes twice;
  twice.raw("HEEDGLD1").u32(2).str("c").u32(0).str("c").u32(0);
  CHECK(contains(error_for("twice", twice.b), "duplicate case 'c'"));
}

TEST_CASE("golden compare: relative or array-scaled absolute tolerance, exact inf") {
  const Tensor e = from_vector({100, 1, 0, -INFINITY}, {4});
  CHECK(golden::compare(from_vector({100.0005f, 1, 0, -INFINITY}, {4}), e, "t").ok);  // 5e-6 relative
  CHECK(golden::compare(from_vector({100, 1, 5e-5f, -INFINITY}, {4}), e, "t").ok);    // atol 1e-6 * 100
  CHECK_FALSE(golden::compare(from_vector({100, 1, 2e-4f, -INFINITY}, {4}), e, "t").ok);
  CHECK_FALSE(golden::compare(from_vector({100, 1.001f, 0, -INFINITY}, {4}), e, "t").ok);
  CHECK_FALSE(golden::compare(from_vector({100, 1, 0, INFINITY}, {4}), e, "t").ok);
  CHECK_FALSE(golden::compare(from_vector({100, 1, 0, NAN}, {4}), e, "t").ok);
  CHECK_FALSE(golden::compare(zeros({2, 2}), e, "t").ok);
  const golden::Check c = golden::compare(from_vector({100, 1.001f, 0, -INFINITY}, {4}), e, "t");
  CHECK_MESSAGE(contains(c.message, "[1]"), c.message);  // names the worst element
}

TEST_CASE("golden run_case: every array of a case must be accounted for") {
  const golden::File f("tests/golden/core.bin");
  const TensorFn mm = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); };
  CHECK(contains(error_of([&] { golden::run_case(f, "matmul_3d_2d", {"a"}, mm); }), "array 'b'"));
  for (const golden::Check& c : golden::run_case(f, "matmul_3d_2d", {"a", "b"}, mm)) CHECK_MESSAGE(c.ok, c.message);
  // an op 1e-4 off (10x the relative tolerance) fails the output and both gradients
  const TensorFn off = [](const std::vector<Tensor>& in) { return matmul(in[0], in[1]) * real(1.0001); };
  for (const golden::Check& c : golden::run_case(f, "matmul_3d_2d", {"a", "b"}, off)) CHECK_FALSE(c.ok);
}
