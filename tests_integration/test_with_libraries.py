"""Libraries written against ``jax`` run unchanged on modjax: optax and einops.

They import ``jax`` by name, so this module installs ``modjax.install_jax_alias()``
for its process. optax and einops are test-only dependencies: the ``libs`` hatch
environment installs them (optax without its dependency on the real jax) and runs
this module; elsewhere it is skipped. Training runs are compared with the same
programs under JAX 0.10.2 (``optax_reference.json``, recording script inside).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

# Checked without importing them: optax imports jax, which needs the alias first.
_missing = [name for name in ("optax", "einops") if importlib.util.find_spec(name) is None]
if _missing:
    pytest.skip(
        f"{_missing} not installed (the libs environment has them)", allow_module_level=True
    )
if importlib.util.find_spec("modjax.sharding") is None:
    # optax reads jax.sharding.Sharding when imported; modjax.sharding is issue #13.
    pytest.skip("optax needs jax.sharding, which modjax lacks (issue #13)", allow_module_level=True)
if "jax" not in sys.modules and importlib.util.find_spec("jax") is not None:
    pytest.skip(
        "a real jax is installed here; the libs environment (without it) runs these tests",
        allow_module_level=True,
    )

import modjax  # noqa: E402

modjax.install_jax_alias()

import einops  # noqa: E402
import optax  # noqa: E402
import optax_training  # noqa: E402

# What the libraries got for ``import jax`` (this file never imports jax by name).
jax = sys.modules["jax"]
jnp = jax.numpy

REFERENCE = json.loads((Path(__file__).parent / "optax_reference.json").read_text())


def test_the_libraries_see_modjax():
    assert jax is modjax and jnp is modjax.numpy and sys.modules["jax.numpy"] is jnp
    assert optax.adam.__module__.startswith("optax")


@pytest.mark.parametrize("name", optax_training.OPTIMIZERS)
def test_optimizer_trains_under_jit_as_under_jax(name):
    losses = optax_training.train(jax, optax, name)
    assert losses[-1] < 0.8 * losses[0], losses
    np.testing.assert_allclose(losses, REFERENCE["losses"][name], rtol=1e-4, atol=1e-6)


def _log_softmax(x):
    shifted = x - x.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def test_optax_losses_agree_with_numpy():
    rng = np.random.RandomState(1)
    logits = rng.randn(6, 5).astype(np.float32)
    other = rng.randn(6, 5).astype(np.float32)
    labels = np.array([0, 2, 4, 1, 3, 3])
    onehot = np.eye(5, dtype=np.float32)[labels]
    binary = (other > 0).astype(np.float32)
    close = lambda got, want: np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)  # noqa: E731

    # One compiled program for all of them (eager, each distinct op would compile).
    @jax.jit
    def losses(logits, other):
        return {
            "softmax_ce": optax.softmax_cross_entropy(logits, onehot),
            "softmax_ce_int": optax.softmax_cross_entropy_with_integer_labels(logits, labels),
            "sigmoid_bce": optax.sigmoid_binary_cross_entropy(logits, binary),
            "l2": optax.l2_loss(logits, other),
            "squared": optax.squared_error(logits, other),
            "huber": optax.huber_loss(logits, other, delta=1.0),
            "log_cosh": optax.log_cosh(logits, other),
            "cosine": optax.cosine_similarity(logits, other),
            "hinge": optax.hinge_loss(logits[:, 0], jnp.sign(other[:, 0])),
        }

    got = losses(logits, other)
    delta = np.abs(logits - other)
    norms = np.linalg.norm(logits, axis=-1) * np.linalg.norm(other, axis=-1)
    signs = np.sign(other[:, 0])
    want = {
        "softmax_ce": -(onehot * _log_softmax(logits)).sum(-1),
        "softmax_ce_int": -_log_softmax(logits)[np.arange(6), labels],
        "sigmoid_bce": np.logaddexp(0, logits) - binary * logits,
        "l2": 0.5 * (logits - other) ** 2,
        "squared": (logits - other) ** 2,
        "huber": np.where(delta < 1.0, 0.5 * delta**2, delta - 0.5),
        "log_cosh": np.log(np.cosh(logits - other)),
        "cosine": (logits * other).sum(-1) / norms,
        "hinge": np.maximum(0, 1 - signs * logits[:, 0]),
    }
    assert got.keys() == want.keys()
    for name, value in want.items():
        close(got[name], value)
    # The losses are jax functions: they also run under jit and grad.
    grad = jax.jit(jax.grad(lambda z: optax.softmax_cross_entropy(z, onehot).sum()))(logits)
    probs = np.exp(_log_softmax(logits))
    close(grad, probs - onehot)


X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
EINOPS = {
    "rearrange": (
        lambda x: einops.rearrange(x, "b h w -> w (b h)"),
        lambda x: x.transpose(2, 0, 1).reshape(4, 6),
    ),
    "reduce": (
        lambda x: einops.reduce(x, "b h w -> b w", "max"),
        lambda x: x.max(1),
    ),
    "reduce_mean": (
        lambda x: einops.reduce(x, "b (h h2) w -> b w", "mean", h2=3),
        lambda x: x.mean(1),
    ),
    "repeat": (
        lambda x: einops.repeat(x, "b h w -> b h (w c)", c=2),
        lambda x: np.repeat(x, 2, axis=2),
    ),
}


@pytest.mark.parametrize("name", EINOPS)
def test_einops_eager_jit_and_grad(name):
    fn, reference = EINOPS[name]
    x = jnp.asarray(X)
    eager = fn(x)
    assert isinstance(eager, jax.Array)
    np.testing.assert_allclose(eager, reference(X), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(fn)(x), reference(X), rtol=1e-6)
    weights = np.linspace(-1, 1, reference(X).size, dtype=np.float32).reshape(reference(X).shape)
    grad = jax.grad(lambda x: (fn(x) * weights).sum())(x)
    eps = 1e-2
    bump = np.zeros_like(X)
    bump[1, 2, 3] = eps
    numeric = ((reference(X + bump) - reference(X - bump)) * weights).sum() / (2 * eps)
    np.testing.assert_allclose(grad[1, 2, 3], numeric, rtol=1e-3, atol=1e-4)
