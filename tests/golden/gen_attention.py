"""gen_attention.py - PyTorch goldens for heed's attention -> tests/golden/attention.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_attention.py   (or `make goldens`)
Checked by tests/test_golden_attention.cpp.

Each case returns two tensors, the output and the attention weights, and stores

    <input>...          the inputs (float32 values stored as float64)
    <parameter>...      for nn.MultiheadAttention: every parameter under torch's own name
                        ("in_proj_weight", "out_proj.bias", ...), as heed names them too
    <mask>...           masks in HEED's convention (1 = may attend), see below
    out, weights        torch's results in float64
    dy, dweights        fixed random upstream gradients
    grad_<x>            d (sum(out * dy) + sum(weights * dweights)) / d x for every input
                        and parameter

Masks: heed's 1 means "may attend"; torch's boolean key_padding_mask and attn_mask mean
the opposite (True = ignore), so this file converts: key_padding_mask = (key_padding == 0)
and attn_mask = (causal visibility == 0). Debian's torch 1.13 has no
F.scaled_dot_product_attention, so scaled dot-product attention is written out by hand as
the textbook writes it. No case has a fully masked row: torch gives NaN there (heed gives 0).
"""
import math
import os
import sys
from collections import OrderedDict

import torch
import torch.nn as nn
from torch.nn.utils.stateless import functional_call

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

torch.manual_seed(0)  # module construction draws from it


def padding(lengths, Tk):
    """heed key padding (B, Tk): 1 for the first lengths[b] keys of batch b, 0 after."""
    return torch.tensor([[1.0 if j < n else 0.0 for j in range(Tk)] for n in lengths])


def causal_visible(Tq, Tk):
    """heed's causal mask: query i sees key j when j <= i + (Tk - Tq) (last query ~ last key)."""
    return torch.tril(torch.ones(Tq, Tk, dtype=torch.float64), diagonal=Tk - Tq)


def sdpa(q, k, v, key_padding=None, causal=False, scale=None, bias=None):
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + bias) V, masked where heed's masks say 0."""
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1))
    scores = scores / math.sqrt(d_k) if scale is None else scores * scale
    if bias is not None:  # torch's float attn_mask: added, broadcast
        scores = scores + bias
    vis = torch.ones_like(scores)
    if key_padding is not None:  # (B, Tk) -> (B, 1.., 1, Tk)
        vis = vis * key_padding.reshape(key_padding.shape[0], *[1] * (scores.dim() - 2), -1)
    if causal:
        vis = vis * causal_visible(scores.shape[-2], scores.shape[-1])
    scores = scores.masked_fill(vis == 0, float("-inf"))
    attention_weights = torch.softmax(scores, dim=-1)
    return torch.matmul(attention_weights, v), attention_weights


def add_case(w, name, seed, inputs, fn, module=None, consts=None):
    """inputs: name -> shape (drawn float32 N(0,1) in order) or float32 tensor; module: its
    parameters (rounded to float32) become inputs too, under their own names; consts: masks
    (float32, heed convention), passed to fn but not differentiated.
    fn(params, **inputs, **consts) -> (out, weights); params is name -> tensor or None."""
    gen = torch.Generator().manual_seed(seed)
    xs = OrderedDict()
    for k, v in inputs.items():
        t = torch.randn(v, generator=gen, dtype=torch.float32) if isinstance(v, tuple) else v
        xs[k] = t.double().requires_grad_()
    ps = OrderedDict()
    if module is not None:
        module.double()
        for k, p in module.named_parameters():
            ps[k] = p.detach().float().double().requires_grad_()
    cs = OrderedDict((k, v.double()) for k, v in (consts or {}).items())
    out, weights = fn(ps, **xs, **cs)
    dy = torch.randn(out.shape, generator=gen, dtype=torch.float32).double()
    dw = torch.randn(weights.shape, generator=gen, dtype=torch.float32).double()
    ((out * dy).sum() + (weights * dw).sum()).backward()

    arrays = OrderedDict(list(xs.items()) + list(ps.items()) + list(cs.items()))
    arrays.update(out=out, weights=weights, dy=dy, dweights=dw)
    for k, x in list(xs.items()) + list(ps.items()):
        arrays["grad_" + k] = x.grad
    for k, a in arrays.items():
        if not torch.isfinite(a).all():
            raise ValueError(f"{name}.{k} is not finite: a fully masked row? pick other masks")
    w.add(name, arrays)


def mha(embed_dim, num_heads, **kw):
    """nn.MultiheadAttention with random biases (torch initialises them to 0)."""
    m = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True, **kw)
    with torch.no_grad():
        if m.in_proj_bias is not None:
            m.in_proj_bias.uniform_(-0.5, 0.5)
            m.out_proj.bias.uniform_(-0.5, 0.5)
    return m


def call(m, params, q, k, v, key_padding=None, causal=False, average=True):
    """m(q, k, v) with params standing in for its parameters, heed masks converted to torch's."""
    kpm = None if key_padding is None else key_padding == 0
    am = None if not causal else causal_visible(q.shape[1], k.shape[1]) == 0
    return functional_call(m, params, (q, k, v), dict(key_padding_mask=kpm, attn_mask=am,
                                                       need_weights=True,
                                                       average_attn_weights=average))


w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention.bin"))

# ---- scaled dot-product attention, written as the textbook writes it ----
# (B, Tq, Dk) = (2, 3, 4) queries over Tk = 5 keys; batch 1 has 3 real keys
w_pad = padding([5, 3], 5)
add_case(w, "sdpa_padding", 200, {"q": (2, 3, 4), "k": (2, 5, 4), "v": (2, 5, 3)},
         lambda p, q, k, v, key_padding: sdpa(q, k, v, key_padding),
         consts={"key_padding": w_pad})
# (B, H, Tq, D) = (2, 2, 4, 3), Tk = 6: causal aligned at the end, padding, scale 0.7
add_case(w, "sdpa_causal_heads", 201, {"q": (2, 2, 4, 3), "k": (2, 2, 6, 3), "v": (2, 2, 6, 2)},
         lambda p, q, k, v, key_padding: sdpa(q, k, v, key_padding, causal=True, scale=0.7),
         consts={"key_padding": padding([6, 4], 6)})

# ---- nn.MultiheadAttention(8, 2, batch_first=True), self-attention ----
self_attn = mha(8, 2)
add_case(w, "mha_self_padding", 210, {"x": (2, 5, 8)},
         lambda p, x, key_padding: call(self_attn, p, x, x, x, key_padding),
         module=self_attn, consts={"key_padding": padding([5, 3], 5)})
# causal and padding together, weights per head
add_case(w, "mha_self_causal", 211, {"x": (2, 5, 8)},
         lambda p, x, key_padding: call(self_attn, p, x, x, x, key_padding, causal=True,
                                        average=False),
         module=self_attn, consts={"key_padding": padding([5, 4], 5)})

# ---- cross-attention: Tq = 3 decoder queries over Tk = 6 encoder states ----
cross = mha(8, 4)
add_case(w, "mha_cross", 220, {"query": (2, 3, 8), "memory": (2, 6, 8)},
         lambda p, query, memory, key_padding: call(cross, p, query, memory, memory, key_padding),
         module=cross, consts={"key_padding": padding([6, 2], 6)})
# kdim 5, vdim 7: separate q/k/v_proj_weight
cross_kv = mha(8, 2, kdim=5, vdim=7)
add_case(w, "mha_cross_kdim_vdim", 221, {"query": (2, 3, 8), "key": (2, 4, 5), "value": (2, 4, 7)},
         lambda p, query, key, value: call(cross_kv, p, query, key, value),
         module=cross_kv)
# no bias
cross_nb = mha(6, 3, bias=False)
add_case(w, "mha_cross_nobias", 222, {"query": (1, 4, 6), "memory": (1, 5, 6)},
         lambda p, query, memory: call(cross_nb, p, query, memory, memory),
         module=cross_nb)

# ---- attn_bias: torch's float attn_mask, added to the scores (appended: earlier cases and
#      the modules they draw from torch.manual_seed(0) stay as they were) ----
# (B, H, Tq, D) = (2, 2, 3, 4), Tk = 5, a per-head bias (H, Tq, Tk) broadcast over the batch
add_case(w, "sdpa_bias_heads", 230,
         {"q": (2, 2, 3, 4), "k": (2, 2, 5, 4), "v": (2, 2, 5, 3), "bias": (2, 3, 5)},
         lambda p, q, k, v, bias, key_padding: sdpa(q, k, v, key_padding, causal=True, bias=bias),
         consts={"key_padding": padding([5, 4], 5)})


def call_bias(m, params, q, k, v, bias, key_padding=None):
    """m(q, k, v) with a float attn_mask: (Tq, Tk) as is, (B, H, Tq, Tk) as torch's (B*H, Tq, Tk)."""
    kpm = None if key_padding is None else key_padding == 0
    am = bias if bias.dim() == 2 else bias.reshape(-1, bias.shape[-2], bias.shape[-1])
    return functional_call(m, params, (q, k, v), dict(key_padding_mask=kpm, attn_mask=am,
                                                       need_weights=True,
                                                       average_attn_weights=False))


# nn.MultiheadAttention(8, 2) self-attention, float attn_mask (Tq, Tk) and key padding
bias_self = mha(8, 2)
add_case(w, "mha_self_bias", 231, {"x": (2, 4, 8), "bias": (4, 4)},
         lambda p, x, bias, key_padding: call_bias(bias_self, p, x, x, x, bias, key_padding),
         module=bias_self, consts={"key_padding": padding([4, 3], 4)})
# cross-attention, one bias per batch element and head: heed (B, H, Tq, Tk)
bias_cross = mha(8, 2)
add_case(w, "mha_cross_bias_per_head", 232, {"query": (2, 3, 8), "memory": (2, 5, 8),
                                              "bias": (2, 2, 3, 5)},
         lambda p, query, memory, bias: call_bias(bias_cross, p, query, memory, memory, bias),
         module=bias_cross)

w.write()
