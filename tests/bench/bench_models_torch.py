#!/usr/bin/python3
"""bench_models_torch.py - heed vs PyTorch on whole-model training steps (`make bench`).

The PyTorch twins of the cases in bench_models.cpp, written as a PyTorch 2.x user writes
them, and the driver that runs both sides in alternating rounds and prints one table (also
written to build/bench/models.md):

  build/torch-venv/bin/python tests/bench/bench_models_torch.py [--rounds 3] [CASE ...]
  build/torch-venv/bin/python tests/bench/bench_models_torch.py --torch CASE [--config C]
      one PyTorch case in one configuration C (default eager-fp32)

PyTorch runs each case in up to four configurations (CONFIGS):
  eager-fp32     the model as written
  eager-bf16     the whole step under torch.autocast("cpu", dtype=torch.bfloat16)
  compile-fp32   the model wrapped in torch.compile (Inductor), as nanoGPT's --compile does;
                 the loss, backward and optimizer step stay eager
  compile-bf16   both
The bf16 ones run only where the CPU has bf16 units (avx512_bf16 or amx_bf16): without them
PyTorch emulates bf16 many times slower than fp32. A compiled configuration's first step
(tracing and Inductor's C++ build of the forward and backward) is reported apart, in seconds,
and is not one of the timed steps. If torch.compile fails (no C++ compiler, no Python headers,
an Inductor error) the row says "compile failed: <reason>" and the run goes on. Every ratio
printed is against the fastest PyTorch configuration of its row, which the table names.

The GPT is nanoGPT's (karpathy/nanoGPT model.py): nn.Linear projections, attention by
F.scaled_dot_product_attention(q, k, v, is_causal=True), F.gelu, pre-norm nn.LayerNorm,
torch.optim.AdamW; the attn_T* cases time the same SDPA call alone. On a PyTorch without
scaled_dot_product_attention (Debian's 1.13) the attention is composed from matmul, a causal
mask and softmax instead, and the table says so.

Each round runs `build/bench/bench_models CASE` and this script's `--torch CASE --config C`
for every configuration as separate processes, the order rotated every round; the table shows
the median of the rounds. PyTorch runs on 2 cores: 2 threads, OMP_WAIT_POLICY=passive, and
(for Debian's PyTorch, which links the system BLAS) the pthread build of OpenBLAS (Debian
libopenblas0-pthread, which `make bench` installs) through LD_LIBRARY_PATH, for torch's
process alone. With the OpenMP build, which heed links, torch's LSTM-heavy steps are much
slower (run `--torch lstm` with and without LD_LIBRARY_PATH to see it).

Memory: "heed MiB" is heed's allocator peak during one step beyond what was live before it
(alloc::PeakScope); "RSS MiB" on both sides is the growth of the process's peak resident set
(VmHWM) over the timed steps, measured from just before the first step (what the OS gave it;
for a compiled configuration it includes the compiler's own memory).
"""
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time

PTHREAD_BLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
HEED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bench",
                    "bench_models")
CASES = ["gpt_baby", "gpt_small", "seq2seq", "lstm", "gru", "attn_T512", "attn_T2048", "attn_T4096",
         "attn_T16384", "tiny_ops"]
HEED_ONLY = {"attn_T16384"}
SLOW = {"gpt_small", "attn_T2048", "attn_T4096"}  # one warm-up step (PyTorch's attention
ONE_ROUND = {"attn_T4096"}                        # steps slowly at T 4096: one round)
TINY_OPS = 10000
CONFIGS = ["eager-fp32", "eager-bf16", "compile-fp32", "compile-bf16"]
# cases torch.compile is not run on, and why
NO_COMPILE = {"tiny_ops": "it times recording single ops, which compiling removes"}
COMPILE_TIMEOUT_S = 1800  # a PyTorch process that has printed nothing by then has failed


def vm_hwm_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vm_rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


# ---------------------------------------------------------------- what this PyTorch can run

def cpu_has_bf16():
    """Whether the CPU has bf16 units (avx512_bf16 or amx_bf16 in /proc/cpuinfo)."""
    with open("/proc/cpuinfo") as f:
        flags = set(f.read().split())
    return "avx512_bf16" in flags or "amx_bf16" in flags


def has_sdpa():
    """Whether this PyTorch has F.scaled_dot_product_attention (2.0 and later)."""
    import torch.nn.functional as F
    return hasattr(F, "scaled_dot_product_attention")


def compile_blocker():
    """None when torch.compile can run here; otherwise why not, with what is missing.
    Inductor's CPU backend builds C++ with g++ (or $CXX) against the Python headers."""
    import torch
    if not hasattr(torch, "compile"):
        return f"PyTorch {torch.__version__} has no torch.compile (2.0 and later have it)"
    cxx = os.environ.get("CXX", "g++")
    if not shutil.which(cxx):
        return f"no C++ compiler ({cxx}): Inductor's CPU backend needs g++ (apt-get install g++)"
    include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(include, "Python.h")):
        ver = f"{sys.version_info.major}.{sys.version_info.minor}"
        return (f"no {include}/Python.h: Inductor's CPU backend needs the Python headers "
                f"(apt-get install python{ver}-dev, or a venv made from a Python that has them)")
    return None


def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(D), causal) v on (B, H, T, D): PyTorch's fused SDPA where this
    PyTorch has it, as nanoGPT calls it; else composed (the form torch 1.13 offers)."""
    import torch
    import torch.nn.functional as F
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.size(-2)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


# ---------------------------------------------------------------- the PyTorch cases

def torch_case(name, compiled=False):
    """(step, timed steps) of case `name`; with compiled, its module or function goes
    through torch.compile (lazily: the first call compiles)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(2)
    torch.manual_seed(0)
    maybe_compile = torch.compile if compiled else (lambda f: f)

    if name == "sgemm_1024":  # the matmul peak probe: (1024 x 1024) @ (1024 x 1024)
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        mm = maybe_compile(lambda x, y: x @ y)
        return (lambda: mm(a, b)), 10

    if name in ("gpt_baby", "gpt_small"):
        V, T, B, L, H, E = (65, 64, 12, 4, 4, 128) if name == "gpt_baby" else (65, 256, 8, 6, 6, 384)

        class CausalSelfAttention(nn.Module):  # nanoGPT's, without dropout
            def __init__(self):
                super().__init__()
                self.c_attn, self.c_proj = nn.Linear(E, 3 * E), nn.Linear(E, E)

            def forward(self, x):  # x (B, T, E)
                Bx, Tx, C = x.shape
                q, k, v = self.c_attn(x).split(C, dim=2)
                q, k, v = (t.view(Bx, Tx, H, C // H).transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
                y = causal_attention(q, k, v)
                return self.c_proj(y.transpose(1, 2).contiguous().view(Bx, Tx, C))

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln_1, self.attn = nn.LayerNorm(E), CausalSelfAttention()
                self.ln_2, self.c_fc, self.c_proj = nn.LayerNorm(E), nn.Linear(E, 4 * E), nn.Linear(4 * E, E)

            def forward(self, x):
                x = x + self.attn(self.ln_1(x))
                return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x))))

        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok, self.pos = nn.Embedding(V, E), nn.Embedding(T, E)
                self.blocks = nn.ModuleList(Block() for _ in range(L))
                self.ln_f, self.head = nn.LayerNorm(E), nn.Linear(E, V)

            def forward(self, idx):  # idx (B, T) -> logits (B, T, V)
                x = self.tok(idx) + self.pos(torch.arange(T))
                for blk in self.blocks:
                    x = blk(x)
                return self.head(self.ln_f(x))

        raw = GPT()
        opt = torch.optim.AdamW(raw.parameters(), lr=3e-4)
        model = maybe_compile(raw)
        x, y = torch.randint(0, V, (B, T)), torch.randint(0, V, (B * T,))

        def step():
            loss = F.cross_entropy(model(x).reshape(B * T, V), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return step, 5 if name == "gpt_baby" else 3

    if name == "seq2seq":
        B, S, Tt, V, Em, He, Hd, A = 64, 30, 12, 1000, 128, 128, 256, 128

        class Seq2Seq(nn.Module):
            def __init__(self):
                super().__init__()
                self.src_emb, self.tgt_emb = nn.Embedding(V, Em), nn.Embedding(V, Em)
                self.enc = nn.LSTM(Em, He, batch_first=True, bidirectional=True)
                self.W_s = nn.Linear(Hd, A, bias=False)
                self.W_h = nn.Linear(2 * He, A)
                self.v = nn.Parameter(torch.empty(A).uniform_(-A ** -0.5, A ** -0.5))
                self.dec = nn.LSTMCell(Em + 2 * He, Hd)
                self.out = nn.Linear(Hd, V)

            def forward(self, src, tgt_in):
                h, _ = self.enc(self.src_emb(src))  # (B, S, 2He)
                hp = self.W_h(h)                    # (B, S, A)
                y = self.tgt_emb(tgt_in)            # (B, Tt, Em)
                s, cell = torch.zeros(B, Hd), torch.zeros(B, Hd)
                states = []
                for t in range(Tt):  # Bahdanau's additive attention on the decoder state
                    e = torch.tanh(self.W_s(s).unsqueeze(1) + hp) @ self.v  # (B, S)
                    c = (torch.softmax(e, -1).unsqueeze(1) @ h).squeeze(1)  # (B, 2He)
                    s, cell = self.dec(torch.cat([y[:, t], c], -1), (s, cell))
                    states.append(s)
                return self.out(torch.stack(states, 1).reshape(B * Tt, Hd))

        raw = Seq2Seq()
        opt = torch.optim.Adam(raw.parameters(), lr=1e-3)
        model = maybe_compile(raw)
        src, tin = torch.randint(0, V, (B, S)), torch.randint(0, V, (B, Tt))
        tout = torch.randint(0, V, (B * Tt,))

        def step():
            loss = F.cross_entropy(model(src, tin), tout)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return step, 5

    if name in ("lstm", "gru"):  # one layer, batch 32, T 100, input 128, hidden 256
        rnn = (nn.LSTM if name == "lstm" else nn.GRU)(128, 256, batch_first=True)
        run_rnn = maybe_compile(rnn)
        x = torch.randn(32, 100, 128, requires_grad=True)
        w = torch.randn(32, 100, 256)

        def step():
            rnn.zero_grad(set_to_none=True)
            x.grad = None
            (run_rnn(x)[0] * w).sum().backward()
        return step, 5

    if name.startswith("attn_T"):
        T, H, D = int(name[6:]), 4, 64
        q, k, v = (torch.randn(1, H, T, D, requires_grad=True) for _ in range(3))
        dO = torch.randn(1, H, T, D)
        attend = maybe_compile(causal_attention)

        def step():
            for t in (q, k, v):
                t.grad = None
            attend(q, k, v).backward(dO)
        return step, 5 if T <= 512 else 1

    if name == "tiny_ops":
        x = torch.randn(4, requires_grad=True)

        def step():
            x.grad = None
            y = x
            for _ in range(TINY_OPS // 4):
                y = ((y * 0.5) + 1) * 0.9 - 0.4
            y.sum().backward()
        return step, 5
    raise SystemExit(f"unknown case {name}")


def run_torch_case(name, config="eager-fp32"):
    """Times one case in one configuration and prints bench_models' line, with the first
    step's seconds appended: "CASE <ms> ms <g> gflop 0 peak_mib <r> rss_mib <s> first_s".
    A compiled configuration that raises prints "CASE FAILED <reason>" and exits 3."""
    if config not in CONFIGS:
        raise SystemExit(f"unknown configuration {config}: one of {', '.join(CONFIGS)}")
    compiled, bf16 = config.startswith("compile"), config.endswith("bf16")
    import torch
    try:
        step, reps = torch_case(name, compiled)
        if bf16:  # the whole step under bf16 autocast, as a user turns it on
            fp32_step = step

            def step():
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    fp32_step()
        rss0 = vm_rss_mib()  # before the first step, as bench_models.cpp
        t0 = time.perf_counter()
        step()  # the first step: compiles, in a compiled configuration
        first_s = time.perf_counter() - t0
        for _ in range((0 if name in SLOW else 1) + (1 if compiled else 0)):  # warm-up
            step()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
    except Exception as e:  # noqa: BLE001 - any Dynamo or Inductor error
        if not compiled:
            raise
        reason = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "")
        print(f"{name} FAILED {type(e).__name__}: {reason}", flush=True)
        sys.exit(3)
    gflop = 2.0 * 1024 ** 3 / 1e9 if name == "sgemm_1024" else 0
    print(f"{name} {statistics.median(times):.3f} ms {gflop:.4f} gflop 0 peak_mib "
          f"{max(0.0, vm_hwm_mib() - rss0):.1f} rss_mib {first_s:.3f} first_s")


# ---------------------------------------------------------------- the driver

def parse(line):  # "CASE <ms> ms <g> gflop <m> peak_mib <r> rss_mib [<s> first_s]"
    f = line.split()
    out = {"ms": float(f[1]), "gflop": float(f[3]), "peak": float(f[5]), "rss": float(f[7])}
    if len(f) >= 11 and f[10] == "first_s":
        out["first_s"] = float(f[9])
    return out


def run(cmd, env=None):
    """Runs one side; its parsed line, or {"failed": why} (the process's own FAILED line,
    else the last line of its stderr)."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"failed": f"no result within {COMPILE_TIMEOUT_S} s"}
    lines = out.stdout.strip().splitlines()
    if lines and len(lines[-1].split()) > 1 and lines[-1].split()[1] == "FAILED":
        return {"failed": lines[-1].split(None, 2)[2]}
    if out.returncode != 0 or not lines:
        sys.stderr.write(out.stderr)
        err = [ln.strip() for ln in out.stderr.splitlines() if ln.strip()]
        return {"failed": err[-1] if err else f"exit status {out.returncode}"}
    return parse(lines[-1])


def torch_version():
    """"PyTorch 2.x.y (<python>)" of the interpreter running this script, or "no PyTorch"."""
    try:
        import torch
        return f"PyTorch {torch.__version__} ({sys.executable})"
    except ImportError:
        return "no PyTorch"


def torch_environment():
    """Whether torch imports; whether the pthread OpenBLAS is installed; the environment of a
    PyTorch process in its best configuration (2 threads, OMP_WAIT_POLICY=passive, the pthread
    OpenBLAS); the load average now."""
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    have_pthread = os.path.exists(os.path.join(PTHREAD_BLAS, "libopenblas.so.0"))
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS="2")
    if have_pthread:
        env["LD_LIBRARY_PATH"] = PTHREAD_BLAS
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return have_torch, have_pthread, env, load


def torch_configs(have_torch):
    """The PyTorch configurations this machine runs, and a note per one it skips (and for
    the attention it uses): (["eager-fp32", ...], ["...", ...])."""
    if not have_torch:
        return [], ["no PyTorch: heed's side alone"]
    configs, notes = ["eager-fp32"], []
    if cpu_has_bf16():
        configs.append("eager-bf16")
    else:
        notes.append("bf16 autocast not run: this CPU has no bf16 units (no avx512_bf16 or amx_bf16)")
    blocker = compile_blocker()
    if blocker is None:
        configs += [c for c in ("compile-fp32", "compile-bf16") if c.replace("compile", "eager") in configs]
    else:
        notes.append(f"torch.compile not run: {blocker}")
    import torch
    notes.append("attention F.scaled_dot_product_attention(is_causal=True)" if has_sdpa() else
                 f"attention composed (matmul, causal mask, softmax): PyTorch {torch.__version__} "
                 "has no F.scaled_dot_product_attention")
    return configs, notes


def rotated(sides, r):
    """Round r's order: the sides rotated by r, so each runs first in turn."""
    return sides[r % len(sides):] + sides[:r % len(sides)]


def time_case(name, heed_sides, configs, env, rounds):
    """Runs heed's sides ({label: command}) and PyTorch's configurations as fresh processes,
    the order rotated every round. Returns {label: [parsed line per round]} and
    {config: reason} for those that failed (not run again after)."""
    me = os.path.abspath(__file__)
    cmds = dict(heed_sides)
    for c in configs:
        if c.startswith("compile") and name in NO_COMPILE:
            continue
        cmds[c] = [sys.executable, me, "--torch", name, "--config", c]
    runs, failed = {s: [] for s in cmds}, {}
    for r in range(rounds):
        for side in rotated(list(cmds), r):
            if side in failed:
                continue
            out = run([*cmds[side], name], None) if side in heed_sides else run(cmds[side], env)
            if "failed" in out:
                failed[side] = out["failed"]
                print(f"  {name} {side}: failed: {out['failed']}", file=sys.stderr, flush=True)
            else:
                runs[side].append(out)
    for c in configs:
        if c.startswith("compile") and name in NO_COMPILE:
            failed[c] = "not run: " + NO_COMPILE[name]
    return runs, failed


def fastest_torch(med, configs):
    """(config, ms) of the fastest PyTorch configuration that produced a time, or (None, None)."""
    timed = [(med[c], c) for c in configs if med.get(c) is not None]
    return (min(timed)[1], min(timed)[0]) if timed else (None, None)


def config_cell(c, med, failed, fmt):
    if med.get(c) is not None:
        return fmt(med[c])
    why = failed.get(c, "-")
    if c.startswith("compile") and not why.startswith("not run"):
        why = "compile failed: " + why
    return why.replace("|", "/")[:120]


def compile_cell(runs, configs):
    """The first step of each compiled configuration, in its first round (seconds)."""
    cells = [f"{c.split('-')[1]} {runs[c][0]['first_s']:.1f}" for c in configs
             if c.startswith("compile") and runs.get(c) and "first_s" in runs[c][0]]
    return ", ".join(cells) or "-"


def bf16_main(args):
    """`--bf16 [--rounds N] [CASE ...]`: heed "highest" and "medium" (bench_models --precision)
    against every PyTorch configuration, all alternating in each round (the order rotated
    every round), medians; written to build/bench/bf16.md."""
    rounds = 3
    if args[:1] == ["--rounds"]:
        rounds, args = int(args[1]), args[2:]
    cases = args or BF16_CASES
    have_torch, have_pthread, env, load = torch_environment()
    configs, notes = torch_configs(have_torch)
    heed_sides = {"heed highest": [HEED, "--precision", "highest"],
                  "heed medium": [HEED, "--precision", "medium"]}
    names = list(heed_sides) + configs
    rows = []
    for case in cases:
        runs, failed = time_case(case, heed_sides, configs, env, rounds)
        med = {n: statistics.median(o["ms"] for o in runs[n]) if runs.get(n) else None for n in names}
        gflop = max((o["gflop"] for n in names for o in runs.get(n, [])), default=0)
        rows.append((case, runs, med, failed, gflop))
        print("  " + case + ": " + ", ".join(f"{n} {v:.2f} ms" for n, v in med.items() if v), flush=True)

    def ms(v, gflop):
        return f"{v:.1f} ms ({gflop / v * 1e3:.0f} GFLOP/s)" if gflop else f"{v:.1f} ms"

    lines = [f"{torch_version()}; load average {load}; medians of {rounds} rounds, the sides alternating; "
             "PyTorch: 2 threads, OMP_WAIT_POLICY=passive, "
             + ("pthread OpenBLAS" if have_pthread else "OpenMP OpenBLAS") + "; "
             + "; ".join(notes) + "; bf16 = torch.autocast(\"cpu\", dtype=torch.bfloat16) around the whole step; "
             "compile = torch.compile on the model, its first step (s) apart",
             "",
             "| case | " + " | ".join(list(heed_sides) + [f"PyTorch {c}" for c in configs])
             + " | fastest PyTorch | heed medium / highest "
             "| fastest PyTorch / heed highest | fastest PyTorch / heed medium | compile: first step s |",
             "|---|" + "---|" * (len(names) + 5)]
    for case, runs, med, failed, gflop in rows:
        h, m = med["heed highest"], med["heed medium"]
        best, tb = fastest_torch(med, configs)
        cells = [ms(med[n], gflop) if med[n] is not None else "-" for n in heed_sides]
        cells += [config_cell(c, med, failed, lambda v: ms(v, gflop)) for c in configs]
        lines.append(f"| {case} | " + " | ".join(cells) + f" | {best or '-'} | "
                     + (f"{m / h:.3f}x" if h and m else "-") + " | "
                     + (f"{tb / h:.2f}x" if tb and h else "-") + " | "
                     + (f"{tb / m:.2f}x" if tb and m else "-") + f" | {compile_cell(runs, configs)} |")
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(os.path.dirname(HEED), "bf16.md"), "w") as f:
        f.write(table + "\n")


BF16_CASES = ["sgemm_1024", "gpt_baby", "gpt_small", "seq2seq", "lstm", "attn_T4096"]


def read_pairs(lines):
    """{name: value} from "<name> <value> ..." lines."""
    return {w[0]: float(w[1]) for w in (line.split() for line in lines) if len(w) >= 2}


def side_by_side(script, args, default_binary, heed_file, configs=None):
    """The driver of bench_torch.py and bench_attention_torch.py, whose args are
    [BINARY] [--rounds N]: runs heed's BINARY (which writes "<name> <ms>" lines to heed_file
    beside it) and `script --torch` (which prints them), each a fresh process, in an order
    rotated every round, PyTorch in its best configuration (torch_environment). With
    configs, PyTorch's side is one process per configuration, `script --torch --config C`.
    Returns the medians over the rounds, {name: heed ms} and {name: torch ms} (with configs:
    {config: {name: torch ms}}), and the line that says how they were taken."""
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 3
    binary = args[0] if args and args[0] != "--rounds" else default_binary
    heed_out = os.path.join(os.path.dirname(binary), heed_file)
    have_torch, have_pthread, env, _ = torch_environment()
    sides = ["heed"] + ([] if not have_torch else configs if configs else ["torch"])
    runs = {s: [] for s in sides}
    for r in range(rounds):
        for side in rotated(sides, r):
            if side == "heed":
                subprocess.run([binary, heed_out], check=True, stdout=subprocess.DEVNULL)
                with open(heed_out) as f:
                    runs["heed"].append(read_pairs(f))
            else:
                cmd = [sys.executable, os.path.abspath(script), "--torch"]
                out = subprocess.run(cmd + ([] if side == "torch" else ["--config", side]),
                                     check=True, env=env, capture_output=True, text=True)
                runs[side].append(read_pairs(out.stdout.splitlines()))
    med = {s: {k: statistics.median(run[k] for run in rs if k in run) for k in rs[0]} if rs else {}
           for s, rs in runs.items()}
    how = (f"medians of {rounds} rounds, the sides alternating; torch 2 threads, OMP_WAIT_POLICY=passive, "
           f"{'pthread' if have_pthread else 'OpenMP'} OpenBLAS")
    tch = {c: med[c] for c in configs if c in med} if configs else med.get("torch", {})
    return med["heed"], tch, how


def main():
    args = sys.argv[1:]
    if args[:1] == ["--torch"]:
        return run_torch_case(args[1], args[args.index("--config") + 1] if "--config" in args else "eager-fp32")
    if args[:1] == ["--bf16"]:
        return bf16_main(args[1:])
    rounds = 3
    if args[:1] == ["--rounds"]:
        rounds, args = int(args[1]), args[2:]
    cases = args or CASES
    have_torch, have_pthread, env, load = torch_environment()
    configs, notes = torch_configs(have_torch)

    peak = max(g["gflop"] / g["ms"] * 1e3 for g in (run([HEED, "sgemm_1024"]) for _ in range(3)))
    rows = []
    for name in cases:
        runs, failed = time_case(name, {"heed": [HEED]}, [] if name in HEED_ONLY else configs, env,
                                 1 if name in HEED_ONLY | ONE_ROUND else rounds)
        med = {s: statistics.median(o["ms"] for o in rs) if rs else None for s, rs in runs.items()}
        if med["heed"] is None:
            sys.exit(f"bench_models_torch: {HEED} {name} failed: {failed['heed']}")
        best, t_ms = fastest_torch(med, configs)
        rows.append((name, runs, med, failed, best, t_ms))
        print(f"  {name}: heed {med['heed']:.2f} ms, " + ", ".join(
            f"{c} {med[c]:.2f} ms" for c in configs if med.get(c) is not None), flush=True)

    lines = [f"load average {load}; sgemm peak {peak:.0f} GFLOP/s (heed, 1024^3, same run); "
             f"{torch_version()}; medians of {rounds} rounds, the sides alternating; PyTorch: 2 threads, "
             "OMP_WAIT_POLICY=passive, "
             + ("its own BLAS (a pip wheel)" if sys.executable != "/usr/bin/python3" else
                "pthread OpenBLAS" if have_pthread else
                "libopenblas0-pthread MISSING: torch ran on the OpenMP OpenBLAS (slower)")
             + "".join(f"; {n}" for n in notes)
             + "; bf16 = torch.autocast(\"cpu\", dtype=torch.bfloat16) around the whole step; compile = "
             "torch.compile on the model, its first step (s, first round) apart; the ratio and PyTorch RSS "
             "are of the fastest PyTorch configuration",
             "",
             "| case | heed ms | " + " | ".join(f"PyTorch {c}" for c in configs) + " | fastest PyTorch "
             "| fastest PyTorch / heed | compile: first step s | heed GFLOP/s | % of sgemm peak "
             "| heed alloc peak MiB | heed RSS MiB | PyTorch RSS MiB |",
             "|---|---|" + "---|" * len(configs) + "---|---|---|---|---|---|---|---|"]
    for name, runs, med, failed, best, t_ms in rows:
        heed, h_ms = runs["heed"], med["heed"]
        if name == "tiny_ops":  # per op
            def fmt(v):
                return f"{v * 1e3 / TINY_OPS:.3f} us/op"
        else:
            def fmt(v):
                return f"{v:.1f}"
        cells = [config_cell(c, med, failed, fmt) if name not in HEED_ONLY else "-" for c in configs]
        ratio = f"{t_ms / h_ms:.2f}x" if t_ms else "-"
        gflop = heed[0]["gflop"]
        gf = gflop / h_ms * 1e3 if gflop else 0
        gfs, pct = (f"{gf:.0f}", f"{100 * gf / peak:.0f}%") if gflop else ("-", "-")
        t_rss = f"{statistics.median(o['rss'] for o in runs[best]):.1f}" if best else "-"
        lines.append(f"| {name} | {fmt(h_ms)} | " + " | ".join(cells) + f" | {best or '-'} | {ratio} "
                     f"| {compile_cell(runs, configs)} | {gfs} | {pct} "
                     f"| {statistics.median(h['peak'] for h in heed):.1f} "
                     f"| {statistics.median(h['rss'] for h in heed):.1f} | {t_rss} |")
    table = "\n".join(lines)
    print(table)
    out = os.path.join(os.path.dirname(HEED), "models.md")
    with open(out, "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
