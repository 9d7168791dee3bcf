#!/usr/bin/env python3
"""Check a `train export` safetensors file against the .npz export of the same checkpoint, and
optionally against its ONNX export.

Usage: check_export.py MODEL.npz MODEL.safetensors [MODEL.onnx]

- The safetensors file must hold exactly the network's parameters (scripts/lifeline_net.py's
  specification for the network in the metadata: names and shapes), under PyTorch's names and
  layouts (batch norm `weight`/`bias` for `gamma`/`beta`, linear weights transposed to
  (out, in)), as float32, with the values of the .npz, and the .npz metadata's game and network
  in its header (`lifeline_zero`). It is read with the `safetensors` package, as a PyTorch user
  would.
- With MODEL.onnx: every initializer of the ONNX graph that is a network parameter must equal
  the safetensors tensor of that name (in its layout: a `Gemm` weight with `transB = 0` is
  compared transposed), no network parameter may be missing from the graph, and every other
  initializer must be a constant (`const:...`), not an unknown tensor.
- Where `import torch` works: scripts/torch_model.py loads the safetensors file and runs the
  .npz's example input; its policy logits and win/draw/loss probabilities must be within 1e-4
  of burn's.

Exits non-zero on any difference, naming the tensor and what differs.
"""
import json
import os
import sys

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lifeline_net  # noqa: E402
from lifeline_net import Config  # noqa: E402


def fail(message):
    sys.exit(f"check_export: {message}")


def describe_difference(got, want):
    d = np.abs(got.astype(np.float64) - want.astype(np.float64))
    i = np.unravel_index(int(np.argmax(d)), d.shape) if d.ndim else ()
    return f"{int((d > 0).sum())} of {d.size} values differ, the most at {tuple(int(x) for x in i)}: {got[i]} != {want[i]}"


def check_safetensors(z, st_path):
    """The safetensors tensors (PyTorch name -> array), checked against the npz; and the
    configuration of the network."""
    npz_meta = lifeline_net.npz_meta(z)
    cfg = Config.from_meta(npz_meta)
    with safe_open(st_path, "np") as f:
        header = f.metadata() or {}
    if "lifeline_zero" not in header:
        fail(f"{st_path}: no `lifeline_zero` metadata in the header")
    meta = json.loads(header["lifeline_zero"])
    for key in ("game", "network", "planes", "height", "width", "policy_len"):
        if meta.get(key) != npz_meta.get(key):
            fail(f"{st_path}: metadata {key} {meta.get(key)} != the npz's {npz_meta.get(key)}")

    spec = lifeline_net.parameters(cfg)
    burn = lifeline_net.npz_weights(z)
    try:
        lifeline_net.check_weights(cfg, burn)
    except ValueError as e:
        fail(f"the npz does not hold the network's parameters: {e}")
    tensors = load_file(st_path)
    difference = lifeline_net.name_difference([p.torch_name for p in spec], tensors)
    if difference:
        fail(f"{st_path}: {difference}")
    for p in spec:
        got = tensors[p.torch_name]
        if got.dtype != np.float32:
            fail(f"{st_path}: {p.torch_name} is {got.dtype}, not float32")
        if tuple(got.shape) != p.torch_shape:
            fail(f"{st_path}: {p.torch_name} has shape {tuple(got.shape)}, expected {p.torch_shape}")
        want = lifeline_net.to_torch(p, burn[p.name])
        if not np.array_equal(got, want):
            fail(f"{st_path}: {p.torch_name} differs from the npz's {p.name}"
                 f"{' (transposed)' if len(p.shape) == 2 else ''}: {describe_difference(got, want)}")
    if meta.get("parameters") is not None and list(meta["parameters"]) != [p.torch_name for p in spec]:
        fail(f"{st_path}: the metadata's parameter list is not the network's, in order")
    return tensors, cfg, meta


def check_onnx(onnx_path, tensors, cfg):
    """Every ONNX initializer that is a network parameter equals the safetensors tensor; none is
    missing; the others are constants. Returns the number of parameters compared."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(onnx_path)
    graph = model.graph
    # Gemm weights with transB = 0 are (in, out): compare them transposed.
    transposed = set()
    for node in graph.node:
        if node.op_type == "Gemm" and len(node.input) > 1:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            if not attrs.get("transB", 0):
                transposed.add(node.input[1])
    names = {p.torch_name for p in lifeline_net.parameters(cfg)}
    seen = set()
    for init in graph.initializer:
        if init.name not in names:
            if not init.name.startswith("const:"):
                fail(f"{onnx_path}: initializer {init.name!r} is neither a network parameter nor a constant")
            continue
        if init.name in seen:
            fail(f"{onnx_path}: initializer {init.name} appears twice")
        seen.add(init.name)
        got = numpy_helper.to_array(init)
        if init.name in transposed:
            got = got.T
        want = tensors[init.name]
        if got.dtype != np.float32:
            fail(f"{onnx_path}: initializer {init.name} is {got.dtype}, not float32")
        if got.shape != want.shape:
            fail(f"{onnx_path}: initializer {init.name} has shape {got.shape}"
                 f"{' (transposed, a Gemm weight with transB = 0)' if init.name in transposed else ''}, "
                 f"the safetensors tensor {want.shape}")
        if not np.array_equal(got, want):
            fail(f"{onnx_path}: initializer {init.name} differs from the safetensors tensor: "
                 f"{describe_difference(got, want)}")
    if names - seen:
        fail(f"{onnx_path}: network parameters missing from the initializers: {', '.join(sorted(names - seen))}")
    inputs = {i.name for i in graph.input}
    for inp in ("input", "mask"):
        if inp not in inputs:
            fail(f"{onnx_path}: no graph input {inp!r}")
    outputs = {o.name for o in graph.output}
    for out in ("policy", "value", "ownership"):
        if out not in outputs:
            fail(f"{onnx_path}: no graph output {out!r}")
    return len(seen)


def check_torch(st_path, z):
    """Where torch is installed: torch_model.py on the npz's example, against burn. Returns a
    line to print."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return "torch not installed: skipped running scripts/torch_model.py"
    import torch_model

    try:
        net, _ = torch_model.load_safetensors(st_path)
    except ValueError as e:
        fail(f"torch_model.py cannot load {st_path}: {e}")
    dp, dv = torch_model.compare_with_burn(net, z)
    if not (dp <= torch_model.TOLERANCE and dv <= torch_model.TOLERANCE):
        fail(f"torch_model.py on the npz's example: max difference from burn's policy logits {dp:.2e}, "
             f"win/draw/loss probabilities {dv:.2e} (tolerance {torch_model.TOLERANCE})")
    return f"torch_model.py reproduces burn: max difference policy {dp:.2e}, value {dv:.2e}"


def main(npz_path, st_path, onnx_path=None):
    z = np.load(npz_path)
    tensors, cfg, meta = check_safetensors(z, st_path)
    print(f"{len(tensors)} tensors agree with {npz_path}; game {meta['game']['game']}")
    if onnx_path is not None:
        n = check_onnx(onnx_path, tensors, cfg)
        print(f"{onnx_path}: its {n} parameter initializers equal the safetensors tensors")
    print(check_torch(st_path, z))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
