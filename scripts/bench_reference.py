#!/usr/bin/env python3
"""Reference timings for the Lifeline Zero network, outside burn.

The architecture is the one of selfplay/src/net.rs: a 3x3 stem, residual blocks of two 3x3
convolutions with batch norm (every `pool_every`-th block adds a bias from masked global
pooling: mean, board-size-scaled mean, max), a policy head (1x1 conv -> per-cell logits, pooled
features -> global action logits), a win/draw/loss value head and an ownership head; every
spatial layer is multiplied by the on-board mask.

  --mode infer   builds it directly as an ONNX graph (the `onnx` package) and times it in
                 onnxruntime on CPU with 2 threads (what `selfplay bench-net --reference` runs);
  --mode train   times one training step (forward, losses, gradients, SGD with momentum) in JAX
                 on CPU (what `train bench --reference` runs).

Output lines: "onnxruntime batch N: R positions/s" and "jax train batch N: R samples/s".
"""
import argparse
import time

import numpy as np


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["infer", "train"], default="infer")
    p.add_argument("--planes", type=int, required=True)
    p.add_argument("--height", type=int, required=True)
    p.add_argument("--width", type=int, required=True)
    p.add_argument("--blocks", type=int, default=6)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--head-channels", type=int, default=32)
    p.add_argument("--value-hidden", type=int, default=64)
    p.add_argument("--pool-every", type=int, default=2)
    p.add_argument("--policy-len", type=int, required=True)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--batches", default="1,16,64,256")
    p.add_argument("--threads", type=int, default=2)
    return p.parse_args()


def pooled_blocks(a):
    return [a.pool_every > 0 and i % a.pool_every == a.pool_every - 1 for i in range(a.blocks)]


# ----------------------------------------------------------------------------------------------
# ONNX inference


def build_onnx(a, weights=None):
    """The network as an ONNX graph. `weights` maps the parameter names of selfplay/src/net.rs
    (as `train export` writes them, e.g. "blocks.0.first.conv.weight") to arrays; without it the
    weights are random (for timing)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def const(arr, prefix="c"):
        n = name(prefix)
        inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def param(path, shape, make):
        if weights is None:
            return make().astype(np.float32)
        w = np.asarray(weights[path], np.float32)
        if tuple(w.shape) != tuple(shape):
            raise ValueError(f"{path}: shape {w.shape}, expected {shape}")
        return w

    def node(op, inputs, **attrs):
        out = name(op.lower())
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv(path, x, cin, cout, k, bias=False):
        w = param(f"{path}.weight", (cout, cin, k, k), lambda: rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)))
        ins = [x, const(w, "w")]
        if bias:
            ins.append(const(param(f"{path}.bias", (cout,), lambda: np.zeros(cout)), "b"))
        return node("Conv", ins, kernel_shape=[k, k], pads=[k // 2] * 4)

    def bn(path, x, c):
        ones, zeros = (lambda: np.ones(c)), (lambda: np.zeros(c))
        g = param(f"{path}.gamma", (c,), ones)
        b = param(f"{path}.beta", (c,), zeros)
        m = param(f"{path}.running_mean", (c,), zeros)
        v = param(f"{path}.running_var", (c,), ones)
        return node("BatchNormalization", [x, const(g), const(b), const(m), const(v)], epsilon=1e-5)

    def conv_bn(path, x, cin, cout, k):
        return node("Mul", [bn(f"{path}.norm", conv(f"{path}.conv", x, cin, cout, k), cout), "mask"])

    def gemm(path, x, cin, cout):
        w = param(f"{path}.weight", (cin, cout), lambda: rng.standard_normal((cin, cout)) / np.sqrt(cin))
        b = param(f"{path}.bias", (cout,), lambda: np.zeros(cout))
        return node("Gemm", [x, const(w, "w"), const(b, "b")])

    axes = const(np.array([2, 3], np.int64), "axes")
    count = node("ReduceSum", ["mask", axes], keepdims=1)  # (B,1,1,1)
    scale = node("Div", [node("Sub", [node("Sqrt", [count]), const(np.float32(14.0))]), const(np.float32(10.0))])
    scale = node("Flatten", [scale], axis=1)  # (B,1)

    def pool(x):
        mean = node("Flatten", [node("Div", [node("ReduceSum", [x, axes], keepdims=1), count])], axis=1)
        mx = node("Flatten", [node("ReduceMax", [x], axes=[2, 3], keepdims=1)], axis=1)
        return node("Concat", [mean, node("Mul", [mean, scale]), mx], axis=1)

    c, h = a.channels, a.head_channels
    x = node("Relu", [conv_bn("stem", "input", a.planes, c, 3)])
    for i, pooled in enumerate(pooled_blocks(a)):
        y = node("Relu", [conv_bn(f"blocks.{i}.first", x, c, c, 3)])
        if pooled:
            bias = node("Unsqueeze", [gemm(f"blocks.{i}.pool", pool(y), 3 * c, c), const(np.array([2, 3], np.int64), "axes")])
            y = node("Mul", [node("Add", [y, bias]), "mask"])
        x = node("Relu", [node("Add", [conv_bn(f"blocks.{i}.second", y, c, c, 3), x])])
    p = node("Relu", [conv_bn("policy_conv", x, c, h, 1)])
    cells = node("Flatten", [conv("policy_cells", p, h, 1, 1, bias=True)], axis=1)
    glob = gemm("policy_global", pool(p), 3 * h, a.policy_len - a.height * a.width)
    nodes.append(helper.make_node("Concat", [cells, glob], ["policy"], axis=1))
    v = node("Relu", [conv_bn("value_conv", x, c, h, 1)])
    hidden = node("Relu", [gemm("value_hidden", pool(v), 3 * h, a.value_hidden)])
    nodes.append(helper.make_node("Identity", [gemm("value_out", hidden, a.value_hidden, 3)], ["value"]))
    own = node("Mul", [conv("ownership", x, c, 1, 1, bias=True), "mask"])
    nodes.append(helper.make_node("Tanh", [own], ["ownership"]))

    f = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes,
        "lifeline_zero",
        [
            helper.make_tensor_value_info("input", f, ["B", a.planes, a.height, a.width]),
            helper.make_tensor_value_info("mask", f, ["B", 1, a.height, a.width]),
        ],
        [
            helper.make_tensor_value_info("policy", f, ["B", a.policy_len]),
            helper.make_tensor_value_info("value", f, ["B", 3]),
            helper.make_tensor_value_info("ownership", f, ["B", 1, a.height, a.width]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def bench_infer(a):
    import onnxruntime as ort

    model = build_onnx(a)
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    for batch in [int(b) for b in a.batches.split(",")]:
        x = (rng.random((batch, a.planes, a.height, a.width)) < 0.3).astype(np.float32)
        m = np.ones((batch, 1, a.height, a.width), np.float32)
        feeds = {"input": x, "mask": m}
        sess.run(None, feeds)
        t0, done = time.perf_counter(), 0
        while time.perf_counter() - t0 < a.seconds or done == 0:
            sess.run(None, feeds)
            done += batch
        print(f"onnxruntime batch {batch:>4}: {done / (time.perf_counter() - t0):>9.0f} positions/s", flush=True)


# ----------------------------------------------------------------------------------------------
# JAX training step


def bench_train(a):
    import os

    os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={a.threads}")
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    c, h = a.channels, a.head_channels
    nglob = a.policy_len - a.height * a.width

    def init():
        params = {}
        k = [key]

        def rnd(shape, fan_in):
            k[0], sub = jax.random.split(k[0])
            return jax.random.normal(sub, shape) * jnp.sqrt(2.0 / fan_in)

        def cb(nm, cin, cout, ks):
            params[nm] = {"w": rnd((cout, cin, ks, ks), cin * ks * ks), "g": jnp.ones(cout), "b": jnp.zeros(cout)}

        def lin(nm, cin, cout):
            params[nm] = {"w": rnd((cin, cout), cin), "b": jnp.zeros(cout)}

        cb("stem", a.planes, c, 3)
        for i, pooled in enumerate(pooled_blocks(a)):
            cb(f"b{i}a", c, c, 3)
            cb(f"b{i}b", c, c, 3)
            if pooled:
                lin(f"b{i}p", 3 * c, c)
        cb("pc", c, h, 1)
        params["pcell"] = {"w": rnd((1, h, 1, 1), h), "b": jnp.zeros(1)}
        lin("pglob", 3 * h, nglob)
        cb("vc", c, h, 1)
        lin("vh", 3 * h, a.value_hidden)
        lin("vo", a.value_hidden, 3)
        params["own"] = {"w": rnd((1, c, 1, 1), c), "b": jnp.zeros(1)}
        return params

    def conv(x, w):
        ks = w.shape[-1]
        return jax.lax.conv_general_dilated(x, w, (1, 1), [(ks // 2, ks // 2)] * 2)

    def conv_bn(p, x, mask):
        y = conv(x, p["w"])
        mean = y.mean(axis=(0, 2, 3), keepdims=True)
        var = y.var(axis=(0, 2, 3), keepdims=True)
        y = (y - mean) / jnp.sqrt(var + 1e-5)
        return (y * p["g"][None, :, None, None] + p["b"][None, :, None, None]) * mask

    def pool(x, count, scale):
        mean = x.sum(axis=(2, 3)) / count
        return jnp.concatenate([mean, mean * scale, x.max(axis=(2, 3))], axis=1)

    def forward(params, x, mask):
        count = mask.sum(axis=(2, 3))
        scale = (jnp.sqrt(count) - 14.0) / 10.0
        y = jax.nn.relu(conv_bn(params["stem"], x, mask))
        for i, pooled in enumerate(pooled_blocks(a)):
            z = jax.nn.relu(conv_bn(params[f"b{i}a"], y, mask))
            if pooled:
                lp = params[f"b{i}p"]
                z = (z + (pool(z, count, scale) @ lp["w"] + lp["b"])[:, :, None, None]) * mask
            y = jax.nn.relu(conv_bn(params[f"b{i}b"], z, mask) + y)
        p = jax.nn.relu(conv_bn(params["pc"], y, mask))
        cells = (conv(p, params["pcell"]["w"]) + params["pcell"]["b"][None, :, None, None]).reshape(x.shape[0], -1)
        glob = pool(p, count, scale) @ params["pglob"]["w"] + params["pglob"]["b"]
        policy = jnp.concatenate([cells, glob], axis=1)
        v = jax.nn.relu(conv_bn(params["vc"], y, mask))
        hid = jax.nn.relu(pool(v, count, scale) @ params["vh"]["w"] + params["vh"]["b"])
        value = hid @ params["vo"]["w"] + params["vo"]["b"]
        own = jnp.tanh((conv(y, params["own"]["w"]) + params["own"]["b"][None, :, None, None]) * mask)[:, 0]
        return policy, value, own

    def loss_fn(params, x, mask, legal, pol, val, own_t):
        policy, value, own = forward(params, x, mask)
        logp = jax.nn.log_softmax(jnp.where(legal, policy, -1e9), axis=1)
        lp = -(pol * logp).sum(axis=1).mean()
        lv = -(val * jax.nn.log_softmax(value, axis=1)).sum(axis=1).mean()
        lo = ((own - own_t) ** 2).mean()
        return lp + lv + 0.15 * lo

    @jax.jit
    def step(params, mom, x, mask, legal, pol, val, own_t):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, mask, legal, pol, val, own_t)
        mom = jax.tree_util.tree_map(lambda m, g, p: 0.9 * m + g + 1e-4 * p, mom, grads, params)
        params = jax.tree_util.tree_map(lambda p, m: p - 0.01 * m, params, mom)
        return params, mom, loss

    params = init()
    mom = jax.tree_util.tree_map(jnp.zeros_like, params)
    rng = np.random.default_rng(1)
    for batch in [int(b) for b in a.batches.split(",")]:
        x = (rng.random((batch, a.planes, a.height, a.width)) < 0.3).astype(np.float32)
        mask = np.ones((batch, 1, a.height, a.width), np.float32)
        legal = np.ones((batch, a.policy_len), bool)
        pol = np.full((batch, a.policy_len), 1.0 / a.policy_len, np.float32)
        val = np.tile(np.array([1.0, 0.0, 0.0], np.float32), (batch, 1))
        own_t = np.zeros((batch, a.height, a.width), np.float32)
        args = [jnp.asarray(v) for v in (x, mask, legal, pol, val, own_t)]
        params, mom, loss = step(params, mom, *args)
        loss.block_until_ready()
        t0, done = time.perf_counter(), 0
        while time.perf_counter() - t0 < a.seconds or done == 0:
            params, mom, loss = step(params, mom, *args)
            loss.block_until_ready()
            done += batch
        print(f"jax train batch {batch:>4}: {done / (time.perf_counter() - t0):>9.1f} samples/s", flush=True)


if __name__ == "__main__":
    args = parse()
    if args.mode == "infer":
        bench_infer(args)
    else:
        bench_train(args)
