#!/usr/bin/env python3
"""Turn a `train export` file into an ONNX model and check it against burn's own outputs.

Usage: export_onnx.py MODEL.npz OUT.onnx

The .npz holds every parameter under `param/<module path>`, the metadata (`meta`: game,
network sizes, input and policy layout) and one example input with the policy logits and
win/draw/loss probabilities burn computed for it. The ONNX graph is built by
scripts/lifeline_net.py (the one definition of the architecture, also timed by
scripts/bench_reference.py; opset 17, inputs `input` (B, planes, H, W) and `mask` (B, 1, H, W),
outputs `policy` logits, `value` logits, `ownership`; parameters as initializers under
PyTorch's names and layouts, as in the safetensors export), run in onnxruntime on the example,
and the outputs are compared with burn's: the script exits non-zero if they differ by more
than 1e-3.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifeline_net import Config, build_onnx, npz_meta, npz_weights  # noqa: E402


def main(src, dst):
    z = np.load(src)
    meta = npz_meta(z)
    weights = npz_weights(z)
    model = build_onnx(Config.from_meta(meta), weights)
    with open(dst, "wb") as f:
        f.write(model.SerializeToString())
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    policy, value, _ = sess.run(None, {"input": z["example/input"], "mask": z["example/mask"]})
    value = np.exp(value - value.max(axis=1, keepdims=True))
    value /= value.sum(axis=1, keepdims=True)
    dp = float(np.abs(policy - z["example/policy_logits"]).max())
    dv = float(np.abs(value - z["example/value"]).max())
    print(f"{dst}: {len(weights)} parameters, game {meta['game']['game']}, step {meta['step']}; "
          f"max difference from burn: policy {dp:.2e}, value {dv:.2e}")
    if dp > 1e-3 or dv > 1e-3:
        sys.exit("the ONNX model does not reproduce burn's outputs")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
