#!/usr/bin/env python3
"""Check that a self-play shard reads in numpy and is self-consistent.

Usage: check_shard.py SHARD.npz   (prints a summary; exits non-zero on any problem)
"""
import json
import sys

import numpy as np


def main(path):
    z = np.load(path)
    meta = json.loads(bytes(z["meta"]).decode("utf-8"))
    n, c, h, w, p = meta["samples"], meta["planes"], meta["height"], meta["width"], meta["policy_len"]
    expect = {
        "inputs": ((n, c, h, w), np.float32),
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
    main(sys.argv[1])
