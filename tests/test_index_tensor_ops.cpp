// test_index_tensor_ops.cpp - the operations a training loop does on ids (IndexTensor,
// core/tensor.h): shape changes, select / narrow / slice with a step, index with Slice,
// cat / stack, item, eq / ne with sum and mean (accuracy), fill_, defined(), printing, and
// argmax / topk of a Tensor feeding them; each bounds-checked with a heed::Error naming the
// op and the values.
#include <sstream>

#include <heed/autograd/ops/reduce.h>
#include <heed/autograd/ops/topk.h>
#include "helpers.h"

using namespace heed;
using namespace heed::indexing;
using heed::test::error_of;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

IndexTensor iota(const Shape& s) {
  std::vector<int64_t> v(s.numel());
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i);
  return IndexTensor(v, s);
}

}  // namespace

TEST_CASE("IndexTensor: defined(), numel, item and item<T>") {
  IndexTensor none;
  CHECK_FALSE(none.defined());
  CHECK(none.numel() == 0);
  CHECK(contains(error_of([&] { none.select(0, 0); }), "select: use of an undefined IndexTensor"));
  CHECK(contains(error_of([&] { none.item(); }), "item: use of an undefined IndexTensor"));
  IndexTensor one({7}, Shape{});
  CHECK(one.defined());
  CHECK(one.numel() == 1);
  CHECK(one.item() == 7);
  CHECK(one.item<int64_t>() == 7);
  CHECK(one.item<int>() == 7);
  CHECK(one.item<double>() == 7.0);
  CHECK(IndexTensor({int64_t(1) << 40}).item<int64_t>() == int64_t(1) << 40);
  CHECK(contains(error_of([] { IndexTensor({int64_t(1) << 40}).item<int32_t>(); }),
                 "item: the value 1.09951e+12 does not fit"));
  CHECK(contains(error_of([] { IndexTensor({-1}).item<uint32_t>(); }), "item: the value -1"));
  CHECK(contains(error_of([] { IndexTensor({1, 2}).item(); }), "item: only a one-element IndexTensor has an item; shape is (2)"));
  CHECK(iota({2, 3}).at({1, 2}) == 5);
  CHECK(contains(error_of([] { iota({2, 3}).at({2, 0}); }), "at: index 2 out of range for dim 0 of shape (2,3)"));
}

TEST_CASE("IndexTensor: select, narrow, slice with a step and index, as Tensor's") {
  const IndexTensor t = iota({2, 4});  // [[0 1 2 3] [4 5 6 7]]: targets (B, T)
  CHECK(t.select(1, 2).vec() == std::vector<int64_t>{2, 6});   // target[:, 2], teacher forcing
  CHECK(t.select(1, -1).vec() == std::vector<int64_t>{3, 7});
  CHECK(t.select(0, 1).shape() == Shape{4});
  CHECK(t.narrow(1, 1, 2).vec() == std::vector<int64_t>{1, 2, 5, 6});
  CHECK(t.narrow(1, 1, 2).shape() == Shape{2, 2});
  CHECK(t.slice(1, 0, 4, 2).vec() == std::vector<int64_t>{0, 2, 4, 6});
  CHECK(t.slice(1, 1).vec() == std::vector<int64_t>{1, 2, 3, 5, 6, 7});
  CHECK(t.slice(1, -2, 100).vec() == std::vector<int64_t>{2, 3, 6, 7});
  CHECK(t.index({Slice(), Slice(1, None, 2)}).vec() == std::vector<int64_t>{1, 3, 5, 7});
  CHECK(t.index({-1, Slice(None, -1)}).vec() == std::vector<int64_t>{4, 5, 6});
  CHECK(t.index({None, 0}).shape() == Shape{1, 4});
  CHECK(contains(error_of([&] { t.select(1, 4); }), "select: index 4 is out of range for dim 1 of shape (2,4) (size 4)"));
  CHECK(contains(error_of([&] { t.select(2, 0); }), "select: dim 2 out of range for a tensor of rank 2"));
  CHECK(contains(error_of([&] { t.narrow(1, 3, 2); }), "narrow: start 3 length 2 out of range for dim 1 of shape (2,4)"));
  CHECK(contains(error_of([&] { t.slice(1, 0, 4, 0); }), "slice: step must be >= 1, got 0"));
  CHECK(contains(error_of([&] { t.index({0, 9}); }), "index: index 9 is out of range for dim 1 of size 4"));
  CHECK(contains(error_of([&] { IndexTensor({1}, Shape{}).select(0, 0); }), "select: cannot select from a 0-dim"));
}

TEST_CASE("IndexTensor: reshape, view, flatten, squeeze, unsqueeze, transpose, permute") {
  const IndexTensor t = iota({2, 3});
  CHECK(t.reshape({3, -1}).shape() == Shape{3, 2});
  CHECK(t.view({6}).vec() == t.vec());
  CHECK(iota({2, 1, 3}).flatten().shape() == Shape{6});
  CHECK(iota({2, 1, 3}).flatten(1).shape() == Shape{2, 3});
  CHECK(contains(error_of([&] { t.reshape({4, -1}); }), "IndexTensor::reshape: cannot reshape (2,3) to (4,-1)"));
  CHECK(contains(error_of([&] { t.reshape({5}); }), "cannot reshape (2,3) (6 ids) to (5)"));
  CHECK(contains(error_of([&] { t.reshape({-1, -1}); }), "only one dim can be -1"));
  const IndexTensor col = iota({3, 1});  // topi of shape (B, 1)
  CHECK(col.squeeze(-1).shape() == Shape{3});
  CHECK(col.squeeze(0).shape() == Shape{3, 1});  // size 3: left as it is, as PyTorch
  CHECK(iota({1, 3, 1}).squeeze().shape() == Shape{3});
  CHECK(t.unsqueeze(1).shape() == Shape{2, 1, 3});
  CHECK(t.unsqueeze(-1).shape() == Shape{2, 3, 1});
  CHECK(contains(error_of([&] { t.unsqueeze(4); }), "unsqueeze: dim 4 out of range"));
  const IndexTensor tt = t.transpose(0, 1);
  CHECK(tt.shape() == Shape{3, 2});
  CHECK(tt.vec() == std::vector<int64_t>{0, 3, 1, 4, 2, 5});
  CHECK(iota({2, 3, 4}).permute({2, 0, 1}).at({3, 1, 2}) == iota({2, 3, 4}).at({1, 2, 3}));
  CHECK(contains(error_of([&] { t.permute({0, 0}); }), "permute: dim 0 appears twice"));
  CHECK(contains(error_of([&] { t.transpose(0, 2); }), "transpose: dim 2 out of range"));
}

TEST_CASE("IndexTensor: cat and stack, and their errors") {
  const IndexTensor a = iota({2, 2}), b = IndexTensor({9, 8}, {2, 1});
  const IndexTensor c = cat({a, b}, 1);
  CHECK(c.shape() == Shape{2, 3});
  CHECK(c.vec() == std::vector<int64_t>{0, 1, 9, 2, 3, 8});
  CHECK(cat({a, a}).shape() == Shape{4, 2});
  const IndexTensor s = stack({IndexTensor({1, 2}), IndexTensor({3, 4})}, 1);
  CHECK(s.shape() == Shape{2, 2});
  CHECK(s.vec() == std::vector<int64_t>{1, 3, 2, 4});
  CHECK(stack({IndexTensor({5}, Shape{}), IndexTensor({6}, Shape{})}).vec() == std::vector<int64_t>{5, 6});
  CHECK(contains(error_of([&] { cat({a, b}, 0); }), "cat: shapes (2,2) and (2,1) differ outside dim 0"));
  CHECK(contains(error_of([&] { stack({a, b}); }), "stack: shapes (2,2) and (2,1) differ"));
  CHECK(contains(error_of([] { cat(std::vector<IndexTensor>{}); }), "cat: needs at least one IndexTensor"));
  CHECK(contains(error_of([&] { cat({a, IndexTensor()}); }), "cat: use of an undefined IndexTensor"));
}

TEST_CASE("IndexTensor: accuracy from argmax and topk with eq, ne, sum and mean") {
  Tensor logits = from_vector({0.1f, 2, 0.3f,  //
                               5, 1, 0,        //
                               0, 0, 9,        //
                               1, 3, 2},
                              {4, 3});
  const IndexTensor target({1, 0, 1, 1});
  const IndexTensor pred = logits.argmax(1);
  CHECK(pred.vec() == std::vector<int64_t>{1, 0, 2, 1});
  const IndexTensor hit = pred.eq(target);
  CHECK(hit.vec() == std::vector<int64_t>{1, 1, 0, 1});
  CHECK(hit.sum().item<int64_t>() == 3);
  CHECK(hit.mean().item() == doctest::Approx(0.75));
  CHECK(pred.ne(target).sum().item() == 1);
  CHECK(pred.eq(2).vec() == std::vector<int64_t>{0, 0, 1, 0});
  CHECK(pred.ne(1).sum().item() == 2);
  const IndexTensor top2 = logits.topk(2, 1).indices;  // (4, 2)
  CHECK(top2.select(1, 0).vec() == pred.vec());
  // any of the top 2 right: broadcast target (4, 1) against (4, 2)
  CHECK(top2.eq(target.unsqueeze(1)).sum(1).sum().item() == 3);  // row 2: top 2 are {2, 0}
  CHECK(top2.eq(target.unsqueeze(1)).sum(0, true).shape() == Shape{1, 2});
  CHECK(contains(error_of([&] { pred.eq(IndexTensor({1, 2, 3})); }), "eq"));
  CHECK(contains(error_of([&] { IndexTensor(std::vector<int64_t>{}).mean(); }), "mean: mean of an empty IndexTensor"));
  CHECK(hit.to_tensor().shape() == Shape{4});
  CHECK(hit.to_tensor().sum().item() == 3);
}

TEST_CASE("IndexTensor: fill_ changes only its own ids (a value type), and printing") {
  IndexTensor a = iota({2, 2});
  IndexTensor b = a;
  a.fill_(3);
  CHECK(a.vec() == std::vector<int64_t>{3, 3, 3, 3});
  CHECK(b.vec() == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(contains(error_of([] { IndexTensor().fill_(0); }), "fill_: use of an undefined IndexTensor"));
  std::ostringstream os;
  os << iota({2, 2}) << " | " << IndexTensor({4, 5}) << " | " << IndexTensor();
  CHECK(os.str() == " 0  1\n 2  3\n[ CPULongType{2,2} ] |  4\n 5\n[ CPULongType{2} ] | [ Tensor (undefined) ]");
}

TEST_CASE("subscripts: t[i] and at() count negative indices from the end and refuse [-n, n)'s outside") {
  const IndexTensor ids({4, 5, 6});
  CHECK(ids[0] == 4);
  CHECK(ids[-1] == 6);
  CHECK(ids[-3] == 4);
  for (int64_t i : {int64_t(3), int64_t(-4), int64_t(100000000)}) {
    CAPTURE(i);
    const std::string msg = error_of([&] { (void)ids[i]; });
    CHECK(contains(msg, "IndexTensor[]"));
    CHECK(contains(msg, "index " + std::to_string(i)));
    CHECK(contains(msg, "size 3"));
  }
  CHECK(contains(error_of([] { (void)IndexTensor()[0]; }), "size 0"));
  CHECK(iota({2, 3}).at({-1, -1}) == 5);
  CHECK(contains(error_of([] { iota({2, 3}).at({0, -4}); }), "at: index -4 out of range for dim 1 of shape (2,3)"));
  const Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(x.at({-1, 0}) == 4);
  CHECK(contains(error_of([&] { x.at({2, 0}); }), "at: index 2 out of range for dim 0 of shape (2,3)"));
  // a shape, as a Python shape: s[-1] is the last dim; outside the rank, an error (it read
  // the unused inline dims, or past them)
  const Shape s{2, 3};
  CHECK(s[-1] == 3);
  CHECK(s[-2] == 2);
  CHECK(s.back() == 3);
  for (int i : {2, 7, 8, 1000, -3}) {
    CAPTURE(i);
    CHECK(contains(error_of([&] { (void)s[i]; }), "Shape[]: index " + std::to_string(i) + " is out of range for size 2"));
  }
  CHECK(contains(error_of([] { (void)Shape().back(); }), "Shape[]: index -1 is out of range for size 0"));
}
