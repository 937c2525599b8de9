"""bench_attention_torch.py - the workloads of bench_attention.cpp in PyTorch (CPU, eager):
composed scaled dot-product attention, softmax(q k^T * scale, masked) v, forward + backward,
B = 1, H = 8, D = 64, T = 512 and 2048, with and without causal masking. torch 1.13 has
no F.scaled_dot_product_attention, so this is the form it offers. Prints heed's flash and
composed timings (from the file bench_attention writes) next to torch's. Thread count:
the same as heed's (OMP_NUM_THREADS, or all cores).

    build/bench/bench_attention build/bench/heed_attention.txt
    /usr/bin/python3 tests/bench/bench_attention_torch.py build/bench/heed_attention.txt
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
    heed = read_heed("build/bench/heed_attention.txt")
    print(f"\n{'attention fwd+bwd, B=1 H=8 D=64':34s} {'heed flash':>10s} {'heed comp.':>10s} "
          f"{'torch comp.':>11s} {'torch/flash':>11s}")
    for T in (512, 2048):
        for causal in (False, True):
            tag = f"T{T}{'_causal' if causal else ''}"
            torch_ms = median_ms(composed_step(T, causal), 20 if T <= 512 else 5)
            flash = heed.get(f"attn_flash_{tag}_fwd_bwd", float("nan"))
            comp = heed.get(f"attn_composed_{tag}_fwd_bwd", float("nan"))
            print(f"{'attn_' + tag:34s} {flash:10.3f} {comp:10.3f} {torch_ms:11.3f} "
                  f"{torch_ms / flash:11.2f}")


if __name__ == "__main__":
    main()
