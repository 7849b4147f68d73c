"""NumPy indexing of modjax arrays beyond basic slicing, and ``x.at[idx]`` updates.

Hypothesis generates index expressions (integers, slices with steps, None,
Ellipsis, integer arrays that broadcast, boolean masks) and compares ``x[idx]``
and ``x.at[idx].op(y)`` with numpy (``np.add.at`` and friends for repeated
indices), eagerly and under ``jit`` (index arrays as constants and as traced
arguments). Out-of-bounds behaviour follows JAX: reads clamp, writes drop,
``take`` fills.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import grad
from modjax.batching import vmap
from modjax.numpy._indexing import NonConcreteBooleanIndexError
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.core import ConcretizationTypeError

SHAPES = [(5,), (3, 4), (2, 3, 4), (3, 0, 2)]


@st.composite
def index_expressions(draw, shape, allow_masks=True):
    """An index for ``shape`` mixing basic items with integer arrays or one boolean mask."""
    ndim = len(shape)
    used = draw(st.integers(0, ndim))
    use_arrays = draw(st.booleans())
    base = draw(st.sampled_from([(2,), (2, 3), (1,), ()]))
    mask_at = draw(st.integers(0, used)) if allow_masks and not use_arrays else None
    items, dim = [], 0
    while dim < used:
        size = shape[dim]
        if mask_at == dim:
            span = draw(st.integers(1, ndim - dim))
            mask_shape = shape[dim : dim + span]
            flat = draw(st.lists(st.booleans(), min_size=int(np.prod(mask_shape)),
                                 max_size=int(np.prod(mask_shape))))  # fmt: skip
            items.append(np.array(flat, bool).reshape(mask_shape))
            dim += span
            continue
        kind = draw(st.sampled_from(["int", "slice", "array"] if use_arrays and size else
                                    ["int", "slice"] if size else ["slice"]))  # fmt: skip
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-size - 2, size + 2)
            step = st.none() | st.sampled_from([1, 2, -1, -3])
            items.append(slice(draw(bound), draw(bound), draw(step)))
        else:
            arr_shape = draw(st.sampled_from([base, base[-1:], ()]))
            n = int(np.prod(arr_shape))
            values = draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n))
            items.append(np.array(values, np.int32).reshape(arr_shape))
        dim += 1
    for _ in range(draw(st.integers(0, 1))):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):  # anywhere when it stands for nothing, else after the items
        at = draw(st.integers(0, len(items))) if used == ndim else len(items)
        items.insert(at, Ellipsis)
    return tuple(items) if len(items) != 1 or draw(st.booleans()) else items[0]


def _split(idx):
    """Split ``idx`` into a rebuild function and the integer arrays it holds (to trace them)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    arrays = [i for i in items if isinstance(i, np.ndarray) and i.dtype != bool]

    def rebuild(*traced):
        it = iter(traced)
        out = tuple(next(it) if isinstance(i, np.ndarray) and i.dtype != bool else i for i in items)
        return out if isinstance(idx, tuple) else out[0]

    return rebuild, arrays


def _x(shape, dtype=np.float32):
    return (np.arange(int(np.prod(shape))) * 3 % 17 - 5).astype(dtype).reshape(shape)


@given(data=st.data())
def test_getitem_matches_numpy(data):
    shape = data.draw(st.sampled_from(SHAPES))
    x = _x(shape)
    idx = data.draw(index_expressions(shape))
    expected = x[idx]
    rebuild, arrays = _split(idx)
    results = [
        jnp.asarray(x)[idx],
        jit(lambda v: v[idx])(x),
        jit(lambda v, *a: v[rebuild(*a)])(x, *arrays),
    ]
    for got in results:
        assert got.shape == expected.shape, (idx, got.shape, expected.shape)
        np.testing.assert_array_equal(np.asarray(got), expected)


_UFUNC_AT = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
    "divide": np.divide,
    "power": np.power,
}


@given(data=st.data(), op=st.sampled_from(["set", *_UFUNC_AT]))
def test_at_updates_match_numpy(data, op):
    shape = data.draw(st.sampled_from(SHAPES))
    x = _x(shape) if op != "power" else np.abs(_x(shape)) + 1
    idx = data.draw(index_expressions(shape))
    target = x[idx].shape
    y_shape = data.draw(st.sampled_from([target, target[1:], ()]))
    y = (np.arange(int(np.prod(y_shape))) % 5 - 2).astype(np.float32).reshape(y_shape)
    if op in ("divide", "power"):
        y = np.abs(y) + 1
    expected = x.copy()
    if op == "set":
        expected[idx] = y
    else:
        _UFUNC_AT[op].at(expected, idx, y)
    rebuild, arrays = _split(idx)
    results = [
        getattr(jnp.asarray(x).at[idx], op)(y),
        jit(lambda v, w, *a: getattr(v.at[rebuild(*a)], op)(w))(x, y, *arrays),
    ]
    for got in results:
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)


@given(idx=st.lists(st.integers(-9, 8), min_size=1, max_size=8))
def test_repeated_and_out_of_bounds_indices(idx):
    x = _x((6,))
    i = np.array(idx, np.int32)
    wrapped = np.where(i < 0, i + 6, i)
    in_bounds = (wrapped >= 0) & (wrapped < 6)
    y = np.arange(1, len(idx) + 1, dtype=np.float32)
    # Reads clamp (after negative indices wrap), under the default mode and "clip".
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[i]), x[np.clip(wrapped, 0, 5)])
    np.testing.assert_array_equal(
        np.asarray(jit(lambda v, j: v.at[j].get(mode="clip"))(x, i)), x[np.clip(wrapped, 0, 5)]
    )
    # mode="fill" reads give fill_value out of bounds.
    filled = jnp.asarray(x).at[i].get(mode="fill", fill_value=-1.0)
    np.testing.assert_array_equal(np.asarray(filled), np.where(in_bounds, x[wrapped % 6], -1.0))
    # Writes drop out of bounds, add accumulates repeated indices.
    expected = x.copy()
    np.add.at(expected, wrapped[in_bounds], y[in_bounds])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x).at[i].add(y)), expected)
    expected = x.copy()
    expected[wrapped[in_bounds]] = y[in_bounds]
    np.testing.assert_array_equal(
        np.asarray(jit(lambda v, j, w: v.at[j].set(w))(x, i, y)), expected
    )
    # mode="clip" writes clamp.
    expected = x.copy()
    np.add.at(expected, np.clip(wrapped, 0, 5), y)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x).at[i].add(y, mode="clip")), expected)
    # take fills with NaN by default, clips or wraps on request.
    taken = np.asarray(jnp.take(x, i))
    np.testing.assert_array_equal(taken, np.where(in_bounds, x[wrapped % 6], np.nan))
    np.testing.assert_array_equal(np.asarray(jnp.take(x, i, mode="wrap")), x[i % 6])
    np.testing.assert_array_equal(
        np.asarray(jnp.take(x, i, mode="clip")), np.take(x, i, mode="clip")
    )


def test_where_advanced_dimensions_go():
    x = _x((5, 3, 4))
    a, b = np.array([0, 2]), np.array([[1], [3]])
    for idx in [
        (slice(None), a, b),  # adjacent: in place
        (a, slice(None), b),  # separated by a slice: first
        (slice(None), a, None, b),  # separated by a new axis: first
        (slice(None), a, Ellipsis, b),  # separated by an empty Ellipsis: first
        (slice(None), 1, b),  # an integer counts as an advanced index
        (1, slice(None), b),
        (Ellipsis, a, np.int32(2)),
    ]:
        expected = x[idx]
        assert jnp.asarray(x)[idx].shape == expected.shape, idx
        np.testing.assert_array_equal(np.asarray(jit(lambda v, idx=idx: v[idx])(x)), expected)
        np.testing.assert_array_equal(np.asarray(jnp.asarray(x).at[idx].set(-1.0)), _set(x, idx))


def _set(x, idx):
    out = x.copy()
    out[idx] = -1.0
    return out


def test_static_and_traced_scalar_indices():
    x = _x((3, 4))

    def clamp(i, n):
        return min(max(i + n if i < 0 else i, 0), n - 1)

    # Traced scalar indices become one dynamic_slice; out-of-range ones clamp.
    for i, j in [(1, 0), (-1, 2), (5, -9)]:
        got = jit(lambda v, i, j: v[i, ::-1][j])(x, i, j)
        assert float(got) == x[clamp(i, 3), ::-1][clamp(j, 4)]
        np.testing.assert_array_equal(
            np.asarray(jnp.asarray(x)[i, None, 1:]), x[clamp(i, 3), None, 1:]
        )
    assert "dynamic_slice" in str(make_jaxpr(lambda v, i: v[i])(x, 1))
    assert "gather" in str(make_jaxpr(lambda v, i: v[i])(x, np.array([1])))
    # x[bool] adds an axis of length 1 or 0.
    assert jnp.asarray(x)[True].shape == (1, 3, 4)
    assert jnp.asarray(x)[False].shape == (0, 3, 4)
    assert jnp.asarray(x)[jnp.asarray(1)].shape == (4,)


def test_at_casts_and_keeps_dtype():
    y = jnp.arange(6).reshape(2, 3)
    out = y.at[0].set(2.7)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [[2, 2, 2], [3, 4, 5]])
    np.testing.assert_array_equal(np.asarray(jnp.zeros(3, jnp.int8).at[0].set(1000)), [-24, 0, 0])
    divided = y.at[:, 1].divide(2)
    assert divided.dtype == np.float32  # true division, as in JAX
    np.testing.assert_allclose(np.asarray(divided), [[0, 0.5, 2], [3, 2, 5]])
    assert jnp.asarray(2.0).at[()].set(3.0).weak_type
    for dtype in (np.int8, np.uint8, np.float16, jnp.bfloat16, np.complex64):
        x = np.arange(5).astype(dtype)
        out = jnp.asarray(x).at[np.array([1, 1, 4])].add(np.ones(3, dtype))
        expected = x.astype(np.complex128)
        np.add.at(expected, [1, 1, 4], 1)
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(out).astype(np.complex128), expected)
    mask = jnp.asarray(np.array([True, False, False]))
    out = mask.at[np.array([0, 1, 1])].max(np.array([True, True, False]))
    np.testing.assert_array_equal(np.asarray(out), [True, True, False])


def test_at_apply_and_get():
    x = jnp.arange(5.0)
    np.testing.assert_array_equal(
        np.asarray(x.at[np.array([0, 0, 1])].apply(lambda v: v + 1)), [2.0, 2.0, 2.0, 3.0, 4.0]
    )
    np.testing.assert_array_equal(
        np.asarray(jit(lambda v: v.at[1:4:2].apply(jnp.negative))(x)), [0.0, -1.0, 2.0, -3.0, 4.0]
    )
    got = x.at[np.array([-10, 10, -1])].get(mode="fill")
    np.testing.assert_array_equal(np.asarray(got), [np.nan, np.nan, 4.0])
    got = jnp.arange(5).at[np.array([7])].get(mode="fill")
    assert int(got[0]) == np.iinfo(np.int32).min


def test_zero_size_and_empty_indices():
    x = jnp.zeros((0, 3))
    assert x[np.array([], np.int32)].shape == (0, 3)
    assert x.at[np.array([0])].set(1.0).shape == (0, 3)
    with pytest.raises(IndexError, match="index is out of bounds for axis 0 with size 0"):
        x[0]
    with pytest.raises(TypeError, match=r"Slice size at index 0 in gather op is out of range"):
        x[np.array([0])]  # an index array goes to the gather, which refuses it (as in JAX)
    y = jnp.arange(6.0).reshape(2, 3)
    assert y[np.zeros((0,), np.int32)].shape == (0, 3)
    assert y[np.zeros((2, 0), np.int32), 1].shape == (2, 0)
    np.testing.assert_array_equal(np.asarray(y.at[np.zeros((0,), np.int32)].add(1.0)), y)


# --- take, take_along_axis, put_along_axis ------------------------------------------------


@given(data=st.data())
def test_take_and_take_along_axis_match_numpy(data):
    shape = data.draw(st.sampled_from([(3, 4), (2, 3, 4)]))
    x = _x(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[axis]
    idx = np.array(data.draw(st.lists(st.integers(-size, size - 1), min_size=0, max_size=4)), int)
    np.testing.assert_array_equal(np.asarray(jnp.take(x, idx, axis=axis)), np.take(x, idx, axis))
    np.testing.assert_array_equal(np.asarray(jnp.take(x, idx)), np.take(x, idx))
    along_shape = list(shape)
    along_shape[axis] = 2
    along = (np.arange(np.prod(along_shape)).reshape(along_shape) * 7 % (2 * size)) - size
    expected = np.take_along_axis(x, along, axis)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, along, axis)), expected)
    got = jit(lambda v, i: jnp.take_along_axis(v, i, axis))(x, along)
    np.testing.assert_array_equal(np.asarray(got), expected)
    values = -np.arange(along.size, dtype=np.float32).reshape(along.shape) - 1
    expected = x.copy()
    np.put_along_axis(expected, along, values, axis)
    got = jnp.put_along_axis(x, along, values, axis, inplace=False)
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_take_along_axis_broadcasts_and_fills():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(
        np.asarray(jnp.take_along_axis(x, np.array([[5], [0]]), axis=1)), [[np.nan], [3.0]]
    )
    idx = np.array([[0, 2]])  # broadcasts along axis 0
    np.testing.assert_array_equal(
        np.asarray(jnp.take_along_axis(x, idx, axis=1)), np.take_along_axis(x, idx.repeat(2, 0), 1)
    )
    np.testing.assert_array_equal(np.asarray(jnp.take(x, 1, axis=1)), x[:, 1])
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put_along_axis(x, idx, 1.0, axis=1)
    with pytest.raises(NotImplementedError, match="raise"):
        jnp.take(x, np.array([0]), mode="raise")


# --- nonzero, argwhere, flatnonzero -------------------------------------------------------


@given(
    shape=st.sampled_from([(6,), (2, 3), (2, 0, 3), (1, 4, 2)]),
    seed=st.integers(0, 100),
    size=st.sampled_from([None, 0, 2, 5, 30]),
)
def test_nonzero_family_matches_numpy(shape, seed, size):
    a = (np.random.default_rng(seed).integers(0, 3, shape) * (seed % 2 - 0.5)).astype(np.float32)
    expected = np.nonzero(a)

    def padded(arr, fill=0):
        if size is None:
            return arr
        arr = arr[:size]
        return np.concatenate([arr, np.full(size - len(arr), fill, arr.dtype)])

    for got in (
        jnp.nonzero(a, size=size),
        jit(lambda v: jnp.nonzero(v, size=size))(a) if size is not None else jnp.nonzero(a),
    ):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert g.dtype == np.int32
            np.testing.assert_array_equal(np.asarray(g), padded(e))
    flat = jnp.flatnonzero(a, size=size, fill_value=-1)
    np.testing.assert_array_equal(np.asarray(flat), padded(np.flatnonzero(a), -1))
    arg = np.asarray(jnp.argwhere(a, size=size, fill_value=7))
    reference = np.argwhere(a)
    if size is not None:
        reference = np.concatenate(
            [reference[:size], np.full((max(size - len(reference), 0), a.ndim), 7)]
        )
    np.testing.assert_array_equal(arg, reference)


def test_nonzero_scalars_and_errors():
    assert jnp.argwhere(jnp.asarray(5)).shape == (1, 0)
    assert jnp.argwhere(jnp.asarray(0)).shape == (0, 0)
    with pytest.raises(ValueError, match="0d arrays"):
        jnp.nonzero(jnp.asarray(5))
    with pytest.raises(ConcretizationTypeError, match="size argument"):
        jit(jnp.nonzero)(np.array([1, 0]))
    out = jnp.nonzero(np.array([[0, 1], [1, 1]]), size=4, fill_value=(-1, -2))
    np.testing.assert_array_equal(np.asarray(out[0]), [0, 1, 1, -1])
    np.testing.assert_array_equal(np.asarray(out[1]), [1, 0, 1, -2])


# --- transformations ----------------------------------------------------------------------


def test_grad_and_vmap_of_indexing():
    x = _x((4, 3))
    idx = np.array([3, 0, 3, -1])
    g = grad(lambda v: (v[idx, 1:] * 2).sum())(x)
    expected = np.zeros_like(x)
    np.add.at(expected[:, 1:], idx, 2.0)
    np.testing.assert_array_equal(np.asarray(g), expected)
    g = grad(lambda v: v.at[idx].set(0.0).sum())(x)
    expected = np.ones_like(x)
    expected[idx] = 0.0
    np.testing.assert_array_equal(np.asarray(g), expected)
    rows = vmap(lambda i: jnp.asarray(x)[i, ::-1])(np.array([2, -1, 0]))
    np.testing.assert_array_equal(np.asarray(rows), x[[2, -1, 0], ::-1])
    cols = vmap(lambda v, i: v[i], in_axes=(1, 0))(x, np.array([0, 3, 1]))
    np.testing.assert_array_equal(np.asarray(cols), x[[0, 3, 1], [0, 1, 2]])


# --- errors -------------------------------------------------------------------------------


def test_lists_inside_a_tuple_index_are_index_arrays():
    # JAX 0.10.2 takes a list inside a tuple index as an array (only a top-level list
    # is an error): m[[0, 1], [1, 2]] == [1, 6], m[1, [0, 3]] == [4, 7].
    m = jnp.arange(12.0).reshape(3, 4)
    assert m[[0, 1], [1, 2]].tolist() == [1.0, 6.0]
    assert m[1, [0, 3]].tolist() == [4.0, 7.0]
    assert m[([True, False, True],)].tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]
    assert m.at[[0, 1], [1, 2]].set(-1.0)[1].tolist() == [4.0, 5.0, -1.0, 7.0]
    assert jit(lambda i: m[1, [i, 3]])(0).tolist() == [4.0, 7.0]


def test_indexing_errors():
    x = jnp.asarray(_x((2, 3)))
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x[[0, 1]]
    with pytest.raises(TypeError, match="integer or boolean"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="Too many indices"):
        x[0, 1, 2]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False, True])]
    with pytest.raises(IndexError, match="could not be broadcast"):
        x[np.array([0, 1]), np.array([0, 1, 2])]
    with pytest.raises(IndexError, match="Array boolean indices must be concrete") as info:
        jit(lambda v: v[v > 2])(x)
    assert type(info.value).__name__ == "NonConcreteBooleanIndexError"
    assert isinstance(info.value, NonConcreteBooleanIndexError)
    with pytest.raises(IndexError, match="static start/stop/step"):
        jit(lambda v, i: v[i:])(x, 1)
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0
    with pytest.raises(ValueError, match="cannot broadcast the update of shape"):
        x.at[0].add(jnp.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="boolean scalar"):
        x.at[True].set(1.0)
    with pytest.raises(ValueError, match="Unknown gather mode"):
        x.at[0].get(mode="nope")
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        x.at[0].set([1.0, 2.0, 3.0])
    # JAX's error for start indices that do not cover every dimension
    with pytest.raises(
        ValueError, match=r"Length of slice indices must match .* \(1 vs \(2, 3\)\)"
    ):
        lax.dynamic_slice(x, [0], [1])
