// gradcheck_gru_layer.cpp - finite-difference check (double build) of the fused GRU layer op
// that nn::GRU runs (autograd/ops/gru_layer.h): padded batch, both directions, with and
// without biases, with respect to every input.
#include <heed/core/random.h>
#include <heed/autograd/ops/gru_layer.h>
#include <heed/autograd/ops/shape.h>
#include <heed/autograd/ops/views.h>
#include "helpers.h"

using namespace heed;
using heed::test::check_grad;
using heed::test::param;
using V = std::vector<Tensor>;

TEST_CASE("gradcheck gru_layer: padded (lengths 3, 1, 2), both directions") {
  manual_seed(17);
  const int64_t B = 3, T = 3, In = 2, H = 2;
  Tensor x = param({B, T, In}), h0 = param({B, H}, 0.5);
  Tensor w_ih = param({3 * H, In}, 0.5), w_hh = param({3 * H, H}, 0.5);
  Tensor b_ih = param({3 * H}, 0.5), b_hh = param({3 * H}, 0.5);
  for (bool reverse : {false, true}) {
    CAPTURE(reverse);
    check_grad([&](const V& v) {
      const GRULayerOut r = gru_layer(v[0], v[1], {v[2], v[3], v[4], v[5]}, {3, 1, 2}, reverse);
      return cat({flatten(r.out), flatten(r.h_n)}, 0);
    }, {x, h0, w_ih, w_hh, b_ih, b_hh});
    check_grad([&](const V& v) {  // no bias, every row full length
      const GRULayerOut r = gru_layer(v[0], v[1], {v[2], v[3]}, {}, reverse);
      return cat({flatten(r.out), flatten(r.h_n)}, 0);
    }, {x, h0, w_ih, w_hh});
  }
}
