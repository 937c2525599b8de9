"""gen_lstm.py - PyTorch goldens for heed's recurrent layers -> tests/golden/lstm.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_lstm.py   (or `make goldens`)
Checked by tests/test_golden_lstm.cpp, which copies every parameter into the heed module
by its PyTorch name, runs the same inputs in float32 and compares the outputs, the
gradients of the inputs and of every parameter.

A recurrent module has several outputs, so these cases are written with GoldenWriter.add
rather than .case. Each case holds, in this order:
    <input>          x, h0, c0 (float32 values stored as float64)
    lengths          (padded cases) valid steps per sequence
    <parameter>      every parameter under its PyTorch name (weight_ih_l0, ...)
    <output>         the outputs, computed in float64
    dy_<output>      a fixed random upstream gradient for each output
    grad_<name>      d sum_k(output_k * dy_k) / d name, for every input and parameter
"""
import os
import sys
from collections import OrderedDict

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

torch.manual_seed(0)  # module construction draws from it; the values used come from the cases


def add_case(w, name, module, inputs, run, seed, consts=None):
    """inputs: name -> shape; run(module, **inputs) -> OrderedDict of named outputs."""
    gen = torch.Generator().manual_seed(seed)
    draw = lambda shape, scale=1.0: torch.randn(shape, generator=gen, dtype=torch.float32) * scale  # noqa: E731
    xs = OrderedDict((k, draw(s).double().requires_grad_()) for k, s in inputs.items())
    module = module.double()
    with torch.no_grad():  # float32 draws, so heed (float) starts from the same values
        for _, p in module.named_parameters():
            p.copy_(draw(tuple(p.shape), 0.5).double())
    outs = run(module, **xs, **(consts or {}))
    dys = OrderedDict((k, draw(tuple(o.shape)).double()) for k, o in outs.items())
    sum((o * dys[k]).sum() for k, o in outs.items()).backward()

    arrays = OrderedDict(xs)
    for k, v in (consts or {}).items():
        arrays[k] = torch.tensor(v, dtype=torch.float64)
    for n, p in module.named_parameters():
        arrays[n] = p
    arrays.update(outs)
    arrays.update(("dy_" + k, d) for k, d in dys.items())
    for k, x in xs.items():
        arrays["grad_" + k] = x.grad
    for n, p in module.named_parameters():
        arrays["grad_" + n] = p.grad if p.grad is not None else torch.zeros_like(p)
    for k, a in arrays.items():
        if not torch.isfinite(a).all():
            raise ValueError(f"golden: {name}.{k} is not finite")
    w.add(name, arrays)


def lstm_run(m, x, h0, c0, lengths=None):
    if lengths is None:
        out, (h_n, c_n) = m(x, (h0, c0))
    else:  # heed's lengths: pack_padded_sequence, then pad back to the full T
        packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=m.batch_first,
                                      enforce_sorted=False)
        out, (h_n, c_n) = m(packed, (h0, c0))
        T = x.shape[1] if m.batch_first else x.shape[0]
        out, _ = pad_packed_sequence(out, batch_first=m.batch_first, total_length=T)
    return OrderedDict(output=out, h_n=h_n, c_n=c_n)


def gru_run(m, x, h0, lengths=None):
    if lengths is None:
        out, h_n = m(x, h0)
    else:
        packed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
        out, h_n = m(packed, h0)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return OrderedDict(output=out, h_n=h_n)


w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lstm.bin"))

# ---- LSTMCell(4, 3), B = 2: a seq2seq decoder step ----
add_case(w, "lstm_cell", nn.LSTMCell(4, 3), {"x": (2, 4), "h0": (2, 3), "c0": (2, 3)},
         lambda m, x, h0, c0: OrderedDict(zip(("h", "c"), m(x, (h0, c0)))), seed=1)

# ---- LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True): B=3, T=5 ----
bi = dict(num_layers=2, bidirectional=True, batch_first=True)
add_case(w, "lstm_2layer_bidir", nn.LSTM(3, 4, **bi),
         {"x": (3, 5, 3), "h0": (4, 3, 4), "c0": (4, 3, 4)}, lstm_run, seed=2)

# ---- the same on a padded batch, lengths {5, 2, 4} (unsorted), via pack_padded_sequence ----
add_case(w, "lstm_2layer_bidir_packed", nn.LSTM(3, 4, **bi),
         {"x": (3, 5, 3), "h0": (4, 3, 4), "c0": (4, 3, 4)}, lstm_run, seed=3,
         consts={"lengths": [5, 2, 4]})

# ---- one layer, no bias, sequence-first (PyTorch's default layout), padded ----
add_case(w, "lstm_nobias_seqfirst_packed", nn.LSTM(3, 2, bias=False),
         {"x": (4, 2, 3), "h0": (1, 2, 2), "c0": (1, 2, 2)},
         lambda m, x, h0, c0, lengths: lstm_run(m, x, h0, c0, lengths), seed=4,
         consts={"lengths": [3, 4]})

# ---- GRUCell(4, 3) and GRU(3, 4, 2 layers, bidirectional) on a padded batch ----
add_case(w, "gru_cell", nn.GRUCell(4, 3), {"x": (2, 4), "h0": (2, 3)},
         lambda m, x, h0: OrderedDict(h=m(x, h0)), seed=5)
add_case(w, "gru_2layer_bidir_packed", nn.GRU(3, 4, **bi), {"x": (3, 5, 3), "h0": (4, 3, 4)},
         gru_run, seed=6, consts={"lengths": [5, 2, 4]})

w.write()
