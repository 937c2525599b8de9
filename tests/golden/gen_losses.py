"""gen_losses.py - PyTorch goldens for heed's losses (layers/loss.h) -> tests/golden/losses.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_losses.py   (or `make goldens`)
Checked by tests/test_golden_losses.cpp. Each case stores its inputs, out, dy and
grad_<input> (see golden.py). Class targets, class weights and pos_weight are consts (no
gradient); targets are stored as float32 whole numbers and read back as indices.
Every case keeps at least one target that is not ignored (with all ignored, PyTorch gives
NaN and heed gives 0 by design: not comparable).
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

torch.manual_seed(0)  # every case also draws from its own seeded generator


def ids(values, shape=None):
    """Class targets as a float32 tensor (golden files hold float64 arrays)."""
    t = torch.tensor(values, dtype=torch.float32)
    return t.reshape(shape) if shape is not None else t


def f32(values):
    return torch.tensor(values, dtype=torch.float32)


w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "losses.bin"))

# ---- cross_entropy: (N, C) with ignored rows and label smoothing, each reduction ----
t6 = ids([3, -100, 0, 2, -100, 1])
for i, red in enumerate(["mean", "sum", "none"]):
    w.case(f"ce_ignore_smooth_{red}",
           lambda x, target, red=red: F.cross_entropy(x, target.long(), ignore_index=-100,
                                                      label_smoothing=0.1, reduction=red),
           {"x": (6, 4)}, consts={"target": t6}, seed=100 + i)
w.case("ce_plain_mean", lambda x, target: F.cross_entropy(x, target.long()),
       {"x": (6, 4)}, consts={"target": ids([3, 1, 0, 2, 2, 1])}, seed=103)
w.case("ce_ignore_index0_mean",
       lambda x, target: F.cross_entropy(x, target.long(), ignore_index=0, label_smoothing=0.2),
       {"x": (6, 4)}, consts={"target": ids([3, 0, 0, 2, 1, 0])}, seed=104)
for i, red in enumerate(["mean", "sum", "none"]):
    w.case(f"ce_weight_ignore_smooth_{red}",
           lambda x, target, weight, red=red: F.cross_entropy(
               x, target.long(), weight=weight, ignore_index=-100, label_smoothing=0.1,
               reduction=red),
           {"x": (6, 4)}, consts={"target": t6, "weight": f32([0.5, 2.0, 1.0, 1.5])},
           seed=105 + i)
# (N, C, d): class dim 1, targets (N, d)
t3 = ids([0, 3, -100, 1, 2, 2, -100, 0, 1], (3, 3))
for i, red in enumerate(["mean", "none"]):
    w.case(f"ce_3d_ignore_smooth_{red}",
           lambda x, target, red=red: F.cross_entropy(x, target.long(), label_smoothing=0.2,
                                                      reduction=red),
           {"x": (3, 4, 3)}, consts={"target": t3}, seed=110 + i)

# ---- nll_loss on log-probabilities ----
for i, red in enumerate(["mean", "sum", "none"]):
    w.case(f"nll_ignore_weight_{red}",
           lambda x, target, weight, red=red: F.nll_loss(
               torch.log_softmax(x, 1), target.long(), weight=weight, reduction=red),
           {"x": (6, 4)}, consts={"target": t6, "weight": f32([0.5, 2.0, 1.0, 1.5])},
           seed=120 + i)

# ---- mse_loss: gradients into input and target ----
for i, red in enumerate(["mean", "sum", "none"]):
    w.case(f"mse_{red}", lambda x, y, red=red: F.mse_loss(x, y, reduction=red),
           {"x": (3, 5), "y": (3, 5)}, seed=130 + i)

# ---- binary_cross_entropy_with_logits: soft targets in [0, 1], pos_weight per class ----
def soft_targets(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand((4, 3), generator=g, dtype=torch.float32)


def logits(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn((4, 3), generator=g, dtype=torch.float32) * 3


for i, red in enumerate(["mean", "sum", "none"]):
    w.case(f"bce_{red}",
           lambda x, y, red=red: F.binary_cross_entropy_with_logits(x, y, reduction=red),
           {"x": logits(140 + i), "y": soft_targets(150 + i)}, seed=140 + i)
    w.case(f"bce_pos_weight_weight_{red}",
           lambda x, y, pos_weight, weight, red=red: F.binary_cross_entropy_with_logits(
               x, y, weight=weight, pos_weight=pos_weight, reduction=red),
           {"x": logits(160 + i), "y": soft_targets(170 + i)},
           consts={"pos_weight": f32([2.0, 0.5, 1.0]), "weight": f32([[1.0], [0.0], [2.0], [0.5]])},
           seed=160 + i)

# ---- binary_cross_entropy on probabilities, gradients into p and the soft targets ----
def probs(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.rand((4, 3), generator=g, dtype=torch.float32) * 0.9 + 0.05


for i, red in enumerate(["mean", "sum", "none"]):
    w.case(f"bce_probs_{red}", lambda p, y, red=red: F.binary_cross_entropy(p, y, reduction=red),
           {"p": probs(180 + i), "y": soft_targets(190 + i)}, seed=180 + i)
w.case("bce_probs_weight_mean", lambda p, y, weight: F.binary_cross_entropy(p, y, weight=weight),
       {"p": probs(183), "y": soft_targets(193)}, consts={"weight": f32([[1.0], [0.0], [2.0], [0.5]])},
       seed=183)

# ---- soft_margin_loss, +-1 targets (a constant: PyTorch does not differentiate them), each reduction ----
def signs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand((4, 3), generator=g) < 0.5).float() * 2 - 1


for i, red in enumerate(["mean", "sum", "none"]):
    w.case(f"soft_margin_{red}", lambda x, y, red=red: F.soft_margin_loss(x, y, reduction=red),
           {"x": logits(200 + i)}, consts={"y": signs(210 + i)}, seed=200 + i)

w.write()
