"""bench_attention_torch.py - the workloads of bench_attention.cpp in PyTorch (CPU, eager):
composed scaled dot-product attention, softmax(q k^T * scale, masked) v, forward + backward,
B = 1, H = 8, D = 64, T = 512 and 2048, with and without causal masking. torch 1.13 has
no F.scaled_dot_product_attention, so this is the form it offers. Prints heed's flash and
composed timings next to torch's, medians of alternating rounds (as bench_torch.py):

  /usr/bin/python3 tests/bench/bench_attention_torch.py [build/bench/bench_attention] [--rounds 3]
  /usr/bin/python3 tests/bench/bench_attention_torch.py --torch     PyTorch's side alone
"""
import math
import os
import sys
import time

import torch

torch.manual_seed(0)
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
B, H, D = 1, 8, 64


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


def main():
    from bench_models_torch import side_by_side  # same folder
    args = sys.argv[1:]
    tags = [f"T{T}{'_causal' if causal else ''}" for T in (512, 2048) for causal in (False, True)]
    if args[:1] == ["--torch"]:  # PyTorch's side: "<tag> <median ms>"
        for tag in tags:
            T, causal = int(tag[1:].split("_")[0]), tag.endswith("_causal")
            print(tag, median_ms(composed_step(T, causal), 20 if T <= 512 else 5), flush=True)
        return
    heed, tch, how = side_by_side(__file__, args, "build/bench/bench_attention",
                                  "heed_attention.txt")
    print(f"\n{'attention fwd+bwd, B=1 H=8 D=64':34s} {'heed flash':>10s} {'heed comp.':>10s} "
          f"{'torch comp.':>11s} {'torch/flash':>11s}")
    for tag in tags:
        flash = heed.get(f"attn_flash_{tag}_fwd_bwd", float("nan"))
        comp = heed.get(f"attn_composed_{tag}_fwd_bwd", float("nan"))
        t = tch.get(tag, float("nan"))
        print(f"{'attn_' + tag:34s} {flash:10.3f} {comp:10.3f} {t:11.3f} {t / flash:11.2f}")
    print(f"({how})")


if __name__ == "__main__":
    main()
