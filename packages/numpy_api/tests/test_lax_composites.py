"""lax's composite functions (``reciprocal``, ``select``, ``collapse``, ``broadcast_to_rank``,
``broadcast_shapes``, ``batch_matmul``, ``split``, ``tile``, ``stack``, ``unstack``) against
numpy, eagerly and under jit, with JAX's errors; gradients and vmap through them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff import grad
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11.5


def both(fn, *args):
    """``fn(*args)`` eagerly and under jit, as numpy values (trees of lists kept)."""
    return fn(*args), jit(fn)(*args)


def check(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@given(st.sampled_from([(0, None), (1, 3), (-2, None), (0, 2), (1, 1), (0, 0)]))
def test_collapse_merges_a_range_of_dimensions(dims):
    start, stop = dims
    shape = X.shape
    s = start % 3
    e = 3 if stop is None else stop
    expected = X.reshape(shape[:s] + (int(np.prod(shape[s:e])),) + shape[e:])
    for got in both(lambda x: lax.collapse(x, start, stop), X):
        check(got, expected)
    with pytest.raises(ValueError, match="collapse"):
        lax.collapse(X, 2, 1)


@given(st.sampled_from([(2, 1, 3), (1, 1, 1), (0, 2, 1)]))
def test_tile_against_numpy(reps):
    for got in both(lambda x: lax.tile(x, reps), X):
        check(got, np.tile(X, reps))
    with pytest.raises(TypeError, match="reps length"):
        lax.tile(X, (2,))


@given(st.sampled_from([[1, 2], [3, 0], [0, 3]]), st.sampled_from([0, 1]))
def test_split_and_its_inverse(sizes, axis):
    y = X[0] if axis == 0 else X[0].T
    pieces = lax.split(y, sizes, axis=axis)
    expected = np.split(y, np.cumsum(sizes)[:-1], axis=axis)
    assert len(pieces) == len(expected)
    for got, want in zip(pieces, expected, strict=True):
        check(got, want)
    for got, want in zip(jit(lambda v: lax.split(v, sizes, axis))(y), expected, strict=True):
        check(got, want)
    with pytest.raises(ValueError, match="Sum of sizes 2"):
        lax.split(y, [1, 1], axis=axis)


@given(st.sampled_from([0, 1, -1, 3, -4]))
def test_stack_and_unstack(axis):
    parts = [X, 2 * X]
    for got in both(lambda a, b: lax.stack([a, b], axis), *parts):
        check(got, np.stack(parts, axis))
    unstack_axis = axis if -3 <= axis < 3 else 0
    slices = lax.unstack(X, unstack_axis)
    assert isinstance(slices, tuple)
    for got, want in zip(slices, np.moveaxis(X, unstack_axis, 0), strict=True):
        check(got, want)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.stack(parts, 4)
    with pytest.raises(ValueError, match="at least one"):
        lax.stack([])


def test_select_reciprocal_broadcasts_and_batch_matmul():
    pred = X > 0
    for got in both(lambda p, x: lax.select(p, x, -x), pred, X):
        check(got, np.where(pred, X, -X))
    check(lax.select(True, X, -X), X)
    for got in both(lax.reciprocal, X + 0.25):
        check(got, 1 / (X + 0.25))
    with pytest.raises(TypeError):
        lax.reciprocal(np.arange(3, dtype=np.int32))
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))
    assert lax.broadcast_to_rank(X, 5).shape == (1, 1, 2, 3, 4)
    assert lax.broadcast_to_rank(X, 1).shape == X.shape
    b = np.arange(40, dtype=np.float32).reshape(2, 4, 5) / 10
    for got in both(lax.batch_matmul, X, b):
        check(got, np.matmul(X, b))
    check(lax.batch_matmul(X[0], b[0]), X[0] @ b[0])
    with pytest.raises(TypeError, match="batch dimensions to have the same shape"):
        lax.batch_matmul(X, b[:1])


def test_gradients_and_vmap_go_through_the_composites():
    def loss(x):
        a, b = lax.split(x, [1, 2], axis=1)
        tiled = lax.tile(a, (1, 2, 1))
        return (lax.collapse(lax.stack([tiled, b], 0), 0, 2) ** 2).sum()

    check_grads(loss, (X.astype(np.float64) / 10,), order=1, modes=("fwd", "rev"))
    g = grad(lambda x: lax.unstack(x, 2)[1].sum())(X)
    expected = np.zeros_like(X)
    expected[:, :, 1] = 1
    check(g, expected)
    out = vmap(lambda x: lax.tile(x, (2, 1)))(X)
    check(out, np.stack([np.tile(x, (2, 1)) for x in X]))
