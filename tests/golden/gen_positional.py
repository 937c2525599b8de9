"""gen_positional.py - PyTorch goldens for heed's position encodings -> tests/golden/positional.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_positional.py   (or `make goldens`)
Checked by tests/test_golden_positional.cpp. Every reference here is written independently
of heed, the way its source writes it:
  sinusoidal  the usual PyTorch PositionalEncoding, run in float64 (its `.float()` calls
              become `.to(dtype)`), and verbatim in float32 to show what float32 angles cost
  RoPE        Meta LLaMA's precompute_freqs_cis / apply_rotary_emb (complex numbers,
              interleaved pairs), and Hugging Face's rotate_half (half-split pairs)
  relative    Shaw et al. 2018 as the paper writes it: a^K_ij, a^V_ij gathered into
              (T, T, d) tensors and contracted with einsum
  ALiBi       get_slopes from the paper's reference code (ofirpress/attention_with_linear_biases)
"""
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402


def randn32(shape, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32) * scale


w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "positional.bin"))


# ---- sinusoidal: the usual PyTorch module ----
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000, dtype=torch.float32):
        super().__init__()

        pe = torch.zeros(max_len, d_model, dtype=dtype)
        position = torch.arange(0, max_len).unsqueeze(1).to(dtype)

        div_term = torch.exp(torch.arange(0, d_model, 2).to(dtype) *
                             -(math.log(10000.0) / d_model))

        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)

        self.register_buffer('pe', pe)

    def forward(self, x):
        return x + self.pe[:, :x.size(1)]


for L, d in [(1024, 8), (50, 64)]:
    w.add(f"sinusoidal_{L}x{d}", {"pe": PositionalEncoding(d, L, torch.float64).pe,
                                  "pe_float32": PositionalEncoding(d, L, torch.float32).pe})
pe_module = PositionalEncoding(16, 40, torch.float64)
w.case("sinusoidal_module", lambda x: pe_module(x), {"x": (2, 7, 16)}, seed=200)


# ---- RoPE: Meta's LLaMA code (interleaved), positions along dim -2 ----
def precompute_freqs_cis(dim, end, theta=10000.0, start=0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64)[: (dim // 2)] / dim))
    t = torch.arange(start, start + end, dtype=torch.float64)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex128, (T, D/2)


def apply_rotary_emb(x, offset=0, theta=10000.0):
    """x (..., T, D): (x_2i + i x_2i+1) * e^{i m theta_i}, back to real pairs."""
    freqs_cis = precompute_freqs_cis(x.shape[-1], x.shape[-2], theta, offset)
    x_ = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(x_ * freqs_cis).flatten(-2)


# ---- RoPE: Hugging Face's rotate_half (GPT-NeoX pairing) ----
def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_half(x, offset=0, theta=10000.0):
    D, T = x.shape[-1], x.shape[-2]
    inv_freq = 1.0 / (theta ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    freqs = torch.outer(torch.arange(offset, offset + T, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)  # (T, D)
    return x * emb.cos() + rotate_half(x) * emb.sin()


w.case("rope_interleaved", lambda x: apply_rotary_emb(x), {"x": (2, 3, 5, 8)}, seed=210)
w.case("rope_offset17_base500", lambda x: apply_rotary_emb(x, 17, 500.0), {"x": (2, 4, 6)}, seed=211)
w.case("rope_long_offset", lambda x: apply_rotary_emb(x, 3000), {"x": (1, 2, 64)}, seed=212)
w.case("rope_half_split", lambda x: apply_rotary_half(x, 3), {"x": (2, 2, 5, 8)}, seed=213)


# ---- relative position representations: Shaw et al. 2018, as the paper writes them ----
def shaw_self_attention(x, wq, bq, wk, bk, wv, bv, wo, bo, key_table, value_table, H, causal):
    B, T, E = x.shape
    d = E // H
    k = (key_table.shape[0] - 1) // 2
    q_ = (x @ wq.T + bq).view(B, T, H, d).transpose(1, 2)   # (B, H, T, d)
    k_ = (x @ wk.T + bk).view(B, T, H, d).transpose(1, 2)
    v_ = (x @ wv.T + bv).view(B, T, H, d).transpose(1, 2)
    pos = torch.arange(T)
    idx = (pos[None, :] - pos[:, None]).clamp(-k, k) + k     # clip(j - i, k) + k, (T, T)
    aK, aV = key_table[idx], value_table[idx]                # a^K_ij, a^V_ij: (T, T, d)
    e = (q_ @ k_.transpose(-2, -1) + torch.einsum("bhid,ijd->bhij", q_, aK)) / math.sqrt(d)
    if causal:
        e = e.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    alpha = torch.softmax(e, dim=-1)
    z = alpha @ v_ + torch.einsum("bhij,ijd->bhid", alpha, aV)
    return z.transpose(1, 2).reshape(B, T, E) @ wo.T + bo


def shaw_case(name, B, T, E, H, k, causal, seed):
    s = 1 / math.sqrt(E)
    params = {}
    for i, p in enumerate(["wq", "wk", "wv", "wo"]):
        params[p] = randn32((E, E), seed + 1 + 2 * i, s)
        params["b" + p[1]] = randn32((E,), seed + 2 + 2 * i, 0.1)
    params["key_table"] = randn32((2 * k + 1, E // H), seed + 20, 0.5)
    params["value_table"] = randn32((2 * k + 1, E // H), seed + 21, 0.5)
    w.case(name, lambda x, **p: shaw_self_attention(x, H=H, causal=causal, **p),
           {"x": (B, T, E), **params}, seed=seed)


shaw_case("relative_attention", B=2, T=5, E=8, H=2, k=2, causal=False, seed=220)
shaw_case("relative_attention_causal_k10", B=2, T=6, E=6, H=3, k=10, causal=True, seed=250)
shaw_case("relative_attention_one_head_k0", B=1, T=4, E=4, H=1, k=0, causal=False, seed=280)


# ---- ALiBi: the reference code's get_slopes ----
def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])


w.add("alibi_slopes", {f"n{n}": torch.tensor(get_slopes(n), dtype=torch.float64) for n in range(1, 33)})

w.write()
