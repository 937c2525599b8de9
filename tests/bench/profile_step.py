#!/usr/bin/env python3
"""profile_step.py - where one training step's time goes, by kind of work.

    python3 tests/bench/profile_step.py [--steps N] [--case gpt_small] build/bench/bench_models PRECISION...

For each precision ("highest", "medium"), runs `perf record` (software cpu-clock samples, so it
works where the CPU's counters are not exposed) over `bench_models --precision P --steps N CASE`
(warm-up, then N steps; the model's set-up is in the profile too, about 1% of it), sorts every
sample's symbol into one of the kinds below and prints one markdown row per precision, in % of
all samples. tests/bench/README.md quotes the table.

The kinds, first match wins (KINDS below): oneDNN's GEMM kernels (its JIT code and libdnnl),
attention (heed's flash kernel and its packed GEMM), conversions to bfloat16, element-wise and
row passes (epilogues, gradient passes, LayerNorm, softmax rows, adds), the optimizer, the
OpenMP runtime (libgomp: barriers and waiting), the kernel (page faults, scheduling), libc
(memmove, malloc), and the rest.
"""
import argparse
import re
import subprocess
import sys
import tempfile

KINDS = [  # (column, dso regex, symbol regex)
    ("GEMM (oneDNN)", r"^\[JIT\]|libdnnl", r""),
    ("conversion", r"", r"to_bf16_bits|round_to_bf16|Bf16Matrix|round_copy|Bf16Copy"),
    ("attention", r"", r"flash|kernel_bf16|\bkernel<|gemm_packed|pack_b|store_block|exp_row|row_all_finite|"
                       r"forward_all|backward_all|first_bad_skip|last_bad_key|fill_skipped|score_grads|"
                       r"\bscores\b|forward_block|backward_block|KeyBlock"),
    ("optimizer", r"", r"optim::|AdamFamily|clip_grad|zero_grad"),
    ("element-wise", r"", r"zip_loop|map_loop|map_d_loop|map3_loop|apply_epilogue|GradientPass|"
                          r"layer_norm|row_accumulate|row_max|row_sum|gelu|compound|zeros|softmax|"
                          r"cross_entropy|column_sums|embedding|dropout|add\(|mul\(|sum_to|copy_"),
    ("OpenMP runtime", r"libgomp", r""),
    ("kernel", r"kernel\.kallsyms", r""),
    ("libc", r"libc\.so|libstdc\+\+", r""),
]
OTHER = "other"


def kind_of(dso, sym):
    for name, dso_re, sym_re in KINDS:
        if dso_re and re.search(dso_re, dso):
            return name
        if sym_re and not dso_re and re.search(sym_re, sym):
            return name
    return OTHER


def profile(binary, precision, steps, case):
    with tempfile.NamedTemporaryFile(suffix=".data") as data:
        run = subprocess.run(["perf", "record", "-F", "499", "-o", data.name, "--", binary, "--precision",
                              precision, "--steps", str(steps), case],
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"profile_step: perf record failed: {run.stderr.strip()[-400:]}")
        step = run.stdout.strip()
        report = subprocess.run(["perf", "report", "-i", data.name, "--no-children", "--sort", "dso,sym",
                                 "--stdio", "-g", "none"], capture_output=True, text=True).stdout
    shares = {name: 0.0 for name, _, _ in KINDS}
    shares[OTHER] = 0.0
    line_re = re.compile(r"^\s*([0-9.]+)%\s+(\S+(?: tid \d+)?)\s+\[[.k]\]\s+(.*)$")
    for line in report.splitlines():
        m = line_re.match(line)
        if m:
            shares[kind_of(m.group(2), m.group(3))] += float(m.group(1))
    return step, shares


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("precisions", nargs="+")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--case", default="gpt_small")
    a = ap.parse_args()
    names = [name for name, _, _ in KINDS] + [OTHER]
    print("| precision | ms/step (under perf) | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for p in a.precisions:
        step, shares = profile(a.binary, p, a.steps, a.case)
        ms = re.search(r"([0-9.]+) ms/step", step)
        print(f"| {p} | {ms.group(1) if ms else '?'} | " + " | ".join(f"{shares[n]:.1f}%" for n in names) + " |")


if __name__ == "__main__":
    main()
