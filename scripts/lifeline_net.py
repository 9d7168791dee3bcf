"""The Lifeline Zero network, defined once for every Python implementation of it.

This is the architecture of net/src/network.rs, written down once:

- `Config`: the sizes (the `[network]` table of a config, and the input/policy shape of a game);
- `layers(cfg)`: every layer in burn's module order (name, kind conv/bn/linear, shapes, which
  residual blocks pool), and `parameters(cfg)` every parameter with its name and shape under
  both namings (burn's module path as the .npz export writes it, PyTorch's as the safetensors
  export writes it);
- `forward(ops, cfg, x, mask)`: the forward pass, written against a small `ops` interface
  (conv/bn/linear of a named layer, a few elementwise and pooling primitives). Each backend
  implements the interface and nothing else: `OnnxOps` / `build_onnx` here (exported models and
  the onnxruntime timing of scripts/bench_reference.py), the JAX training step of
  scripts/bench_reference.py, and `LifelineNet` in scripts/torch_model.py.

The network: a 3x3 stem, `blocks` residual blocks of two 3x3 convolutions with batch norm (every
`pool_every`-th block adds, between them, a bias computed by a linear layer from masked global
pooling: mean, board-size-scaled mean and max over the on-board cells), a policy head (1x1 conv
-> one logit per grid cell, pooled features -> the global actions' logits), a win/draw/loss value
head and an ownership head. Every spatial layer is multiplied by the on-board mask.

Naming and layouts. Burn's names (`stem.norm.gamma`, linear weights (in, out): `x @ w + b`) are
those of `train export --format npz` (under `param/`); PyTorch's (`stem.norm.weight`, linear
weights (out, in)) are those of `train export --format safetensors`. Convolution weights are
(out, in, k, k) in both.

ONNX (`build_onnx`): opset 17 (`OPSET`); inputs `input` (B, planes, H, W) and `mask`
(B, 1, H, W), outputs `policy` (B, policy_len) logits, `value` (B, 3) win/draw/loss logits and
`ownership` (B, 1, H, W) in [-1, 1]; the batch dimension `B` is dynamic. Its initializers that
are parameters carry PyTorch's names and layouts (linear layers are `Gemm` with `transB = 1`),
so they equal the safetensors export tensor for tensor; the other initializers (constants) are
named `const:...`. Batch norm uses the running statistics (inference).
"""
import json
from dataclasses import dataclass, fields

import numpy as np

OPSET = 17
# The batch norm epsilon of every layer (net::network::BATCH_NORM_EPSILON).
BATCH_NORM_EPSILON = 1e-5
# Global (non-cell) policy entries: swap, spend komi, remove prisoner.
GLOBAL_POLICY = 3
# Outputs of the value head: win, draw, loss for the player to move.
VALUE_OUTPUTS = 3
# Features pooled per channel: mean, board-size-scaled mean, max.
POOLED_FEATURES = 3


@dataclass(frozen=True)
class Config:
    """Network sizes (net::network::NetConfig) and the shape of a game's input and policy."""

    planes: int
    height: int
    width: int
    policy_len: int
    blocks: int = 6
    channels: int = 64
    head_channels: int = 32
    value_hidden: int = 64
    pool_every: int = 2

    def __post_init__(self):
        if self.policy_len != self.height * self.width + GLOBAL_POLICY:
            raise ValueError(f"policy_len {self.policy_len} is not height * width + {GLOBAL_POLICY} "
                             f"({self.height} x {self.width})")

    @classmethod
    def from_args(cls, a):
        """From any object with the fields as attributes (argparse's namespace)."""
        return cls(**{f.name: getattr(a, f.name) for f in fields(cls)})

    @classmethod
    def from_meta(cls, meta):
        """From the metadata of an export (the npz's `meta`, the safetensors header's
        `lifeline_zero`)."""
        net = meta["network"]
        return cls(planes=meta["planes"], height=meta["height"], width=meta["width"],
                   policy_len=meta["policy_len"], blocks=net["blocks"], channels=net["channels"],
                   head_channels=net["head_channels"], value_hidden=net["value_hidden"],
                   pool_every=net["pool_every"])

    def pooled(self, block):
        """Whether residual block `block` adds a bias from pooled features."""
        return self.pool_every > 0 and block % self.pool_every == self.pool_every - 1


@dataclass(frozen=True)
class Param:
    """One parameter (or batch-norm running statistic) of a layer."""

    name: str  # burn's module path (the npz export's name, after `param/`)
    torch_name: str  # PyTorch's name (the safetensors export's)
    shape: tuple  # burn's layout
    torch_shape: tuple  # PyTorch's layout
    leaf: str  # weight, bias, gamma, beta, running_mean or running_var
    trainable: bool  # False for the running statistics
    fan_in: int  # for random initialisation of weights


@dataclass(frozen=True)
class Layer:
    """A layer with parameters: `conv` (k x k, padding k // 2, stride 1, optional bias), `bn`
    (batch norm over `cout` channels; `cin == cout`) or `linear` (`cin` -> `cout`, with bias)."""

    name: str
    kind: str
    cin: int
    cout: int
    kernel: int = 1
    bias: bool = True

    def params(self):
        def p(leaf, shape, torch_leaf=None, torch_shape=None, trainable=True):
            return Param(f"{self.name}.{leaf}", f"{self.name}.{torch_leaf or leaf}", tuple(shape),
                         tuple(torch_shape or shape), leaf, trainable, self.cin * self.kernel ** 2)

        if self.kind == "conv":
            out = [p("weight", (self.cout, self.cin, self.kernel, self.kernel))]
            return out + ([p("bias", (self.cout,))] if self.bias else [])
        if self.kind == "bn":
            c = (self.cout,)
            return [p("gamma", c, "weight"), p("beta", c, "bias"),
                    p("running_mean", c, trainable=False), p("running_var", c, trainable=False)]
        if self.kind == "linear":
            return [p("weight", (self.cin, self.cout), torch_shape=(self.cout, self.cin)),
                    p("bias", (self.cout,))]
        raise ValueError(f"{self.name}: unknown layer kind {self.kind}")


def layers(cfg):
    """Every layer of the network, in burn's module order (the order of the exports)."""
    c, h = cfg.channels, cfg.head_channels

    def conv_bn(name, cin, cout, k):
        # No convolution bias: the batch norm that follows has its own.
        return [Layer(f"{name}.conv", "conv", cin, cout, k, bias=False), Layer(f"{name}.norm", "bn", cout, cout)]

    out = conv_bn("stem", cfg.planes, c, 3)
    for i in range(cfg.blocks):
        out += conv_bn(f"blocks.{i}.first", c, c, 3) + conv_bn(f"blocks.{i}.second", c, c, 3)
        if cfg.pooled(i):
            out.append(Layer(f"blocks.{i}.pool", "linear", POOLED_FEATURES * c, c))
    out += conv_bn("policy_conv", c, h, 1)
    out.append(Layer("policy_cells", "conv", h, 1, 1))
    out.append(Layer("policy_global", "linear", POOLED_FEATURES * h, GLOBAL_POLICY))
    out += conv_bn("value_conv", c, h, 1)
    out.append(Layer("value_hidden", "linear", POOLED_FEATURES * h, cfg.value_hidden))
    out.append(Layer("value_out", "linear", cfg.value_hidden, VALUE_OUTPUTS))
    out.append(Layer("ownership", "conv", c, 1, 1))
    return out


def parameters(cfg):
    """Every parameter, in the order of the exports."""
    return [p for layer in layers(cfg) for p in layer.params()]


def to_torch(param, value):
    """A parameter's array in burn's layout -> PyTorch's layout (linear weights transposed)."""
    value = np.asarray(value, np.float32)
    return np.ascontiguousarray(value.T) if len(param.shape) == 2 else value


def name_difference(expected, got):
    """None if the name sets are equal, else a message naming the missing and the extra names."""
    missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
    parts = ([f"network parameters missing: {', '.join(missing)}"] if missing else []) + (
        [f"not parameters of the network: {', '.join(extra)}"] if extra else [])
    return "; ".join(parts) or None


def check_weights(cfg, weights, torch_names=False):
    """Raise ValueError unless `weights` (name -> array) holds exactly the parameters of `cfg`
    with their shapes (burn's names and layouts, or PyTorch's)."""
    spec = {(p.torch_name if torch_names else p.name): (p.torch_shape if torch_names else p.shape)
            for p in parameters(cfg)}
    difference = name_difference(spec, weights)
    if difference:
        raise ValueError(difference)
    for name, shape in spec.items():
        if tuple(np.shape(weights[name])) != shape:
            raise ValueError(f"{name}: shape {tuple(np.shape(weights[name]))}, expected {shape}")


def random_weights(cfg, seed=0):
    """Random weights in burn's names and layouts (He-scaled weights, zero biases, identity batch
    norm): what the benchmarks time."""
    rng = np.random.default_rng(seed)
    out = {}
    for p in parameters(cfg):
        if p.leaf == "weight":
            v = rng.standard_normal(p.shape) * np.sqrt(2.0 / p.fan_in)
        elif p.leaf in ("gamma", "running_var"):
            v = np.ones(p.shape)
        else:
            v = np.zeros(p.shape)
        out[p.name] = v.astype(np.float32)
    return out


def npz_weights(z):
    """The parameters of an opened npz export, burn's names -> arrays."""
    return {k[len("param/"):]: z[k] for k in z.files if k.startswith("param/")}


def npz_meta(z):
    """The metadata of an opened npz export."""
    return json.loads(bytes(z["meta"]).decode("utf-8"))


# ----------------------------------------------------------------------------------------------
# The forward pass


def forward(ops, cfg, x, mask):
    """The network on `x` (B, planes, H, W) and `mask` (B, 1, H, W), through `ops`.

    Returns policy logits (B, policy_len), value logits (B, 3) and ownership (B, 1, H, W).
    `ops` provides the layers, by `Layer`: `conv(layer, x)`, `bn(layer, x)` (running statistics
    or batch statistics, as the backend trains or infers), `linear(layer, x)` on (B, in); and the
    primitives `relu`, `tanh`, `sqrt`, `add`, `mul`, `div` (broadcasting), `sub_const(x, c)`,
    `div_const(x, c)` (a Python float), `sum_hw` and `max_hw` ((B, C, H, W) -> (B, C)),
    `concat(list)` (along axis 1), `flatten` ((B, ...) -> (B, n)) and `unsqueeze_hw`
    ((B, C) -> (B, C, 1, 1)).
    """
    net = {layer.name: layer for layer in layers(cfg)}
    # Per-batch constants of masked pooling: the number of on-board cells, (B, 1), and KataGo's
    # board-size scale (sqrt(cells) - 14) / 10.
    count = ops.sum_hw(mask)
    scale = ops.div_const(ops.sub_const(ops.sqrt(count), 14.0), 10.0)

    def pool(y):
        # (B, C, H, W), zero off the board and >= 0 (after ReLU) -> (B, 3C): mean, scaled mean,
        # max over the board (the plain max is the max over the board).
        mean = ops.div(ops.sum_hw(y), count)
        return ops.concat([mean, ops.mul(mean, scale), ops.max_hw(y)])

    def conv_bn(name, y):
        return ops.mul(ops.bn(net[f"{name}.norm"], ops.conv(net[f"{name}.conv"], y)), mask)

    x = ops.relu(conv_bn("stem", x))
    for i in range(cfg.blocks):
        y = ops.relu(conv_bn(f"blocks.{i}.first", x))
        if cfg.pooled(i):
            bias = ops.unsqueeze_hw(ops.linear(net[f"blocks.{i}.pool"], pool(y)))
            y = ops.mul(ops.add(y, bias), mask)
        x = ops.relu(ops.add(conv_bn(f"blocks.{i}.second", y), x))

    p = ops.relu(conv_bn("policy_conv", x))
    cells = ops.flatten(ops.conv(net["policy_cells"], p))
    policy = ops.concat([cells, ops.linear(net["policy_global"], pool(p))])

    v = ops.relu(conv_bn("value_conv", x))
    value = ops.linear(net["value_out"], ops.relu(ops.linear(net["value_hidden"], pool(v))))

    ownership = ops.tanh(ops.mul(ops.conv(net["ownership"], x), mask))
    return policy, value, ownership


# ----------------------------------------------------------------------------------------------
# ONNX


class ArrayOps:
    """The ops of `forward` that are plain operators on array types that have them (numpy,
    JAX, torch): what the JAX and PyTorch ops classes share."""

    @staticmethod
    def sub_const(x, c):
        return x - c

    @staticmethod
    def div_const(x, c):
        return x / c


class OnnxOps:
    """`forward`'s ops as ONNX nodes; parameters become initializers under PyTorch's names and
    layouts (from `weights`, burn's names and layouts)."""

    def __init__(self, cfg, weights):
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.params = {p.name: p for p in parameters(cfg)}
        self.weights = weights
        self.nodes, self.inits, self.consts = [], [], {}
        self.counter = 0

    def _node(self, op, inputs, **attrs):
        self.counter += 1
        out = f"{op.lower()}{self.counter}"
        self.nodes.append(self.helper.make_node(op, inputs, [out], **attrs))
        return out

    def _const(self, key, value):
        if key not in self.consts:
            self.consts[key] = f"const:{key}"
            self.inits.append(self.numpy_helper.from_array(np.asarray(value), self.consts[key]))
        return self.consts[key]

    def _param(self, layer, leaf):
        p = self.params[f"{layer.name}.{leaf}"]
        self.inits.append(self.numpy_helper.from_array(to_torch(p, self.weights[p.name]), p.torch_name))
        return p.torch_name

    def conv(self, layer, x):
        ins = [x, self._param(layer, "weight")] + ([self._param(layer, "bias")] if layer.bias else [])
        return self._node("Conv", ins, kernel_shape=[layer.kernel] * 2, pads=[layer.kernel // 2] * 4)

    def bn(self, layer, x):
        ins = [x] + [self._param(layer, leaf) for leaf in ("gamma", "beta", "running_mean", "running_var")]
        return self._node("BatchNormalization", ins, epsilon=BATCH_NORM_EPSILON)

    def linear(self, layer, x):
        return self._node("Gemm", [x, self._param(layer, "weight"), self._param(layer, "bias")], transB=1)

    def relu(self, x):
        return self._node("Relu", [x])

    def tanh(self, x):
        return self._node("Tanh", [x])

    def sqrt(self, x):
        return self._node("Sqrt", [x])

    def add(self, a, b):
        return self._node("Add", [a, b])

    def mul(self, a, b):
        return self._node("Mul", [a, b])

    def div(self, a, b):
        return self._node("Div", [a, b])

    def sub_const(self, x, c):
        return self._node("Sub", [x, self._const(f"{c:g}", np.float32(c))])

    def div_const(self, x, c):
        return self._node("Div", [x, self._const(f"{c:g}", np.float32(c))])

    def sum_hw(self, x):
        return self._node("ReduceSum", [x, self._const("axes_hw", np.array([2, 3], np.int64))], keepdims=0)

    def max_hw(self, x):
        # Opset 17: ReduceMax takes its axes as an attribute (an input from opset 18 on).
        return self._node("ReduceMax", [x], axes=[2, 3], keepdims=0)

    def concat(self, xs):
        return self._node("Concat", list(xs), axis=1)

    def flatten(self, x):
        return self._node("Flatten", [x], axis=1)

    def unsqueeze_hw(self, x):
        return self._node("Unsqueeze", [x, self._const("axes_hw", np.array([2, 3], np.int64))])


def build_onnx(cfg, weights=None):
    """The network as an ONNX model (see the module documentation). `weights` maps burn's
    parameter names (the npz export's, e.g. "blocks.0.first.conv.weight") to arrays in burn's
    layouts; without it the weights are random (for timing)."""
    import onnx
    from onnx import TensorProto, helper

    if not isinstance(cfg, Config):
        cfg = Config.from_args(cfg)
    if weights is None:
        weights = random_weights(cfg)
    check_weights(cfg, weights)
    ops = OnnxOps(cfg, weights)
    outs = forward(ops, cfg, "input", "mask")
    for name, out in zip(("policy", "value", "ownership"), outs):
        ops.nodes.append(helper.make_node("Identity", [out], [name]))
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        ops.nodes,
        "lifeline_zero",
        [
            helper.make_tensor_value_info("input", f, ["B", cfg.planes, cfg.height, cfg.width]),
            helper.make_tensor_value_info("mask", f, ["B", 1, cfg.height, cfg.width]),
        ],
        [
            helper.make_tensor_value_info("policy", f, ["B", cfg.policy_len]),
            helper.make_tensor_value_info("value", f, ["B", VALUE_OUTPUTS]),
            helper.make_tensor_value_info("ownership", f, ["B", 1, cfg.height, cfg.width]),
        ],
        ops.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model
