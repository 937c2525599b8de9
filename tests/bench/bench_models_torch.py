#!/usr/bin/python3
"""bench_models_torch.py - heed vs PyTorch on whole-model training steps (`make bench`).

The PyTorch twins of the cases in bench_models.cpp, and the driver that runs both sides in
alternating rounds and prints one table (also written to build/bench/models.md):

  /usr/bin/python3 tests/bench/bench_models_torch.py [--rounds 3] [CASE ...]
  /usr/bin/python3 tests/bench/bench_models_torch.py --torch CASE     one PyTorch case

Each round runs `build/bench/bench_models CASE` and this script's `--torch CASE` as separate
processes, in alternating order; the table shows the median of the rounds. PyTorch runs in its
best configuration on 2 cores: 2 threads, OMP_WAIT_POLICY=passive, and the pthread build of
OpenBLAS (Debian libopenblas0-pthread, which `make bench` installs) through LD_LIBRARY_PATH,
for torch's process alone. With the OpenMP build, which heed links, torch's LSTM-heavy steps
are much slower (run `--torch lstm` with and without LD_LIBRARY_PATH to see it).

Memory: "heed MiB" is heed's allocator peak during one step beyond what was live before it
(alloc::PeakScope); "RSS MiB" on both sides is the growth of the process's peak resident set
(VmHWM) over the timed steps, measured from just before the first step (what the OS gave it).
"""
import math
import os
import resource
import statistics
import subprocess
import sys
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


# ---------------------------------------------------------------- the PyTorch cases

def torch_case(name):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(2)
    torch.manual_seed(0)

    if name == "sgemm_1024":  # the matmul peak probe: (1024 x 1024) @ (1024 x 1024)
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        return (lambda: a @ b), 10

    if name in ("gpt_baby", "gpt_small"):
        V, T, B, L, H, E = (65, 64, 12, 4, 4, 128) if name == "gpt_baby" else (65, 256, 8, 6, 6, 384)

        class GPT(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok, self.pos = nn.Embedding(V, E), nn.Embedding(T, E)
                layer = nn.TransformerEncoderLayer(E, H, 4 * E, 0.0, activation="gelu",
                                                   batch_first=True, norm_first=True)
                self.blocks = nn.TransformerEncoder(layer, L, norm=nn.LayerNorm(E))
                self.head = nn.Linear(E, V)
                self.register_buffer("mask", torch.triu(torch.full((T, T), float("-inf")), 1))

            def forward(self, idx):
                x = self.tok(idx) + self.pos(torch.arange(T))
                return self.head(self.blocks(x, mask=self.mask))

        model = GPT()
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
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

        model = Seq2Seq()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
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
        x = torch.randn(32, 100, 128, requires_grad=True)
        w = torch.randn(32, 100, 256)

        def step():
            rnn.zero_grad(set_to_none=True)
            x.grad = None
            (rnn(x)[0] * w).sum().backward()
        return step, 5

    if name.startswith("attn_T"):
        T, H, D = int(name[6:]), 4, 64
        q, k, v = (torch.randn(1, H, T, D, requires_grad=True) for _ in range(3))
        dO = torch.randn(1, H, T, D)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)

        def step():  # composed causal attention (torch 1.13 has no fused CPU kernel)
            for t in (q, k, v):
                t.grad = None
            s = (q @ k.transpose(-2, -1)) / math.sqrt(D)
            o = torch.softmax(s.masked_fill(mask, float("-inf")), -1) @ v
            o.backward(dO)
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


def run_torch_case(name, autocast=False):
    step, reps = torch_case(name)
    if autocast:  # the whole step under bf16 autocast, as a user turns it on
        import torch
        fp32_step = step

        def step():
            with torch.autocast("cpu", dtype=torch.bfloat16):
                fp32_step()
    rss0 = vm_rss_mib()  # before the first step, as bench_models.cpp
    for _ in range(1 if name in SLOW else 2):  # warm-up
        step()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append((time.perf_counter() - t0) * 1e3)
    gflop = 2.0 * 1024 ** 3 / 1e9 if name == "sgemm_1024" else 0
    print(f"{name} {statistics.median(times):.3f} ms {gflop:.4f} gflop 0 peak_mib "
          f"{max(0.0, vm_hwm_mib() - rss0):.1f} rss_mib")


# ---------------------------------------------------------------- the driver

def parse(line):  # "CASE <ms> ms <g> gflop <m> peak_mib <r> rss_mib"
    f = line.split()
    return {"ms": float(f[1]), "gflop": float(f[3]), "peak": float(f[5]), "rss": float(f[7])}


def run(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return None
    return parse(out.stdout.strip().splitlines()[-1])


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


def read_pairs(lines):
    """{name: value} from "<name> <value> ..." lines."""
    return {w[0]: float(w[1]) for w in (line.split() for line in lines) if len(w) >= 2}


def side_by_side(script, args, default_binary, heed_file):
    """The driver of bench_torch.py and bench_attention_torch.py, whose args are
    [BINARY] [--rounds N]: runs heed's BINARY (which writes "<name> <ms>" lines to heed_file
    beside it) and `script --torch` (which prints them), each a fresh process, heed first in
    odd rounds and PyTorch first in even ones, PyTorch in its best configuration
    (torch_environment). Returns the medians over the rounds, {name: heed ms} and
    {name: torch ms}, and the line that says how they were taken."""
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 3
    binary = args[0] if args and args[0] != "--rounds" else default_binary
    heed_out = os.path.join(os.path.dirname(binary), heed_file)
    have_torch, have_pthread, env, _ = torch_environment()
    runs = {"heed": [], "torch": []}
    for r in range(rounds):
        for side in (("heed", "torch") if r % 2 == 0 else ("torch", "heed")):
            if side == "heed":
                subprocess.run([binary, heed_out], check=True, stdout=subprocess.DEVNULL)
                with open(heed_out) as f:
                    runs["heed"].append(read_pairs(f))
            elif have_torch:
                out = subprocess.run([sys.executable, os.path.abspath(script), "--torch"],
                                     check=True, env=env, capture_output=True, text=True)
                runs["torch"].append(read_pairs(out.stdout.splitlines()))
    heed, tch = ({k: statistics.median(run[k] for run in rs) for k in rs[0]} if rs else {}
                 for rs in (runs["heed"], runs["torch"]))
    how = (f"medians of {rounds} alternating rounds; torch 2 threads, OMP_WAIT_POLICY=passive, "
           f"{'pthread' if have_pthread else 'OpenMP'} OpenBLAS")
    return heed, tch, how


BF16_CASES = ["sgemm_1024", "gpt_baby", "gpt_small", "seq2seq", "lstm", "attn_T4096"]


def bf16_main(args):
    """`--bf16 [--rounds N] [CASE ...]`: heed "highest" and "medium" (bench_models --precision)
    against PyTorch fp32 and PyTorch under bf16 autocast, the four alternating in each round
    (the order rotated every round), medians; written to build/bench/bf16.md."""
    rounds = 3
    if args[:1] == ["--rounds"]:
        rounds, args = int(args[1]), args[2:]
    cases = args or BF16_CASES
    have_torch, have_pthread, env, load = torch_environment()
    me = os.path.abspath(__file__)
    sides = {"heed highest": ([HEED, "--precision", "highest"], None),
             "heed medium": ([HEED, "--precision", "medium"], None)}
    with open("/proc/cpuinfo") as f:
        flags = f.read().split()
    bf16_units = "avx512_bf16" in flags or "amx_bf16" in flags
    if have_torch:
        sides["PyTorch fp32"] = ([sys.executable, me, "--torch"], env)
        if bf16_units:  # without them PyTorch emulates bf16 many times slower than fp32
            sides["PyTorch bf16"] = ([sys.executable, me, "--torch-autocast"], env)
    names = list(sides)
    rows = []
    for case in cases:
        ms = {n: [] for n in names}
        gflop = 0
        for r in range(rounds):
            for n in names[r % len(names):] + names[:r % len(names)]:
                cmd, e = sides[n]
                out = run([*cmd, case], e)
                if out:
                    ms[n].append(out["ms"])
                    gflop = out["gflop"] or gflop
        med = {n: statistics.median(v) if v else None for n, v in ms.items()}
        rows.append((case, med, gflop))
        print("  " + case + ": " + ", ".join(f"{n} {v:.2f} ms" for n, v in med.items() if v), flush=True)

    def cell(case, v, gflop):
        if v is None:
            return "-"
        return f"{v:.1f} ms ({gflop / v * 1e3:.0f} GFLOP/s)" if gflop else f"{v:.1f} ms"

    lines = [f"{torch_version()}; load average {load}; medians of {rounds} rounds, the {len(names)} sides alternating; PyTorch: 2 threads, "
             "OMP_WAIT_POLICY=passive, " + ("pthread OpenBLAS" if have_pthread else "OpenMP OpenBLAS")
             + ("; bf16 = torch.autocast(\"cpu\", dtype=torch.bfloat16) around the whole step" if bf16_units
                else "; PyTorch bf16 autocast not run: this CPU has no bf16 units (no avx512_bf16 or amx_bf16)"),
             "",
             "| case | " + " | ".join(names) + " | heed medium / highest | PyTorch bf16 / heed medium |",
             "|---|" + "---|" * (len(names) + 2)]
    for case, med, gflop in rows:
        h, m = med["heed highest"], med["heed medium"]
        tb = med.get("PyTorch bf16")
        lines.append(f"| {case} | " + " | ".join(cell(case, med[n], gflop) for n in names)
                     + f" | {m / h:.3f}x | " + (f"{tb / m:.2f}x |" if tb else "- |"))
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(os.path.dirname(HEED), "bf16.md"), "w") as f:
        f.write(table + "\n")


def main():
    args = sys.argv[1:]
    if args[:1] == ["--torch"]:
        return run_torch_case(args[1])
    if args[:1] == ["--torch-autocast"]:
        return run_torch_case(args[1], autocast=True)
    if args[:1] == ["--bf16"]:
        return bf16_main(args[1:])
    rounds = 3
    if args[:1] == ["--rounds"]:
        rounds, args = int(args[1]), args[2:]
    cases = args or CASES
    have_torch, have_pthread, env, load = torch_environment()

    peak = max(g["gflop"] / g["ms"] * 1e3 for g in (run([HEED, "sgemm_1024"]) for _ in range(3)))
    rows = []
    for name in cases:
        heed, tch = [], []
        for r in range(1 if name in HEED_ONLY | ONE_ROUND else rounds):
            order = ["heed", "torch"] if r % 2 == 0 else ["torch", "heed"]
            for side in order:
                if side == "heed":
                    heed.append(run([HEED, name]))
                elif have_torch and name not in HEED_ONLY:
                    tch.append(run([sys.executable, os.path.abspath(__file__), "--torch", name], env))
        heed = [h for h in heed if h]
        tch = [t for t in tch if t]
        h_ms = statistics.median(h["ms"] for h in heed)
        t_ms = statistics.median(t["ms"] for t in tch) if tch else None
        rows.append((name, h_ms, t_ms, heed[0]["gflop"], statistics.median(h["peak"] for h in heed),
                     statistics.median(h["rss"] for h in heed),
                     statistics.median(t["rss"] for t in tch) if tch else None))
        print(f"  {name}: heed {h_ms:.2f} ms, torch {t_ms if t_ms else float('nan'):.2f} ms",
              flush=True)

    lines = [f"load average {load}; sgemm peak {peak:.0f} GFLOP/s (heed, 1024^3, same run); "
             f"{torch_version()}; medians of {rounds} alternating rounds; PyTorch: 2 threads, OMP_WAIT_POLICY=passive, "
             + ("its own BLAS (a pip wheel)" if sys.executable != "/usr/bin/python3" else
                "pthread OpenBLAS" if have_pthread else
                "libopenblas0-pthread MISSING: torch ran on the OpenMP OpenBLAS (slower)"),
             "",
             "| case | heed ms | PyTorch ms | PyTorch / heed | heed GFLOP/s | % of sgemm peak "
             "| heed alloc peak MiB | heed RSS MiB | PyTorch RSS MiB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, h_ms, t_ms, gflop, peak_mib, h_rss, t_rss in rows:
        if name == "tiny_ops":  # per op
            h_s, t_s = f"{h_ms * 1e3 / TINY_OPS:.3f} us/op", (
                f"{t_ms * 1e3 / TINY_OPS:.3f} us/op" if t_ms else "-")
        else:
            h_s, t_s = f"{h_ms:.1f}", f"{t_ms:.1f}" if t_ms else "-"
        ratio = f"{t_ms / h_ms:.2f}x" if t_ms else "-"
        gf = gflop / h_ms * 1e3 if gflop else 0
        gfs, pct = (f"{gf:.0f}", f"{100 * gf / peak:.0f}%") if gflop else ("-", "-")
        lines.append(f"| {name} | {h_s} | {t_s} | {ratio} | {gfs} | {pct} | {peak_mib:.1f} "
                     f"| {h_rss:.1f} | {t_rss:.1f} |" if t_rss is not None else
                     f"| {name} | {h_s} | {t_s} | {ratio} | {gfs} | {pct} | {peak_mib:.1f} "
                     f"| {h_rss:.1f} | - |")
    table = "\n".join(lines)
    print(table)
    out = os.path.join(os.path.dirname(HEED), "models.md")
    with open(out, "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
