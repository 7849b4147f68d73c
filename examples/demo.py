"""modjax demo: jit a small NumPy-style program, look inside it, and call it again.

``import modjax as jax`` runs JAX-style code: the first call of a jitted
function traces it into a jaxpr, lowers that to StableHLO and compiles it with
XLA; later calls with arguments of the same shapes and dtypes go straight to
the compiled executable (the log line below appears only once).

Run it with ``hatch run demo`` (or ``python examples/demo.py`` in the workspace).
"""

from __future__ import annotations

import logging
import time

import numpy as np

import modjax as jax
import modjax.numpy as jnp


def predict(w, b, x):
    """A dense layer with a tanh."""
    return jnp.tanh(x @ w + b)


def loss(w, b, x, y):
    """Mean squared error of the layer's predictions."""
    return jnp.mean((predict(w, b, x) - y) ** 2)


def main() -> None:
    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.normal(size=(3, 2)).astype(np.float32))
    b = jnp.zeros(2)
    x = jnp.asarray(rng.normal(size=(8, 3)).astype(np.float32))
    y = jnp.ones((8, 2))
    w_half = w * 0.5
    eager = loss(w_half, b, x, y)

    print("The jaxpr of loss:")
    print(jax.make_jaxpr(loss)(w, b, x, y))

    logging.basicConfig(format="  [log] %(message)s")
    jax.config.update("log_compiles", True)
    fast_loss = jax.jit(loss)
    print("\nIts StableHLO:")
    print(fast_loss.lower(w, b, x, y).as_text())

    print("First call (traces, lowers, compiles):")
    start = time.perf_counter()
    first = fast_loss(w, b, x, y)
    first.block_until_ready()
    print(f"  loss = {first}  in {1e3 * (time.perf_counter() - start):.1f} ms")

    print("Second call, new values of the same shapes (a cache hit):")
    start = time.perf_counter()
    second = fast_loss(w_half, b, x, y)
    second.block_until_ready()
    print(f"  loss = {second}  in {1e6 * (time.perf_counter() - start):.0f} µs")

    print(f"\nEager (op by op) gives the same value: {eager}")
    np.testing.assert_allclose(np.asarray(second), np.asarray(eager), rtol=1e-6)


if __name__ == "__main__":
    main()
