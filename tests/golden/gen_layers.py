"""gen_layers.py - PyTorch goldens for heed's layers -> tests/golden/layers.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_layers.py   (or `make goldens`)
Checked by tests/test_golden_layers.cpp, which loads each case's parameters into the heed
module, runs it on the same input and compares the output, the input gradient and every
parameter gradient. Here each torch module runs with the case's tensors as its parameters
(functional_call), so the gradients land on the stored inputs. Parameter arrays are named
after the module's own parameters ("weight", "bias"; "w0"/"b0" for Sequential index 0).
"""
import os
import sys

import torch
import torch.nn as nn
from torch.nn.utils.stateless import functional_call

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

torch.manual_seed(0)  # module construction draws from it; the values used come from the cases


def randn32(shape, seed, scale=1.0, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32) * scale + shift


def call(module, params, *args):
    """module(*args) with `params` (name -> tensor) standing in for its parameters."""
    return functional_call(module.double(), params, args)


w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers.bin"))

# ---- Linear(4, 5) on a (2, 3, 4) input, with and without bias ----
lin = nn.Linear(4, 5)
w.case("linear_3d", lambda x, weight, bias: call(lin, {"weight": weight, "bias": bias}, x),
       {"x": (2, 3, 4), "weight": randn32((5, 4), 101, 0.5), "bias": randn32((5,), 102, 0.5)}, seed=100)
lin_nb = nn.Linear(4, 5, bias=False)
w.case("linear_3d_nobias", lambda x, weight: call(lin_nb, {"weight": weight}, x),
       {"x": (2, 3, 4), "weight": randn32((5, 4), 104, 0.5)}, seed=103)

# ---- Embedding(10, 4, padding_idx=0) on (2, 5) ids with repeats and padding ----
emb = nn.Embedding(10, 4, padding_idx=0)
table = randn32((10, 4), 111)
table[0] = 0  # as nn.Embedding initialises the padding row
ids = torch.tensor([[3, 1, 0, 3, 9], [0, 0, 7, 3, 2]], dtype=torch.float32)
w.case("embedding_pad0", lambda weight, ids: call(emb, {"weight": weight}, ids.long()),
       {"weight": table}, seed=110, consts={"ids": ids})

# ---- LayerNorm: one normalized dim with affine, two dims with affine, no affine ----
ln8 = nn.LayerNorm(8)
w.case("layer_norm_8", lambda x, weight, bias: call(ln8, {"weight": weight, "bias": bias}, x),
       {"x": randn32((2, 3, 8), 121, 2.0, 1.0), "weight": randn32((8,), 122, 0.5, 1.0),
        "bias": randn32((8,), 123, 0.5)}, seed=120)
ln34 = nn.LayerNorm([3, 4], eps=1e-6)
w.case("layer_norm_3x4", lambda x, weight, bias: call(ln34, {"weight": weight, "bias": bias}, x),
       {"x": (2, 3, 4), "weight": randn32((3, 4), 132, 0.5, 1.0), "bias": randn32((3, 4), 133, 0.5)},
       seed=130)
ln_plain = nn.LayerNorm(6, elementwise_affine=False)
w.case("layer_norm_noaffine", lambda x: call(ln_plain, {}, x), {"x": (4, 6)}, seed=140)

# ---- Sequential(Linear(4, 6), GELU(), Linear(6, 3), Tanh()): names 0.* and 2.* ----
mlp = nn.Sequential(nn.Linear(4, 6), nn.GELU(), nn.Linear(6, 3), nn.Tanh())
w.case("mlp", lambda x, w0, b0, w2, b2: call(mlp, {"0.weight": w0, "0.bias": b0, "2.weight": w2,
                                                   "2.bias": b2}, x),
       {"x": (5, 4), "w0": randn32((6, 4), 151, 0.5), "b0": randn32((6,), 152, 0.5),
        "w2": randn32((3, 6), 153, 0.5), "b2": randn32((3,), 154, 0.5)}, seed=150)

# ---- PReLU(3) on (2, 3, 4): one slope per channel (dim 1); PReLU() on (2, 5) with an exact
# 0 in x (its gradient is w's side, as PyTorch's), and a negative slope ----
prelu3 = nn.PReLU(3)
w.case("prelu_channels", lambda x, weight: call(prelu3, {"weight": weight}, x),
       {"x": (2, 3, 4), "weight": randn32((3,), 161, 0.5)}, seed=160)
prelu1 = nn.PReLU()
xz = randn32((2, 5), 171)
xz[0, 2] = 0
w.case("prelu_one", lambda x, weight: call(prelu1, {"weight": weight}, x),
       {"x": xz, "weight": torch.tensor([-0.3])}, seed=170)

w.write()
