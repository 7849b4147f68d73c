"""``jax.experimental.xla_metadata.set_xla_metadata`` beyond the text compared with JAX
0.10.2's in ``test_jax_texts.py`` (case ``xla_metadata``): jit's cache, transformations."""

from __future__ import annotations

import numpy as np

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental.xla_metadata import set_xla_metadata


def _sine(x):
    return jnp.sin(x)


def test_a_jitted_function_is_traced_again_under_other_metadata():
    f = jax.jit(_sine)
    plain = f.lower(1.0).as_text()
    with set_xla_metadata(stage="one"):
        tagged = f.lower(1.0).as_text()
        np.testing.assert_allclose(f(1.0), np.sin(1.0), rtol=1e-6)
    assert "frontend_attributes" not in plain and 'stage = "one"' in tagged
    assert f.lower(1.0).as_text() == plain


def test_decorated_functions_and_their_methods_run_in_the_block():
    @set_xla_metadata(k="v")
    @jax.jit
    def g(x):
        return jnp.cos(x)

    assert 'k = "v"' in g.lower(1.0).as_text()
    np.testing.assert_allclose(g(0.0), 1.0)


def test_values_are_unchanged_under_grad_vmap_and_eagerly():
    tagged = lambda x: set_xla_metadata(jnp.sin(x), tag="t")  # noqa: E731
    np.testing.assert_allclose(jax.grad(tagged)(1.0), np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(tagged)(jnp.ones(2)), np.sin(np.ones(2)), rtol=1e-6)
    tree = set_xla_metadata({"a": jnp.ones(2), "b": (3.0,)}, tag=True)
    assert tree["a"].tolist() == [1.0, 1.0] and float(tree["b"][0]) == 3.0
    with set_xla_metadata():  # no pairs: nothing changes
        assert "frontend" not in jax.jit(_sine).lower(1.0).as_text()
