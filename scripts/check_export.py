#!/usr/bin/env python3
"""Check a `train export` safetensors file against the .npz export of the same checkpoint.

Usage: check_export.py MODEL.npz MODEL.safetensors

The safetensors file must hold exactly the network's parameters (those of the .npz, under
PyTorch's names: batch norm `weight`/`bias` for `gamma`/`beta`), with equal values, linear
weights transposed to PyTorch's (out, in), and the .npz metadata's game and network in its
header. Reads it with the `safetensors` package, as a PyTorch user would. Exits non-zero on
any difference.
"""
import json
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file


def torch_name(name):
    module, _, leaf = name.rpartition(".")
    return f"{module}.{ {'gamma': 'weight', 'beta': 'bias'}.get(leaf, leaf) }"


def main(npz_path, st_path):
    z = np.load(npz_path)
    burn = {k[len("param/"):]: z[k] for k in z.files if k.startswith("param/")}
    tensors = load_file(st_path)
    expected = {torch_name(k): (v.T if v.ndim == 2 else v) for k, v in burn.items()}
    if set(tensors) != set(expected):
        sys.exit(f"names differ: only in safetensors {sorted(set(tensors) - set(expected))}, "
                 f"only in the npz {sorted(set(expected) - set(tensors))}")
    for name, want in expected.items():
        got = tensors[name]
        if got.dtype != np.float32 or got.shape != want.shape or not np.array_equal(got, want):
            sys.exit(f"{name}: {got.dtype} {got.shape} differs from the npz's {want.shape}")
    with safe_open(st_path, "np") as f:
        meta = json.loads(f.metadata()["lifeline_zero"])
    npz_meta = json.loads(bytes(z["meta"]).decode("utf-8"))
    for key in ("game", "network", "planes", "policy_len"):
        if meta[key] != npz_meta[key]:
            sys.exit(f"metadata {key}: {meta[key]} != {npz_meta[key]}")
    print(f"{len(tensors)} tensors agree with {npz_path}; game {meta['game']['game']}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
