"""gen_libtorch_ops.py - PyTorch goldens for sin, cos, norm, mm, bmm, t, expand_as, indexing
with slices, index_put, smooth_l1_loss and huber_loss -> tests/golden/libtorch_ops.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_libtorch_ops.py   (or `make goldens`)
Checked by tests/test_golden_libtorch_ops.cpp; the format and the rule are golden.py's.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtorch_ops.bin"))

w.case("sin", torch.sin, {"x": (3, 5)}, seed=900)
w.case("cos", torch.cos, {"x": (3, 5)}, seed=901)

# norms over everything, one dim, two dims, keepdim; p = 2, 1, 3, inf
w.case("norm_p2_all", lambda x: torch.norm(x), {"x": (3, 4, 5)}, seed=902)
w.case("norm_p2_dim1", lambda x: torch.norm(x, 2, 1), {"x": (3, 4, 5)}, seed=903)
w.case("norm_p1_dimneg1_keepdim", lambda x: torch.norm(x, 1, -1, keepdim=True), {"x": (3, 4, 5)}, seed=904)
w.case("norm_p3_dims02", lambda x: torch.norm(x, 3, (0, 2)), {"x": (3, 4, 5)}, seed=905)
w.case("norm_inf_dim1", lambda x: torch.linalg.vector_norm(x, float("inf"), 1), {"x": (3, 4, 5)}, seed=906)

w.case("mm", lambda a, b: torch.mm(a, b), {"a": (3, 4), "b": (4, 5)}, seed=907)
w.case("bmm", lambda a, b: torch.bmm(a, b), {"a": (2, 3, 4), "b": (2, 4, 5)}, seed=908)
w.case("t", lambda x: x.t() * 2, {"x": (3, 4)}, seed=909)
w.case("expand_as", lambda x, y: x.expand_as(y) * y, {"x": (3, 1), "y": (3, 4)}, seed=910)

# x[:, 0::2], x[1:-1, -1], x[None, ..., ::3]
w.case("index_strided", lambda x: x[:, 0::2], {"x": (4, 7)}, seed=911)
w.case("index_int", lambda x: x[1:-1, -1], {"x": (4, 7)}, seed=912)
w.case("index_none_ellipsis", lambda x: x[None, ..., ::3], {"x": (4, 7)}, seed=913)


def put(x, v):  # pe[:, 1::2] = v, differentiable in x and v
    y = x.clone()
    y[:, 1::2] = v
    return y


w.case("index_put_strided", put, {"x": (4, 7), "v": (4, 3)}, seed=914)


def put_broadcast(x, v):
    y = x.clone()
    y[1:3, ::2] = v
    return y


w.case("index_put_broadcast", put_broadcast, {"x": (4, 7), "v": (4,)}, seed=915)

for r in ["mean", "sum", "none"]:
    w.case(f"smooth_l1_{r}", lambda x, y: F.smooth_l1_loss(x, y, reduction=r),
           {"x": (4, 6), "y": (4, 6)}, seed=916)
    w.case(f"smooth_l1_beta05_{r}", lambda x, y: F.smooth_l1_loss(x, y, reduction=r, beta=0.5),
           {"x": (4, 6), "y": (4, 6)}, seed=917)
    w.case(f"huber_{r}", lambda x, y: F.huber_loss(x, y, reduction=r), {"x": (4, 6), "y": (4, 6)}, seed=918)
    w.case(f"huber_delta2_{r}", lambda x, y: F.huber_loss(x, y, reduction=r, delta=2.0),
           {"x": (4, 6), "y": (4, 6)}, seed=919)

w.write()
