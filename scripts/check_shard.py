#!/usr/bin/env python3
"""Check that a self-play shard reads in numpy and is self-consistent.

Usage: check_shard.py SHARD.npz [INPUTS.npy]   (prints a summary; exits non-zero on any problem)

With INPUTS.npy, the unpacked input planes must equal it exactly (the Rust test writes the
inputs it put into the shard there).

The rule of a sample is the trainer's (`selfplay::shard::check_sample`): finite inputs; a value
target that is a win/draw/loss distribution; at least one legal action and a mask of 0 and 1; a
policy of non-negative weights on legal actions only, summing to 1 where the policy weight is
positive and empty where it is 0; ownership in [-1, 1]; a komi of at most 1000 either way.
Samples that break it are listed by index (the trainer skips them) and the exit status is 1.
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


SUM_TOLERANCE = 1e-3
MAX_SAMPLE_KOMI = 1000.0


def broken_samples(z, x):
    """(index, reason) of every sample that breaks the rule, the first reason of each, in the
    order the trainer checks them."""
    n = x.shape[0]
    value, legal, policy = z["value"], z["legal"], z["policy"]
    weight, ownership, komi = z["policy_weight"], z["ownership"], z["komi"]
    full = weight > 0
    psum = policy.sum(axis=1, dtype=np.float32)
    rules = [
        (~np.isfinite(x.reshape(n, -1)).all(axis=1), "inputs are not finite"),
        (((value < 0) | (value > 1)).any(axis=1) | ~(np.abs(value.sum(axis=1) - 1) <= SUM_TOLERANCE)
         | ~np.isfinite(value).all(axis=1), "value is not a win/draw/loss distribution"),
        ((legal > 1).any(axis=1), "the legal mask holds values other than 0 and 1"),
        ((legal == 0).all(axis=1), "no legal action"),
        (~(np.isfinite(weight) & (weight >= 0)), "policy weight"),
        (~(np.isfinite(policy) & (policy >= 0)).all(axis=1), "the policy holds a negative or non-finite weight"),
        (((policy > 0) & (legal == 0)).any(axis=1), "policy mass on an illegal action"),
        (full & ~(np.abs(psum - 1) <= SUM_TOLERANCE), "the policy does not sum to 1"),
        ((weight == 0) & (psum != 0), "a policy without weight must be empty"),
        (~((ownership >= -1) & (ownership <= 1)).reshape(n, -1).all(axis=1), "ownership outside [-1, 1]"),
        (~(np.abs(komi) <= MAX_SAMPLE_KOMI), "komi"),
    ]
    bad = {}
    for broken, why in rules:
        for i in np.flatnonzero(broken):
            bad.setdefault(int(i), why)
    return sorted(bad.items())


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
    bad = broken_samples(z, x)
    for i, why in bad[:20]:
        print(f"{path}: sample {i}: {why}", file=sys.stderr)
    if bad:
        sys.exit(f"{path}: {len(bad)} samples break the rule of a sample")
    full = int((z["policy_weight"] > 0).sum())
    print(f"{path}: {n} samples of {meta['game']} {meta['options']}, {full} policy targets")


if __name__ == "__main__":
    main(*sys.argv[1:3])
