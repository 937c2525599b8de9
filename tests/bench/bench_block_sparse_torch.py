"""bench_block_sparse_torch.py - PyTorch's side of bench_block_sparse.cpp: dense attention
masked with the same block layout (strided_layout(T, 64, 7, 16), causal: query block I keeps
key blocks J <= I with I - J <= 7 or (I - J) % 16 == 0, and j <= i inside them), forward +
backward, B = 1, H = 4, D = 64, on the CPU in eager mode. PyTorch has no block-sparse
attention on the CPU, so the masked dense form is what it offers, two ways: the layout as a
boolean attn_mask to F.scaled_dot_product_attention (where PyTorch has it: 2.0 and later),
and composed from matmul, masked_fill and softmax, an extra row. Both form every score,
(B, H, T, T) floats, so they run where that fits in memory (T = 4096; at T = 16384 one such
tensor is 4 GiB and the composed backward holds about four). Prints heed's figures (from
the file bench_block_sparse writes) next to torch's. Threads: as heed's (OMP_NUM_THREADS,
or all cores).

    build/bench/bench_block_sparse build/bench/heed_block_sparse.txt
    build/torch-venv/bin/python tests/bench/bench_block_sparse_torch.py build/bench/heed_block_sparse.txt [--reps 3]
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

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


def masked_step(T, sdpa):
    """One forward + backward of dense attention under the layout: SDPA with the layout as
    its boolean attn_mask (True = attend), or composed."""
    q, k, v = (torch.randn(B, H, T, D).requires_grad_() for _ in range(3))
    d_o = torch.randn(B, H, T, D)
    seen = visible(T)
    hidden = ~seen

    def step():
        if sdpa:
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=seen)
        else:
            s = (q @ k.transpose(-2, -1) * (1 / math.sqrt(D))).masked_fill(hidden, float("-inf"))
            o = torch.softmax(s, -1) @ v
        for t in (q, k, v):
            t.grad = None
        o.backward(d_o)
    return step


def main():
    heed = read_heed("build/bench/heed_block_sparse.txt")
    reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 3
    sdpa = hasattr(F, "scaled_dot_product_attention")
    forms = ([("SDPA attn_mask", True)] if sdpa else []) + [("composed", False)]
    nan = float("nan")
    print(f"\n{'block-sparse attention fwd+bwd, B=1 H=4 D=64 b=64':52s} {'heed ms':>9s} {'torch ms':>9s}")
    if not sdpa:
        print(f"(torch {torch.__version__} has no F.scaled_dot_product_attention: the SDPA row is not run)")
    for T in (4096, 16384):
        t = f"_T{T}"
        density = heed.get("density" + t, nan)
        print(f"{'strided layout (density %.3f)' % density + t:52s} {heed.get('block_sparse' + t, nan):9.1f}")
        if T > 4096:
            print(f"{'  torch dense masked' + t:52s} {'':9s} {'-':>9s}  (not run: (B, H, T, T) is 4 GiB)")
        for label, use_sdpa in forms if T <= 4096 else []:
            print(f"{'  torch dense masked' + t + ', ' + label:52s} {'':9s} "
                  f"{median_ms(masked_step(T, use_sdpa), reps):9.1f}")
        print(f"{'dense causal flash' + t:52s} {heed.get('flash_causal' + t, nan):9.1f}")


if __name__ == "__main__":
    main()
