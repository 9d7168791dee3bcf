#!/usr/bin/env python3
"""Reference timings for the Lifeline Zero network, outside burn.

The architecture is the one of net/src/network.rs, as scripts/lifeline_net.py defines it once
(its layers and parameters, and the forward pass over a small ops interface):

  --mode infer   builds it as an ONNX graph (lifeline_net.build_onnx, the same builder as
                 scripts/export_onnx.py; random weights) and times it in onnxruntime on CPU with
                 2 threads (what `selfplay bench-net --reference` runs);
  --mode train   times one training step (forward, losses, gradients, SGD with momentum) in JAX
                 on CPU (what `train bench --reference` runs): lifeline_net.forward over JAX ops,
                 batch norm on the batch's statistics.
  --mode train-torch
                 the same step in PyTorch on CPU (scripts/torch_model.py's module in training
                 mode, torch.optim.SGD), what `train bench --reference` adds where torch is
                 installed.

Output lines: "onnxruntime batch N: R positions/s", "jax train batch N: R samples/s" and
"torch train batch N: R samples/s".
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifeline_net import (  # noqa: E402
    BATCH_NORM_EPSILON, ArrayOps, Config, build_onnx, parameters, random_weights)
from lifeline_net import forward as net_forward  # noqa: E402


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["infer", "train", "train-torch"], default="infer")
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


# ----------------------------------------------------------------------------------------------
# ONNX inference


def bench_infer(a):
    import onnxruntime as ort

    model = build_onnx(Config.from_args(a))
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


def jax_ops():
    """The class of `lifeline_net.forward`'s ops in JAX (imported here, so that --mode infer
    needs no JAX), in training mode: batch norm normalises with the batch's statistics (the
    running statistics are not trained, so they are not parameters here). An instance holds the
    trainable parameters under burn's names and layouts."""
    import jax
    import jax.numpy as jnp

    class JaxOps(ArrayOps):
        def __init__(self, params):
            self.p = params

        def conv(self, layer, x):
            k = layer.kernel
            y = jax.lax.conv_general_dilated(x, self.p[f"{layer.name}.weight"], (1, 1), [(k // 2, k // 2)] * 2)
            return (y + self.p[f"{layer.name}.bias"][None, :, None, None]) if layer.bias else y

        def bn(self, layer, x):
            mean = x.mean(axis=(0, 2, 3), keepdims=True)
            var = x.var(axis=(0, 2, 3), keepdims=True)
            y = (x - mean) / jnp.sqrt(var + BATCH_NORM_EPSILON)
            gamma, beta = self.p[f"{layer.name}.gamma"], self.p[f"{layer.name}.beta"]
            return y * gamma[None, :, None, None] + beta[None, :, None, None]

        def linear(self, layer, x):
            return x @ self.p[f"{layer.name}.weight"] + self.p[f"{layer.name}.bias"]

        relu, tanh, sqrt = staticmethod(jax.nn.relu), staticmethod(jnp.tanh), staticmethod(jnp.sqrt)
        add, mul, div = staticmethod(jnp.add), staticmethod(jnp.multiply), staticmethod(jnp.divide)

        @staticmethod
        def sum_hw(x):
            return x.sum(axis=(2, 3))

        @staticmethod
        def max_hw(x):
            return x.max(axis=(2, 3))

        @staticmethod
        def concat(xs):
            return jnp.concatenate(xs, axis=1)

        @staticmethod
        def flatten(x):
            return x.reshape(x.shape[0], -1)

        @staticmethod
        def unsqueeze_hw(x):
            return x[:, :, None, None]

    return JaxOps


def bench_train(a):
    os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={a.threads}")
    import jax
    import jax.numpy as jnp

    cfg = Config.from_args(a)
    JaxOps = jax_ops()

    def init():
        # The trainable parameters of the shared specification, burn's names and layouts.
        weights = random_weights(cfg)
        return {p.name: jnp.asarray(weights[p.name]) for p in parameters(cfg) if p.trainable}

    def forward(params, x, mask):
        policy, value, own = net_forward(JaxOps(params), cfg, x, mask)
        return policy, value, own[:, 0]

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


# ----------------------------------------------------------------------------------------------
# PyTorch training step


def bench_train_torch(a):
    import torch
    import torch.nn.functional as F

    from torch_model import LifelineNet

    torch.set_num_threads(a.threads)
    cfg = Config.from_args(a)
    net = LifelineNet(cfg).train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    rng = np.random.default_rng(1)
    for batch in [int(b) for b in a.batches.split(",")]:
        x = torch.as_tensor((rng.random((batch, a.planes, a.height, a.width)) < 0.3).astype(np.float32))
        mask = torch.ones((batch, 1, a.height, a.width))
        legal = torch.ones((batch, a.policy_len), dtype=torch.bool)
        pol = torch.full((batch, a.policy_len), 1.0 / a.policy_len)
        val = torch.tensor([1.0, 0.0, 0.0]).repeat(batch, 1)
        own_t = torch.zeros((batch, a.height, a.width))

        def step():
            policy, value, own = net(x, mask)
            logp = F.log_softmax(torch.where(legal, policy, torch.tensor(-1e9)), dim=1)
            lp = -(pol * logp).sum(dim=1).mean()
            lv = -(val * F.log_softmax(value, dim=1)).sum(dim=1).mean()
            lo = ((own - own_t) ** 2).mean()
            loss = lp + lv + 0.15 * lo
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss.item()

        step()
        t0, done = time.perf_counter(), 0
        while time.perf_counter() - t0 < a.seconds or done == 0:
            step()
            done += batch
        print(f"torch train batch {batch:>4}: {done / (time.perf_counter() - t0):>9.1f} samples/s", flush=True)


if __name__ == "__main__":
    args = parse()
    if args.mode == "infer":
        bench_infer(args)
    elif args.mode == "train":
        bench_train(args)
    else:
        bench_train_torch(args)
