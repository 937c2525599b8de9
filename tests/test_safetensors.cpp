// test_safetensors.cpp - heed::safetensors (optim/safetensors.h): the reference's exact bytes,
// round trips with metadata, empty and 0-dim tensors, every loaded dtype, and one refused file
// per validation rule, each a heed::Error naming the rule and the tensor.
#include <cmath>
#include <ctime>
#include <cstring>
#include <filesystem>

#include <heed/core/random.h>
#include <heed/autograd/ops/views.h>
#include <heed/layers/activation.h>
#include <heed/layers/embedding.h>
#include <heed/layers/layer_norm.h>
#include <heed/layers/linear.h>
#include <heed/layers/module.h>
#include <heed/layers/sequential.h>
#include <heed/optim/safetensors.h>
#include "helpers.h"
#include "tmp_files.h"

using namespace heed;
using heed::test::Bytes;
using heed::test::error_of;
namespace st = heed::safetensors;

namespace {

// A file from a header text and data bytes: the 8-byte little-endian length, then both.
Bytes file_of(const std::string& header, const Bytes& data = {}) {
  Bytes b;
  for (int i = 0; i < 8; ++i) b.push_back(uint8_t(uint64_t(header.size()) >> (8 * i)));
  for (char c : header) b.push_back(uint8_t(c));
  for (uint8_t c : data) b.push_back(c);
  return b;
}

// The error deserialize gives for these bytes ("(no heed::Error thrown)" if it accepts them).
std::string refusal(const Bytes& b) {
  return error_of([&] { st::deserialize(b.data(), b.size(), "f"); });
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Bytes le_bytes(uint64_t v, int n) {
  Bytes b(n);
  for (int i = 0; i < n; ++i) b[i] = uint8_t(v >> (8 * i));
  return b;
}

std::string one_tensor(const std::string& dtype, const std::string& shape, uint64_t begin, uint64_t end) {
  return "{\"t\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" + std::to_string(begin) +
         "," + std::to_string(end) + "]}}";
}

}  // namespace

TEST_CASE("safetensors: serialize writes the reference implementation's bytes") {
  // safetensors/src/tensor.rs, test_serialization and test_empty: F32 "attn.0" of shape
  // (1, 2, 3) holding 0..5, and an empty file with and without metadata.
  const Bytes attn = st::serialize({{"attn.0", arange(0, 6).reshape({1, 2, 3})}});
  const std::string text = "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}";
  REQUIRE(attn.size() == 8 + 64 + 24);
  CHECK(attn[0] == 64);
  CHECK(std::string(attn.begin() + 8, attn.begin() + 8 + text.size()) == text);
  CHECK(Bytes(attn.begin() + 72, attn.begin() + 80) == Bytes{0, 0, 0, 0, 0, 0, 128, 63});  // 0.0f, 1.0f
  // test_serialization_forced_alignement: a header of 65 bytes is padded with 7 spaces to 72.
  const Bytes attn0 = st::serialize({{"attn0", arange(0, 6).reshape({1, 1, 2, 3})}});
  const std::string text0 = "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}";
  REQUIRE(attn0.size() == 8 + 72 + 24);
  CHECK(attn0[0] == 72);
  CHECK(std::string(attn0.begin() + 8, attn0.begin() + 80) == text0 + "       ");
  CHECK(st::serialize({}) == file_of("{}      "));
  CHECK(st::serialize({}, {{"framework", "pt"}}) == file_of("{\"__metadata__\":{\"framework\":\"pt\"}}     "));
}

TEST_CASE("safetensors: save_file and load_file round trip tensors, order and metadata") {
  test::TmpDir dir;
  manual_seed(2);
  const NamedTensors in = {{"b.weight", randn({3, 4})}, {"a", randn({5})}, {"scalar", full({}, 7.5)},
                           {"empty", zeros({0, 3})}, {"z", randn({2, 1, 2})}};
  const st::Metadata meta = {{"format", "pt"}, {"vocab", "ab\xc3\xa9\n"}};
  st::save_file(in, dir.file("m.safetensors"), meta);
  CHECK(dir.listing() == std::vector<std::string>{"m.safetensors"});  // no temporary left
  const st::Contents out = st::load_file(dir.file("m.safetensors"));
  CHECK(out.metadata == meta);
  REQUIRE(out.tensors.size() == in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    CHECK(out.tensors[i].first == in[i].first);  // data order = the order saved
    CHECK(out.tensors[i].second.shape() == in[i].second.shape());
    CHECK(test::allclose(out.tensors[i].second, in[i].second, 0, 0));
  }
  CHECK(out.tensors[2].second.dim() == 0);
  CHECK(out.tensors[3].second.numel() == 0);
}

TEST_CASE("safetensors: F32, F64, F16 and BF16 load as heed's real") {
  // F32 1.5, -2; F64 0.1 (rounded to real), 1e300 -> inf in float
  Bytes f32 = le_bytes(0x3fc00000, 4), m2 = le_bytes(0xc0000000, 4);
  f32.insert(f32.end(), m2.begin(), m2.end());
  const Bytes f32f = file_of(one_tensor("F32", "[2]", 0, 8), f32);
  st::Contents c = st::deserialize(f32f.data(), f32f.size(), "f");
  CHECK(c.tensors[0].second.data()[0] == 1.5);
  CHECK(c.tensors[0].second.data()[1] == -2);

  double tenth = 0.1;
  uint64_t bits;
  std::memcpy(&bits, &tenth, 8);
  const Bytes f64f = file_of(one_tensor("F64", "[]", 0, 8), le_bytes(bits, 8));
  c = st::deserialize(f64f.data(), f64f.size(), "f");
  CHECK(c.tensors[0].second.data()[0] == real(0.1));

  // binary16: 1.0 (0x3c00), -2.5 (0xc100), 65504 (max, 0x7bff), 2^-24 (smallest subnormal,
  // 0x0001), 3 * 2^-24 (0x0003), -0 (0x8000), inf (0x7c00), NaN (0x7e00)
  const uint16_t halves[] = {0x3c00, 0xc100, 0x7bff, 0x0001, 0x0003, 0x8000, 0x7c00, 0x7e00};
  Bytes hd;
  for (uint16_t h : halves) {
    const Bytes b = le_bytes(h, 2);
    hd.insert(hd.end(), b.begin(), b.end());
  }
  const Bytes f16f = file_of(one_tensor("F16", "[2,4]", 0, 16), hd);
  c = st::deserialize(f16f.data(), f16f.size(), "f");
  const real* x = c.tensors[0].second.data();
  CHECK(c.tensors[0].second.shape() == Shape({2, 4}));
  CHECK(x[0] == 1);
  CHECK(x[1] == -2.5);
  CHECK(x[2] == 65504);
  CHECK(x[3] == real(std::ldexp(1.0, -24)));
  CHECK(x[4] == real(3 * std::ldexp(1.0, -24)));
  CHECK((x[5] == 0 && std::signbit(x[5])));
  CHECK(std::isinf(x[6]));
  CHECK(std::isnan(x[7]));

  // bfloat16: the top half of a float: 1.0 (0x3f80), -3.0 (0xc040), pi rounded (0x4049)
  Bytes bd;
  for (uint16_t h : {0x3f80, 0xc040, 0x4049}) {
    const Bytes b = le_bytes(h, 2);
    bd.insert(bd.end(), b.begin(), b.end());
  }
  const Bytes bf = file_of(one_tensor("BF16", "[3]", 0, 6), bd);
  c = st::deserialize(bf.data(), bf.size(), "f");
  CHECK(c.tensors[0].second.data()[0] == 1);
  CHECK(c.tensors[0].second.data()[1] == -3);
  CHECK(c.tensors[0].second.data()[2] == 3.140625);
}

TEST_CASE("safetensors: a dtype heed does not load is named with its tensor") {
  CHECK(refusal(file_of(one_tensor("I64", "[2]", 0, 16), Bytes(16))) ==
        "safetensors: 'f': tensor 't' has dtype I64, which heed does not load (it loads F32, F64, F16 and BF16)");
  CHECK(contains(refusal(file_of(one_tensor("BOOL", "[3]", 0, 3), Bytes(3))), "tensor 't' has dtype BOOL"));
  CHECK(contains(refusal(file_of(one_tensor("U8", "[1]", 0, 1), Bytes(1))), "tensor 't' has dtype U8"));
  CHECK(refusal(file_of(one_tensor("F17", "[1]", 0, 2), Bytes(2))) ==
        "safetensors: 'f': invalid JSON header: tensor 't' has unknown dtype 'F17'");
}

TEST_CASE("safetensors: every validation rule refuses its file with a named error") {
  SUBCASE("header too small") {
    CHECK(refusal(Bytes{1, 0, 0}) == "safetensors: 'f': header too small: 3 bytes, fewer than the 8-byte header length");
  }
  SUBCASE("header too large") {
    Bytes b = le_bytes(100000001, 8);
    CHECK(contains(refusal(b), "header too large: it declares 100000001 bytes (the format's limit is 100000000)"));
    b = le_bytes(~uint64_t(0), 8);  // 2^64 - 1: no overflow on 8 + N
    CHECK(contains(refusal(b), "header too large"));
  }
  SUBCASE("invalid header length") {
    Bytes b = file_of("{}");
    b[0] = 3;
    CHECK(contains(refusal(b), "invalid header length: it declares 3 bytes but only 2 follow the length"));
  }
  SUBCASE("invalid header: not UTF-8") {
    CHECK(contains(refusal(file_of("{\"\xff\":1}")), "invalid header: not UTF-8 (bad byte at header offset 2)"));
    CHECK(contains(refusal(file_of("{\"\xc0\xaf\":1}")), "not UTF-8"));      // overlong '/'
    CHECK(contains(refusal(file_of("{\"\xed\xa0\x80\":1}")), "not UTF-8"));  // a surrogate
  }
  SUBCASE("invalid header start") {
    CHECK(contains(refusal(file_of(" {}")), "invalid header start: the header must begin with '{'"));
    CHECK(contains(refusal(file_of("")), "invalid header start"));
  }
  SUBCASE("invalid JSON") {
    CHECK(contains(refusal(file_of("{\"a\":")), "invalid JSON header: [json.exception.parse_error"));
    CHECK(contains(refusal(file_of("{} {}")), "invalid JSON header"));
    CHECK(contains(refusal(file_of("{\"t\":[1]}")), "tensor 't': its entry must be an object"));
    CHECK(contains(refusal(file_of("{\"t\":{\"shape\":[],\"data_offsets\":[0,4]}}")), "tensor 't': dtype must be a string"));
    CHECK(contains(refusal(file_of(one_tensor("F32", "[-1]", 0, 4))), "tensor 't': shape must be an array of non-negative"));
    CHECK(contains(refusal(file_of(one_tensor("F32", "[1.5]", 0, 4))), "shape must be an array of non-negative"));
    CHECK(contains(refusal(file_of(one_tensor("F32", "3", 0, 4))), "shape must be an array"));
    CHECK(contains(refusal(file_of("{\"t\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0]}}")),
                   "data_offsets must be an array of two non-negative integers"));
    CHECK(contains(refusal(file_of("{\"__metadata__\":{\"k\":1}}")),
                   "__metadata__ value of 'k' must be a string, got number"));
    CHECK(contains(refusal(file_of("{\"__metadata__\":[]}")), "__metadata__ must be an object of strings"));
  }
  SUBCASE("a JSON bomb: nesting deeper than the format stops at once") {
    const std::string bomb = std::string(1000000, '[') + std::string(1000000, ']');
    CHECK(contains(refusal(file_of("{\"t\":" + bomb + "}")), "tensor 't': its entry must be an object"));
    CHECK(contains(refusal(file_of("{\"t\":{\"x\":" + bomb + "}}")),
                   "invalid JSON header: nested deeper than the format's 3 levels"));
    CHECK(contains(refusal(file_of("{\"t\":{\"dtype\":\"F32\",\"shape\":[[1]],\"data_offsets\":[0,4]}}")),
                   "nested deeper"));
  }
  SUBCASE("duplicate names and fields") {
    const std::string t = "{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}";
    CHECK(refusal(file_of("{\"a\":" + t + ",\"a\":" + t + "}", Bytes(4))) ==
          "safetensors: 'f': duplicate name: 'a' appears twice in the header");
    CHECK(contains(refusal(file_of("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[0,4]}}")),
                   "'a' has the field 'dtype' twice"));
  }
  SUBCASE("invalid offset: gaps, overlaps, a start past 0, end before begin") {
    auto two = [](int b0, int e0, int b1, int e1) {
      auto entry = [](const char* n, int b, int e) {
        return std::string("\"") + n + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" + std::to_string(b) + "," +
               std::to_string(e) + "]}";
      };
      return "{" + entry("x", b0, e0) + "," + entry("y", b1, e1) + "}";
    };
    CHECK(refusal(file_of(two(0, 4, 8, 12), Bytes(12))) ==
          "safetensors: 'f': invalid offset for tensor 'y': data_offsets [8, 12], but it must begin at 4 (where the "
          "previous tensor ends) and end at or after its begin");                                    // a gap
    CHECK(contains(refusal(file_of(two(0, 4, 2, 6), Bytes(6))), "invalid offset for tensor 'y'"));  // overlap
    CHECK(contains(refusal(file_of(two(0, 4, 0, 4), Bytes(4))), "invalid offset for tensor"));      // the same bytes
    CHECK(contains(refusal(file_of(one_tensor("F32", "[1]", 4, 8), Bytes(8))), "invalid offset for tensor 't'"));
    CHECK(contains(refusal(file_of(one_tensor("F32", "[0]", 0, 0))), "(no heed::Error thrown)"));
    CHECK(contains(refusal(file_of(two(0, 4, 4, 2), Bytes(4))), "invalid offset for tensor 'y'"));  // end < begin
  }
  SUBCASE("offsets past the end of the file") {
    CHECK(contains(refusal(file_of(one_tensor("F32", "[4]", 0, 16), Bytes(8))),
                   "metadata incomplete buffer: the tensors cover 16 bytes of data, but the file has 8 after the header"));
    CHECK(contains(refusal(file_of(one_tensor("F32", "[1]", 0, 4), Bytes(8))), "metadata incomplete buffer"));  // extra bytes
  }
  SUBCASE("validation overflow") {
    CHECK(contains(refusal(file_of(one_tensor("F32", "[4294967296,4294967296]", 0, 0))),
                   "validation overflow: tensor 't' of shape [4294967296, 4294967296] has more than 2^64 elements"));
    CHECK(contains(refusal(file_of(one_tensor("F32", "[4611686018427387904,2]", 0, 0))),
                   "validation overflow: tensor 't' of shape [4611686018427387904, 2] and dtype F32 has more than 2^64 bytes"));
  }
  SUBCASE("tensor invalid info: offsets that disagree with shape and dtype") {
    CHECK(refusal(file_of(one_tensor("F32", "[3]", 0, 8), Bytes(8))) ==
          "safetensors: 'f': tensor invalid info for 't': dtype F32 shape [3] is 12 bytes, but its data_offsets [0, 8] span 8");
  }
  SUBCASE("more dims than heed tensors have") {
    CHECK(contains(refusal(file_of(one_tensor("F32", "[1,1,1,1,1,1,1,1,1]", 0, 4), Bytes(4))),
                   "tensor 't' has 9 dims; heed tensors have at most 8"));
  }
}

TEST_CASE("safetensors: load_file refuses what is not a regular file, and names the path") {
  test::TmpDir dir;
  CHECK(error_of([&] { st::load_file(dir.file("none.safetensors")); }) ==
        "safetensors::load_file: '" + dir.file("none.safetensors") + "': cannot open it: No such file or directory");
  CHECK(error_of([&] { st::load_file(dir.dir.string()); }) ==
        "safetensors::load_file: '" + dir.dir.string() + "': not a regular file: it is a directory");
  CHECK(error_of([&] { st::load_file("/dev/zero"); }) == "safetensors::load_file: '/dev/zero': not a regular file: it is a character device");
  test::write_bytes(dir.file("bad.safetensors"), Bytes{1, 2}, 2);
  CHECK(contains(error_of([&] { st::load_file(dir.file("bad.safetensors")); }),
                 "safetensors: '" + dir.file("bad.safetensors") + "': header too small"));
}

TEST_CASE("safetensors: save_file refuses bad names and leaves no partial file") {
  test::TmpDir dir;
  CHECK(error_of([&] { st::save_file({{"a", ones({1})}, {"a", ones({1})}}, dir.file("x")); }) ==
        "safetensors::save_file: two tensors are named 'a'");
  CHECK(error_of([&] { st::save_file({{"__metadata__", ones({1})}}, dir.file("x")); }) ==
        "safetensors::save_file: a tensor cannot be named '__metadata__' (the header's metadata key)");
  CHECK(error_of([&] { st::save_file({{"a", Tensor()}}, dir.file("x")); }) ==
        "safetensors::save_file: tensor 'a' is undefined");
  CHECK(contains(error_of([&] { st::save_file({{"\xff", ones({1})}}, dir.file("x")); }),
                 "the header cannot be written as JSON"));
  CHECK(dir.listing().empty());
  // The target is a directory: refused before anything is written (test_atomic_write.cpp).
  std::filesystem::create_directory(dir.file("d"));
  CHECK(contains(error_of([&] { st::save_file({{"a", ones({1})}}, dir.file("d")); }), "is a directory, not a regular file"));
  CHECK(dir.listing() == std::vector<std::string>{"d"});
  // Saving over a file replaces it whole.
  st::save_file({{"a", ones({4})}}, dir.file("m"));
  st::save_file({{"b", zeros({2})}}, dir.file("m"));
  CHECK(st::load_file(dir.file("m")).tensors[0].first == "b");
}

TEST_CASE("safetensors: save_model and load_model move a model's state") {
  test::TmpDir dir;
  manual_seed(4);
  auto make = [] {
    return nn::Sequential(nn::Linear(3, 4), nn::Tanh(),
                          nn::LayerNorm(nn::LayerNormOptions({4})));
  };
  nn::Sequential a = make(), b = make();
  st::save_model(*a, dir.file("m.safetensors"), {{"note", "x"}});
  CHECK(st::load_file(dir.file("m.safetensors")).metadata.at("note") == "x");
  CHECK(st::load_model(*b, dir.file("m.safetensors")).empty());
  const Tensor x = randn({2, 3});
  CHECK(test::allclose(b->forward(x), a->forward(x), 0, 0));
  // A file for another model: strict names the path and the keys; non-strict reports them.
  nn::Linear other(3, 4);
  CHECK(error_of([&] { st::load_model(*other, dir.file("m.safetensors")); }) ==
        "safetensors::load_model: '" + dir.file("m.safetensors") +
            "': load_state_dict: the state dict does not match the model: missing keys ['weight', 'bias'], unexpected "
            "keys ['0.weight', '0.bias', '2.weight', '2.bias']");
  CHECK(st::load_model(*other, dir.file("m.safetensors"), false).missing_keys.size() == 2);
}

TEST_CASE("safetensors: a tied parameter is saved under both names and loads into one tensor") {
  struct Head : nn::Module {
    Tensor weight;
    explicit Head(const Tensor& w) { weight = register_parameter("weight", w); }
  };
  struct Tied : nn::Module {
    nn::Embedding wte = register_module("wte", nn::Embedding(4, 2));
    std::shared_ptr<Head> lm_head = register_module("lm_head", std::make_shared<Head>(wte->weight));
  };
  test::TmpDir dir;
  Tied a, b;
  st::save_model(a, dir.file("t.safetensors"));
  const st::Contents c = st::load_file(dir.file("t.safetensors"));
  REQUIRE(c.tensors.size() == 2);  // PyTorch's state_dict has both keys; so does the file
  CHECK(c.tensors[0].first == "wte.weight");
  CHECK(c.tensors[1].first == "lm_head.weight");
  CHECK(st::load_model(b, dir.file("t.safetensors")).empty());
  CHECK(test::allclose(b.wte->weight, a.wte->weight, 0, 0));
  CHECK(b.lm_head->weight.impl() == b.wte->weight.impl());
  CHECK(b.parameters().size() == 1);
}

TEST_CASE("safetensors: the header may be padded with spaces, never with NUL bytes") {
  const std::string t = "{\"t\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}";
  CHECK(refusal(file_of(t + "   ", Bytes(4))) == "(no heed::Error thrown)");
  CHECK(refusal(file_of(t + std::string(3, '\0'), Bytes(4))) ==
        "safetensors: 'f': invalid header: a NUL byte at header offset 53 (the header may be padded with spaces only)");
  CHECK(contains(refusal(file_of("{}" + std::string(1, '\0') + "}", Bytes())), "a NUL byte at header offset 2"));
}

TEST_CASE("safetensors: writing and reading are linear in the number of tensors") {
  // 200,000 entries (a 12 MB header): a second or two of CPU; a quadratic reader or writer
  // took minutes at 20,000.
  test::TmpDir dir;
  const int n = 200000;
  NamedTensors many;
  for (int i = 0; i < n; ++i) many.emplace_back("layer." + std::to_string(i) + ".weight", full({1}, real(i)));
  const std::clock_t start = std::clock();
  st::save_file(many, dir.file("many.safetensors"));
  const st::Contents c = st::load_file(dir.file("many.safetensors"));
  const double seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
  MESSAGE("save_file + load_file of ", n, " tensors: ", seconds, " s of CPU");
  CHECK(seconds < 20);
  REQUIRE(c.tensors.size() == size_t(n));
  CHECK(c.tensors[n - 1].first == "layer.199999.weight");
  CHECK(c.tensors[n - 1].second.item() == real(n - 1));
}

TEST_CASE("safetensors: a non-strict load_model skips entries the model lacks, whatever their dtype") {
  // A Hugging Face file often holds an I64 buffer such as position_ids beside the weights.
  nn::Linear model(2, 1);
  const std::string header = "{\"weight\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[0,8]},"
                             "\"bias\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]},"
                             "\"position_ids\":{\"dtype\":\"I64\",\"shape\":[1,2],\"data_offsets\":[12,28]}}";
  Bytes data = le_bytes(0x3f800000, 4);  // weight [1, 2], bias 3, position_ids [0, 1]
  for (const Bytes& b : {le_bytes(0x40000000, 4), le_bytes(0x40400000, 4), le_bytes(0, 8), le_bytes(1, 8)})
    data.insert(data.end(), b.begin(), b.end());
  test::TmpDir dir;
  test::write_bytes(dir.file("hf.safetensors"), file_of(header, data), 8 + header.size() + data.size());
  const nn::IncompatibleKeys r = st::load_model(*model, dir.file("hf.safetensors"), false);
  CHECK(r.missing_keys.empty());
  CHECK(r.unexpected_keys == std::vector<std::string>{"position_ids"});
  CHECK(test::allclose(model->weight, from_vector({1, 2}, {1, 2}), 0, 0));
  CHECK(model->bias.item() == 3);
  // Strict reports it as PyTorch does, and changes nothing.
  nn::Linear fresh(2, 1);
  const Tensor before = fresh->weight.clone();
  CHECK(error_of([&] { st::load_model(*fresh, dir.file("hf.safetensors")); }) ==
        "safetensors::load_model: '" + dir.file("hf.safetensors") +
            "': load_state_dict: the state dict does not match the model: missing keys [], unexpected keys "
            "['position_ids']");
  CHECK(test::allclose(fresh->weight, before, 0, 0));
  // An entry the model does use is still converted, and one heed cannot load is an error.
  struct Ids : nn::Module {
    Tensor position_ids = register_buffer("position_ids", zeros({1, 2}));
  } ids;
  CHECK(contains(error_of([&] { st::load_model(ids, dir.file("hf.safetensors"), false); }),
                 "tensor 'position_ids' has dtype I64, which heed does not load"));
}

TEST_CASE("safetensors: the fuzzer's seeds load or are refused with a heed::Error") {
  // tests/fuzz/corpus_safetensors: valid files and known attacks (write_safetensors_seeds.py),
  // and any input the fuzzer ever found crashing, kept there.
  int loaded = 0, refused = 0;
  for (const auto& e : std::filesystem::directory_iterator("tests/fuzz/corpus_safetensors")) {
    const Bytes b = test::read_bytes(e.path().string());
    CAPTURE(e.path().string());
    const std::string why = refusal(b);
    const bool attack = e.path().filename().string().rfind("attack_", 0) == 0;
    CHECK((why == "(no heed::Error thrown)") == (!attack && e.path().filename() != "dtypes.safetensors"));
    (why == "(no heed::Error thrown)" ? loaded : refused)++;
  }
  CHECK(loaded >= 3);
  CHECK(refused >= 8);
}
