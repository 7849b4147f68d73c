"""modjax demo: the program JAX users know from the JAX tour, run on modjax.

An explicit random key, a dict of parameters, ``jit(grad(loss))`` and a
``tree.map`` update train a small MLP on generated data for a few hundred steps;
then the loss's jaxpr, and the compile cache at work: the first call of a jitted
function traces, lowers and compiles it (the log line appears once), later calls
with arguments of the same shapes and dtypes go straight to the executable.

Run it with ``hatch run demo`` (or ``python examples/demo.py`` in the workspace).
"""

from __future__ import annotations

import logging
import time

import modjax as jax
import modjax.numpy as jnp

STEPS = 300
LEARNING_RATE = 0.05


def init_params(key, sizes):
    """One (w, b) entry per layer, drawn from ``key`` (split, never reused)."""
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        key, w_key = jax.random.split(key)
        params[f"layer{i}"] = {
            "w": jax.random.normal(w_key, (n_in, n_out)) / jnp.sqrt(n_in),
            "b": jnp.zeros(n_out),
        }
    return params


def predict(params, x):
    """An MLP: tanh hidden layers, a linear last layer."""
    *hidden, last = params.values()
    for layer in hidden:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ last["w"] + last["b"]


def loss(params, x, y):
    """Mean squared error of the MLP's predictions."""
    return jnp.mean((predict(params, x) - y) ** 2)


@jax.jit
def update(params, x, y):
    """One step of gradient descent, as a pytree map over the parameters."""
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - LEARNING_RATE * g, params, grads), value


def main() -> None:
    key = jax.random.key(0)
    data_key, noise_key, init_key = jax.random.split(key, 3)
    x = jax.random.uniform(data_key, (128, 1), minval=-2.0, maxval=2.0)
    y = jnp.sin(2.0 * x) + 0.05 * jax.random.normal(noise_key, x.shape)
    params = init_params(init_key, [1, 32, 32, 1])

    print(f"Training a 1-32-32-1 MLP on y = sin(2x) + noise for {STEPS} steps:")
    start = time.perf_counter()
    for step in range(STEPS):
        params, value = update(params, x, y)
        if step % 50 == 0 or step == STEPS - 1:
            print(f"  step {step:3d}  loss {float(value):.4f}")
    print(f"  ({1e3 * (time.perf_counter() - start):.0f} ms, first call's compile included)")

    print("\nThe jaxpr of the loss:")
    print(jax.make_jaxpr(loss)(params, x, y))

    logging.basicConfig(format="  [log] %(message)s")
    jax.config.update("log_compiles", True)
    fast_loss = jax.jit(loss)
    print("\nThe compile cache: the first call traces, lowers and compiles,")
    start = time.perf_counter()
    first = fast_loss(params, x, y).block_until_ready()
    print(f"  loss = {float(first):.4f}  in {1e3 * (time.perf_counter() - start):.1f} ms")
    print("a second call with new values of the same shapes is a cache hit:")
    start = time.perf_counter()
    second = fast_loss(params, 2 * x, y).block_until_ready()
    print(f"  loss = {float(second):.4f}  in {1e6 * (time.perf_counter() - start):.0f} µs")
    jax.config.update("log_compiles", False)
    eager = loss(params, x, y)
    print(f"Eager (op by op) gives the same value: {float(eager):.4f}")
    assert abs(float(eager) - float(first)) < 1e-5


if __name__ == "__main__":
    main()
