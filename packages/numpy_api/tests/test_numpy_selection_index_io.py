"""modjax.numpy's selection and placement (``choose``, ``compress``, ``extract``, ``place``,
``put``, ``fill_diagonal``), ``insert``/``delete``, ``packbits``/``unpackbits``, the index tricks
(``r_``, ``c_``, ``ravel_multi_index``, ``unravel_index``, ``mask_indices``) and the numpy-backed
printing and I/O helpers.

Compared with numpy eagerly and under jit, dtypes included. Where JAX departs from numpy the
expected values are JAX 0.10's, written out here: positions past an axis are clamped by
``insert``, ``put`` (``mode=None``) and ``unravel_index`` where numpy raises;
``size=``/``fill_value=`` pad ``compress``/``extract``; ``unpackbits`` with ``-count`` past
the end gives an empty axis; results are 32-bit where numpy's are 64-bit; the placing
functions need ``inplace=False``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy_api_checks import both, check

import modjax.numpy as jnp
from modjax.autodiff import grad
from modjax.batching import vmap
from modjax.runtime import Array, jit
from modjax.tracecore import dtypes
from modjax.tracecore.core import ConcretizationTypeError

bools4 = st.lists(st.booleans(), min_size=4, max_size=4)
bools6 = st.lists(st.booleans(), min_size=6, max_size=6)
# XLA on CPU flushes subnormals to zero; numpy keeps them.
finite = st.floats(-2.0, 2.0, width=32, allow_subnormal=False)


def x32(dtype):
    """numpy's dtype as modjax gives it with x64 off."""
    return {"int64": np.int32, "uint64": np.uint32, "float64": np.float32}.get(
        np.dtype(dtype).name, dtype
    )


# --- choose ---------------------------------------------------------------------------------------

CHOICES = [
    np.arange(3, dtype=np.int8) * 10,
    np.full((2, 3), -1.5, np.float32),
    np.float32(7.0),
]


@given(
    st.lists(st.integers(0, 2), min_size=6, max_size=6),
    st.sampled_from(["raise", "wrap", "clip"]),
    st.integers(-5, 7),
)
def test_choose_against_numpy(idx, mode, corner):
    a = np.array(idx, np.int32).reshape(2, 3)
    if mode != "raise":
        a[0, 0] = corner  # maybe out of range: wrapped or clipped
    want = np.choose(a, CHOICES, mode=mode)
    results = (
        [jnp.choose(a, CHOICES)]
        if mode == "raise"
        else both(lambda a: jnp.choose(a, CHOICES, mode=mode), a)
    )
    for got in results:
        check(got, want, np.float32)  # the choices' promoted dtype


def test_choose_scalar_and_integer_choices():
    check(jnp.choose(np.int32(1), [np.int32(4), np.int32(5)]), np.array(5, np.int32), np.int32)
    a = np.array([2, 0, 1], np.uint8)
    choices = [np.arange(3, dtype=np.int16) + 10 * k for k in range(3)]
    check(jnp.choose(a, choices), np.choose(a, choices), np.int16)


def test_choose_errors():
    a = np.array([0, 1, 0], np.int32)
    with pytest.raises(ConcretizationTypeError, match="mode='raise'"):
        jit(lambda a: jnp.choose(a, CHOICES))(a)
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(np.array([0, 3], np.int32), CHOICES)
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(np.array([-1], np.int32), CHOICES)
    with pytest.raises(ValueError, match="not understood"):
        jnp.choose(a, CHOICES, mode="drop")
    with pytest.raises(ValueError, match="must be integer typed"):
        jnp.choose(a.astype(np.float32), CHOICES)
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.choose(a, CHOICES, out=np.zeros(3))


def test_choose_under_vmap():
    a = np.array([[0, 1, 5], [-1, 2, 0]], np.int32)
    got = vmap(lambda a: jnp.choose(a, CHOICES, mode="wrap"))(a)
    check(got, np.stack([np.choose(row, CHOICES, mode="wrap") for row in a]), np.float32)


# --- compress, extract ----------------------------------------------------------------------------


@given(bools4, st.sampled_from([None, 0, 1, -1]))
def test_compress_against_numpy(cond, axis):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    cond = np.array(cond)
    c = cond[:3] if axis == 0 else cond
    check(jnp.compress(c, a, axis=axis), np.compress(c, a, axis=axis), np.float32)
    # A nonzero integer condition is True.
    ci = c.astype(np.int32) * np.arange(-2, -2 + c.size, dtype=np.int32)
    check(jnp.compress(ci, a, axis=axis), np.compress(ci, a, axis=axis), np.float32)


def test_compress_condition_longer_or_shorter_than_axis():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    # Trailing False past the axis is allowed; a shorter condition ignores the rest.
    long = np.array([True, False, True, False, False])
    check(jnp.compress(long, a, axis=1), np.compress(long, a, axis=1), np.int32)
    check(jnp.compress(np.array([False, True]), a, axis=1), a[:, 1:2], np.int32)
    check(jnp.compress(np.array([False, False]), a, axis=0), np.zeros((0, 3), np.int32))
    check(jnp.compress(np.array([], bool), np.zeros(0, np.float32)), np.zeros(0, np.float32))


def padded_along(values, size, fill, axis):
    """``values`` cut or padded with ``fill`` to ``size`` along ``axis``, as JAX's size=."""
    values = np.moveaxis(np.asarray(values), axis, 0)[:size]
    pad = np.full((size - values.shape[0],) + values.shape[1:], fill, values.dtype)
    return np.moveaxis(np.concatenate([values, pad]), 0, axis)


@given(bools4, st.sampled_from([0, 2, 4]), st.sampled_from([0, -1.5]), st.booleans())
def test_compress_with_size_traces(cond, size, fill_value, integer):
    dtype = np.int32 if integer else np.float32
    a = np.arange(12, dtype=dtype).reshape(3, 4)
    cond = np.array(cond)
    want = padded_along(np.compress(cond, a, axis=1), size, dtype(fill_value), 1)
    for got in both(lambda c, a: jnp.compress(c, a, 1, size=size, fill_value=fill_value), cond, a):
        check(got, want, dtype)  # fill_value is cast to a's dtype
    # With size, a longer condition is cut to the axis, True entries included.
    long = np.concatenate([cond, [True, True]])
    got = jit(lambda c, a: jnp.compress(c, a, 1, size=size, fill_value=fill_value))(long, a)
    check(got, want, dtype)


@given(bools6, st.sampled_from([None, 3, 6]))
def test_extract_against_numpy(mask, size):
    arr = np.arange(6, dtype=np.int32).reshape(2, 3) - 2
    cond = np.array(mask).reshape(2, 3)
    want = np.extract(cond, arr)
    if size is None:
        check(jnp.extract(cond, arr), want, np.int32)
        check(jnp.extract(cond.astype(np.float32), arr), want, np.int32)
        return
    for got in both(lambda c, a: jnp.extract(c, a, size=size, fill_value=9), cond, arr):
        check(got, padded_along(want, size, 9, 0), np.int32)


def test_compress_errors():
    a = np.arange(3, dtype=np.float32)
    cond = np.array([True, False, True])
    with pytest.raises(ConcretizationTypeError, match="size argument of jnp.compress"):
        jit(lambda c: jnp.compress(c, a))(cond)
    with pytest.raises(ConcretizationTypeError, match="size argument of jnp.compress"):
        jit(lambda c: jnp.extract(c, a))(cond)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.compress(np.array([True, False, True, True]), a)
    with pytest.raises(ValueError, match="size must be positive and not greater"):
        jnp.compress(cond, a, size=4)
    with pytest.raises(ValueError, match="size must be positive and not greater"):
        jnp.compress(cond[:2], a, size=3)  # the condition's length bounds size too
    with pytest.raises(ValueError, match="1D array"):
        jnp.compress(cond.reshape(1, 3), a)
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.compress(cond, a, out=np.zeros(2))
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        jnp.compress([True, False, True], a)


def test_compress_with_size_under_vmap_and_grad():
    cond = np.array([[True, False, True], [False, True, True]])
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = vmap(lambda c, a: jnp.compress(c, a, size=2, fill_value=-1))(cond, arr)
    check(got, [[0.0, 2.0], [4.0, 5.0]], np.float32)
    got = vmap(lambda c, a: jnp.extract(c, a, size=3, fill_value=-1))(cond, arr)
    check(got, [[0.0, 2.0, -1.0], [4.0, 5.0, -1.0]], np.float32)
    w = np.array([1.0, 2.0], np.float32)
    g = grad(lambda x: jnp.sum(jnp.compress(cond[0], x, size=2) * w))(arr[0])
    check(g, [1.0, 0.0, 2.0], np.float32)
    # Padding slots hold fill_value, which carries no gradient.
    g = grad(lambda x: jnp.sum(jnp.compress(cond[1], x, size=3) * np.arange(1.0, 4.0)))(arr[1])
    check(g, [0.0, 1.0, 2.0], np.float32)


# --- place, put -----------------------------------------------------------------------------------


@given(bools6, st.lists(finite, min_size=1, max_size=3), st.booleans())
def test_place_against_numpy(mask, vals, integer):
    dtype = np.int32 if integer else np.float32
    arr = np.arange(6, dtype=dtype).reshape(2, 3)
    mask = np.array(mask).reshape(2, 3)
    vals = np.array(vals, np.float32)
    want = arr.copy()
    np.place(want, mask, vals.astype(dtype))  # vals are cast to arr's dtype
    for got in both(lambda a, m, v: jnp.place(a, m, v, inplace=False), arr, mask, vals):
        check(got, want, dtype)
    # An integer mask of another shape but the same size; nonzero is True.
    imask = mask.astype(np.int32).reshape(6) * 3
    check(jnp.place(arr, imask, vals, inplace=False), want, dtype)


def test_place_edge_cases_and_errors():
    arr = np.arange(4, dtype=np.float32)
    check(
        jnp.place(np.zeros(0, np.float32), np.zeros(0, bool), np.ones(1), inplace=False),
        np.zeros(0, np.float32),
    )
    check(jnp.place(arr, np.zeros(4, bool), np.float32(9), inplace=False), arr, np.float32)
    check(
        jnp.place(np.float32(2), np.True_, np.float32(5), inplace=False),
        np.array(5, np.float32),
        np.float32,
    )
    with pytest.raises(ValueError, match="immutable"):
        jnp.place(arr, arr > 1, np.float32(0))
    with pytest.raises(ValueError, match="same size"):
        jnp.place(arr, np.ones(3, bool), np.float32(0), inplace=False)
    with pytest.raises(ValueError, match="empty array"):
        jnp.place(arr, arr > 1, np.zeros(0, np.float32), inplace=False)


@given(
    st.permutations(range(6)),
    st.lists(st.integers(-2, 1), min_size=3, max_size=3),
    st.sampled_from([None, "clip", "wrap"]),
    st.sampled_from([1, 2, 4]),
    st.booleans(),
)
def test_put_against_numpy(perm, shifts, mode, nv, integer):
    """Distinct targets, written as in-range, negative (mode None, wrap) or past-the-end (wrap)
    aliases, so that numpy agrees and no two writes collide."""
    dtype = np.int32 if integer else np.float32
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    pos = np.array(perm[:3], np.int32)
    if mode is None:
        ind = pos - 6 * (np.array(shifts) < 0)
    elif mode == "wrap":
        ind = pos + 6 * np.array(shifts, np.int32)
    else:
        ind = pos
    v = np.arange(10, 10 + nv, dtype=np.float32) + 0.5  # repeated or cut to the indices
    want = a.copy()
    np.put(want, ind, v.astype(dtype), mode="raise" if mode is None else mode)
    for got in both(lambda a, i, v: jnp.put(a, i, v, mode=mode, inplace=False), a, ind, v):
        check(got, want, dtype)


def test_put_out_of_range_indices():
    a = np.zeros(6, np.int32)
    v = np.array([1, 2, 3], np.int32)
    # mode=None (JAX): negative indices count from the end, then out-of-range ones clamp.
    for got in both(lambda i: jnp.put(a, i, v, inplace=False), np.array([9, -9, -2], np.int32)):
        check(got, [2, 0, 0, 0, 3, 1], np.int32)
    # mode="clip" (numpy and JAX): negative indices clip to 0.
    ind = np.array([9, -1, 2], np.int32)
    want = a.copy()
    np.put(want, ind, v, mode="clip")
    for got in both(lambda i: jnp.put(a, i, v, mode="clip", inplace=False), ind):
        check(got, want, np.int32)
    ind = np.array([[13, -8], [-1, 6]], np.int64)  # any integer shape, flattened
    want = a.copy()
    np.put(want, ind, np.arange(4), mode="wrap")
    check(jnp.put(a, ind, np.arange(4), mode="wrap", inplace=False), want, np.int32)


def test_put_edge_cases_and_errors():
    a = np.arange(4, dtype=np.float32)
    check(jnp.put(a, np.zeros(0, np.int32), np.float32(9), inplace=False), a, np.float32)
    check(jnp.put(a, np.array([1]), np.zeros(0, np.float32), inplace=False), a, np.float32)
    check(
        jnp.put(np.zeros((0, 2), np.float32), np.array([0]), np.float32(1), inplace=False),
        np.zeros((0, 2), np.float32),
    )
    check(jnp.put(a, np.int32(2), 7.9, inplace=False), [0.0, 1.0, 7.9, 3.0], np.float32)
    with pytest.raises(ValueError, match="immutable"):
        jnp.put(a, np.array([0]), np.float32(1))
    with pytest.raises(NotImplementedError, match="'raise' mode"):
        jnp.put(a, np.array([0]), np.float32(1), mode="raise", inplace=False)
    with pytest.raises(ValueError, match="'wrap' or 'clip'"):
        jnp.put(a, np.array([0]), np.float32(1), mode="drop", inplace=False)


def test_put_and_place_under_vmap_and_grad():
    base = np.zeros(4, np.float32)
    v = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    got = vmap(lambda v: jnp.put(base, np.array([3, 0]), v, inplace=False))(v)
    check(got, [[2.0, 0, 0, 1.0], [4.0, 0, 0, 3.0]], np.float32)
    w = np.arange(1.0, 5.0, dtype=np.float32)
    ind = np.array([1, 3], np.int32)
    g = grad(lambda v: jnp.sum(jnp.put(base, ind, v, inplace=False) * w))(v[0])
    check(g, [2.0, 4.0], np.float32)
    # The overwritten positions of the array get no gradient.
    g = grad(lambda a: jnp.sum(jnp.put(a, ind, v[0], inplace=False) * w))(base)
    check(g, [1.0, 0.0, 3.0, 0.0], np.float32)
    mask = np.array([True, False, False, True])
    # Both True positions take vals[0]: its gradient sums their weights.
    g = grad(lambda v: jnp.sum(jnp.place(base, mask, v, inplace=False) * w))(v[0, :1])
    check(g, [5.0], np.float32)
    g = grad(lambda a: jnp.sum(jnp.place(a, mask, v[0], inplace=False) * w))(base)
    check(g, [0.0, 2.0, 3.0, 0.0], np.float32)
    got = vmap(lambda m: jnp.place(base, m, v[0], inplace=False))(np.stack([mask, ~mask]))
    check(got, [[1.0, 0, 0, 2.0], [0, 1.0, 2.0, 0]], np.float32)


# --- fill_diagonal --------------------------------------------------------------------------------

VALS = {
    "scalar": -1.5,
    "short": np.array([7.0, 8.0], np.float32),
    "long": np.arange(10, 20, dtype=np.float32),
}


@given(
    st.sampled_from([(3, 3), (2, 4), (4, 2), (2, 2, 2)]),
    st.sampled_from(sorted(VALS)),
    st.booleans(),
)
def test_fill_diagonal_against_numpy(shape, val_kind, integer):
    dtype = np.int32 if integer else np.float32
    a = np.arange(math.prod(shape), dtype=dtype).reshape(shape)
    val = VALS[val_kind]
    want = a.copy()
    np.fill_diagonal(want, val)  # numpy casts val to a's dtype
    for got in both(lambda a: jnp.fill_diagonal(a, val, inplace=False), a):
        check(got, want, dtype)


def test_fill_diagonal_edge_cases_and_errors():
    check(
        jnp.fill_diagonal(np.zeros((0, 3), np.float32), 1.0, inplace=False),
        np.zeros((0, 3), np.float32),
    )
    a = np.zeros((3, 3), np.float32)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(a, 1.0)
    with pytest.raises(NotImplementedError, match="wrap=True"):
        jnp.fill_diagonal(a, 1.0, wrap=True, inplace=False)
    with pytest.raises(ValueError, match="at least 2-d"):
        jnp.fill_diagonal(np.zeros(3, np.float32), 1.0, inplace=False)
    with pytest.raises(ValueError, match="equal length"):
        jnp.fill_diagonal(np.zeros((2, 2, 3), np.float32), 1.0, inplace=False)


def test_fill_diagonal_under_grad_and_vmap():
    w = np.arange(9, dtype=np.float32).reshape(3, 3)
    a = np.ones((3, 3), np.float32)
    g = grad(lambda v: jnp.sum(jnp.fill_diagonal(a, v, inplace=False) * w))(np.ones(3, np.float32))
    check(g, [0.0, 4.0, 8.0], np.float32)
    g = grad(lambda a: jnp.sum(jnp.fill_diagonal(a, 0.0, inplace=False) * w))(a)
    check(g, w * (1 - np.eye(3, dtype=np.float32)), np.float32)
    got = vmap(lambda v: jnp.fill_diagonal(np.zeros((2, 2), np.float32), v, inplace=False))(
        np.array([1.0, 2.0], np.float32)
    )
    check(got, [np.eye(2), 2 * np.eye(2)], np.float32)


# --- insert ---------------------------------------------------------------------------------------

INSERT_OBJS = [
    0,
    2,
    -1,
    np.int32(-2),
    np.array([1], np.int32),
    np.array([0, 2], np.int32),
    np.array([2, -2, 0, 2], np.int32),  # repeated positions keep their order
    slice(None, None, 2),
    slice(1, 2),
]


@given(
    st.sampled_from(range(len(INSERT_OBJS))),
    st.sampled_from([None, 0, 1, -1]),
    st.booleans(),
)
def test_insert_against_numpy(which, axis, integer):
    obj = INSERT_OBJS[which]
    dtype = np.int32 if integer else np.float32
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    want = np.insert(a, obj, 7.75, axis=axis)  # the value is cast to a's dtype
    check(jnp.insert(a, obj, 7.75, axis=axis), want, dtype)
    check(jit(lambda a: jnp.insert(a, obj, 7.75, axis=axis))(a), want, dtype)
    if not isinstance(obj, slice):  # traced positions
        check(jit(lambda a, i: jnp.insert(a, i, 7.75, axis=axis))(a, obj), want, dtype)


INSERT_VALUES = [
    # (obj, values, axis): numpy's broadcasting of values into the inserted block.
    (1, np.array([5, 6], np.int32), 1),  # a scalar position: values become a column
    (np.array([1]), np.array([[5], [6]], np.int32), 1),
    (1, np.array([5, 6, 7], np.int32), 0),
    (1, np.array([[5, 6], [7, 8]], np.int32), 1),  # moved axis: the block is values.T
    (np.array([1]), np.array([[5, 6], [7, 8]], np.int32), 1),  # a 1-d position: not moved
    (np.array([0, 3]), np.array([[5, 6], [7, 8]], np.int32), 1),
    (np.array([0, 3]), np.array([5], np.int32), 1),  # one value for both positions
    (np.array([1, 3]), np.array([8.9, -9.9], np.float32), None),  # cast to int32
    (np.array([], np.int32), np.int32(4), 0),  # nothing inserted
    (slice(0, 3), np.array([5, 6, 7], np.int32), None),
]


@pytest.mark.parametrize(("obj", "values", "axis"), INSERT_VALUES)
def test_insert_values_broadcasting(obj, values, axis):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    want = np.insert(a, obj, values, axis=axis)
    for got in both(lambda a, v: jnp.insert(a, obj, v, axis=axis), a, values):
        check(got, want, np.int32)


def test_insert_edge_cases():
    check(
        jnp.insert(np.zeros(0, np.float32), 0, 1.0),
        np.insert(np.zeros(0, np.float32), 0, 1.0),
        np.float32,
    )
    check(jnp.insert(np.float32(3), 0, 1.0), np.insert(np.float32(3), 0, 1.0), np.float32)
    x = np.arange(3, dtype=np.int32)
    # Positions past either end are clamped (JAX); numpy raises IndexError.
    for obj, want in ((10, [0, 1, 2, 9]), (-10, [9, 0, 1, 2])):
        check(jnp.insert(x, obj, 9), want, np.int32)
        check(jit(lambda x, i: jnp.insert(x, i, 9))(x, np.int32(obj)), want, np.int32)
    got = jit(lambda i: jnp.insert(x, i, np.array([7, 8], np.int32)))(np.array([5, -4], np.int32))
    check(got, [8, 0, 1, 2, 7], np.int32)
    assert jnp.insert(np.arange(2.0, dtype=np.float32), 1, 1).dtype == np.float32


def test_insert_errors():
    x = np.arange(3, dtype=np.int32)
    with pytest.raises(ValueError, match="integer typed"):
        jnp.insert(x, np.array([1.0]), 5)
    with pytest.raises(ValueError, match="one-dimensional array, or a scalar"):
        jnp.insert(x, np.array([[1]]), 5)
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        jnp.insert([0, 1, 2], 1, 5)
    with pytest.raises(TypeError, match="at position 1"):  # obj is argument 1, as in JAX
        jnp.insert(x, [1], 5)
    with pytest.raises(TypeError, match="at position 2"):
        jnp.insert(x, 1, [5])
    with pytest.raises(TypeError, match="at position 1"):
        jnp.delete(x, [1])


def test_insert_under_vmap_and_grad():
    x = np.arange(3, dtype=np.float32)
    got = vmap(lambda i: jnp.insert(x, i, -1.0))(np.array([0, 2, 3, -1], np.int32))
    want = [np.insert(x, i, -1.0) for i in (0, 2, 3, -1)]
    check(got, want, np.float32)
    w = np.arange(1.0, 6.0, dtype=np.float32)
    # y = [x0, v0, x1, v1, x2]
    g = grad(lambda x: jnp.sum(jnp.insert(x, np.array([1, 2]), np.ones(2, np.float32)) * w))(x)
    check(g, [1.0, 3.0, 5.0], np.float32)
    g = grad(lambda v: jnp.sum(jnp.insert(x, np.array([1, 2]), v) * w))(np.ones(2, np.float32))
    check(g, [2.0, 4.0], np.float32)
    g = grad(lambda v: jnp.sum(jnp.insert(x, 1, v) ** 2))(np.float32(1.5))
    check(g, 3.0, np.float32)


# --- delete ---------------------------------------------------------------------------------------

DELETE_OBJS = [
    0,
    -1,
    np.int32(2),
    np.array([0, 2], np.int32),
    np.array([2, 0, 2, -3], np.int32),  # numpy: duplicates and aliases are deleted once
    slice(None, None, 2),
    slice(1, None),
    slice(5, 7),  # past the end: nothing deleted
    np.array([], np.int32),
]


@given(st.sampled_from(range(len(DELETE_OBJS))), st.sampled_from([None, 0, 1, -1]), st.booleans())
def test_delete_against_numpy(which, axis, integer):
    obj = DELETE_OBJS[which]
    dtype = np.int32 if integer else np.float32
    a = np.arange(12, dtype=dtype).reshape(3, 4)
    want = np.delete(a, obj, axis=axis)
    for got in both(lambda a: jnp.delete(a, obj, axis=axis), a):
        check(got, want, dtype)
    n = a.size if axis is None else a.shape[axis]
    mask = np.arange(n) % 3 == which % 3
    check(jnp.delete(a, mask, axis=axis), np.delete(a, mask, axis=axis), dtype)


@given(
    st.permutations(range(4)), st.integers(0, 4), st.lists(st.booleans(), min_size=4, max_size=4)
)
def test_delete_assume_unique_indices_traces(perm, k, negative):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    obj = np.array(perm[:k], np.int32)
    alias = obj - 4 * np.array(negative[:k], np.int32)  # negative aliases of the same positions
    want = np.delete(a, obj, axis=1)
    for got in both(lambda a, i: jnp.delete(a, i, axis=1, assume_unique_indices=True), a, alias):
        check(got, want, np.float32)


def test_delete_edge_cases():
    check(jnp.delete(np.zeros((0, 2), np.float32), 1, axis=1), np.zeros((0, 1), np.float32))
    check(jnp.delete(np.float32(4), 0), np.zeros(0, np.float32), np.float32)
    x = np.arange(4, dtype=np.int32)
    # A boolean obj ignores assume_unique_indices (JAX): it is a static mask.
    mask = np.array([True, False, False, True])
    check(jnp.delete(x, mask, assume_unique_indices=True), [1, 2], np.int32)
    check(jnp.delete(x, slice(1, 3), assume_unique_indices=True), [0, 3], np.int32)


def test_delete_errors():
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.delete(x, 5)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.delete(x, -6)
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.delete(x, np.array([1, 5]))
    with pytest.raises(ValueError, match="boolean indices"):
        jnp.delete(x, np.array([True, False]))
    with pytest.raises(ValueError, match="must be integer or bool"):
        jnp.delete(x, np.array([1.0]))
    with pytest.raises(ConcretizationTypeError):
        jit(lambda i: jnp.delete(x, i))(np.array([1], np.int32))
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        jnp.delete(x, [1])


def test_delete_under_vmap_and_grad():
    x = np.arange(4, dtype=np.float32)
    got = vmap(lambda i: jnp.delete(x, i, assume_unique_indices=True))(np.array([[0], [2], [-1]]))
    check(got, [[1.0, 2.0, 3.0], [0.0, 1.0, 3.0], [0.0, 1.0, 2.0]], np.float32)
    w = np.array([1.0, 2.0], np.float32)
    g = grad(lambda x: jnp.sum(jnp.delete(x, np.array([0, 2])) * w))(x)
    check(g, [0.0, 1.0, 0.0, 2.0], np.float32)
    g = grad(lambda x, i: jnp.sum(jnp.delete(x, i, assume_unique_indices=True) * w), argnums=0)(
        x, np.array([3, 1], np.int32)
    )
    check(g, [1.0, 0.0, 2.0, 0.0], np.float32)


# --- packbits, unpackbits -------------------------------------------------------------------------


@given(
    st.lists(st.integers(-3, 3), min_size=22, max_size=22),
    st.sampled_from([None, 0, 1, -1]),
    st.sampled_from(["big", "little"]),
    st.sampled_from([np.bool_, np.uint8, np.int32]),
)
def test_packbits_against_numpy(values, axis, bitorder, dtype):
    x = np.array(values).astype(dtype).reshape(2, 11)  # 11: the last byte is padded
    want = np.packbits(x, axis=axis, bitorder=bitorder)
    for got in both(lambda x: jnp.packbits(x, axis=axis, bitorder=bitorder), x):
        check(got, want, np.uint8)


@given(
    st.lists(st.integers(0, 255), min_size=6, max_size=6),
    st.sampled_from([None, 0, 1]),
    st.sampled_from([None, 5, 8, -3, 30]),
    st.sampled_from(["big", "little"]),
)
def test_unpackbits_against_numpy(values, axis, count, bitorder):
    x = np.array(values, np.uint8).reshape(2, 3)
    want = np.unpackbits(x, axis=axis, count=count, bitorder=bitorder)
    for got in both(lambda x: jnp.unpackbits(x, axis=axis, count=count, bitorder=bitorder), x):
        check(got, want, np.uint8)
    # Packing the unpacked bits back gives x.
    bits = np.unpackbits(x, axis=axis, bitorder=bitorder)
    check(jnp.packbits(bits, axis=axis, bitorder=bitorder), x.ravel() if axis is None else x)


def test_packbits_edge_cases_and_errors():
    check(jnp.packbits(np.array(True)), np.packbits(np.array(True)), np.uint8)
    check(jnp.packbits(np.zeros(0, bool)), np.zeros(0, np.uint8), np.uint8)
    check(jnp.packbits(np.zeros((2, 0), bool), axis=1), np.zeros((2, 0), np.uint8), np.uint8)
    check(jnp.unpackbits(np.uint8(5)), np.unpackbits(np.uint8(5)), np.uint8)
    check(jnp.unpackbits(np.zeros(0, np.uint8)), np.zeros(0, np.uint8), np.uint8)
    # -count past the start leaves nothing (JAX); numpy raises.
    check(jnp.unpackbits(np.array([5], np.uint8), count=-9), np.zeros(0, np.uint8), np.uint8)
    with pytest.raises(TypeError, match="integer or boolean"):
        jnp.packbits(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="unsigned byte"):
        jnp.unpackbits(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="unsigned byte"):
        jnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="'little' or 'big'"):
        jnp.packbits(np.ones(3, bool), bitorder="middle")
    with pytest.raises(ValueError, match="'little' or 'big'"):
        jnp.unpackbits(np.ones(3, np.uint8), bitorder="BIG")


def test_packbits_under_vmap():
    bits = np.array([[1, 0, 1], [0, 0, 1]], np.uint8)
    check(vmap(jnp.packbits)(bits), np.packbits(bits, axis=1), np.uint8)
    x = np.array([[1], [128]], np.uint8)
    got = vmap(lambda b: jnp.unpackbits(b, count=4, bitorder="little"))(x)
    check(got, np.unpackbits(x, axis=1, count=4, bitorder="little"), np.uint8)


# --- r_, c_ ---------------------------------------------------------------------------------------

X = np.array([1, 2, 3], np.int32)
Y = np.array([4, 5, 6], np.int32)
M = np.arange(6, dtype=np.float32).reshape(2, 3)

CONCAT_CASES = {
    "arrays": lambda ns, x, y, m: ns.r_[x, y],
    "scalars": lambda ns, x, y, m: ns.r_[x, 0, y, 7],
    "linspace": lambda ns, x, y, m: ns.r_[-1:1:5j],
    "arange": lambda ns, x, y, m: ns.r_[0:10:3],
    "stop only": lambda ns, x, y, m: ns.r_[3:],
    "mixed": lambda ns, x, y, m: ns.r_[x, 1:4, y],
    "2-d": lambda ns, x, y, m: ns.r_[m, m],
    "axis 1": lambda ns, x, y, m: ns.r_["1", m, m],
    "ndmin": lambda ns, x, y, m: ns.r_["0,2", x, y],
    "trans1d 0": lambda ns, x, y, m: ns.r_["0,2,0", x, y],
    "axis 1 trans1d 0": lambda ns, x, y, m: ns.r_["1,2,0", x, y],
    "ndmin 3": lambda ns, x, y, m: ns.r_["-1,3,0", x, y],
    "ndmin 3 trans1d 1": lambda ns, x, y, m: ns.r_["0,3,1", x, y],
    "ndmin of 2-d": lambda ns, x, y, m: ns.r_["0,3", m, m],
    "slice ndmin": lambda ns, x, y, m: ns.r_["0,2", 0:3, x],
    "slice trans1d": lambda ns, x, y, m: ns.r_["0,2,0", 0:3, x],
    "row": lambda ns, x, y, m: ns.r_["r", x, y],
    "column": lambda ns, x, y, m: ns.r_["c", x, y],
    "c_ columns": lambda ns, x, y, m: ns.c_[x, y],
    "c_ 2-d": lambda ns, x, y, m: ns.c_[m, m],
    "c_ scalars": lambda ns, x, y, m: ns.c_[x.reshape(1, 3), 0, 0, y.reshape(1, 3)],
    "c_ slice": lambda ns, x, y, m: ns.c_[0:3, x],
    "c_ linspace": lambda ns, x, y, m: ns.c_[-1:1:3j, x],
}


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("name", sorted(CONCAT_CASES))
def test_r_and_c_against_numpy(name):
    case = CONCAT_CASES[name]
    want = np.asarray(case(np, X, Y, M))  # 'r'/'c' give numpy matrices: modjax gives arrays
    got = case(jnp, X, Y, M)
    check(got, want, x32(want.dtype))
    check(jit(lambda x, y, m: case(jnp, x, y, m))(X, Y, M), want, x32(want.dtype))


def test_r_and_c_dtypes_and_items():
    # Python scalars are weakly typed: they do not widen the arrays (numpy's int32 + 0.5 is f64).
    check(jnp.r_[X, 0.5], np.r_[X, 0.5], np.float32)
    check(jnp.r_[np.array([1, 2], np.int8), 3], np.array([1, 2, 3], np.int8), np.int8)
    check(jnp.r_[0:1:0.25], np.r_[0:1:0.25], np.float32)
    check(jnp.r_[np.int32(1) : np.int32(4)], np.arange(1, 4), np.int32)  # numpy-scalar bounds
    check(jnp.r_[X], X, np.int32)
    check(jnp.r_[np.zeros(0, np.float32), 1.0], [1.0], np.float32)
    assert len(jnp.r_) == 0 and len(jnp.c_) == 0


def test_r_and_c_errors():
    with pytest.raises(ValueError, match="directive"):
        jnp.r_["x,y", X]
    with pytest.raises(ValueError, match="beginning"):
        jnp.r_[X, "0", Y]
    with pytest.raises(TypeError, match="different numbers of dimensions"):
        jnp.r_[M, X]
    with pytest.raises(ConcretizationTypeError):
        jit(lambda n: jnp.r_[0:n])(np.int32(3))


# --- ravel_multi_index, unravel_index -------------------------------------------------------------


def ravel_formula(i, j, dims, order):
    return i * dims[1] + j if order == "C" else i + j * dims[0]


@given(
    st.lists(st.integers(-4, 7), min_size=4, max_size=4),
    st.lists(st.integers(-4, 7), min_size=4, max_size=4),
    st.sampled_from(["raise", "wrap", "clip", "ignore"]),
    st.sampled_from(["C", "F"]),
)
def test_ravel_multi_index_against_numpy(i, j, mode, order):
    dims = (3, 4)
    i, j = np.array(i, np.int32), np.array(j, np.int32).reshape(1, 4)[:, ::-1]
    in_range = bool(np.all((i >= 0) & (i < 3)) and np.all((j >= 0) & (j < 4)))
    if mode == "raise":
        if not in_range:
            with pytest.raises(ValueError, match="invalid entry"):
                jnp.ravel_multi_index((i, j), dims)
            i, j = i % 3, j % 4
        want = np.ravel_multi_index((i, j), dims, order=order)
        check(jnp.ravel_multi_index((i, j), dims, order=order), want, np.int32)
        return
    if mode == "ignore":  # no checks: the strides applied to the coordinates as given
        want = np.broadcast_to(ravel_formula(i, j, dims, order), (1, 4))
    else:
        want = np.ravel_multi_index((i, j), dims, mode=mode, order=order)
    for got in both(lambda i, j: jnp.ravel_multi_index((i, j), dims, mode, order), i, j):
        check(got, want, np.int32)


def test_ravel_multi_index_edge_cases_and_errors():
    check(jnp.ravel_multi_index((np.int32(1), np.int32(2)), (3, 4)), np.array(6), np.int32)
    check(jnp.ravel_multi_index((np.array([1, 2], np.int8),), (5,)), [1, 2], np.int8)
    check(
        jnp.ravel_multi_index((np.array([1], np.int8), np.array([9], np.int32)), (2, 10)),
        [19],
        np.int32,
    )
    dims = (3, 4)
    ok = (np.array([1]), np.array([2]))
    with pytest.raises(ConcretizationTypeError, match="mode='raise'"):
        jit(lambda i, j: jnp.ravel_multi_index((i, j), dims))(*ok)
    with pytest.raises(TypeError, match="only int indices permitted"):
        jnp.ravel_multi_index((np.array([1.0]), np.array([2])), dims, mode="clip")
    with pytest.raises(ValueError, match="invalid mode"):
        jnp.ravel_multi_index(ok, dims, mode="drop")
    with pytest.raises(ValueError, match="invalid order"):
        jnp.ravel_multi_index(ok, dims, order="K")
    with pytest.raises(ValueError):
        jnp.ravel_multi_index(ok, (3, 4, 5))


@given(
    st.lists(st.integers(-30, 30), min_size=5, max_size=5),
    st.sampled_from([(3, 4), (12,), (2, 3, 2)]),
)
def test_unravel_index_clamps(indices, shape):
    """numpy on in-range indices; JAX beyond: negative ones count from the end, then indices
    still out of range are clamped to the first or last element."""
    idx = np.array(indices, np.int32)
    size = math.prod(shape)
    clamped = np.clip(np.where(idx < 0, idx + size, idx), 0, size - 1)
    want = np.unravel_index(clamped, shape)
    for got in both(lambda i: jnp.unravel_index(i, shape), idx):
        assert isinstance(got, tuple) and len(got) == len(shape)
        for g, w in zip(got, want, strict=True):
            check(g, w, np.int32)
    inside = (idx >= 0) & (idx < size)
    for g, w in zip(
        jnp.unravel_index(idx[inside], shape), np.unravel_index(idx[inside], shape), strict=True
    ):
        check(g, w, np.int32)
    # ravel_multi_index inverts it.
    check(jnp.ravel_multi_index(jnp.unravel_index(idx, shape), shape), clamped, np.int32)


def test_unravel_index_edge_cases():
    got = jnp.unravel_index(np.int32(7), (2, 4))
    check(got[0], np.array(1), np.int32)
    check(got[1], np.array(3), np.int32)
    got = jnp.unravel_index(np.array([0, 9, 200], np.uint8), (3, 3))  # keeps the dtype
    check(got[0], [0, 2, 2], np.uint8)
    check(got[1], [0, 2, 2], np.uint8)
    assert jnp.unravel_index(np.array([3, -1], np.int32), (4,))[0].tolist() == [3, 3]
    # More elements than the narrow dtype counts: computed wide, given back narrow (JAX).
    got = jnp.unravel_index(np.array([255, 200, 0], np.uint8), (3, 100))
    check(got[0], [2, 2, 0], np.uint8)
    check(got[1], [55, 0, 0], np.uint8)
    got = jnp.unravel_index(np.array([-1, 127, -128], np.int8), (20, 20))
    check(got[0], [19, 6, 13], np.int8)
    check(got[1], [19, 7, 12], np.int8)
    assert jnp.unravel_index(np.int32(0), ()) == ()
    got = vmap(lambda i: jnp.stack(jnp.unravel_index(i, (3, 4))))(np.array([5, -1], np.int32))
    check(got, [[1, 1], [2, 3]], np.int32)


# --- mask_indices ---------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [-1, 0, 2, 5])
@pytest.mark.parametrize("which", ["triu", "tril"])
def test_mask_indices_against_numpy(which, k):
    want = np.mask_indices(4, getattr(np, which), k)
    got = jnp.mask_indices(4, getattr(jnp, which), k)
    assert len(got) == 2
    for g, w in zip(got, want, strict=True):
        check(g, w, np.int32)
    size = 12
    got = jit(lambda: jnp.mask_indices(4, getattr(jnp, which), k, size=size))()
    for g, w in zip(got, want, strict=True):
        check(g, padded_along(w[:size], size, 0, 0), np.int32)


# --- printing and I/O -----------------------------------------------------------------------------


def test_array_repr_and_str_are_numpys():
    assert jnp.array_repr is np.array_repr and jnp.array_str is np.array_str
    x = jnp.asarray(np.array([[1.25, -2.0], [0.5, 0.0]], np.float32))
    assert jnp.array_str(x) == np.array_str(np.asarray(x))
    y = jnp.asarray(np.array([np.pi, -1e-3], np.float32))
    assert jnp.array_str(y, precision=2) == np.array_str(np.asarray(y), precision=2)
    # numpy names the class of a non-ndarray (and indents to match); the rest is numpy's text.
    got, want = jnp.array_repr(x), np.array_repr(np.asarray(x))
    assert got.startswith(type(x).__name__ + "([[")
    assert "".join(got.split()).endswith("".join(want.split())[len("array") :])


def test_printoptions():
    x = jnp.asarray(np.array([1.23456, 2.0], np.float32))
    saved = jnp.get_printoptions()
    assert saved == np.get_printoptions()
    try:
        jnp.set_printoptions(precision=2)
        assert jnp.get_printoptions()["precision"] == 2 == np.get_printoptions()["precision"]
        assert "1.23" in str(x) and "1.2346" not in str(x)
        with jnp.printoptions(precision=1, suppress=True):
            assert np.get_printoptions()["precision"] == 1
            assert str(x) == "[1.2 2. ]"
            assert repr(x) == "Array([1.2, 2. ], dtype=float32)"
        assert jnp.get_printoptions()["precision"] == 2
    finally:
        jnp.set_printoptions(**saved)
    assert jnp.get_printoptions() == saved


def test_frombuffer_and_fromstring():
    raw = np.array([1, -2, 300], np.int16).tobytes()
    check(jnp.frombuffer(raw, dtype=np.int16), [1, -2, 300], np.int16)
    check(jnp.frombuffer(raw, dtype=np.int16, count=2, offset=2), [-2, 300], np.int16)
    # The default dtype is float64, read as such and returned as float32 (x64 off).
    got = jnp.frombuffer(np.array([0.5, 1e10], np.float64).tobytes())
    check(got, [0.5, 1e10], np.float32)
    assert isinstance(got, Array)
    check(jnp.frombuffer(b"", dtype=np.uint8), np.zeros(0, np.uint8), np.uint8)
    check(jnp.fromstring("1 2 3.5", sep=" "), [1.0, 2.0, 3.5], np.float32)
    check(jnp.fromstring("4,5,6", dtype=np.int32, sep=","), [4, 5, 6], np.int32)
    check(jnp.fromstring("4,5,6", dtype=np.int8, count=2, sep=","), [4, 5], np.int8)
    with pytest.raises(TypeError):
        jnp.fromstring("1 2")  # sep is required


@pytest.mark.parametrize(
    "value",
    [
        np.array([[1.5, -2.25], [0.0, 3.0]], np.float32),
        np.array([1.5, -2.25, 65280.0], dtypes.bfloat16),
        np.array([-3, 4], np.int8),
        np.array([True, False]),
        np.float32(2.5),
        np.zeros((0, 3), np.int32),
    ],
    ids=["float32", "bfloat16", "int8", "bool", "0-d", "zero-size"],
)
def test_save_load_round_trip(tmp_path, value):
    path = tmp_path / "x.npy"
    jnp.save(path, jnp.asarray(value))
    got = jnp.load(path)
    assert isinstance(got, Array)
    check(got.astype(np.float32), np.asarray(value, np.float32), np.float32)
    assert got.dtype == np.asarray(value).dtype and got.shape == np.shape(value)


def test_load_of_other_arrays(tmp_path):
    np.save(tmp_path / "f64.npy", np.array([0.1, 0.2]))
    got = jnp.load(tmp_path / "f64.npy")
    check(got, [0.1, 0.2], np.float32)  # canonicalized with x64 off
    np.save(tmp_path / "s.npy", np.array(["ab", "c"]))
    got = jnp.load(tmp_path / "s.npy")
    assert isinstance(got, np.ndarray) and got.tolist() == ["ab", "c"]  # unsupported: numpy's
    jnp.savez(tmp_path / "z.npz", a=jnp.arange(3), b=np.ones(2))
    with jnp.load(tmp_path / "z.npz") as archive:
        check(archive["a"], [0, 1, 2])
        check(archive["b"], [1.0, 1.0])


def test_fromfile_and_fromiter_are_not_implemented(tmp_path):
    path = tmp_path / "raw.bin"
    np.arange(3, dtype=np.int32).tofile(path)
    with pytest.raises(NotImplementedError, match="non-pure"):
        jnp.fromfile(path, dtype=np.int32)
    with pytest.raises(NotImplementedError, match="non-pure"):
        jnp.fromiter(iter(range(3)), dtype=np.int32)
