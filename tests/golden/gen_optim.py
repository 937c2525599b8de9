"""gen_optim.py - PyTorch goldens for heed's optimizers, schedules and clipping -> optim.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_optim.py   (or `make goldens`)
Checked by tests/test_golden_optim.cpp, which repeats the hyper-parameters below.

Trajectories: the same small linear regression in torch and heed,
    loss = mean((X @ W + b - Y)^2)        X (8,4)  Y (8,3)  W (4,3)  b (3)
plus a parameter `u` (2) that is in the optimizer but not in the loss (no gradient: it
must be skipped). Each case stores X, Y, the initial W, b, u (float32 values), the loss
before each of the 20 steps, W and b after steps 1, 2, 5, 10, 20, group 0's lr at each
step (the schedule cases), and the optimizer's final state under heed's names
("group<g>.param<p>.<slot>", see optim/optimizer.h). Torch runs in float64; the script
checks that a float32 torch run stays within 1e-6 of it, so the problem is well
conditioned for heed's float32 build at 1e-5.

Schedules: lr for steps 0..39 (heed's step k = the rate after k scheduler.step() calls).
Where torch has the schedule (StepLR; CosineAnnealingLR and LinearLR after a warmup) the
script checks that torch agrees with the closed form it stores.

Clipping: torch.nn.utils.clip_grad_norm_ / clip_grad_value_ on three gradients.
"""
import math
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

# SequentialLR passes an epoch to its children's step() internally, which torch 1.13 warns about
warnings.filterwarnings("ignore", message="The epoch parameter")

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 20
SNAPSHOTS = [1, 2, 5, 10, 20]


def randn32(shape, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32) * scale


# ---- the closed forms of optim/schedule.h ----
def transformer_warmup(step, d_model, warmup, scale):
    n = step + 1
    return scale * d_model ** -0.5 * min(n ** -0.5, n * warmup ** -1.5)


def warmup_cosine(step, lr, warmup, total, min_lr):
    if step < warmup:
        return lr * (step / warmup)
    q = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_lr + (lr - min_lr) * 0.5 * (1 + math.cos(math.pi * q))


def warmup_linear(step, lr, warmup, total, min_lr=0.0):
    if step < warmup:
        return lr * (step / warmup)
    return min_lr + (lr - min_lr) * max(0.0, (total - step) / max(1, total - warmup))


def constant(step, lr, warmup):
    return lr * (step / warmup) if step < warmup else lr


# ---- trajectories ----
PROBLEM = dict(X=randn32((8, 4), 1), Y=randn32((8, 3), 2), W=randn32((4, 3), 3, 0.5),
               b=randn32((3,), 4, 0.5), u=randn32((2,), 5))

SLOTS = {torch.optim.SGD: ["momentum_buffer"],
         torch.optim.Adam: ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"],
         torch.optim.AdamW: ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"],
         torch.optim.RMSprop: ["square_avg", "momentum_buffer", "grad_avg"]}

# name: (optimizer class, defaults, group layout, extra options for group 1, schedule)
#   layout "one":  [W, b, u] in one group;  "two": [W] and [b, u] (group 1 with the extras)
#   schedule: None, or a function (optimizer) -> torch scheduler
CASES = {
    "sgd": (torch.optim.SGD, dict(lr=0.1), "one", None, None),
    "sgd_momentum": (torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.1), "one", None, None),
    "sgd_nesterov": (torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True), "one", None, None),
    "sgd_weight_decay": (torch.optim.SGD, dict(lr=0.1, momentum=0.5, weight_decay=0.1), "one", None, None),
    "sgd_step_decay": (torch.optim.SGD, dict(lr=0.1, momentum=0.9), "one", None,
                       lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=5, gamma=0.5)),
    "adam": (torch.optim.Adam, dict(lr=0.05), "one", None, None),
    "adam_weight_decay": (torch.optim.Adam, dict(lr=0.05, weight_decay=0.1), "one", None, None),
    "adam_large_eps": (torch.optim.Adam, dict(lr=0.05, eps=0.1), "one", None, None),  # eps placement shows
    "adam_amsgrad": (torch.optim.Adam, dict(lr=0.05, betas=(0.8, 0.99), amsgrad=True), "one", None, None),
    "adamw": (torch.optim.AdamW, dict(lr=0.05, weight_decay=0.1), "one", None, None),
    "rmsprop": (torch.optim.RMSprop, dict(lr=0.01), "one", None, None),
    "rmsprop_weight_decay": (torch.optim.RMSprop, dict(lr=0.01, weight_decay=0.1), "one", None, None),
    # with momentum, eps >= 0.05 keeps g / avg well conditioned near the minimum (float32 vs float64)
    "rmsprop_momentum": (torch.optim.RMSprop, dict(lr=0.01, momentum=0.9, eps=0.05), "one", None, None),
    "rmsprop_centered": (torch.optim.RMSprop, dict(lr=0.01, alpha=0.9, centered=True), "one", None, None),
    "rmsprop_centered_momentum": (torch.optim.RMSprop, dict(lr=0.02, alpha=0.9, eps=0.1, momentum=0.5,
                                                             centered=True), "one", None, None),
    "adam_groups": (torch.optim.Adam, dict(lr=0.05), "two", dict(lr=0.01, weight_decay=0.1), None),
    "adam_noam": (torch.optim.Adam, dict(lr=1.0, betas=(0.9, 0.98), eps=1e-9), "one", None,
                  lambda o: torch.optim.lr_scheduler.LambdaLR(
                      o, lambda k: transformer_warmup(k, 16, 5, 2.0))),
    "adamw_cosine_groups": (torch.optim.AdamW, dict(lr=0.05), "two", dict(lr=0.025), lambda o:
                            torch.optim.lr_scheduler.LambdaLR(
                                o, lambda k: warmup_cosine(k, 0.05, 5, 20, 0.005) / 0.05)),
}


def run(case, dtype):
    cls, defaults, layout, extras, schedule = CASES[case]
    p = {k: PROBLEM[k].to(dtype).clone().requires_grad_() for k in ("W", "b", "u")}
    X, Y = PROBLEM["X"].to(dtype), PROBLEM["Y"].to(dtype)
    if layout == "one":
        groups = [[p["W"], p["b"], p["u"]]]
        opt = cls(groups[0], **defaults)
    else:
        groups = [[p["W"]], [p["b"], p["u"]]]
        opt = cls([{"params": groups[0]}, dict(params=groups[1], **extras)], **defaults)
    sched = schedule(opt) if schedule else None
    out = {"loss": [], "lr": []}
    for step in range(1, STEPS + 1):
        opt.zero_grad()
        loss = ((X @ p["W"] + p["b"] - Y) ** 2).mean()
        loss.backward()
        out["loss"].append(loss.item())
        out["lr"].append(opt.param_groups[0]["lr"])
        opt.step()
        if sched:
            sched.step()
        if step in SNAPSHOTS:
            out[f"W_step{step}"] = p["W"].detach().clone()
            out[f"b_step{step}"] = p["b"].detach().clone()
    assert p["u"].grad is None and torch.equal(p["u"].detach(), PROBLEM["u"].to(dtype)), case
    for g, params in enumerate(groups):
        for i, t in enumerate(params):
            for slot in SLOTS[cls]:
                if opt.state[t].get(slot) is not None:
                    out[f"group{g}.param{i}.{slot}"] = opt.state[t][slot].detach().clone()
    return out


def check_float32_agrees(case, ref, f32):
    for k, v in ref.items():
        a, e = torch.as_tensor(f32[k], dtype=torch.float64), torch.as_tensor(v, dtype=torch.float64)
        scale = max(1.0, e.abs().max().item())
        err = ((a - e).abs() / (1e-6 * e.abs() + 1e-7 * scale)).max().item()
        assert err <= 1, f"{case}.{k}: float32 torch is {err:.2f}x beyond 1e-6 of float64; ill-conditioned"


w = GoldenWriter(os.path.join(HERE, "optim.bin"))
for case in CASES:
    ref = run(case, torch.float64)
    check_float32_agrees(case, ref, run(case, torch.float32))
    arrays = {k: PROBLEM[k] for k in ("X", "Y", "W", "b", "u")}
    arrays.update({k: (torch.tensor(v) if isinstance(v, list) else v) for k, v in ref.items()})
    w.add(case, arrays)

# ---- schedules: lr for steps 0..39 ----
N = 40


def torch_lrs(make, base_lr):
    """group 0's lr after k scheduler.step() calls, k = 0..N-1."""
    opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=base_lr)
    sched = make(opt)
    lrs = []
    for _ in range(N):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def add_schedule(name, formula, torch_make=None, base_lr=None, agree_until=N):
    lrs = [formula(k) for k in range(N)]
    if torch_make:
        theirs = torch_lrs(torch_make, base_lr)
        for k in range(agree_until):
            assert abs(theirs[k] - lrs[k]) <= 1e-12 * max(1.0, abs(lrs[k])), (name, k, theirs[k], lrs[k])
    w.add(name, {"step": torch.arange(N, dtype=torch.float64), "lr": torch.tensor(lrs, dtype=torch.float64)})


LR = torch.optim.lr_scheduler
add_schedule("sched_transformer", lambda k: transformer_warmup(k, 16, 5, 2.0),
             lambda o: LR.LambdaLR(o, lambda k: transformer_warmup(k, 16, 5, 2.0)), 1.0)
add_schedule("sched_transformer_d512", lambda k: transformer_warmup(k, 512, 10, 1.0))
# warmup by LambdaLR, then torch's own CosineAnnealingLR / LinearLR: independent of the formula
# up to total_steps (after it CosineAnnealingLR rises again, heed holds min_lr)
add_schedule("sched_cosine", lambda k: warmup_cosine(k, 0.1, 5, 30, 0.01),
             lambda o: LR.SequentialLR(o, [LR.LambdaLR(o, lambda k: k / 5),
                                           LR.CosineAnnealingLR(o, T_max=25, eta_min=0.01)], milestones=[5]),
             0.1, agree_until=31)
add_schedule("sched_cosine_nowarmup", lambda k: warmup_cosine(k, 0.1, 0, 30, 0.0))
add_schedule("sched_linear", lambda k: warmup_linear(k, 0.1, 5, 30),
             lambda o: LR.SequentialLR(o, [LR.LambdaLR(o, lambda k: k / 5),
                                           LR.LinearLR(o, 1.0, 0.0, total_iters=25)], milestones=[5]),
             0.1, agree_until=31)
add_schedule("sched_linear_min_lr", lambda k: warmup_linear(k, 0.1, 5, 30, 0.02))
add_schedule("sched_constant", lambda k: constant(k, 0.1, 4),
             lambda o: LR.LambdaLR(o, lambda k: constant(k, 1.0, 4)), 0.1)
add_schedule("sched_step", lambda k: 0.1 * 0.5 ** (k // 7),
             lambda o: LR.StepLR(o, step_size=7, gamma=0.5), 0.1)

# ---- clipping ----
GRADS = [randn32((3, 4), 20), randn32((5,), 21, 2.0), randn32((2, 2), 22, 0.1)]


def add_clip(name, clip):
    ps = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in GRADS]
    for p, g in zip(ps, GRADS):
        p.grad = g.double().clone()
    total = clip(ps)
    arrays = {f"g{i}": g for i, g in enumerate(GRADS)}
    arrays.update({f"out{i}": p.grad for i, p in enumerate(ps)})
    if total is not None:
        arrays["total"] = torch.as_tensor(total)
    w.add(name, arrays)


nn_utils = torch.nn.utils
add_clip("clip_norm2", lambda ps: nn_utils.clip_grad_norm_(ps, 1.0))
add_clip("clip_norm2_noclip", lambda ps: nn_utils.clip_grad_norm_(ps, 100.0))
add_clip("clip_norm1", lambda ps: nn_utils.clip_grad_norm_(ps, 2.0, norm_type=1))
add_clip("clip_norm3", lambda ps: nn_utils.clip_grad_norm_(ps, 0.5, norm_type=3))
add_clip("clip_norm_inf", lambda ps: nn_utils.clip_grad_norm_(ps, 0.5, norm_type=float("inf")))
add_clip("clip_value", lambda ps: nn_utils.clip_grad_value_(ps, 0.3))

w.write()
