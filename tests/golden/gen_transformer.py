"""gen_transformer.py - PyTorch goldens for heed's Transformer layers and nn::Transformer -> tests/golden/transformer.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_transformer.py   (or `make goldens`)
Checked by tests/test_golden_transformer.cpp.

Each case runs one torch module (batch_first=True, dropout=0) in float64 with the case's
tensors standing in for its parameters (functional_call), and stores:
    src / tgt / memory          the inputs (float32 values)
    <state_dict key>            every parameter, under torch's own name, in state_dict order
                                ("self_attn.in_proj_weight", ..., "layers.1.norm2.bias", "norm.weight")
    *_visible                   the masks in heed's convention (1 = may attend)
    out, dy, grad_<input>, grad_<state_dict key>
The C++ test loads the parameters by heed's named_parameters(), so the names must agree one
to one, in the same order (the test checks that first).

Two PyTorch details:
  - torch's boolean masks mean True = ignore, the opposite of heed's; fn converts
    (visible == 0). The causal tgt_mask is triu(ones, diagonal=1), i.e. heed's .causal().
  - torch 1.13's encoder layers take a fused "fast path" in eval mode (and
    TransformerEncoder may turn padded input into a nested tensor). The modules here stay
    in train mode with dropout=0, which is deterministic and uses the plain composed path.
No row of any mask is fully masked (torch would give NaN where heed gives 0).
"""
import os
import sys
from collections import OrderedDict

import torch
import torch.nn as nn
from torch.nn.utils.stateless import functional_call

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

B, E, H, F = 2, 8, 2, 16
TS, TT = 5, 4  # source and target lengths


def params32(module, seed):
    """Every parameter, named by state_dict key: torch's init + 0.1 N(0,1), as float32.

    The noise makes biases non-zero and norm weights != 1, so every gradient term shows."""
    g = torch.Generator().manual_seed(seed)
    return OrderedDict((k, p.detach().float() + 0.1 * torch.randn(p.shape, generator=g))
                       for k, p in module.named_parameters())


def hidden(visible):
    """heed's mask (1 = may attend) as torch's boolean mask (True = ignore)."""
    return visible == 0


def causal(t):
    return torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)


def module_case(w, name, module, inputs, consts, seed, run):
    """Add a case: inputs (name -> shape) and the module's parameters are differentiated;
    run(module, params, **inputs, **consts) gives the output."""
    module = module.double().train()  # train mode + dropout 0: deterministic, no fast path
    params = params32(module, seed + 1)
    assert list(params) == list(module.state_dict()), "parameters are not the whole state_dict"
    names = list(inputs)

    def fn(**kw):
        ps = OrderedDict((k, kw[k]) for k in params)
        rest = {k: v for k, v in kw.items() if k not in params}
        return run(module, ps, **rest)

    w.case(name, fn, OrderedDict(list(inputs.items()) + list(params.items())), seed=seed, consts=consts)
    print(f"  {name}: inputs {names}, {len(params)} parameters")


def encoder_run(module, ps, src, src_visible, attn_visible=None):
    kwargs = {"src_key_padding_mask": hidden(src_visible)}
    if attn_visible is not None:
        kwargs["src_mask"] = hidden(attn_visible)
    return functional_call(module, ps, (src,), kwargs)


def stack_run(module, ps, src, src_visible):
    return functional_call(module, ps, (src,), {"src_key_padding_mask": hidden(src_visible)})


def decoder_run(module, ps, tgt, memory, memory_visible, tgt_visible=None):
    kwargs = {"tgt_mask": causal(tgt.shape[1]), "memory_key_padding_mask": hidden(memory_visible)}
    if tgt_visible is not None:
        kwargs["tgt_key_padding_mask"] = hidden(tgt_visible)
    return functional_call(module, ps, (tgt, memory), kwargs)


src_visible = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.float32)       # (B, TS)
memory_visible = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], dtype=torch.float32)    # (B, TS)
tgt_visible = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.float32)             # (B, TT)
attn_visible = torch.tensor([[1, 0, 1, 0, 1],                                             # (TS, TS),
                             [1, 1, 0, 0, 1],                                             # diagonal
                             [0, 1, 1, 1, 0],                                             # always
                             [1, 0, 0, 1, 1],                                             # visible
                             [0, 1, 1, 0, 1]], dtype=torch.float32)

w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "transformer.bin"))
torch.manual_seed(0)  # module construction draws from it

# ---- TransformerEncoderLayer: post-norm relu with a key padding mask ----
module_case(w, "encoder_layer_post",
            nn.TransformerEncoderLayer(E, H, dim_feedforward=F, dropout=0.0, batch_first=True),
            {"src": (B, TS, E)}, {"src_visible": src_visible}, 100, encoder_run)

# ---- pre-norm, gelu, layer_norm_eps=1e-6, key padding and a (T, T) attention mask ----
module_case(w, "encoder_layer_pre_gelu",
            nn.TransformerEncoderLayer(E, H, dim_feedforward=F, dropout=0.0, activation="gelu",
                                       layer_norm_eps=1e-6, norm_first=True, batch_first=True),
            {"src": (B, TS, E)}, {"src_visible": src_visible, "attn_visible": attn_visible}, 200,
            encoder_run)

# ---- TransformerDecoderLayer: post-norm, causal tgt_mask, memory_key_padding_mask ----
module_case(w, "decoder_layer_post",
            nn.TransformerDecoderLayer(E, H, dim_feedforward=F, dropout=0.0, batch_first=True),
            {"tgt": (B, TT, E), "memory": (B, TS, E)}, {"memory_visible": memory_visible}, 300,
            decoder_run)

# ---- pre-norm, gelu, causal + tgt_key_padding_mask, memory_key_padding_mask ----
module_case(w, "decoder_layer_pre_gelu",
            nn.TransformerDecoderLayer(E, H, dim_feedforward=F, dropout=0.0, activation="gelu",
                                       norm_first=True, batch_first=True),
            {"tgt": (B, TT, E), "memory": (B, TS, E)},
            {"memory_visible": memory_visible, "tgt_visible": tgt_visible}, 400, decoder_run)

# ---- TransformerEncoder: 2 post-norm layers + a final LayerNorm, key padding ----
layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=F, dropout=0.0, batch_first=True)
module_case(w, "encoder_stack",
            nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E), enable_nested_tensor=False),
            {"src": (B, TS, E)}, {"src_visible": src_visible}, 500, stack_run)

# ---- TransformerDecoder: 2 pre-norm layers + a final LayerNorm ----
dlayer = nn.TransformerDecoderLayer(E, H, dim_feedforward=F, dropout=0.0, norm_first=True,
                                    batch_first=True)
module_case(w, "decoder_stack", nn.TransformerDecoder(dlayer, 2, norm=nn.LayerNorm(E)),
            {"tgt": (B, TT, E), "memory": (B, TS, E)}, {"memory_visible": memory_visible}, 600,
            decoder_run)

# ---- Transformer: 2 + 2 post-norm layers, each stack's final norm; every mask ----
def transformer_run(module, ps, src, tgt, src_visible, tgt_visible, memory_visible):
    return functional_call(module, ps, (src, tgt), {
        "src_key_padding_mask": hidden(src_visible), "tgt_mask": causal(tgt.shape[1]),
        "tgt_key_padding_mask": hidden(tgt_visible), "memory_key_padding_mask": hidden(memory_visible)})


module_case(w, "transformer_post",
            nn.Transformer(E, H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=F,
                           dropout=0.0, batch_first=True),
            {"src": (B, TS, E), "tgt": (B, TT, E)},
            {"src_visible": src_visible, "tgt_visible": tgt_visible, "memory_visible": memory_visible},
            700, transformer_run)

# ---- Transformer: 1 + 2 pre-norm gelu layers, eps 1e-6 ----
module_case(w, "transformer_pre_gelu",
            nn.Transformer(E, H, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=F,
                           dropout=0.0, activation="gelu", layer_norm_eps=1e-6, norm_first=True,
                           batch_first=True),
            {"src": (B, TS, E), "tgt": (B, TT, E)},
            {"src_visible": src_visible, "tgt_visible": tgt_visible, "memory_visible": src_visible},
            800, transformer_run)


# ---- TransformerEncoder, 2 post-norm layers, torch's additive FLOAT src_mask (heed: attn_bias) ----
def stack_bias_run(module, ps, src, src_bias):
    return functional_call(module, ps, (src,), {"mask": src_bias})


src_bias = torch.tensor([[0.0, -1.5, 0.5, -float("inf"), 1.0],                            # (TS, TS)
                         [0.3, 0.0, -0.7, 2.0, -float("inf")],
                         [-1.0, 0.8, 0.0, -0.2, 0.4],
                         [1.2, -float("inf"), -0.5, 0.0, 0.6],
                         [-0.3, 0.9, 1.1, -2.0, 0.0]], dtype=torch.float32)
layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=F, dropout=0.0, batch_first=True)
module_case(w, "encoder_stack_float_mask",
            nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
            {"src": (B, TS, E)}, {"src_bias": src_bias}, 900, stack_bias_run)


# ---- batch_first=False (PyTorch's default): (T, B, E) in and out ----
def mha_run(module, ps, query, key, memory_visible):
    return functional_call(module, ps, (query, key, key), {"key_padding_mask": hidden(memory_visible),
                                                          "need_weights": False})[0]


def decoder_run_seq_first(module, ps, tgt, memory, memory_visible):
    kwargs = {"tgt_mask": causal(tgt.shape[0]), "memory_key_padding_mask": hidden(memory_visible)}
    return functional_call(module, ps, (tgt, memory), kwargs)


module_case(w, "encoder_layer_seq_first",
            nn.TransformerEncoderLayer(E, H, dim_feedforward=F, dropout=0.0, batch_first=False),
            {"src": (TS, B, E)}, {"src_visible": src_visible}, 1000, encoder_run)
module_case(w, "decoder_layer_seq_first",
            nn.TransformerDecoderLayer(E, H, dim_feedforward=F, dropout=0.0, norm_first=True,
                                       batch_first=False),
            {"tgt": (TT, B, E), "memory": (TS, B, E)}, {"memory_visible": memory_visible}, 1100,
            decoder_run_seq_first)
module_case(w, "mha_seq_first", nn.MultiheadAttention(E, H, batch_first=False),
            {"query": (TT, B, E), "key": (TS, B, E)}, {"memory_visible": memory_visible}, 1200, mha_run)

w.write()
