"""Operators, methods and basic indexing of Arrays and tracers (registered by modjax.numpy)."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

X = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
XI = np.arange(1, 7, dtype=np.int32).reshape(2, 3)


# --- indexing -------------------------------------------------------------------------------------


def _index_strategy(shape):
    """Basic indices for ``shape``: in-range ints, slices (any step), None, one Ellipsis."""

    def item(size):
        ints = st.integers(-size, size - 1) if size else st.nothing()
        bound = st.none() | st.integers(-size - 2, size + 2)
        step = st.none() | st.sampled_from([1, 2, 3, -1, -2])
        slices = st.builds(slice, bound, bound, step)
        return ints | slices

    @st.composite
    def index(draw):
        items = [draw(item(size)) for size in shape[: draw(st.integers(0, len(shape)))]]
        for _ in range(draw(st.integers(0, 2))):
            items.insert(draw(st.integers(0, len(items))), None)
        if draw(st.booleans()):
            items.insert(draw(st.integers(0, len(items))), Ellipsis)
        return tuple(items) if len(items) != 1 or draw(st.booleans()) else items[0]

    return index()


@given(data=st.data())
def test_basic_indexing_matches_numpy(data):
    shape = data.draw(st.sampled_from([(5,), (2, 3), (3, 0, 4), (4, 5)]))
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    idx = data.draw(_index_strategy(shape))
    expected = x[idx]
    for got in (jnp.asarray(x)[idx], jit(lambda v: v[idx])(x)):
        assert got.shape == expected.shape
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_indexing_lowers_to_slice_rev_squeeze_broadcast():
    text = str(make_jaxpr(lambda v: v[None, ::-1, 1])(X))
    for prim in ("slice", "rev", "squeeze", "broadcast_in_dim"):
        assert prim in text
    assert str(make_jaxpr(lambda v: v[...])(X)).count("=") == 0  # nothing to do


def test_out_of_range_static_indices_clamp():
    assert int(jnp.arange(3)[10]) == 2
    assert int(jnp.arange(3)[-10]) == 0
    assert float(jnp.asarray(X)[0, 10]) == 3.0


def test_index_errors():
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x[[0, 1]]
    with pytest.raises(IndexError, match="Too many indices"):
        x[1, 2, 3]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(TypeError, match="integer or boolean"):
        x[1.0]
    with pytest.raises(TypeError, match="string"):
        x["a"]
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0


def test_scalar_array_indices():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(x[np.int32(1)]), X[1])
    np.testing.assert_array_equal(np.asarray(x[jnp.int32(1)]), X[1])


# --- operators -------------------------------------------------------------------------------

BINARY_OPERATORS = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
    operator.pow, operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
]  # fmt: skip
INT_OPERATORS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


@pytest.mark.parametrize("op", BINARY_OPERATORS + INT_OPERATORS, ids=lambda op: op.__name__)
def test_binary_operators_on_arrays_and_tracers(op):
    a = XI if op in INT_OPERATORS else X
    b = (a[::-1] % 3 + 1).astype(a.dtype)
    for lhs, rhs in [(a, b), (a, 2), (2, a)]:
        expected = op(np.asarray(lhs), np.asarray(rhs))
        jl = jnp.asarray(lhs) if isinstance(lhs, np.ndarray) else lhs
        jr = jnp.asarray(rhs) if isinstance(rhs, np.ndarray) else rhs
        eager = op(jl, jr)
        traced = jit(lambda u, v: op(u, v))(jl, jr)
        for got in (eager, traced):
            np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
            assert got.dtype == (np.bool_ if expected.dtype == np.bool_ else a.dtype)


def test_unary_operators_and_matmul():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(-x), -X)
    np.testing.assert_array_equal(np.asarray(+x), X)
    np.testing.assert_array_equal(np.asarray(abs(-x)), X)
    np.testing.assert_array_equal(np.asarray(~jnp.asarray(XI)), ~XI)
    np.testing.assert_allclose(np.asarray(x @ x.T), X @ X.T)
    np.testing.assert_allclose(np.asarray(jit(lambda v: v @ v.T)(x)), X @ X.T)
    q, r = divmod(jnp.arange(5), 3)
    assert q.tolist() == [0, 0, 0, 1, 1] and r.tolist() == [0, 1, 2, 0, 1]
    with pytest.raises(TypeError):
        _ = ~x  # bitwise not of floats, as in JAX


def test_methods_and_properties():
    x = jnp.asarray(X)
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert x.reshape(3, 2).shape == (3, 2) and x.reshape((6,)).shape == (6,)
    assert x.reshape(-1).shape == (6,)
    assert x.astype(jnp.int8).dtype == np.int8
    assert float(x.sum()) == 21.0 and x.sum(axis=0).tolist() == [5.0, 7.0, 9.0]
    assert float(x.mean()) == 3.5 and float(x.max()) == 6.0 and float(x.min()) == 1.0
    assert float(x.prod()) == 720.0
    assert int(x.argmax()) == 5 and int(x.argmin()) == 0
    assert bool(x.all()) and bool(x.any())
    assert x.transpose().shape == (3, 2) and x.transpose(1, 0).shape == (3, 2)
    assert x.ravel().shape == (6,) and x.flatten().shape == (6,)
    assert x[None].squeeze().shape == (2, 3)
    assert x.clip(2, 4).tolist() == [[2.0, 2.0, 3.0], [4.0, 4.0, 4.0]]
    np.testing.assert_allclose(float(x.var()), X.var(), rtol=1e-6)
    np.testing.assert_allclose(float(x.std()), X.std(), rtol=1e-6)

    def traced(v):
        return v.T.sum(axis=1) + v.mean() + v.reshape(3, 2)[:, 0].max() + v.astype(int).min()

    np.testing.assert_allclose(np.asarray(jit(traced)(x)), np.asarray(traced(x)))


def test_operators_defer_for_unknown_types():
    x = jnp.asarray(X)
    for bad in ("a", None, [1, 2, 3], (1, 2, 3), object()):
        with pytest.raises(TypeError):
            x + bad
    assert (x == "a") is False
