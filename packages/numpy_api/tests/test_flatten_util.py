"""jax.flatten_util.ravel_pytree."""

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.autodiff import grad
from modjax.flatten_util import ravel_pytree
from modjax.runtime import jit
from modjax.tracecore.tree_util import tree_structure


def test_ravel_concatenates_leaves_and_unravel_restores_them():
    tree = {"a": jnp.arange(6.0).reshape(2, 3), "b": (jnp.ones(2), 4.0)}
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (9,) and flat.dtype == np.float32
    np.testing.assert_array_equal(flat, [0, 1, 2, 3, 4, 5, 1, 1, 4])
    back = unravel(flat * 2)
    assert tree_structure(back) == tree_structure(tree)
    np.testing.assert_array_equal(back["a"], 2 * np.arange(6.0).reshape(2, 3))
    assert back["b"][1].shape == ()


def test_mixed_dtypes_promote_and_unravel_casts_back():
    flat, unravel = ravel_pytree({"i": jnp.ones(2, jnp.int32), "f": 1.5})
    assert flat.dtype == np.float32
    np.testing.assert_array_equal(flat, [1.5, 1, 1])  # keys in sorted order
    back = unravel(flat)
    assert back["i"].dtype == np.int32 and back["f"].dtype == np.float32
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(jnp.ones(3, jnp.int32))
    with pytest.raises(ValueError, match="shape"):
        unravel(jnp.ones(4))


def test_one_dtype_unravel_keeps_the_given_dtype_and_empty_trees():
    _, unravel = ravel_pytree([jnp.ones(2, jnp.float32)])
    assert unravel(jnp.ones(2, jnp.int32))[0].dtype == np.int32
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == np.float32 and unravel(flat) == {}


def test_ravel_under_jit_and_grad():
    params = {"w": jnp.arange(4.0).reshape(2, 2), "b": jnp.ones(2)}
    flat, unravel = ravel_pytree(params)

    def loss(vector):
        p = unravel(vector)
        return jnp.sum(p["w"] ** 2) + jnp.sum(p["b"])

    g = jit(grad(loss))(flat)
    np.testing.assert_allclose(g, [1, 1, 0, 2, 4, 6])
    again = jit(lambda p: ravel_pytree(p)[0])(params)
    np.testing.assert_array_equal(again, flat)


def test_weak_types_as_jax():
    # JAX 0.10.2: a vector of weakly typed leaves alone is weak; promotion makes it strong.
    flat, unravel = ravel_pytree(1.0)
    assert flat.weak_type and unravel(flat).weak_type
    assert not ravel_pytree({"a": 1.0, "b": jnp.ones(2)})[0].weak_type
    flat, unravel = ravel_pytree([1.0, 2])
    assert not flat.weak_type and [x.dtype for x in unravel(flat)] == [np.float32, np.int32]
