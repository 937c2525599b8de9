#!/usr/bin/python3
"""bench_generate_torch.py - generation speed, heed vs PyTorch (`make bench`).

The PyTorch twin of bench_generate.cpp, and the driver that runs both and prints one table
(also written to build/bench/generate.md):

  build/torch-venv/bin/python tests/bench/bench_generate_torch.py [--prompt 512] [--new 512] [--batch 1 8]
                                        [--recompute-new 64] [--precision medium] [--composed]
  build/torch-venv/bin/python tests/bench/bench_generate_torch.py --torch [--cached] --prompt P --new N
                                        --batch B [--attention composed]
      one PyTorch run, printing bench_generate's line format

The model is nanoGPT's GPT (karpathy/nanoGPT model.py, as tests/golden/gen_safetensors.py
writes it: the architecture of examples/common/gpt.h) with GPT-small's shapes: 6 layers, 6
heads, width 384, vocabulary 65, block_size 1024; random weights, evaluation mode,
torch.inference_mode(). PyTorch decodes two ways: "cached", nanoGPT's forward with a
preallocated per-layer key/value cache (cached_logits below: the prompt prefilled in one
forward, then one position per token, as users write it), and "recompute", the whole context
each step, as nanoGPT's generate() does. Both compute attention as nanoGPT does wherever
PyTorch has it, with F.scaled_dot_product_attention (is_causal=True over the prompt; a new
token's single query attends to the whole cache); on a PyTorch without it (Debian's 1.13),
composed from matmul, the causal mask and softmax, and the table's first line says which.
--composed adds PyTorch's two paths again with the composed attention, as extra labelled rows.
The tokens are bench_generate.cpp's: the same 64-bit LCG gives the prompt and the tokens
appended each step.

--precision P runs both sides under P: heed::set_float32_matmul_precision(P) and
torch.set_float32_matmul_precision(P) (on a CPU without bf16 instructions PyTorch's "medium"
multiplies in float32 as "highest" does).

Each batch size runs heed's cached path, PyTorch's cached path, heed's recompute path, then
PyTorch's recompute (one round each). The cached path always generates --new tokens. A recompute run costs O(context)
per token, minutes for 512 tokens at batch 8, so at batch > 1 both recompute rows generate
--recompute-new tokens after the same prompt (their contexts are then shorter, which flatters
recompute: the cached / recompute ratio printed is a lower bound); at batch 1 they generate
--new, the full 512 + 512. The table's "new" column says which. PyTorch runs in its best configuration on 2 cores: 2 threads,
OMP_WAIT_POLICY=passive, the pthread build of OpenBLAS through LD_LIBRARY_PATH, for its process
alone (as bench_models_torch.py).
"""
import math
import os
import subprocess
import sys
import time

from bench_models_torch import torch_environment  # same folder: PyTorch's best configuration

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEED = os.path.join(ROOT, "build", "bench", "bench_generate")
V, BLOCK, LAYERS, HEADS, WIDTH = 65, 1024, 6, 6, 384
MASK64 = (1 << 64) - 1


def script_row(b, length):
    """bench_generate.cpp's script_row: x <- x * 6364136223846793005 + 1442695040888963407."""
    x, out = b + 1, []
    for _ in range(length):
        x = (x * 6364136223846793005 + 1442695040888963407) & MASK64
        out.append((x >> 33) % V)
    return out


def cached_logits(model, idx, caches, pos, sdpa):
    """nanoGPT's GPT.forward with a key/value cache, as users add one: `caches` holds one
    preallocated (K, V) pair of (B, H, BLOCK, D) per layer; idx (B, t) are positions
    [pos, pos + t), written into the caches, and the queries attend to positions [0, pos + t).
    The prompt is prefilled in one call (t = prompt, pos = 0), then one call per token (t = 1).
    Attention is F.scaled_dot_product_attention with sdpa, else composed (matmul, mask,
    softmax). Returns the last position's logits (B, V)."""
    import torch
    import torch.nn.functional as F
    tr, (B, t) = model.transformer, idx.shape
    x = tr.wte(idx) + tr.wpe(torch.arange(pos, pos + t))
    for blk, (K, Vc) in zip(tr.h, caches):
        attn = blk.attn
        q, k, v = attn.c_attn(blk.ln_1(x)).split(WIDTH, dim=2)
        q, k, v = (u.view(B, t, HEADS, WIDTH // HEADS).transpose(1, 2) for u in (q, k, v))
        K[:, :, pos:pos + t] = k
        Vc[:, :, pos:pos + t] = v
        if sdpa:  # the prompt (pos 0, t > 1) causal within it; a new token sees the whole cache
            y = F.scaled_dot_product_attention(q, K[:, :, :pos + t], Vc[:, :, :pos + t], is_causal=t > 1)
        else:
            att = (q @ K[:, :, :pos + t].transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            if t > 1:  # the prompt: causal within it
                att = att.masked_fill(attn.bias[:, :, pos:pos + t, :pos + t] == 0, float("-inf"))
            y = att.softmax(-1) @ Vc[:, :, :pos + t]
        x = x + attn.c_proj(y.transpose(1, 2).contiguous().view(B, t, WIDTH))
        x = x + blk.mlp(blk.ln_2(x))
    return model.lm_head(tr.ln_f(x[:, -1, :]))


def sdpa_forward(attn):
    """nanoGPT's CausalSelfAttention.forward on its flash path, for the module `attn` of
    gen_safetensors.py's GPT (which writes the composed path only): the same weights, the
    attention by F.scaled_dot_product_attention(q, k, v, is_causal=True)."""
    import torch.nn.functional as F

    def forward(x):  # x (B, T, C)
        Bx, Tx, C = x.shape
        q, k, v = attn.c_attn(x).split(C, dim=2)
        q, k, v = (u.view(Bx, Tx, attn.n_head, C // attn.n_head).transpose(1, 2) for u in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return attn.c_proj(y.transpose(1, 2).contiguous().view(Bx, Tx, C))
    return forward


def attention_form(requested):
    """"sdpa" or "composed": the requested form, composed when this PyTorch has no SDPA."""
    import torch.nn.functional as F
    if requested == "sdpa" and not hasattr(F, "scaled_dot_product_attention"):
        return "composed"
    return requested


def run_torch(prompt, new, batch, window, path="recompute", precision="highest", attention="sdpa"):
    import torch
    torch.set_float32_matmul_precision(precision)
    sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
    from gen_safetensors import GPT  # nanoGPT's GPT, written again with its names and shapes
    torch.set_num_threads(2)
    torch.manual_seed(0)
    model = GPT(V, BLOCK, LAYERS, HEADS, WIDTH).eval()
    sdpa = attention_form(attention) == "sdpa"
    if sdpa:  # nanoGPT takes its flash path wherever torch has SDPA
        for blk in model.transformer.h:
            blk.attn.forward = sdpa_forward(blk.attn)
    script = torch.tensor([script_row(b, prompt + new) for b in range(batch)])

    def time_path(n_new):
        ms = []
        D = WIDTH // HEADS
        caches = [(torch.zeros(batch, HEADS, BLOCK, D), torch.zeros(batch, HEADS, BLOCK, D))
                  for _ in range(LAYERS)]
        with torch.inference_mode():
            for i in range(n_new):
                so_far = script[:, :prompt + i][:, -BLOCK:]  # nanoGPT's crop (never reached here)
                t0 = time.perf_counter()
                if path == "cached":  # step 0 prefills the prompt; then the newest token alone
                    pos = 0 if i == 0 else prompt + i - 1
                    logits = cached_logits(model, so_far[:, pos:], caches, pos, sdpa)
                else:
                    logits = model(so_far)[:, -1, :]
                torch.argmax(logits, dim=-1)  # the greedy choice; the scripted token is appended
                ms.append((time.perf_counter() - t0) * 1e3)
        return ms

    time_path(2)  # warm-up
    ms = time_path(new)
    w = min(window, new - 1)
    total_s = sum(ms) / 1e3
    print(f"torch-{path} B {batch} prefill_ms {ms[0]:.3f} first_ms {sum(ms[1:1 + w]) / w:.3f} "
          f"last_ms {sum(ms[-w:]) / w:.3f} total_s {total_s:.3f} tokens_per_s {batch * new / total_s:.2f} new {new} "
          f"attention {'sdpa' if sdpa else 'composed'}",
          flush=True)


def parse(line):  # "PATH B <b> prefill_ms <x> first_ms <x> last_ms <x> total_s <x> tokens_per_s <x> new <n>
    f = line.split()  #  [attention sdpa|composed]" (PyTorch's lines name their attention)
    return {"path": f[0], "B": int(f[2]), "prefill": float(f[4]), "first": float(f[6]), "last": float(f[8]),
            "total": float(f[10]), "tps": float(f[12]), "new": int(f[14]),
            "attention": f[16] if len(f) > 16 else "-"}


def run(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(f"bench_generate_torch: {' '.join(cmd)} failed")
    return [parse(l) for l in out.stdout.strip().splitlines()]


def option(args, name, default):
    if name not in args:
        return default
    i = args.index(name)
    values = []
    for a in args[i + 1:]:
        if a.startswith("--"):
            break
        values.append(int(a))
    return values


def main():
    args = sys.argv[1:]
    prompt, new, window = option(args, "--prompt", [512])[0], option(args, "--new", [512])[0], option(args, "--window", [64])[0]
    batches = option(args, "--batch", [1, 8])
    recompute_new = option(args, "--recompute-new", [64])[0]
    precision = args[args.index("--precision") + 1] if "--precision" in args else "highest"
    if "--torch" in args:
        return run_torch(prompt, new, batches[0], window, "cached" if "--cached" in args else "recompute", precision,
                         args[args.index("--attention") + 1] if "--attention" in args else "sdpa")
    have_torch, have_pthread, env, load = torch_environment()
    composed = "--composed" in args
    form = attention_form("sdpa") if have_torch else "-"
    rows, summary = [], []
    for B in batches:
        n_re = new if B == 1 else min(new, recompute_new)
        runs = [("heed", [HEED, "--paths", "cached"], new, None),
                ("heed", [HEED, "--paths", "recompute"], n_re, None)]
        if have_torch:
            me = os.path.abspath(__file__)
            runs.insert(1, ("PyTorch", [sys.executable, me, "--torch", "--cached"], new, env))
            runs.append(("PyTorch", [sys.executable, me, "--torch"], n_re, env))
            if composed and form == "sdpa":  # the extra rows: attention composed by hand
                runs.append(("PyTorch", [sys.executable, me, "--torch", "--cached", "--attention", "composed"], new, env))
                runs.append(("PyTorch", [sys.executable, me, "--torch", "--attention", "composed"], n_re, env))
        found = {}
        for who, cmd, n, e in runs:
            sizes = ["--prompt", str(prompt), "--new", str(n), "--window", str(min(window, n - 1)),
                     "--precision", precision]
            for r in run([*cmd, *sizes, "--batch", str(B)], e):
                name = f"{who} {r['path'].replace('torch-', '')}" + (
                    ", composed attention" if who == "PyTorch" and r["attention"] != form else "")
                rows.append((name, r))
                found[name] = r
                print(f"  {name} B {B}, {n} new: {r['tps']:.1f} tokens/s", flush=True)
        c, h = found["heed cached"], found["heed recompute"]
        summary.append(f"batch {B}: heed cached {c['tps'] / h['tps']:.1f}x heed recompute's tokens/s"
                       + (f", {c['tps'] / found['PyTorch cached']['tps']:.2f}x PyTorch cached's, "
                          f"{c['tps'] / found['PyTorch recompute']['tps']:.1f}x PyTorch recompute's" if have_torch else "")
                       + f" ({c['new']} vs {h['new']} new tokens); cached last / first {window} tokens "
                       f"{c['last'] / c['first']:.2f}x; cached prefill {c['prefill']:.0f} ms vs a forward of the "
                       f"same {prompt} tokens (recompute's step 0) {h['prefill']:.0f} ms")

    lines = [f"load average {load} at the start; {prompt}-token prompt, {new} new tokens (recompute at batch > 1: "
             f"{recompute_new}), GPT-small shapes "
             f"(6 layers, 6 heads, width 384, vocabulary 65, block 1024); matmul precision {precision}; "
             "one run each; PyTorch: " + ("attention F.scaled_dot_product_attention (nanoGPT's flash path)"
                                           if form == "sdpa" else "attention composed (matmul, causal mask, softmax: "
                                           "this PyTorch has no F.scaled_dot_product_attention)") + ", 2 threads, "
             "OMP_WAIT_POLICY=passive, " + ("pthread OpenBLAS" if have_pthread else
                                             "libopenblas0-pthread MISSING: torch ran on the OpenMP OpenBLAS (slower)"),
             "",
             f"| path | batch | new tokens | prefill ms | ms/step, first {window} | ms/step, last {window} "
             f"| last / first | total s | new tokens/s (all rows) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows:
        lines.append(f"| {name} | {r['B']} | {r['new']} | {r['prefill']:.1f} | {r['first']:.2f} | {r['last']:.2f} "
                     f"| {r['last'] / r['first']:.2f}x | {r['total']:.1f} | {r['tps']:.1f} |")
    lines += [""] + summary
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(os.path.dirname(HEED), "generate.md"), "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
