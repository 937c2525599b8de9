"""gen_higher_order.py - PyTorch goldens for higher-order gradients -> tests/golden/higher_order.bin.

Run from the repo root:  /usr/bin/python3 tests/golden/gen_higher_order.py   (or `make goldens`)
Checked by tests/test_golden_higher_order.cpp. Each case is written with GoldenWriter.add:
its inputs (float32 values stored as float64), then what torch.autograd.grad(create_graph=True)
gives, computed in float64.

  hvp_mlp           a Hessian-vector product through a two-layer tanh MLP:
                    g = grad(loss, params, create_graph=True), hvp = grad(sum_i g_i . v_i, params)
  hvp_encoder       a Hessian-vector product through one post-norm Transformer encoder layer
                    (Vaswani et al. 2017), attention composed: softmax(q k^T / sqrt(D)) v
  maml              one MAML step (Finn et al. 2017): an inner SGD step on a support batch with
                    create_graph, the query loss differentiated through it
  gradient_penalty  a WGAN-GP critic loss (Gulrajani et al. 2017, "Improved Training of
                    Wasserstein GANs"): the critic's gradient at points between real and fake
                    samples, penalised for a norm away from 1, differentiated by the critic's
                    parameters and by the fake samples
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden import GoldenWriter  # noqa: E402

w = GoldenWriter(os.path.join(os.path.dirname(os.path.abspath(__file__)), "higher_order.bin"))


def draw(gen, *shape):
    """float32 N(0,1) values, then float64 with requires_grad (the float32 values exactly)."""
    return torch.randn(shape, generator=gen, dtype=torch.float32).double().requires_grad_()


# ---- hvp_mlp: x (6, 3) -> tanh(linear 3->5) -> linear 5->2, loss = mean(out^2 + out)
g = torch.Generator().manual_seed(3501)
x = draw(g, 6, 3).detach()
W1, b1, W2, b2 = draw(g, 5, 3), draw(g, 5), draw(g, 2, 5), draw(g, 2)
params = [W1, b1, W2, b2]
vs = [draw(g, *p.shape).detach() for p in params]
out = F.linear(torch.tanh(F.linear(x, W1, b1)), W2, b2)
loss = (out * out + out).mean()
grads = torch.autograd.grad(loss, params, create_graph=True)
gv = sum((gi * vi).sum() for gi, vi in zip(grads, vs))
hvp = torch.autograd.grad(gv, params)
arrays = {"x": x, "W1": W1, "b1": b1, "W2": W2, "b2": b2}
arrays.update({f"v_{n}": v for n, v in zip(["W1", "b1", "W2", "b2"], vs)})
arrays["loss"] = loss
arrays.update({f"grad_{n}": t for n, t in zip(["W1", "b1", "W2", "b2"], grads)})
arrays.update({f"hvp_{n}": t for n, t in zip(["W1", "b1", "W2", "b2"], hvp)})
w.add("hvp_mlp", arrays)

# ---- gradient_penalty: critic D(x) = linear(relu(linear(x, W1, b1)), W2, b2), x (8, 4) -> (8, 1)
g = torch.Generator().manual_seed(3502)
real = draw(g, 8, 4).detach()
fake = draw(g, 8, 4)  # a generator's output: requires grad
alpha = torch.rand((8, 1), generator=g, dtype=torch.float32).double()
W1, b1, W2, b2 = draw(g, 6, 4), draw(g, 6), draw(g, 1, 6), draw(g, 1)


def critic(t):
    return F.linear(torch.relu(F.linear(t, W1, b1)), W2, b2)


interp = alpha * real + (1 - alpha) * fake  # not a leaf
d = critic(interp)
gi = torch.autograd.grad(d, interp, grad_outputs=torch.ones_like(d), create_graph=True)[0]
gp = ((torch.sqrt((gi * gi).sum(1)) - 1) ** 2).mean()
loss = critic(fake).mean() - critic(real).mean() + 10 * gp
names = ["W1", "b1", "W2", "b2", "fake"]
grads = torch.autograd.grad(loss, [W1, b1, W2, b2, fake])
arrays = {"real": real, "fake": fake, "alpha": alpha, "W1": W1, "b1": b1, "W2": W2, "b2": b2,
          "grad_interp": gi, "gp": gp, "loss": loss}
arrays.update({f"grad_{n}": t for n, t in zip(names, grads)})
w.add("gradient_penalty", arrays)

# ---- hvp_encoder: x (2, 4, 8), 2 heads of 4, feed-forward 16, relu; post-norm
g = torch.Generator().manual_seed(3503)
B, T, E, H, FF = 2, 4, 8, 2, 16
D = E // H
x = draw(g, B, T, E).detach()
c = draw(g, B, T, E).detach()
enc_names = ["W_in", "b_in", "W_o", "b_o", "g1", "be1", "W1", "b1", "W2", "b2", "g2", "be2"]
enc_shapes = [(3 * E, E), (3 * E,), (E, E), (E,), (E,), (E,), (FF, E), (FF,), (E, FF), (E,), (E,), (E,)]
enc = [draw(g, *s_) for s_ in enc_shapes]
with torch.no_grad():  # weights at a trainable scale; the norms' gains near 1
    for t, n in zip(enc, enc_names):
        t.mul_(0.5 if n.startswith("W") else 0.1)
        if n in ("g1", "g2"):
            t.add_(1)
vs = [draw(g, *p.shape).detach() for p in enc]


def encoder(x, W_in, b_in, W_o, b_o, g1, be1, W1, b1, W2, b2, g2, be2):
    qkv = F.linear(x, W_in, b_in)                                           # (B, T, 3E)
    q, k, v = [qkv[..., i * E:(i + 1) * E].reshape(B, T, H, D).transpose(1, 2) for i in range(3)]
    p = torch.softmax(q @ k.transpose(-1, -2) / D ** 0.5, -1)               # (B, H, T, T)
    a = (p @ v).transpose(1, 2).reshape(B, T, E)
    x1 = F.layer_norm(x + F.linear(a, W_o, b_o), (E,), g1, be1)
    ff = F.linear(torch.relu(F.linear(x1, W1, b1)), W2, b2)
    return F.layer_norm(x1 + ff, (E,), g2, be2)


y = encoder(x, *enc)
loss = (y * y).mean() + (y * c).sum()
grads = torch.autograd.grad(loss, enc, create_graph=True)
gv = sum((gi * vi).sum() for gi, vi in zip(grads, vs))
hvp = torch.autograd.grad(gv, enc)
arrays = {"x": x, "c": c}
arrays.update(dict(zip(enc_names, enc)))
arrays.update({f"v_{n}": t for n, t in zip(enc_names, vs)})
arrays["loss"] = loss
arrays.update({f"grad_{n}": t for n, t in zip(enc_names, grads)})
arrays.update({f"hvp_{n}": t for n, t in zip(enc_names, hvp)})
w.add("hvp_encoder", arrays)

# ---- maml: model linear(tanh(linear(x, W1, b1)), W2, b2), 3 -> 6 -> 2; inner lr 0.1
g = torch.Generator().manual_seed(3504)
W1, b1, W2, b2 = draw(g, 6, 3), draw(g, 6), draw(g, 2, 6), draw(g, 2)
params = [W1, b1, W2, b2]
xs, ys, xq, yq = [draw(g, 5, n).detach() for n in (3, 2, 3, 2)]


def mlp(t, W1, b1, W2, b2):
    return F.linear(torch.tanh(F.linear(t, W1, b1)), W2, b2)


inner = F.mse_loss(mlp(xs, *params), ys)
gi = torch.autograd.grad(inner, params, create_graph=True)
fast = [p - 0.1 * d for p, d in zip(params, gi)]
outer = F.mse_loss(mlp(xq, *fast), yq)
meta = torch.autograd.grad(outer, params)
arrays = {"W1": W1, "b1": b1, "W2": W2, "b2": b2, "xs": xs, "ys": ys, "xq": xq, "yq": yq,
          "inner": inner, "outer": outer}
arrays.update({f"meta_{n}": t for n, t in zip(["W1", "b1", "W2", "b2"], meta)})
w.add("maml", arrays)

w.write()
