"""Collectives over vmapped named axes through the whole stack: jit, grad, nested vmaps.

Values are checked against numpy loops over the members and closed-form
gradients (the gradient of the sum over members, JAX's convention: ``psum``
transposes to ``psum``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modjax as jax
import modjax.numpy as jnp
from modjax import lax

SETTINGS = settings(max_examples=8, derandomize=True, deadline=None)
XS = np.array([1.0, 2.0, 3.0], np.float32)
RING = [(0, 1), (1, 2), (2, 0)]


def _grads(f):
    """Return vmap(grad(f)) and grad(sum of vmap(f)), both over axis "i"."""
    inner = jax.vmap(jax.grad(f), axis_name="i")
    outer = jax.grad(lambda v: jax.vmap(f, axis_name="i")(v).sum())
    return inner, outer


# f, and the gradient of sum_i f(x)_i with respect to x, in numpy.
CASES = {
    "psum": (lambda x: lax.psum(x, "i") * x, lambda x: np.full_like(x, 2 * x.sum())),
    "pmean": (
        lambda x: jnp.sin(lax.pmean(x * x, "i")),
        lambda x: len(x) * np.cos(np.mean(x * x)) * 2 * x / len(x),
    ),
    "all_gather": (
        lambda x: (lax.all_gather(x, "i") * jnp.arange(1.0, 4.0)).sum() * x,
        lambda x: np.arange(1.0, 4.0) * x.sum() + (np.arange(1.0, 4.0) * x).sum(),
    ),
    "ppermute": (
        lambda x: lax.ppermute(x * x, "i", RING) * jnp.cos(x),
        lambda x: 2 * x * np.cos(np.roll(x, -1)) - np.roll(x, 1) ** 2 * np.sin(x),
    ),
    "psum_scatter": (
        lambda x: lax.psum_scatter(x * x * jnp.ones(3), "i") * 2.0,
        lambda x: 12 * x,  # every member's output is 2 * sum_k x_k**2
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_compositions_match_closed_forms(name):
    f, want = CASES[name]
    inner, outer = _grads(f)
    expected = want(XS.astype(np.float64))
    np.testing.assert_allclose(inner(XS), expected, rtol=1e-5)
    np.testing.assert_allclose(outer(XS), expected, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(inner)(XS), expected, rtol=1e-5)


def test_grad_of_all_to_all_and_pmax_errors():
    def f(x):  # member i sends x[j] * w[j] to member j
        return (lax.all_to_all(x * jnp.arange(1.0, 4.0), "i", 0, 0) * x).sum()

    xs = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    got = jax.grad(lambda v: jax.vmap(f, axis_name="i")(v).sum())(xs)
    # sum_j sum_i x[i, j] w[j] x[j, i]: d/dx[a, b] = w[b] x[b, a] + w[a] x[b, a].
    w = np.arange(1.0, 4.0)
    np.testing.assert_allclose(got, (w[None, :] + w[:, None]) * xs.T, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(f), axis_name="i")(xs), got, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'pmax'"):
        jax.vmap(jax.grad(lambda x: lax.pmax(x, "i")), axis_name="i")(XS)


def test_jit_inside_and_outside_vmap():
    f = lambda x: lax.psum(x, "i") + lax.axis_index("i")  # noqa: E731
    want = XS.sum() + np.arange(3)
    np.testing.assert_allclose(jax.vmap(jax.jit(f), axis_name="i")(XS), want)
    np.testing.assert_allclose(jax.jit(jax.vmap(f, axis_name="i"))(XS), want)
    g = lambda x: lax.ppermute(x, "i", [(0, 1)])  # noqa: E731 - partial: zeros elsewhere
    np.testing.assert_array_equal(jax.jit(jax.vmap(g, axis_name="i"))(XS), [0.0, 1.0, 0.0])
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.jit(lambda x: lax.psum(x, "i"))(XS)


def test_dtypes_through_xla():
    flags = np.array([True, False, True])
    out = jax.jit(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i"))(flags)
    assert out.dtype == np.int32 and out.tolist() == [2, 2, 2]
    ints = np.arange(3, dtype=np.int32)
    out = jax.vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(ints)
    assert out.dtype == np.float32 and out.tolist() == [1.0, 1.0, 1.0]
    for fn, want in ((lax.pmax, [True] * 3), (lax.pmin, [False] * 3)):
        out = jax.jit(jax.vmap(lambda v, fn=fn: fn(v, "i"), axis_name="i"))(flags)
        assert out.tolist() == want
    assert jax.jit(jax.vmap(lambda v: lax.pmin(v, "i"), axis_name="i"))(ints).tolist() == [0] * 3


@SETTINGS
@given(st.sampled_from([1, 3]), st.sampled_from([1, 3]), st.sampled_from([(), (2,)]))
def test_nested_vmaps_with_two_names(n_i, n_j, tail):
    x = (np.arange(n_i * n_j * int(np.prod(tail)), dtype=np.float32) % 5).reshape(n_i, n_j, *tail)

    def f(v):
        total = lax.psum(v, ("i", "j"))
        rows = lax.pmax(v, "j")
        flat = lax.axis_index(("i", "j"))
        ring = [(k, (k + 1) % (n_i * n_j)) for k in range(n_i * n_j)]
        return total, rows, flat, lax.ppermute(v, ("i", "j"), ring), lax.all_gather(v, "i")

    run = jax.jit(jax.vmap(jax.vmap(f, axis_name="j"), axis_name="i"))
    total, rows, flat, rolled, gathered = run(x)
    np.testing.assert_allclose(total, np.broadcast_to(x.sum((0, 1)), x.shape))
    np.testing.assert_allclose(rows, np.broadcast_to(x.max(1, keepdims=True), x.shape))
    np.testing.assert_array_equal(flat, np.arange(n_i * n_j).reshape(n_i, n_j))
    flat_x = x.reshape(n_i * n_j, *tail)
    np.testing.assert_allclose(rolled, np.roll(flat_x, 1, axis=0).reshape(x.shape))
    want = np.broadcast_to(np.moveaxis(x, 0, 1)[:, None], (n_j, n_i, n_i, *tail))
    np.testing.assert_allclose(gathered, np.moveaxis(want, 0, 1))
