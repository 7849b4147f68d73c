"""``lax.composite``: the decomposition's values eagerly and under jit, ``stablehlo.composite``
in the lowering with JAX's attributes, jaxpr text; derivatives and vmap through the
decomposition (JAX raises for both: a deliberate difference)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import grad, jvp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.core import UnexpectedTracerError

X = np.array([0.0, 0.5, 1.0], np.float32)


@functools.partial(lax.composite, name="my.tangent", version=1)
def tangent(x, scale=1.0):
    return scale * jnp.sin(x) / jnp.cos(x)


def test_values_are_the_decompositions():
    np.testing.assert_allclose(tangent(X), np.tan(X), rtol=1e-6)
    np.testing.assert_allclose(jit(lambda x: tangent(x, scale=2.0))(X), 2 * np.tan(X), rtol=1e-6)
    pair = lax.composite(lambda x, y: {"a": x + y, "b": (x, y)}, "my.pair")
    out = pair(X, X)
    np.testing.assert_array_equal(out["a"], 2 * X)
    np.testing.assert_array_equal(out["b"][1], X)
    assert tangent.__name__ == "tangent"


def test_jaxpr_and_lowering_are_jaxs():
    text = str(make_jaxpr(lambda x: tangent(x, scale=2.0))(X))
    assert "composite[" in text and "name=my.tangent" in text and "version=1" in text
    assert "attributes=(('scale', (2.0,), PyTreeDef(*)),)" in text
    hlo = jit(lambda x: tangent(x, scale=2.0)).lower(X).as_text()
    assert (
        'stablehlo.composite "my.tangent" %arg0 {composite_attributes = '
        "{scale = 2.000000e+00 : f64}, decomposition = @my.tangent, version = 1 : i32}"
    ) in hlo
    assert "func.func private @my.tangent" in hlo


def test_attribute_kinds_lower():
    f = lax.composite(lambda x, **kw: x + 1, "my.attrs")
    hlo = (
        jit(
            lambda x: f(
                x, n=3, flag=True, s="s", arr=np.array([1, 2], np.int32), none=None, seq=(1.0, 2)
            )
        )
        .lower(X)
        .as_text()
    )
    for piece in (
        "n = 3 : i64",
        "flag = true",
        's = "s"',
        "arr = dense<[1, 2]> : tensor<2xi32>",
        "seq = [1.000000e+00, 2]",
    ):
        assert piece in hlo, piece
    assert "none" not in hlo
    np.testing.assert_array_equal(f(X, arr=jnp.arange(2)), X + 1)  # a device array, by value


def test_tracer_attributes_are_refused():
    with pytest.raises(UnexpectedTracerError, match="Tracer as an attribute"):
        jit(lambda x, s: tangent(x, scale=s))(X, 2.0)


def test_derivatives_and_vmap_go_through_the_decomposition():
    g = grad(lambda x: tangent(x).sum())(X)
    np.testing.assert_allclose(g, 1 / np.cos(X) ** 2, rtol=1e-5)
    _, t = jvp(tangent, (X,), (X,))
    np.testing.assert_allclose(t, X / np.cos(X) ** 2, rtol=1e-5)
    out = vmap(lambda x: tangent(x, scale=3.0))(X[:, None])
    np.testing.assert_allclose(out[:, 0], 3 * np.tan(X), rtol=1e-6)
    np.testing.assert_allclose(
        jit(grad(lambda x: tangent(x, scale=2.0).sum()))(X), 2 / np.cos(X) ** 2, rtol=1e-5
    )
