"""``jax.experimental.layout``: ``with_layout_constraint`` under jit, grad and vmap.

Its jaxpr and StableHLO are compared with JAX 0.10.2's in ``test_jax_texts.py``
(case ``layout_constraint``); here: values, transformations and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental.layout import Format, Layout, with_layout_constraint

COLUMN_MAJOR = Layout(major_to_minor=(1, 0))
X = jnp.arange(12.0).reshape(3, 4)


@jax.jit
def _constrained(x):
    return with_layout_constraint(x * 2, COLUMN_MAJOR)


def test_values_are_unchanged_under_jit_grad_and_vmap():
    np.testing.assert_array_equal(_constrained(X), np.arange(12.0).reshape(3, 4) * 2)
    grad = jax.grad(lambda x: jnp.sum(_constrained(x) ** 2))(X)
    np.testing.assert_array_equal(grad, 8 * np.arange(12.0).reshape(3, 4))
    rows = jax.jit(jax.vmap(lambda r: with_layout_constraint(r[None] * 2, COLUMN_MAJOR)))(X)
    np.testing.assert_array_equal(rows, 2 * np.arange(12.0).reshape(3, 1, 4))
    stacked = jnp.stack([X, X])
    batched = jax.make_jaxpr(jax.vmap(lambda m: with_layout_constraint(m, COLUMN_MAJOR)))(stacked)
    (eqn,) = [e for e in batched.eqns if e.primitive.name == "layout_constraint"]
    assert eqn.params["layout"].major_to_minor == (0, 2, 1)  # JAX's order for a vmapped layout


def test_pytrees_take_a_prefix_of_layouts():
    tree = {"a": X, "b": (X[0], X[:, :2])}
    layouts = {"a": COLUMN_MAJOR, "b": (Layout((0,)), COLUMN_MAJOR)}
    out = jax.jit(lambda t: with_layout_constraint(t, layouts))(tree)
    assert jax.tree.all(jax.tree.map(lambda u, v: bool((u == v).all()), out, tree))
    with pytest.raises(ValueError, match="must be of type `Layout`"):
        jax.jit(lambda x: with_layout_constraint(x, Format(None)))(X)


def test_eager_default_layout_is_kept_and_others_are_refused():
    assert with_layout_constraint(X, Layout(major_to_minor=(0, 1))) is X
    with pytest.raises(NotImplementedError, match="outside jit"):
        with_layout_constraint(X, COLUMN_MAJOR)
    with pytest.raises(ValueError, match="Length of major_to_minor and the rank"):
        jax.jit(lambda x: with_layout_constraint(x, Layout(major_to_minor=(0,))))(X)
    with pytest.raises(ValueError, match="Sharding has to be concrete"):
        Format(COLUMN_MAJOR)
