// gradcheck_indexing.cpp - finite-difference checks (double build) of index_select and gather,
// with repeated ids so the scatter-add backward is exercised.
#include <random>

#include <heed/core/random.h>
#include <heed/autograd/ops/arith.h>
#include <heed/autograd/ops/indexing.h>
#include "helpers.h"

using namespace heed;
using heed::test::random_ids;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck indexing: index_select along dims 0, 1 and -1 with repeated ids") {
  manual_seed(21);
  Tensor x = param({5, 4, 3});
  const IndexTensor rows({4, 0, 4, 2, 0, 0});
  const IndexTensor cols({3, 1, 3});
  const IndexTensor last({2, 2, 0, 1, 2});
  check_grad([&](const V& v) { return index_select(v[0], 0, rows); }, {x});
  check_grad([&](const V& v) { return index_select(v[0], 1, cols); }, {x});
  check_grad([&](const V& v) { return index_select(v[0], -1, last); }, {x});
  // an embedding lookup: a (V, C) table and a (N) batch of token ids
  Tensor table = param({6, 4});
  const IndexTensor tokens({1, 5, 1, 1, 3});
  check_grad([&](const V& v) { return index_select(v[0], 0, tokens) * 2.0; }, {table});
}

TEST_CASE("gradcheck indexing: gather along each dim") {
  manual_seed(22);
  const Shape xs{3, 4, 5};
  Tensor x = param(xs);
  for (int d = 0; d < 3; ++d) {
    CAPTURE(d);
    // smaller than x outside d, longer than x along d (so ids must repeat)
    Shape is{2, 3, 4};
    is[d] = xs[d] + 2;
    const IndexTensor idx = random_ids(is, xs[d], 100 + d);
    check_grad([&](const V& v) { return gather(v[0], d, idx); }, {x});
    // the full shape of x, and the same dim counted from the end
    Shape full = xs;
    const IndexTensor idx_full = random_ids(full, xs[d], 200 + d);
    check_grad([&](const V& v) { return gather(v[0], d - 3, idx_full); }, {x});
  }
  // cross-entropy's use: one entry per row of (N, V) log-probabilities
  Tensor logp = param({4, 6});
  const IndexTensor target({5, 0, 5, 2}, {4, 1});
  check_grad([&](const V& v) { return gather(v[0], 1, target); }, {logp});
}
