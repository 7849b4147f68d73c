"""Training programs written against ``jax`` and ``optax``, run by real JAX and by modjax.

``test_with_libraries.py`` runs them on modjax (through ``modjax.install_jax_alias()``)
and compares with ``optax_reference.json``, which holds the same runs under JAX 0.10.2
and the script that recorded them. The functions take the ``jax`` and ``optax``
modules as arguments, so this file imports neither (modjax never imports jax by
name; tests_integration/test_layering.py checks it).
"""

from __future__ import annotations

from functools import partial

import numpy as np

STEPS = 40
OPTIMIZERS = ("adam", "adamw_schedule", "chain_clip_adam", "adafactor", "lion", "sgd_momentum")


def optimizers(optax) -> dict:
    """The optimizers under test, by name."""
    return {
        "adam": optax.adam(1e-2),
        "adamw_schedule": optax.adamw(
            optax.warmup_cosine_decay_schedule(0.0, 1e-2, 5, STEPS), weight_decay=1e-3
        ),
        "chain_clip_adam": optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-2)),
        "adafactor": optax.adafactor(1e-2),
        "lion": optax.lion(1e-3),
        "sgd_momentum": optax.sgd(1e-2, momentum=0.9),
    }


def data():
    """A regression problem and an MLP's parameters, from a fixed numpy seed."""
    rng = np.random.RandomState(0)
    x = rng.randn(32, 4).astype(np.float32)
    y = (x @ rng.randn(4, 2) + 0.1 * rng.randn(32, 2)).astype(np.float32)
    params = {
        "w1": (0.5 * rng.randn(4, 8)).astype(np.float32),
        "b1": np.zeros(8, np.float32),
        "w2": (0.5 * rng.randn(8, 2)).astype(np.float32),
        "b2": np.zeros(2, np.float32),
    }
    return x, y, params


def loss(jnp, params, x, y):
    """Mean squared error of a one-hidden-layer tanh MLP."""
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((hidden @ params["w2"] + params["b2"] - y) ** 2)


def train(jax, optax, name: str, steps: int = STEPS) -> list[float]:
    """Train the MLP with optimizer ``name`` under jit; return the loss of every step."""
    jnp = jax.numpy
    optimizer = optimizers(optax)[name]
    x, y, params = data()
    params = jax.tree.map(jnp.asarray, params)
    state = optimizer.init(params)

    @jax.jit
    def step(params, state):
        value, grads = jax.value_and_grad(partial(loss, jnp))(params, x, y)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    losses = []
    for _ in range(steps):
        params, state, value = step(params, state)
        losses.append(float(value))
    return losses


def record(jax, optax) -> dict:
    """Every optimizer's losses (what the reference file holds)."""
    return {name: train(jax, optax, name) for name in OPTIMIZERS}
