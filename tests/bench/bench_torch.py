"""bench_torch.py - the workloads of bench_core.cpp in PyTorch (CPU, eager), side by side
with heed's (`make bench`, Debian's /usr/bin/python3 with python3-torch):

  /usr/bin/python3 tests/bench/bench_torch.py [build/bench/bench_core] [--rounds 3]
  /usr/bin/python3 tests/bench/bench_torch.py --torch      PyTorch's side alone

Each round runs bench_core (writing build/bench/heed.txt beside it) and this script's
--torch side as separate processes, in alternating order, PyTorch in its best configuration
(bench_models_torch.torch_environment); the table shows each op's median over the rounds."""
import os
import sys
import time

import torch

from bench_models_torch import side_by_side  # same folder

torch.manual_seed(0)
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))  # 2 as --torch


def median_ms(f, reps):
    for _ in range(3):
        f()
    ts = []
    for _ in range(reps):
        a = time.perf_counter()
        f()
        ts.append((time.perf_counter() - a) * 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def grad_leaf(*shape, scale=1.0):
    return (torch.randn(*shape) * scale).requires_grad_()


def mlp_step():
    x, y = torch.randn(256, 512), torch.randn(256, 512)
    w1, b1 = grad_leaf(512, 1024, scale=0.04), torch.zeros(1024, requires_grad=True)
    w2, b2 = grad_leaf(1024, 512, scale=0.03), torch.zeros(512, requires_grad=True)

    def step():
        loss = ((torch.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2).mean()
        for p in (w1, b1, w2, b2):
            p.grad = None
        loss.backward()
    return step


def workloads():
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    yield "matmul_512_fwd", (lambda: a @ b), 30
    ba, bb = grad_leaf(32, 128, 64), grad_leaf(32, 64, 128)
    yield "bmm_32x128x64_fwd_bwd", (lambda: (ba @ bb).sum().backward()), 30
    m, v = torch.randn(1024, 1024), torch.randn(1024)
    yield "add_bcast_1024x1024_fwd", (lambda: m + v), 50
    sx, sw = grad_leaf(4096, 512), torch.randn(4096, 512)
    yield "softmax_4096x512_fwd_bwd", (lambda: (torch.softmax(sx, -1) * sw).sum().backward()), 20
    gx = grad_leaf(1 << 20)
    yield "gelu_1M_fwd_bwd", (lambda: torch.nn.functional.gelu(gx).sum().backward()), 20
    rx = torch.randn(4096, 1024)
    yield "sum_dim0_4096x1024", (lambda: rx.sum(0)), 30
    yield "mlp_step_256x512x1024", mlp_step(), 20
    tx = grad_leaf(1 << 20)
    yield "tanh_1M_fwd_bwd", (lambda: torch.tanh(tx).sum().backward()), 20
    ex = torch.randn(1 << 20)
    yield "exp_1M_fwd", (lambda: torch.exp(ex)), 30
    cx, ct = grad_leaf(4096, 1000), torch.arange(4096) * 7919 % 1000
    yield ("cross_entropy_4096x1000_fwd_bwd",
           (lambda: torch.nn.functional.cross_entropy(cx, ct).backward()), 20)
    lx, lw = grad_leaf(4096, 1024), torch.randn(4096, 1024)
    lg, lb = torch.ones(1024, requires_grad=True), torch.zeros(1024, requires_grad=True)
    yield ("layer_norm_4096x1024_fwd_bwd",
           (lambda: (torch.nn.functional.layer_norm(lx, (1024,), lg, lb) * lw).sum().backward()), 20)
    lstm, sx = torch.nn.LSTM(256, 256, batch_first=True), grad_leaf(32, 50, 256)
    yield "lstm_32x50x256_fwd_bwd", (lambda: lstm(sx)[0].sum().backward()), 10


def main():
    args = sys.argv[1:]
    if args[:1] == ["--torch"]:  # PyTorch's side: "<name> <median ms>" per workload
        for name, fn, reps in workloads():
            print(name, median_ms(fn, reps), flush=True)
        return
    heed, tch, how = side_by_side(__file__, args, "build/bench/bench_core", "heed.txt")
    print(f"\n{'workload':34s} {'heed ms':>9s} {'torch ms':>9s} {'torch/heed':>10s}")
    for name, h in heed.items():
        t = tch.get(name, float("nan"))
        print(f"{name:34s} {h:9.3f} {t:9.3f} {t / h:9.2f}x")
    print(f"({how}; >1x means heed is faster)")


if __name__ == "__main__":
    main()
