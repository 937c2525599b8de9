# print_pow_edges.py - prints the table of tests/test_edge_points.cpp: torch's pow(x, p) with
# a float exponent and with a tensor exponent, and the gradients, in float64, at edge points.
#   /usr/bin/python3 tests/golden/print_pow_edges.py
# (Not a gen_*.py: it writes no .bin file, the small table lives in the test.)
import math

import torch

XS = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5]
PS = [0.0, 1.0, 0.5, 2.0, -1.0, -0.5, 1.5, 3.0, -2.0]


def c(v):
    if math.isnan(v):
        return "kNaN"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(v)


def grads(f, *args):
    ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in args]
    y = f(*ts)
    y.backward()
    return [y.item()] + [t.grad.item() for t in ts]


for x in XS:
    for p in PS:
        ys, dxs = grads(lambda t: t.pow(p), x)
        yt, dxt, dpt = grads(torch.pow, x, p)
        print("      {%s, %s, %s, %s, %s, %s, %s}," % tuple(c(v) for v in (x, p, ys, dxs, yt, dxt, dpt)))
print()
print("exp, log, sqrt: {x, exp, d exp, log, d log, sqrt, d sqrt}")
for x in [0.0, -0.0, -1.0, 1.0, float("inf")]:
    row = [x] + grads(torch.exp, x) + grads(torch.log, x) + grads(torch.sqrt, x)
    print("      {%s}," % ", ".join(c(v) for v in row))
