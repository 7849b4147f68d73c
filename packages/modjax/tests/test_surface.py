"""The jax-style surface: names where JAX users look for them, and a whole jitted call."""

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp

SURFACE = [
    "jit",
    "make_jaxpr",
    "device_put",
    "device_get",
    "devices",
    "local_devices",
    "device_count",
    "block_until_ready",
    "config",
    "tree",
    "tree_util",
    "numpy",
    "lax",
    "ShapeDtypeStruct",
    "eval_shape",
    "Array",
    "dtypes",
    "errors",
    "default_backend",
]


@pytest.mark.parametrize("name", SURFACE)
def test_top_level_names(name):
    assert getattr(jax, name) is not None


def test_submodules_mirror_jax():
    assert jax.tree.map(lambda x: x + 1, {"a": 1}) == {"a": 2}
    assert jax.tree_util.tree_leaves([1, (2, None)]) == [1, 2]
    assert jax.dtypes.canonicalize_dtype(np.float64) == np.float32
    assert issubclass(jax.errors.TracerBoolConversionError, TypeError)
    import modjax.core
    import modjax.lax

    assert modjax.core.ShapedArray((2,), np.float32).shape == (2,)
    assert modjax.lax is jax.lax


def test_config_accepts_jax_spelling():
    assert jax.config.jax_enable_x64 is False
    jax.config.update("jax_enable_x64", True)
    try:
        assert jax.config.enable_x64 is True
    finally:
        jax.config.update("jax_enable_x64", False)


def test_jit_end_to_end():
    @jax.jit
    def predict(w, x):
        return jnp.tanh(x @ w).sum()

    w = jnp.ones((3, 2), jnp.float32)
    x = jnp.arange(6.0).reshape(2, 3)
    out = predict(w, x)
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(
        out, np.tanh(np.arange(6.0).reshape(2, 3) @ np.ones((3, 2))).sum(), rtol=1e-6
    )
    jaxpr = jax.make_jaxpr(predict)(w, x)
    assert "jit" in str(jaxpr) and "tanh" in str(jaxpr)


def test_eval_shape_and_device_put():
    shape = jax.eval_shape(lambda x: x.sum(0), jax.ShapeDtypeStruct((4, 5), jnp.float32))
    assert shape.shape == (5,) and shape.dtype == np.float32
    x = jax.device_put(np.arange(3))
    assert isinstance(x, jax.Array) and x.devices() == {jax.devices()[0]}
    assert jax.device_get(x).tolist() == [0, 1, 2]
