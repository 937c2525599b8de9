"""bench_block_sparse_torch.py - PyTorch's side of bench_block_sparse.cpp: dense attention
masked with the same block layout (strided_layout(T, 64, 7, 16), causal: query block I keeps
key blocks J <= I with I - J <= 7 or (I - J) % 16 == 0, and j <= i inside them), forward +
backward, B = 1, H = 4, D = 64, on the CPU in eager mode. PyTorch 1.13 has no block-sparse
attention on the CPU, so the masked dense form is what it offers: it forms every score,
(B, H, T, T) floats several times over, so it runs where that fits in memory (T = 4096; at
T = 16384 one such tensor is 4 GiB and the backward holds about four). Prints heed's
figures (from the file bench_block_sparse writes) next to torch's. Threads: as heed's
(OMP_NUM_THREADS, or all cores).

    build/bench/bench_block_sparse build/bench/heed_block_sparse.txt
    /usr/bin/python3 tests/bench/bench_block_sparse_torch.py build/bench/heed_block_sparse.txt
"""
import math
import os

import torch

from bench_attention_torch import median_ms, read_heed  # median_ms: 2 warm-ups, then the median

torch.manual_seed(0)
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
B, H, D, BLOCK, LOCAL, STRIDE = 1, 4, 64, 64, 7, 16


def visible(T):
    """(T, T) bool, True where the causal strided layout lets query i see key j."""
    blk = torch.arange(T) // BLOCK
    d = blk[:, None] - blk[None, :]
    keep = (d >= 0) & ((d <= LOCAL) | (d % STRIDE == 0))
    tok = torch.arange(T)
    return keep & (tok[None, :] <= tok[:, None])


def masked_step(T):
    q, k, v = (torch.randn(B, H, T, D).requires_grad_() for _ in range(3))
    d_o = torch.randn(B, H, T, D)
    hidden = ~visible(T)

    def step():
        s = (q @ k.transpose(-2, -1) * (1 / math.sqrt(D))).masked_fill(hidden, float("-inf"))
        o = torch.softmax(s, -1) @ v
        for t in (q, k, v):
            t.grad = None
        o.backward(d_o)
    return step


def main():
    heed = read_heed("build/bench/heed_block_sparse.txt")
    print(f"\n{'block-sparse attention fwd+bwd, B=1 H=4 D=64 b=64':52s} {'heed ms':>9s} {'torch ms':>9s}")
    for T in (4096, 16384):
        t = f"_T{T}"
        density = heed.get("density" + t, float("nan"))
        torch_ms = median_ms(masked_step(T), 3) if T <= 4096 else float("nan")
        print(f"{'strided layout (density %.3f)' % density + t:52s} "
              f"{heed.get('block_sparse' + t, float('nan')):9.1f} {torch_ms:9.1f}  "
              f"(torch: dense masked{'' if T <= 4096 else ', not run: (B, H, T, T) is 4 GiB'})")
        print(f"{'dense causal flash' + t:52s} {heed.get('flash_causal' + t, float('nan')):9.1f}")


if __name__ == "__main__":
    main()
