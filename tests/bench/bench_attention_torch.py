"""bench_attention_torch.py - the workloads of bench_attention.cpp in PyTorch (CPU, eager):
scaled dot-product attention, forward + backward, B = 1, H = 8, D = 64, T = 512 and 2048,
with and without causal masking. PyTorch's side runs in up to three configurations (CONFIGS),
each a separate process:

  sdpa-fp32       F.scaled_dot_product_attention(q, k, v, is_causal=causal), float32
  sdpa-bf16       the same call on bfloat16 q, k, v and dO (only where the CPU has bf16
                  units, avx512_bf16 or amx_bf16: without them PyTorch emulates bf16)
  composed-fp32   softmax(q k^T / sqrt(D), masked) v from matmul, masked_fill and softmax,
                  the form a PyTorch without SDPA (Debian's 1.13) offers: an extra row

On a PyTorch without F.scaled_dot_product_attention the SDPA columns say so and only the
composed one runs. Prints heed's flash and composed timings next to PyTorch's, medians of
rounds in which the sides alternate (as bench_torch.py); the ratio is against the fastest
PyTorch configuration of the row, which the table names.

  build/torch-venv/bin/python tests/bench/bench_attention_torch.py [build/bench/bench_attention] [--rounds 3]
  build/torch-venv/bin/python tests/bench/bench_attention_torch.py --torch [--config C] [--reps N]
      PyTorch's side alone, one configuration (default sdpa-fp32, or composed-fp32 without SDPA)
"""
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
B, H, D = 1, 8, 64
CONFIGS = ["sdpa-fp32", "sdpa-bf16", "composed-fp32"]


def median_ms(f, reps):
    for _ in range(2):
        f()
    ts = []
    for _ in range(reps):
        a = time.perf_counter()
        f()
        ts.append((time.perf_counter() - a) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def sdpa_step(T, causal, dtype=torch.float32):
    """One forward + backward of PyTorch's fused attention on (B, H, T, D) inputs."""
    q, k, v = (torch.randn(B, H, T, D, dtype=dtype).requires_grad_() for _ in range(3))
    d_o = torch.randn(B, H, T, D, dtype=dtype)

    def step():
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        for t in (q, k, v):
            t.grad = None
        o.backward(d_o)
    return step


def composed_step(T, causal):
    q, k, v = (torch.randn(B, H, T, D).requires_grad_() for _ in range(3))
    d_o = torch.randn(B, H, T, D)
    hidden = torch.ones(T, T, dtype=torch.bool).triu(1) if causal else None

    def step():
        s = q @ k.transpose(-2, -1) * (1 / math.sqrt(D))
        if hidden is not None:
            s = s.masked_fill(hidden, float("-inf"))
        o = torch.softmax(s, -1) @ v
        for t in (q, k, v):
            t.grad = None
        o.backward(d_o)
    return step


def read_heed(default):
    """{name: value} from the "<name> <value>" lines of the file named on the command line."""
    heed = {}
    with open(sys.argv[1] if len(sys.argv) > 1 else default) as f:
        for line in f:
            name, value = line.split()
            heed[name] = float(value)
    return heed


def configs_here():
    """The configurations this PyTorch and CPU run, and a note per one they skip."""
    from bench_models_torch import cpu_has_bf16  # same folder
    if not hasattr(F, "scaled_dot_product_attention"):
        return ["composed-fp32"], [f"SDPA not run: PyTorch {torch.__version__} has no "
                                   "F.scaled_dot_product_attention"]
    if not cpu_has_bf16():
        return ["sdpa-fp32", "composed-fp32"], ["sdpa-bf16 not run: this CPU has no bf16 units "
                                                "(no avx512_bf16 or amx_bf16)"]
    return list(CONFIGS), []


def torch_side(tags, args):
    """`--torch [--config C] [--reps N]`: "<tag> <median ms>" for every workload."""
    config = args[args.index("--config") + 1] if "--config" in args else configs_here()[0][0]
    if config not in CONFIGS:
        raise SystemExit(f"unknown configuration {config}: one of {', '.join(CONFIGS)}")
    reps = int(args[args.index("--reps") + 1]) if "--reps" in args else None
    for tag in tags:
        T, causal = int(tag[1:].split("_")[0]), tag.endswith("_causal")
        step = (composed_step(T, causal) if config == "composed-fp32" else
                sdpa_step(T, causal, torch.bfloat16 if config == "sdpa-bf16" else torch.float32))
        print(tag, median_ms(step, reps or (20 if T <= 512 else 5)), flush=True)


def main():
    from bench_models_torch import side_by_side  # same folder
    args = sys.argv[1:]
    tags = [f"T{T}{'_causal' if causal else ''}" for T in (512, 2048) for causal in (False, True)]
    if args[:1] == ["--torch"]:  # PyTorch's side: "<tag> <median ms>"
        return torch_side(tags, args)
    configs, notes = configs_here()
    heed, tch, how = side_by_side(__file__, args, "build/bench/bench_attention",
                                  "heed_attention.txt", configs)
    nan = float("nan")
    print(f"\n{'attention fwd+bwd, B=1 H=8 D=64, ms':36s} {'heed flash':>10s} {'heed comp.':>10s} "
          + " ".join(f"{'torch ' + c:>19s}" for c in CONFIGS)
          + f" {'fastest torch':>14s} {'fastest/flash':>13s}")
    for tag in tags:
        flash = heed.get(f"attn_flash_{tag}_fwd_bwd", nan)
        comp = heed.get(f"attn_composed_{tag}_fwd_bwd", nan)
        times = {c: tch[c][tag] for c in configs if tag in tch.get(c, {})}
        cells = " ".join(f"{times[c]:19.3f}" if c in times else f"{'-':>19s}" for c in CONFIGS)
        best = min(times, key=times.get) if times else "-"
        ratio = times[best] / flash if times else nan
        print(f"{'attn_' + tag:36s} {flash:10.3f} {comp:10.3f} {cells} {best:>14s} {ratio:13.2f}")
    print(f"({how}; sdpa = F.scaled_dot_product_attention(is_causal=causal); composed-fp32 = "
          "matmul, masked_fill, softmax, matmul" + "".join(f"; {n}" for n in notes) + ")")


if __name__ == "__main__":
    main()
