"""gen_bf16.py - PyTorch bf16 autocast goldens for heed's "medium" matmul precision
-> tests/golden/bf16.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_bf16.py   (or `make goldens`)
Checked by tests/test_golden_bf16.cpp, with heed under set_float32_matmul_precision("medium").

Unlike GoldenWriter.case (float64 throughout), each case here runs in float32 under
torch.autocast("cpu", dtype=torch.bfloat16), as a user turns bf16 on: autocast casts the
inputs of linear and matmul to bfloat16 and returns bfloat16, and the backward's products run
in bfloat16 too; the leaves stay float32. A case stores

    <input>...      the float32 inputs (stored as float64)
    out             the autocast result (bfloat16 values stored as float64)
    dy              a fixed random upstream gradient
    grad_<input>    d sum(out * dy) / d input, as autocast's backward computes it

heed differs by design where autocast rounds more than heed does: autocast rounds outputs,
the bias and the softmax to bfloat16, heed only the inputs of each product. So the two agree
to bfloat16's tolerance (a few units of 2^-8), not to float32's.
"""
import math
import os
import sys
from collections import OrderedDict

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402


def autocast_case(w, name, seed, shapes, fn):
    gen = torch.Generator().manual_seed(seed)
    xs = OrderedDict((k, torch.randn(s, generator=gen, dtype=torch.float32).requires_grad_())
                     for k, s in shapes.items())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = fn(**xs)
    assert out.dtype == torch.bfloat16, f"{name}: autocast did not run in bfloat16"
    out = out.float()
    dy = torch.randn(out.shape, generator=gen, dtype=torch.float32)
    (out * dy).sum().backward()
    arrays = OrderedDict((k, x.detach()) for k, x in xs.items())
    arrays["out"] = out
    arrays["dy"] = dy
    for k, x in xs.items():
        arrays["grad_" + k] = x.grad
    w.add(name, arrays)


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(d) + causal mask) v, as nanoGPT's attention without flash."""
    T = q.shape[-2]
    s = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    s = s.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf"))
    return torch.matmul(F.softmax(s, dim=-1), v)


def main():
    w = GoldenWriter("tests/golden/bf16.bin")
    autocast_case(w, "linear", 1, {"x": (3, 5, 48), "weight": (24, 48), "bias": (24,)},
                  lambda x, weight, bias: F.linear(x, weight, bias))
    autocast_case(w, "matmul_batched", 2, {"a": (2, 3, 7, 40), "b": (2, 3, 40, 9)},
                  lambda a, b: torch.matmul(a, b))
    autocast_case(w, "attention_causal", 3, {"q": (2, 3, 20, 16), "k": (2, 3, 20, 16), "v": (2, 3, 20, 16)},
                  causal_attention)
    w.write()


if __name__ == "__main__":
    main()
