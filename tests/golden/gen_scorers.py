"""gen_scorers.py - PyTorch goldens for heed's classic attention scorers -> tests/golden/scorers.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_scorers.py   (or `make goldens`)
Checked by tests/test_golden_scorers.cpp.

Each scorer is written here in PyTorch as the papers write it (a small nn.Module per
equation, with the same parameter names as heed's module), independently of heed's code:
general is s^T W_a h as an einsum, low rank builds M = Q^T K, concat builds [s_t; h_j] for
every pair, local-p multiplies the softmax by the Gaussian. Masks use heed's convention
(1 = may attend); every row keeps at least one visible key (torch gives NaN otherwise).

A case holds, in float64 (float32-drawn values, so heed's float32 inputs are exact):
    query, keys, [values], [key_padding], [positions]   the inputs and constants
    <parameter>          each parameter, named as in heed (W_s, align.W_a, ...)
    <output>, dy_<output>  each output (context and weights, or out) and its upstream grad
    grad_<x>             d sum_o(<o> * dy_<o>) / dx for every input and every parameter
"""
import math
import os
import sys
from collections import OrderedDict

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402


def randn32(shape, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32) * scale


def attend(scores, values, vis):
    """alpha = softmax(e masked to -inf where vis == 0), c = alpha @ V (steps 2-3)."""
    scores = scores.masked_fill(vis == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights


def lift(query):
    """A decoder step's query (B, Dq) as (B, 1, Dq)."""
    return (query.unsqueeze(1), True) if query.dim() == 2 else (query, False)


def drop(step, context, weights):
    return (context.squeeze(1), weights.squeeze(1)) if step else (context, weights)


class AdditiveAttention(nn.Module):
    """e_tj = v^T tanh(W_s s_t + W_h h_j + b)   (Bahdanau et al. 2015)."""

    def __init__(self, W_s, W_h, b, v):
        super().__init__()
        self.W_s, self.W_h, self.b, self.v = (nn.Parameter(t) for t in (W_s, W_h, b, v))

    def forward(self, query, keys, key_padding, values=None):
        values = keys if values is None else values  # heed's default: attend over the keys
        q, step = lift(query)
        decoder_proj = (q @ self.W_s.T + self.b).unsqueeze(2)    # (B, Tq, 1, A)
        encoder_proj = (keys @ self.W_h.T).unsqueeze(1)           # (B, 1, Tk, A)
        scores = torch.tanh(decoder_proj + encoder_proj) @ self.v  # (B, Tq, Tk)
        return drop(step, *attend(scores, values, key_padding.unsqueeze(1)))


class LuongAttention(nn.Module):
    """dot s_t^T h_j, general s_t^T W_a h_j (or M = Q^T K), concat v_a^T tanh(W_a [s_t; h_j])."""

    def __init__(self, score, **params):
        super().__init__()
        self.score = score
        for name, t in params.items():
            setattr(self, name, nn.Parameter(t))

    def scores(self, q, keys):
        if self.score == "dot":
            return torch.einsum("btd,bjd->btj", q, keys)
        if self.score == "general" and hasattr(self, "W_a"):
            return torch.einsum("btd,de,bje->btj", q, self.W_a, keys)
        if self.score == "general":  # low rank: M = Q^T K, (Dq, Dk)
            return torch.einsum("btd,de,bje->btj", q, self.Q.T @ self.K, keys)
        B, Tq, Dq = q.shape
        Tk = keys.shape[1]
        pairs = torch.cat([q.unsqueeze(2).expand(B, Tq, Tk, Dq),
                           keys.unsqueeze(1).expand(B, Tq, Tk, keys.shape[2])], dim=-1)
        return torch.tanh(pairs @ self.W_a.T) @ self.v_a  # [s_t; h_j] for every pair

    def forward(self, query, keys, values, key_padding):
        q, step = lift(query)
        return drop(step, *attend(self.scores(q, keys), values, key_padding.unsqueeze(1)))


class LuongCombine(nn.Module):
    """h~_t = tanh(W_c [c_t; s_t])."""

    def __init__(self, W_c):
        super().__init__()
        self.W_c = nn.Parameter(W_c)

    def forward(self, context, query):
        return torch.tanh(torch.cat([context, query], dim=-1) @ self.W_c.T)


class LocalAttention(nn.Module):
    """Luong local-m (p_t = t or given) and local-p (p_t = S sigmoid(v_p^T tanh(W_p s_t)),
    weights times exp(-(j - p_t)^2 / (2 sigma^2)), sigma = D/2), window |j - p_t| <= D."""

    def __init__(self, mode, D, W_a, W_p=None, v_p=None):
        super().__init__()
        self.mode, self.D = mode, D
        self.align = LuongAttention("general", W_a=W_a)
        if mode == "local-p":
            self.W_p, self.v_p = nn.Parameter(W_p), nn.Parameter(v_p)

    def forward(self, query, keys, values, key_padding, positions=None):
        q, step = lift(query)
        B, Tq, _ = q.shape
        Tk = keys.shape[1]
        if self.mode == "local-p":
            S = key_padding.sum(1, keepdim=True)                       # real keys per sequence
            p = S * torch.sigmoid(torch.tanh(q @ self.W_p.T) @ self.v_p)  # (B, Tq)
        elif positions is not None:
            p = positions.reshape(B, Tq)
        else:
            p = torch.arange(Tq, dtype=q.dtype).expand(B, Tq)
        dist = torch.arange(Tk, dtype=q.dtype) - p.unsqueeze(-1)       # (B, Tq, Tk)
        if self.mode == "local-p":  # float32 and float64 must agree on the window
            margin = ((dist.abs() - self.D).abs()).min().item()
            assert margin > 1e-3, f"a key sits {margin} from the window edge; pick other inputs"
        vis = (dist.abs() <= self.D) & (key_padding.unsqueeze(1) != 0)
        scores = self.align.scores(q, keys).masked_fill(~vis, float("-inf"))
        align = torch.softmax(scores, dim=-1)
        if self.mode == "local-p":
            sigma = self.D / 2
            weights = align * torch.exp(-dist ** 2 / (2 * sigma ** 2))
        else:
            weights = align
        return drop(step, weights @ values, weights)


def scorer_case(w, name, module, inputs, consts, seed, out_names=("context", "weights")):
    """Run module(**inputs, **consts) in float64, backpropagate sum_o(o * dy_o), add the case."""
    module.double()
    xs = OrderedDict((k, v.double().requires_grad_()) for k, v in inputs.items())
    cs = OrderedDict((k, v.double()) for k, v in consts.items())
    outs = module(**xs, **cs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    gen = torch.Generator().manual_seed(seed)
    dys = [torch.randn(o.shape, generator=gen, dtype=torch.float32).double() for o in outs]
    sum((o * dy).sum() for o, dy in zip(outs, dys)).backward()

    arrays = OrderedDict(list(xs.items()) + list(cs.items()))
    for pname, p in module.named_parameters():
        arrays[pname] = p
    for oname, o, dy in zip(out_names, outs, dys):
        arrays[oname], arrays["dy_" + oname] = o, dy
    for k, x in xs.items():
        arrays["grad_" + k] = x.grad
    for pname, p in module.named_parameters():
        arrays["grad_" + pname] = p.grad
    for k, a in arrays.items():
        if not torch.isfinite(a).all():
            raise ValueError(f"golden: {name}.{k} is not finite; pick other inputs")
    w.add(name, arrays)


def linear_init(shape, seed, fan_in=None):
    """nn.Linear's U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (fan_in: the last dim unless given),
    drawn from a seeded generator, float32."""
    g = torch.Generator().manual_seed(seed)
    bound = 1 / math.sqrt(fan_in or shape[-1])
    return (torch.rand(shape, generator=g, dtype=torch.float32) * 2 - 1) * bound


w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scorers.bin"))

B, Tq, Tk, Dq, Dk, Dv, A = 2, 3, 5, 4, 6, 3, 5
pad = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.float32)  # lengths 5 and 3


def qkv(seed, step=False, values=True, dk=Dk):
    d = OrderedDict(query=randn32((B, Dq) if step else (B, Tq, Dq), seed),
                    keys=randn32((B, Tk, dk), seed + 1))
    if values:
        d["values"] = randn32((B, Tk, Dv), seed + 2)
    return d


def additive(seed):
    return AdditiveAttention(linear_init((A, Dq), seed), linear_init((A, Dk), seed + 1),
                             linear_init((A,), seed + 2, fan_in=Dq), linear_init((A,), seed + 3))


# ---- AdditiveAttention(4, 6, 5): a decoder step with values = keys; 3 queries with values ----
scorer_case(w, "additive_2d", additive(200), qkv(210, step=True, values=False),
            {"key_padding": pad}, seed=211)
scorer_case(w, "additive_3d", additive(220), qkv(230), {"key_padding": pad}, seed=231)

# ---- LuongAttention: dot (Dq = Dk = 4), general, general rank 2, concat (A = 5) ----
scorer_case(w, "luong_dot_3d", LuongAttention("dot"), qkv(300, dk=Dq), {"key_padding": pad}, seed=301)
scorer_case(w, "luong_general_2d", LuongAttention("general", W_a=linear_init((Dq, Dk), 310)),
            qkv(311, step=True), {"key_padding": pad}, seed=312)
scorer_case(w, "luong_general_3d", LuongAttention("general", W_a=linear_init((Dq, Dk), 320)),
            qkv(321), {"key_padding": pad}, seed=322)
scorer_case(w, "luong_lowrank_3d", LuongAttention("general", Q=linear_init((2, Dq), 330),
                                                  K=linear_init((2, Dk), 331)),
            qkv(332), {"key_padding": pad}, seed=333)
scorer_case(w, "luong_concat_3d", LuongAttention("concat", W_a=linear_init((A, Dq + Dk), 340),
                                                 v_a=linear_init((A,), 341)),
            qkv(342), {"key_padding": pad}, seed=343)
scorer_case(w, "luong_concat_2d", LuongAttention("concat", W_a=linear_init((A, Dq + Dk), 350),
                                                 v_a=linear_init((A,), 351)),
            qkv(352, step=True), {"key_padding": pad}, seed=353)

# ---- LuongCombine(Dv = 3, Dq = 4, Do = 5) on (B, Tq, .) ----
scorer_case(w, "luong_combine", LuongCombine(linear_init((5, Dv + Dq), 360)),
            OrderedDict(context=randn32((B, Tq, Dv), 361), query=randn32((B, Tq, Dq), 362)), {},
            seed=363, out_names=("out",))

# ---- LocalAttention (general base score): local-m D = 1 with p_t = t, and with given
#      positions for a decoder step; local-p D = 2, 3 queries and a decoder step ----
scorer_case(w, "local_m_3d", LocalAttention("local-m", 1, linear_init((Dq, Dk), 400)), qkv(401),
            {"key_padding": pad}, seed=402)
scorer_case(w, "local_m_2d", LocalAttention("local-m", 1, linear_init((Dq, Dk), 410)),
            qkv(411, step=True), {"key_padding": pad, "positions": torch.tensor([3.0, 1.0])}, seed=412)
scorer_case(w, "local_p_3d", LocalAttention("local-p", 2, linear_init((Dq, Dk), 420),
                                            linear_init((4, Dq), 421) * 3, linear_init((4,), 422) * 3),
            qkv(423), {"key_padding": pad}, seed=424)
scorer_case(w, "local_p_2d", LocalAttention("local-p", 2, linear_init((Dq, Dk), 430),
                                            linear_init((4, Dq), 431) * 3, linear_init((4,), 432) * 3),
            qkv(433, step=True), {"key_padding": pad}, seed=434)

w.write()
