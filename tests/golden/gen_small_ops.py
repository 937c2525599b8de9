"""gen_small_ops.py - PyTorch goldens for log1p, F.normalize and F.mish -> tests/golden/small_ops.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_small_ops.py   (or `make goldens`)
Checked by tests/test_golden_small_ops.cpp; the format and the rule are golden.py's.
A new small op adds its cases here (README, "Adding an op").
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "small_ops.bin"))

# log1p on (-1, 4], including values where log(1 + x) would lose digits
g = torch.Generator().manual_seed(80)
x = torch.rand((4, 6), generator=g, dtype=torch.float32) * 4.9 - 0.9
x[0, :3] = torch.tensor([1e-7, -3e-6, 2e-4])
w.case("log1p", torch.log1p, {"x": x}, seed=80)

# normalize: p = 2 over dims 1 and -1, p = 1 and p = 3, and a row of zeros (eps wins)
w.case("normalize_p2_dim1", lambda x: F.normalize(x), {"x": (3, 4, 5)}, seed=81)
w.case("normalize_p2_dimneg1", lambda x: F.normalize(x, dim=-1), {"x": (3, 4, 5)}, seed=82)
w.case("normalize_p1_dim0", lambda x: F.normalize(x, p=1, dim=0), {"x": (4, 5)}, seed=83)
w.case("normalize_p3_dim1", lambda x: F.normalize(x, p=3, dim=1), {"x": (4, 5)}, seed=84)
z = torch.randn((3, 5), generator=torch.Generator().manual_seed(85), dtype=torch.float32)
z[1] = 0
w.case("normalize_zero_row", lambda x: F.normalize(x, dim=1), {"x": z}, seed=85)

# mish on [-8, 8], past where e^x overflows float (x = 100: y = x), and its negative tail
# (y = x e^x to 5 digits: checked with atol 0)
m = torch.cat([torch.linspace(-8, 8, 33, dtype=torch.float32), torch.tensor([30.0, 88.5, 100.0])])
w.case("mish", lambda x: F.mish(x), {"x": m}, seed=86)
w.case("mish_negative_tail", lambda x: F.mish(x), {"x": torch.tensor([-30.0, -20.0, -15.0, -10.0])}, seed=87)

w.write()
