#!/usr/bin/env python3
"""The Lifeline Zero network as a PyTorch module, loaded from a `train export --format
safetensors` file.

Usage: torch_model.py MODEL.safetensors MODEL.npz

`LifelineNet(cfg)` is built from scripts/lifeline_net.py, the one definition of the
architecture (the ONNX export and the benchmark reference derive from it too): its submodules
are standard `torch.nn` layers (`Conv2d`, `BatchNorm2d`, `Linear`) under the module paths of
net/src/network.rs, so its state dict names are the safetensors export's (batch norm's
`num_batches_tracked` aside, which the export does not hold). `forward(input, mask)` takes
`input` (B, planes, H, W) and the on-board `mask` (B, 1, H, W) and returns policy logits
(B, policy_len), win/draw/loss logits (B, 3) and ownership (B, H, W) in [-1, 1], as burn's
network does; in `eval()` mode batch norm uses the running statistics (inference), in
`train()` mode the batch's.

`load_safetensors(path)` reads the network's configuration from the file's metadata (key
`lifeline_zero` of the header's `__metadata__`: game, network sizes, planes, height, width,
policy_len, ...), builds the module and loads the weights, requiring exactly the network's
parameter names and shapes; it returns the module in eval mode and the metadata.

Run as a script, it loads MODEL.safetensors, runs the module on the example input stored in
MODEL.npz (a `train export --format npz` of the same checkpoint) and compares its policy logits
and win/draw/loss probabilities with those burn computed: it exits non-zero if they differ by
more than 1e-4.
"""
import json
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lifeline_net  # noqa: E402
from lifeline_net import BATCH_NORM_EPSILON, ArrayOps, Config  # noqa: E402

# The largest difference from burn's outputs that counts as reproducing them.
TOLERANCE = 1e-4


def _module(layer):
    if layer.kind == "conv":
        return nn.Conv2d(layer.cin, layer.cout, layer.kernel, padding=layer.kernel // 2, bias=layer.bias)
    if layer.kind == "bn":
        return nn.BatchNorm2d(layer.cout, eps=BATCH_NORM_EPSILON)
    if layer.kind == "linear":
        return nn.Linear(layer.cin, layer.cout)
    raise ValueError(f"{layer.name}: unknown layer kind {layer.kind}")


class _Ops(ArrayOps):
    """`lifeline_net.forward`'s ops on torch tensors, with the layers of a `LifelineNet`."""

    def __init__(self, net):
        self.net = net

    def conv(self, layer, x):
        return self.net.get_submodule(layer.name)(x)

    bn = linear = conv

    relu, tanh, sqrt = staticmethod(torch.relu), staticmethod(torch.tanh), staticmethod(torch.sqrt)
    add, mul, div = staticmethod(torch.add), staticmethod(torch.mul), staticmethod(torch.div)

    @staticmethod
    def sum_hw(x):
        return x.sum(dim=(2, 3))

    @staticmethod
    def max_hw(x):
        return x.amax(dim=(2, 3))

    @staticmethod
    def concat(xs):
        return torch.cat(list(xs), dim=1)

    @staticmethod
    def flatten(x):
        return x.flatten(1)

    @staticmethod
    def unsqueeze_hw(x):
        return x[:, :, None, None]


class LifelineNet(nn.Module):
    """The policy-value network of net/src/network.rs (see the module documentation)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        # One submodule per layer of the shared specification, at its module path: containers
        # (`blocks`, `blocks.0`, `stem`, ...) are plain modules.
        for layer in lifeline_net.layers(cfg):
            *parents, leaf = layer.name.split(".")
            parent = self
            for name in parents:
                if not hasattr(parent, name):
                    parent.add_module(name, nn.Module())
                parent = getattr(parent, name)
            parent.add_module(leaf, _module(layer))

    def forward(self, input, mask):
        policy, value, ownership = lifeline_net.forward(_Ops(self), self.cfg, input, mask)
        return policy, value, ownership[:, 0]

    def parameter_names(self):
        """The names the safetensors export must hold: the state dict's, less batch norm's
        `num_batches_tracked`."""
        return [k for k in self.state_dict() if not k.endswith(".num_batches_tracked")]

    def load_tensors(self, tensors):
        """Load `tensors` (PyTorch name -> array or tensor), which must be exactly the network's
        parameters with their shapes."""
        expected = self.parameter_names()
        difference = lifeline_net.name_difference(expected, tensors)
        if difference:
            raise ValueError(difference)
        state = self.state_dict()
        for name in expected:
            if tuple(tensors[name].shape) != tuple(state[name].shape):
                raise ValueError(f"{name}: shape {tuple(tensors[name].shape)}, expected {tuple(state[name].shape)}")
        result = self.load_state_dict({k: torch.as_tensor(np.asarray(v)) for k, v in tensors.items()}, strict=False)
        # Strict apart from the batch-norm counters, which the export does not hold.
        assert not result.unexpected_keys, result.unexpected_keys
        assert all(k.endswith(".num_batches_tracked") for k in result.missing_keys), result.missing_keys


def read_metadata(path):
    """The `lifeline_zero` metadata of a safetensors export."""
    from safetensors import safe_open

    with safe_open(path, "np") as f:
        meta = f.metadata() or {}
    if "lifeline_zero" not in meta:
        raise ValueError("no `lifeline_zero` metadata in the header: not a `train export` file")
    return json.loads(meta["lifeline_zero"])


def load_safetensors(path):
    """The network of a `train export --format safetensors` file, in eval mode, and the file's
    metadata."""
    from safetensors.numpy import load_file

    meta = read_metadata(path)
    net = LifelineNet(Config.from_meta(meta))
    net.load_tensors(load_file(path))
    return net.eval(), meta


def compare_with_burn(net, z):
    """Run `net` on the example of an opened npz export; returns the largest differences from
    burn's policy logits and win/draw/loss probabilities."""
    with torch.no_grad():
        policy, value, _ = net(torch.from_numpy(z["example/input"]), torch.from_numpy(z["example/mask"]))
    dp = float(np.abs(policy.numpy() - z["example/policy_logits"]).max())
    dv = float(np.abs(torch.softmax(value, dim=1).numpy() - z["example/value"]).max())
    return dp, dv


def main(st_path, npz_path):
    try:
        net, meta = load_safetensors(st_path)
    except ValueError as e:
        sys.exit(f"{st_path}: {e}")
    z = np.load(npz_path)
    npz_meta = lifeline_net.npz_meta(z)
    for key in ("game", "network", "planes", "height", "width", "policy_len", "step"):
        if meta.get(key) != npz_meta.get(key):
            sys.exit(f"{st_path} and {npz_path} are not exports of one checkpoint: "
                     f"metadata {key} {meta.get(key)} != {npz_meta.get(key)}")
    dp, dv = compare_with_burn(net, z)
    print(f"{st_path}: {len(net.parameter_names())} tensors in torch {torch.__version__}, game "
          f"{meta['game']['game']}; max difference from burn: policy {dp:.2e}, value {dv:.2e}")
    if not (dp <= TOLERANCE and dv <= TOLERANCE):
        sys.exit(f"the PyTorch module does not reproduce burn's outputs (tolerance {TOLERANCE})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
