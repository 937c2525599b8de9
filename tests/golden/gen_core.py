"""gen_core.py - PyTorch goldens for heed's core ops -> tests/golden/core.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_core.py   (or `make goldens`)
Checked by tests/test_golden_core.cpp. Each case stores its inputs, out, dy and
grad_<input> (see golden.py); inputs are drawn in float32 so that heed's float build
and torch's float64 reference start from identical values. Keep tensors small: the
.bin file is committed.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

torch.manual_seed(0)  # every case also draws from its own seeded generator


def randn32(shape, seed, scale=1.0):
    """float32 N(0, scale^2) values from a generator of their own."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32) * scale


def masked_rows():
    """(4, 6) with -inf in some positions of each row; no row is fully masked
    (PyTorch's softmax gives NaN there, heed gives zeros: not comparable)."""
    x = randn32((4, 6), seed=70)
    x[0, 5] = float("-inf")                         # one masked
    x[1, 0:3] = float("-inf")                       # half masked
    x[2, [0, 1, 2, 4, 5]] = float("-inf")           # all but one masked
    # row 3: nothing masked
    return x


w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "core.bin"))

# ---- softmax family: (3, 4, 5) over each dim ----
for i, d in enumerate([-1, 0, 1]):
    tag = "neg1" if d < 0 else str(d)
    w.case(f"softmax_dim{tag}", lambda x, d=d: torch.softmax(x, d), {"x": (3, 4, 5)}, seed=10 + i)
    w.case(f"log_softmax_dim{tag}", lambda x, d=d: torch.log_softmax(x, d), {"x": (3, 4, 5)}, seed=20 + i)
w.case("softmax_masked", lambda x: torch.softmax(x, -1), {"x": masked_rows()}, seed=30)
w.case("softmax_large", lambda x: torch.softmax(x, -1), {"x": randn32((4, 6), 31, 100.0)}, seed=31)
w.case("log_softmax_large", lambda x: torch.log_softmax(x, -1), {"x": randn32((4, 6), 32, 100.0)}, seed=32)

# ---- matmul with broadcasting ----
mm = lambda a, b: a @ b  # noqa: E731
w.case("matmul_3d_2d", mm, {"a": (2, 3, 4), "b": (4, 5)}, seed=40)
w.case("matmul_4d_3d", mm, {"a": (2, 1, 3, 4), "b": (3, 4, 2)}, seed=41)
w.case("matmul_2d_3d", mm, {"a": (3, 4), "b": (2, 4, 5)}, seed=42)
w.case("matmul_1d_2d", mm, {"a": (4,), "b": (4, 5)}, seed=43)
w.case("matmul_2d_1d", mm, {"a": (3, 4), "b": (4,)}, seed=44)
w.case("matmul_1d_1d", mm, {"a": (4,), "b": (4,)}, seed=45)
w.case("matmul_q_kT", lambda q, k: q @ k.transpose(-2, -1), {"q": (2, 3, 4), "k": (2, 5, 4)}, seed=46)

# ---- elementwise nonlinearities ----
span = torch.linspace(-6, 6, 50, dtype=torch.float32)
w.case("gelu_exact", lambda x: F.gelu(x), {"x": span}, seed=50)
w.case("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), {"x": span}, seed=51)
w.case("tanh", torch.tanh, {"x": randn32((4, 5), 52, 2.0)}, seed=52)
w.case("sigmoid", torch.sigmoid, {"x": randn32((4, 5), 53, 4.0)}, seed=53)
w.case("elu", lambda x: F.elu(x), {"x": randn32((4, 5), 54, 2.0)}, seed=54)
w.case("elu_alpha0.5", lambda x: F.elu(x, alpha=0.5), {"x": randn32((4, 5), 55, 2.0)}, seed=55)
w.case("leaky_relu", lambda x: F.leaky_relu(x), {"x": randn32((4, 5), 56, 2.0)}, seed=56)
w.case("leaky_relu_0.2", lambda x: F.leaky_relu(x, 0.2), {"x": randn32((4, 5), 57, 2.0)}, seed=57)
# softplus: the default (beta 1, threshold 20), a beta and threshold whose linear region
# (beta x > threshold) some inputs reach, and both tails: e^x tiny (log1p keeps it), and x
# at and past the threshold up to where a composed log1p(exp(x)) overflows float.
w.case("softplus", lambda x: F.softplus(x), {"x": randn32((4, 5), 58, 4.0)}, seed=58)
w.case("softplus_beta2_t5", lambda x: F.softplus(x, beta=2, threshold=5),
       {"x": randn32((4, 5), 59, 3.0)}, seed=59)
w.case("softplus_negative_tail", lambda x: F.softplus(x),
       {"x": torch.tensor([-80.0, -50.0, -30.0, -15.0, -5.0])}, seed=60)
w.case("softplus_linear_region", lambda x: F.softplus(x),
       {"x": torch.tensor([15.0, 19.5, 20.5, 30.0, 88.0, 100.0, 1000.0])}, seed=61)

# ---- reductions ----
w.case("var_dim1_unbiased", lambda x: torch.var(x, 1, unbiased=True), {"x": (3, 4, 5)}, seed=60)
w.case("mean_dim1", lambda x: torch.mean(x, 1), {"x": (3, 4, 5)}, seed=61)
w.case("mean_dimneg1_keepdim", lambda x: torch.mean(x, -1, keepdim=True), {"x": (3, 4, 5)}, seed=62)

w.write()
