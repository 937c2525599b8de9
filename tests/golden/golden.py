"""golden.py - write (and read back) heed's PyTorch golden files.

A golden file holds named cases; a case holds named float64 arrays in a fixed order.
tests/golden/golden.h reads the same format in C++.

File format (every integer and float little-endian):

    magic    8 bytes   b"HEEDGLD1"
    count    uint32    number of cases
    per case:
      name     uint32 byte length, then that many bytes of UTF-8
      narrays  uint32
      per array:
        name   uint32 byte length, then UTF-8
        rank   uint32                       (0 for a scalar)
        dims   rank x int64
        data   prod(dims) x float64         (row-major; 1 value for a scalar)

Conventions of a case made by GoldenWriter.case (the C++ runner relies on them):

    <input>       each input, in the order given (float32 values stored as float64)
    out           fn(**inputs), computed in float64
    dy            a fixed random upstream gradient, float32 values stored as float64
    grad_<input>  d sum(out * dy) / d input, computed in float64, for every input that
                  requires grad (not for consts)

Add a case for a new op or layer in one line:

    w = GoldenWriter("tests/golden/core.bin")
    w.case("softmax_dim0", lambda x: torch.softmax(x, 0), {"x": (3, 4, 5)}, seed=1)
    w.write()

Run with /usr/bin/python3 (Debian's python3-torch).
"""
import os
import struct
import sys
import tempfile
from collections import OrderedDict

import numpy as np

MAGIC = b"HEEDGLD1"


def _as_float64(a):
    """A torch tensor or array-like as a C-contiguous little-endian float64 ndarray."""
    if hasattr(a, "detach"):  # a torch tensor
        a = a.detach().cpu().double().numpy()
    return np.array(a, dtype="<f8", order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)


def _name_bytes(name):
    b = name.encode("utf-8")
    return struct.pack("<I", len(b)) + b


class GoldenWriter:
    """Collects cases in memory; write() puts them all in one file, atomically."""

    def __init__(self, path):
        self.path = path
        self.cases = OrderedDict()

    def add(self, name, arrays):
        """Add a case: `arrays` is an ordered mapping of array name -> tensor or array."""
        if name in self.cases:
            raise ValueError(f"golden: duplicate case {name!r}")
        self.cases[name] = OrderedDict((k, _as_float64(v)) for k, v in arrays.items())

    def case(self, name, fn, inputs, seed, consts=None):
        """Run fn on the inputs in float64 and add the case with out, dy and the grads.

        inputs: ordered mapping name -> a shape tuple (drawn as float32 N(0,1) from a
                generator seeded with `seed`, in order) or a float32 tensor (used as is).
                Every input requires grad and gets a grad_<name> array.
        consts: like inputs, passed to fn but not differentiated (masks, ...); may also be
                integer tensors (ids, targets: read them with File::indices in C++).
        fn:     called as fn(**inputs, **consts); returns one tensor.
        dy is drawn last from the same generator, so each case depends only on its seed.
        """
        import torch

        gen = torch.Generator().manual_seed(seed)

        def leaf(key, v, differentiable=True):
            if isinstance(v, tuple):
                v = torch.randn(v, generator=gen, dtype=torch.float32)
            if torch.is_tensor(v) and v.dtype == torch.float32:
                return v.double()  # exact: heed (float) and torch (double) see the same values
            if not differentiable and torch.is_tensor(v) and not v.is_floating_point():
                return v  # ids, targets: passed to fn as they are, stored as float64
            raise TypeError(f"golden: {name}.{key} must be a shape tuple or a float32 tensor"
                            + ("" if differentiable else " or an integer tensor"))

        xs = OrderedDict((k, leaf(k, v).requires_grad_()) for k, v in inputs.items())
        cs = OrderedDict((k, leaf(k, v, False)) for k, v in (consts or {}).items())
        out = fn(**xs, **cs)
        dy = torch.randn(out.shape, generator=gen, dtype=torch.float32).double()
        (out * dy).sum().backward()

        arrays = OrderedDict(list(xs.items()) + list(cs.items()))
        arrays["out"] = out
        arrays["dy"] = dy
        for k, x in xs.items():
            arrays["grad_" + k] = x.grad if x.grad is not None else torch.zeros_like(x)
        for k in ["out"] + ["grad_" + k for k in xs]:
            if torch.isnan(arrays[k]).any() or torch.isinf(arrays[k]).any():
                raise ValueError(f"golden: {name}.{k} is not finite; pick other inputs")
        self.add(name, arrays)

    def write(self):
        """Write every case to self.path (temp file in the same directory + os.replace)."""
        parts = [MAGIC, struct.pack("<I", len(self.cases))]
        for cname, arrays in self.cases.items():
            parts += [_name_bytes(cname), struct.pack("<I", len(arrays))]
            for aname, a in arrays.items():
                parts += [_name_bytes(aname), struct.pack("<I", a.ndim)]
                parts += [struct.pack(f"<{a.ndim}q", *a.shape), a.tobytes()]
        blob = b"".join(parts)
        directory = os.path.dirname(os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(prefix=".golden-", dir=directory)
        try:
            os.chmod(fd, 0o644)  # mkstemp makes it 0600; this file is committed
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            os.unlink(tmp)
            raise
        print(f"{self.path}: {len(self.cases)} cases, {len(blob)} bytes")


def read(path):
    """Read a golden file back: OrderedDict case -> OrderedDict array name -> ndarray."""
    with open(path, "rb") as f:
        blob = f.read()
    pos = 0

    def take(n):
        nonlocal pos
        if pos + n > len(blob):
            raise ValueError(f"{path}: truncated at byte {pos}")
        pos += n
        return blob[pos - n:pos]

    def u32():
        return struct.unpack("<I", take(4))[0]

    if take(8) != MAGIC:
        raise ValueError(f"{path}: bad magic")
    cases = OrderedDict()
    for _ in range(u32()):
        cname = take(u32()).decode("utf-8")
        arrays = cases[cname] = OrderedDict()
        for _ in range(u32()):
            aname = take(u32()).decode("utf-8")
            rank = u32()
            dims = struct.unpack(f"<{rank}q", take(8 * rank))
            n = int(np.prod(dims, dtype=np.int64))
            arrays[aname] = np.frombuffer(take(8 * n), dtype="<f8").reshape(dims)
    if pos != len(blob):
        raise ValueError(f"{path}: {len(blob) - pos} trailing bytes")
    return cases


if __name__ == "__main__":  # python3 tests/golden/golden.py FILE: list its cases
    for cname, arrays in read(sys.argv[1]).items():
        print(cname + ": " + ", ".join(f"{k}{list(a.shape)}" for k, a in arrays.items()))
