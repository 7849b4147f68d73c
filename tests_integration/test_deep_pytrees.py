"""jit, grad and vmap take pytrees nested 800 deep, as JAX does."""

import numpy as np
import pytest

import modjax
import modjax.numpy as jnp
from modjax import tree_util

DEPTH = 800


def nest(leaf, depth=DEPTH, kind="list"):
    for _ in range(depth):
        leaf = [leaf] if kind == "list" else {"a": leaf}
    return leaf


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_jit_grad_vmap_of_deep_trees(kind):
    x = nest(jnp.arange(3.0), kind=kind)
    out = modjax.jit(lambda t: tree_util.tree_map(lambda v: v * 2.0, t))(x)
    assert tree_util.tree_structure(out) == tree_util.tree_structure(x)
    np.testing.assert_allclose(tree_util.tree_leaves(out)[0], [0.0, 2.0, 4.0])
    g = modjax.grad(lambda t: jnp.sum(tree_util.tree_leaves(t)[0] ** 2))(x)
    np.testing.assert_allclose(tree_util.tree_leaves(g)[0], [0.0, 2.0, 4.0])
    v = modjax.vmap(lambda t: tree_util.tree_leaves(t)[0] + 1.0)(x)
    np.testing.assert_allclose(v, [1.0, 2.0, 3.0])
