"""jax.example_libraries.optimizers: every optimizer and schedule gives JAX 0.10.2's
parameters (``optimizers_reference.json``, recorded by the same program under JAX)."""

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.autodiff import grad
from modjax.example_libraries import optimizers as o
from modjax.runtime import jit
from modjax.tracecore.tree_util import tree_map, tree_structure

REFERENCE = json.loads((Path(__file__).parent / "optimizers_reference.json").read_text())
MAKERS = {
    "sgd": lambda: o.sgd(o.polynomial_decay(0.1, 5, 0.01)),
    "momentum": lambda: o.momentum(0.1, 0.9),
    "nesterov": lambda: o.nesterov(0.1, 0.9),
    "adagrad": lambda: o.adagrad(0.1),
    "rmsprop": lambda: o.rmsprop(o.exponential_decay(0.1, 2, 0.5)),
    "rmsprop_momentum": lambda: o.rmsprop_momentum(0.1),
    "adam": lambda: o.adam(o.inverse_time_decay(0.1, 2, 0.5, staircase=True)),
    "adamax": lambda: o.adamax(0.1),
    "sm3": lambda: o.sm3(o.piecewise_constant([2, 4], [0.1, 0.05, 0.01])),
}
PARAMS = {"w": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), "b": np.zeros(3, np.float32)}


def loss(q):
    return jnp.sum(q["w"] ** 2 * jnp.arange(1.0, 4.0)) + jnp.sum((q["b"] - 1) ** 2)


@pytest.mark.parametrize("name", MAKERS)
def test_optimizer_matches_jax(name):
    opt = MAKERS[name]()
    state = opt.init_fn(tree_map(jnp.asarray, PARAMS))

    def step(i, s):
        return opt.update_fn(i, grad(loss)(opt.params_fn(s)), s)

    if name != "sm3":  # sm3's state holds the shape as leaves: eager only, as in JAX
        step = jit(step)
    for i in range(6):
        state = step(i, state)
    got = opt.params_fn(state)
    for key, want in REFERENCE["params"][name].items():
        np.testing.assert_allclose(got[key], want, rtol=1e-6, atol=1e-7)


def test_state_packing_norms_and_errors():
    opt = o.adam(0.1)
    state = opt.init_fn({"a": jnp.ones(2), "b": (jnp.zeros(3),)})
    unpacked = o.unpack_optimizer_state(state)
    assert isinstance(unpacked["a"], o.JoinPoint)
    again = o.pack_optimizer_state(pickle.loads(pickle.dumps(unpacked)))
    assert tree_structure(again) == tree_structure(state)
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        opt.update_fn(0, {"a": jnp.ones(2)}, state)
    assert float(o.l2_norm({"x": jnp.array([3.0, 4.0])})) == 5.0
    clipped = o.clip_grads({"x": jnp.array([3.0, 4.0])}, 1.0)
    np.testing.assert_allclose(clipped["x"], [0.6, 0.8], rtol=1e-6)
    assert o.make_schedule(0.5)(7) == 0.5
    with pytest.raises(ValueError, match="one shorter"):
        o.piecewise_constant([1, 2], [0.1])
    with pytest.raises(TypeError):
        o.make_schedule(jnp.ones(2))
