"""An MLP classifier on generated data, with Adam written by hand.

Two interleaved half-moons (generated with ``modjax.random``) are classified by a
2-64-64-2 MLP. The optimizer is Adam as optax implements it (bias-corrected first
and second moments), written in a few lines of ``tree.map`` over the parameter
dict: the whole update is one ``jit``-compiled function, and the accuracy rises
from chance to nearly 100%.

Run it with ``python examples/mlp_classifier.py [--steps N]``.
"""

from __future__ import annotations

import argparse
import functools
import time

import modjax as jax
import modjax.numpy as jnp

LEARNING_RATE = 1e-2
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8


@functools.partial(jax.jit, static_argnums=1)
def two_moons(key, n):
    """``n`` points on two noisy interleaved half circles, and their labels (0 or 1)."""
    angle_key, label_key, noise_key = jax.random.split(key, 3)
    angle = jax.random.uniform(angle_key, (n,), maxval=jnp.pi)
    label = jax.random.bernoulli(label_key, 0.5, (n,)).astype(jnp.int32)
    upper = jnp.stack([jnp.cos(angle), jnp.sin(angle)], axis=1)
    lower = jnp.stack([1.0 - jnp.cos(angle), 0.5 - jnp.sin(angle)], axis=1)
    points = jnp.where(label[:, None] == 0, upper, lower)
    return points + 0.1 * jax.random.normal(noise_key, points.shape), label


def init_params(key, sizes):
    """One dict of (w, b) per layer, He-initialized."""
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
        key, w_key = jax.random.split(key)
        w = jax.random.normal(w_key, (n_in, n_out)) * jnp.sqrt(2.0 / n_in)
        params.append({"w": w, "b": jnp.zeros(n_out)})
    return params


def logits(params, x):
    """The MLP: relu hidden layers, a linear last layer."""
    *hidden, last = params
    for layer in hidden:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ last["w"] + last["b"]


def loss(params, x, y):
    """Mean cross-entropy of the labels ``y`` under the MLP's logits."""
    log_probs = jax.nn.log_softmax(logits(params, x))
    return -jnp.mean(jnp.take_along_axis(log_probs, y[:, None], axis=1))


@jax.jit
def accuracy(params, x, y):
    """The fraction of points whose most likely class is their label."""
    return jnp.mean(jnp.argmax(logits(params, x), axis=1) == y)


def adam_init(params):
    """Adam's state: the step count and zero first and second moments."""
    zeros = jax.tree.map(jnp.zeros_like, params)
    return {"count": jnp.zeros((), jnp.int32), "mu": zeros, "nu": zeros}


@jax.jit
def train_step(params, opt_state, x, y):
    """One Adam step (optax.adam's update rule), written with tree.map."""
    value, grads = jax.value_and_grad(loss)(params, x, y)
    count = opt_state["count"] + 1
    mu = jax.tree.map(lambda m, g: BETA1 * m + (1 - BETA1) * g, opt_state["mu"], grads)
    nu = jax.tree.map(lambda v, g: BETA2 * v + (1 - BETA2) * g * g, opt_state["nu"], grads)
    mu_hat_scale = 1 / (1 - BETA1 ** count.astype(jnp.float32))
    nu_hat_scale = 1 / (1 - BETA2 ** count.astype(jnp.float32))
    params = jax.tree.map(
        lambda p, m, v: p - LEARNING_RATE * (m * mu_hat_scale) / (jnp.sqrt(v * nu_hat_scale) + EPS),
        params,
        mu,
        nu,
    )
    return params, {"count": count, "mu": mu, "nu": nu}, value


def main(steps: int) -> None:
    data_key, test_key, init_key = jax.random.split(jax.random.key(0), 3)
    x, y = two_moons(data_key, 256)
    x_test, y_test = two_moons(test_key, 512)
    params = init_params(init_key, [2, 64, 64, 2])
    opt_state = adam_init(params)
    n_params = sum(p.size for p in jax.tree.leaves(params))

    print(f"Two moons, a 2-64-64-2 MLP ({n_params} parameters), Adam for {steps} steps:")
    print(
        f"  step {0:4d}  loss {float(loss(params, x, y)):.4f}  "
        f"test accuracy {float(accuracy(params, x_test, y_test)):.3f}"
    )
    start = time.perf_counter()
    report_every = max(steps // 5, 1)
    for step in range(1, steps + 1):
        params, opt_state, value = train_step(params, opt_state, x, y)
        if step % report_every == 0 or step == steps:
            print(
                f"  step {step:4d}  loss {float(value):.4f}  "
                f"test accuracy {float(accuracy(params, x_test, y_test)):.3f}"
            )
    print(f"  ({time.perf_counter() - start:.2f} s, the first step's compile included)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps")
    main(parser.parse_args().steps)
