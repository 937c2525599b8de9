"""gen_safetensors.py - torch.nn modules moved between PyTorch and heed as safetensors files.

1. torch -> heed (committed fixtures, checked in `make test` without torch):
   for each case, tests/golden/safetensors/<case>.safetensors is the torch module's
   state_dict, and <case>.io.safetensors its inputs ("in.*") and torch's outputs ("out.*").
   tests/test_golden_safetensors.cpp loads each state dict into heed's twin (strict) and
   reproduces the outputs.
2. heed -> torch (this run only): the same test, with HEED_SAFETENSORS_EXPORT=<dir> in its
   environment, also writes heed's twins (heed's own random initialisation) and heed's outputs
   to <dir>; this script loads each into a fresh torch module with strict=True and checks
   torch gives heed's outputs.
3. char_gpt <-> nanoGPT: a PyTorch twin of nanoGPT's GPT (karpathy/nanoGPT model.py: the same
   module names and shapes, bias=True, dropout=0) loads char_gpt's --export with
   strict=False, missing only its causal-mask buffers (attn.bias), and gives char_gpt's
   logits (--dump-logits); and char_gpt --import loads a file this twin wrote and gives the
   twin's logits.

Debian has no python3-safetensors, so the format (8-byte little-endian header length, a JSON
header padded with spaces to 8 bytes, then the little-endian data) is written and read here
with struct and json.

Run from the repository root with /usr/bin/python3 (Debian's python3-torch): `make goldens`.
Steps 2 and 3 build build/tests_f32 and build/examples/char_gpt with make if needed.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "golden", "safetensors")
BUILD = os.path.join(ROOT, "build")
DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16"}
TORCH_DTYPES = {v: k for k, v in DTYPES.items()}
SIZES = {"F32": 4, "F64": 8, "F16": 2, "BF16": 2}


def save_st(path, tensors, metadata=None):
    """Write name -> tensor (float dtypes) as a safetensors file, atomically."""
    header, blobs, offset = OrderedDict(), [], 0
    if metadata:
        header["__metadata__"] = dict(metadata)
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        data = t.view(torch.uint8).numpy().tobytes() if t.dim() else t.reshape(1).view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".")
    with os.fdopen(fd, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    os.replace(tmp, path)


def load_st(path):
    """Read a safetensors file: (OrderedDict name -> float tensor in file order, metadata)."""
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    data = b[8 + n:]
    out = OrderedDict()
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        s, t = e["data_offsets"]
        raw = torch.frombuffer(bytearray(data[s:t]), dtype=torch.uint8) if t > s else torch.empty(0, dtype=torch.uint8)
        out[name] = raw.view(TORCH_DTYPES[e["dtype"]]).reshape(e["shape"]).clone()
    return out, metadata


# ---- the cases: a module, its inputs, and a function giving its outputs ----
E, H, FF, B, T, S = 8, 2, 16, 2, 4, 5


def randn(g, *shape):
    return torch.randn(*shape, generator=g)


def cases():
    """name -> (module factory, inputs builder, forward returning an ordered dict of outputs)."""
    c = OrderedDict()
    c["linear"] = (lambda: nn.Linear(4, 3), lambda g: {"x": randn(g, 2, 4)}, lambda m, i: {"y": m(i["x"])})
    c["embedding"] = (lambda: nn.Embedding(7, 3),
                      lambda g: {"ids": torch.randint(0, 7, (2, 3), generator=g).float()},
                      lambda m, i: {"y": m(i["ids"].long())})
    c["layer_norm"] = (lambda: nn.LayerNorm(5), lambda g: {"x": randn(g, 3, 5)}, lambda m, i: {"y": m(i["x"])})

    def rnn(m, i):
        out = m(i["x"])
        return {"y": out[0], "h_n": out[1][0] if isinstance(out[1], tuple) else out[1]}
    c["lstm_2layer_bidir"] = (lambda: nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
                              lambda g: {"x": randn(g, B, T, 3)}, rnn)
    c["gru_2layer_bidir"] = (lambda: nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True),
                             lambda g: {"x": randn(g, B, T, 3)}, rnn)
    c["mha_packed"] = (lambda: nn.MultiheadAttention(E, H, batch_first=True),
                       lambda g: {"q": randn(g, B, T, E), "k": randn(g, B, S, E), "v": randn(g, B, S, E)},
                       lambda m, i: {"y": m(i["q"], i["k"], i["v"])[0]})
    c["mha_kdim_vdim"] = (lambda: nn.MultiheadAttention(E, H, kdim=5, vdim=6, batch_first=True),
                          lambda g: {"q": randn(g, B, T, E), "k": randn(g, B, S, 5), "v": randn(g, B, S, 6)},
                          lambda m, i: {"y": m(i["q"], i["k"], i["v"])[0]})
    c["transformer_encoder"] = (
        lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, batch_first=True), 2,
                                      norm=nn.LayerNorm(E), enable_nested_tensor=False),
        lambda g: {"src": randn(g, B, S, E)}, lambda m, i: {"y": m(i["src"])})
    causal = lambda t: torch.triu(torch.full((t, t), float("-inf")), 1)
    c["transformer_decoder"] = (
        lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, batch_first=True), 2,
                                      norm=nn.LayerNorm(E)),
        lambda g: {"tgt": randn(g, B, T, E), "memory": randn(g, B, S, E)},
        lambda m, i: {"y": m(i["tgt"], i["memory"], tgt_mask=causal(T))})
    c["transformer"] = (
        lambda: nn.Transformer(E, H, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=FF, dropout=0.0,
                               batch_first=True),
        lambda g: {"src": randn(g, B, S, E), "tgt": randn(g, B, T, E)},
        lambda m, i: {"y": m(i["src"], i["tgt"], tgt_mask=causal(T))})
    c["sequential"] = (lambda: nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)),
                       lambda g: {"x": randn(g, 3, 4)}, lambda m, i: {"y": m(i["x"])})
    return c


def io_dict(inputs, outputs):
    d = OrderedDict(("in." + k, v) for k, v in inputs.items())
    d.update(("out." + k, v) for k, v in outputs.items())
    return d


def write_fixtures():
    os.makedirs(FIXTURES, exist_ok=True)
    for seed, (name, (make, make_inputs, run)) in enumerate(cases().items()):
        torch.manual_seed(100 + seed)
        m = make()
        g = torch.Generator().manual_seed(200 + seed)
        inputs = make_inputs(g)
        outputs = run(m, inputs)
        save_st(os.path.join(FIXTURES, name + ".safetensors"), m.state_dict())
        save_st(os.path.join(FIXTURES, name + ".io.safetensors"), io_dict(inputs, outputs))
        print(f"  {name}: {len(m.state_dict())} tensors")


def max_diff(a, b):
    return (a.double() - b.double()).abs().max().item() if a.numel() else 0.0


def make_target(target):
    subprocess.run(["make", "-j2", "--no-print-directory", target], cwd=ROOT, check=True)


def check_heed_exports():
    """heed's twins and outputs (written by the test binary) into fresh torch modules."""
    make_target("build/tests_f32")
    out_dir = os.path.join(BUILD, "safetensors_export")
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ, HEED_SAFETENSORS_EXPORT=out_dir)
    subprocess.run([os.path.join(BUILD, "tests_f32"), "-ts=golden safetensors", "--no-colors"], cwd=ROOT, env=env,
                   check=True, stdout=subprocess.DEVNULL)
    worst = 0.0
    for name, (make, _, run) in cases().items():
        m = make()
        state, _ = load_st(os.path.join(out_dir, name + ".safetensors"))
        m.load_state_dict(state, strict=True)
        io, _ = load_st(os.path.join(out_dir, name + ".io.safetensors"))
        inputs = {k[3:]: v for k, v in io.items() if k.startswith("in.")}
        outputs = run(m, inputs)
        for k, v in outputs.items():
            d = max_diff(v, io["out." + k])
            worst = max(worst, d)
            if d > 1e-5:
                sys.exit(f"gen_safetensors: heed's {name} loaded into torch: out.{k} differs by {d:.3g}")
    print(f"  heed -> torch: {len(cases())} modules load strictly and reproduce heed's outputs (max diff {worst:.2g})")


# ---- nanoGPT's GPT (karpathy/nanoGPT, model.py), written again with its names and shapes ----
class CausalSelfAttention(nn.Module):
    def __init__(self, C, nh, block):
        super().__init__()
        self.c_attn = nn.Linear(C, 3 * C)
        self.c_proj = nn.Linear(C, C)
        self.n_head = nh
        # nanoGPT keeps this causal mask as a buffer when torch has no scaled_dot_product_attention
        self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        Bx, Tx, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(Bx, Tx, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / (k.size(-1) ** 0.5)
        att = att.masked_fill(self.bias[:, :, :Tx, :Tx] == 0, float("-inf")).softmax(-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(Bx, Tx, C))


class MLP(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.c_fc = nn.Linear(C, 4 * C)
        self.c_proj = nn.Linear(4 * C, C)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, C, nh, block):
        super().__init__()
        self.ln_1 = nn.LayerNorm(C)
        self.attn = CausalSelfAttention(C, nh, block)
        self.ln_2 = nn.LayerNorm(C)
        self.mlp = MLP(C)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, n_layer, n_head, C):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, C), wpe=nn.Embedding(block, C),
            h=nn.ModuleList([Block(C, n_head, block) for _ in range(n_layer)]), ln_f=nn.LayerNorm(C)))
        self.lm_head = nn.Linear(C, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT

    def forward(self, idx):
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.size(1)))
        for blk in self.transformer.h:
            x = blk(x)
        return self.lm_head(self.transformer.ln_f(x))


def check_nanogpt():
    make_target("build/examples/char_gpt")
    d = os.path.join(BUILD, "nanogpt_check")
    os.makedirs(d, exist_ok=True)
    gpt = os.path.join(BUILD, "examples", "char_gpt")
    sizes = ["--block", "16", "--layers", "2", "--heads", "2", "--width", "32"]
    common = ["--smoke", "--threads", "1", "--out", d, "--samples", "0", "--prompt", "The "] + sizes
    # heed -> nanoGPT: train a little, export, and dump the logits of the prompt.
    subprocess.run([gpt, *common, "--iters", "30", "--export", os.path.join(d, "heed.safetensors"),
                    "--dump-logits", os.path.join(d, "heed_logits.safetensors")], check=True, stdout=subprocess.DEVNULL)
    state, meta = load_st(os.path.join(d, "heed.safetensors"))
    vocab = len(meta["vocab"])
    m = GPT(vocab, 16, 2, 2, 32)
    r = m.load_state_dict(state, strict=False)
    if r.unexpected_keys or any(not k.endswith(".attn.bias") for k in r.missing_keys) or len(r.missing_keys) != 2:
        sys.exit(f"gen_safetensors: nanoGPT's GPT loading char_gpt's export: {r}")
    logits, _ = load_st(os.path.join(d, "heed_logits.safetensors"))
    ids = logits["ids"].long()
    diff = max_diff(m(ids), logits["logits"])
    if diff > 1e-4:
        sys.exit(f"gen_safetensors: nanoGPT twin's logits differ from char_gpt's by {diff:.3g}")
    print(f"  char_gpt -> nanoGPT: strict=False misses only {r.missing_keys}; logits agree (max diff {diff:.2g})")
    # nanoGPT -> heed: a torch-initialised GPT, saved with the vocabulary, imported by char_gpt,
    # whose logits must be the twin's; then char_gpt continues training it.
    torch.manual_seed(7)
    m = GPT(vocab, 16, 2, 2, 32)
    for p in m.parameters():
        nn.init.normal_(p, std=0.1)
    sd = OrderedDict((k, v) for k, v in m.state_dict().items())
    save_st(os.path.join(d, "torch.safetensors"), sd, {"vocab": meta["vocab"]})
    subprocess.run([gpt, *common, "--iters", "0", "--import", os.path.join(d, "torch.safetensors"),
                    "--dump-logits", os.path.join(d, "torch_in_heed_logits.safetensors")], check=True,
                   stdout=subprocess.DEVNULL)
    logits, _ = load_st(os.path.join(d, "torch_in_heed_logits.safetensors"))
    diff = max_diff(m(logits["ids"].long()), logits["logits"])
    if diff > 1e-4:
        sys.exit(f"gen_safetensors: char_gpt's logits of an imported nanoGPT model differ by {diff:.3g}")
    # safetensors.torch.save_model keeps one name of a tied tensor: import that too.
    del sd["lm_head.weight"]
    save_st(os.path.join(d, "torch_one_name.safetensors"), sd, {"vocab": meta["vocab"]})
    subprocess.run([gpt, *common, "--iters", "0", "--import", os.path.join(d, "torch_one_name.safetensors"),
                    "--dump-logits", os.path.join(d, "torch_one_name_logits.safetensors")], check=True,
                   stdout=subprocess.DEVNULL)
    logits, _ = load_st(os.path.join(d, "torch_one_name_logits.safetensors"))
    diff = max(diff, max_diff(m(logits["ids"].long()), logits["logits"]))
    if diff > 1e-4:
        sys.exit(f"gen_safetensors: char_gpt's logits of a nanoGPT file without lm_head.weight differ by {diff:.3g}")
    subprocess.run([gpt, *common, "--iters", "120", "--import", os.path.join(d, "torch.safetensors")], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"  nanoGPT -> char_gpt: imported logits agree (max diff {diff:.2g}); training continues from it")


if __name__ == "__main__":
    torch.set_num_threads(1)
    print("gen_safetensors: torch -> heed fixtures in tests/golden/safetensors/")
    write_fixtures()
    if "--fixtures-only" not in sys.argv:
        check_heed_exports()
        check_nanogpt()
