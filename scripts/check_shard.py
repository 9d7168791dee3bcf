#!/usr/bin/env python3
"""Check that a self-play shard reads in numpy and is self-consistent.

Usage: check_shard.py SHARD.npz [INPUTS.npy]   (prints a summary; exits non-zero on any problem)

With INPUTS.npy, the unpacked input planes must equal it exactly (the Rust test writes the
inputs it put into the shard there).
"""
import json
import sys

import numpy as np


def inputs(z, n, c, h, w):
    """The input planes as (N, planes, H, W) float32: format 2 stores the planes that hold only
    0 and 1 as bits (`input_binary` marks them, `inputs_bits` holds them, numpy's packbits
    order) and the others in `inputs_dense`; format 1 has `inputs` itself."""
    if "inputs" in z.files:
        return z["inputs"]
    binary = z["input_binary"].astype(bool)
    assert binary.shape == (c,), f"input_binary: shape {binary.shape}, expected ({c},)"
    out = np.zeros((n, c, h, w), np.float32)
    bits = np.unpackbits(z["inputs_bits"], axis=2, count=h * w)
    out[:, binary] = bits.reshape(n, int(binary.sum()), h, w)
    out[:, ~binary] = z["inputs_dense"]
    return out


def main(path, expected=None):
    z = np.load(path)
    meta = json.loads(bytes(z["meta"]).decode("utf-8"))
    n, c, h, w, p = meta["samples"], meta["planes"], meta["height"], meta["width"], meta["policy_len"]
    x = inputs(z, n, c, h, w)
    assert x.shape == (n, c, h, w) and x.dtype == np.float32, f"inputs: {x.shape} {x.dtype}"
    if expected is not None:
        assert np.array_equal(x, np.load(expected)), "unpacked inputs differ from the expected"
    expect = {
        "legal": ((n, p), np.uint8),
        "policy": ((n, p), np.float32),
        "policy_weight": ((n,), np.float32),
        "value": ((n, 3), np.float32),
        "ownership": ((n, h, w), np.float32),
        "komi": ((n,), np.float32),
    }
    for name, (shape, dtype) in expect.items():
        a = z[name]
        assert a.shape == shape, f"{name}: shape {a.shape}, expected {shape}"
        assert a.dtype == dtype, f"{name}: dtype {a.dtype}, expected {dtype}"
    assert np.allclose(z["value"].sum(axis=1), 1.0), "value targets are win/draw/loss one-hot"
    full = z["policy_weight"] > 0
    assert np.allclose(z["policy"][full].sum(axis=1), 1.0), "full-search policies sum to 1"
    assert np.all(z["policy"][~full] == 0), "fast searches carry no policy target"
    assert np.all((z["policy"] > 0) <= (z["legal"] > 0)), "policy mass only on legal actions"
    assert np.all(np.abs(z["ownership"]) <= 1)
    print(f"{path}: {n} samples of {meta['game']} {meta['options']}, {int(full.sum())} policy targets")


if __name__ == "__main__":
    main(*sys.argv[1:3])
