"""Sorting and searching: ``sort``, ``argsort``, ``lexsort``, ``searchsorted``, ``unique`` (and
the Array API's ``unique_values/counts/inverse/all``), ``partition``, ``argpartition``,
``sort_complex``.

Everything is built on ``lax.sort`` (variadic, stable, NaN-last total order,
``-0.0`` equal to ``0.0``), so results match JAX's, NaNs included. ``unique``
works on static shapes: without ``size=`` its input must be concrete (as in
JAX); with ``size=`` it pads with ``fill_value`` (default: the smallest
unique value) or truncates. ``unique(axis=)`` finds the unique rows of the array
with that axis first and the others flattened: a variadic sort with one key per column.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.lax.elementwise import _convert_element_type
from modjax.lax.sorting import argsort as _lax_argsort
from modjax.lax.sorting import sort_p
from modjax.tracecore import dtypes
from modjax.tracecore.core import concrete_or_error

from ._eager_jit import compile_on_arrays
from ._manipulation import swapaxes
from ._util import aval, canonicalize_axis, check_arraylike, to_inexact

__all__ = [
    "argpartition",
    "argsort",
    "lexsort",
    "partition",
    "searchsorted",
    "sort",
    "sort_complex",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]


def _asarray(name: str, a: Any):
    check_arraylike(name, a)
    from ._creation import asarray

    return asarray(a)


def _ravel(a):
    return lax.reshape(a, (aval(a).size,))


def _check_kind_order(name: str, kind_arg, order) -> None:
    if kind_arg is not None:
        raise TypeError(
            f"jnp.{name}: the 'kind' argument is not supported (JAX removed it); use "
            "stable=True or stable=False"
        )
    if order is not None:
        raise TypeError(f"'order' argument to jnp.{name} is not supported.")


def sort(
    a,
    axis: int | None = -1,
    *,
    kind=None,
    order=None,
    stable: bool = True,
    descending: bool = False,
):
    """Return a sorted copy of ``a`` along ``axis``, NaNs last (jax.numpy.sort).

    ``axis=None`` sorts the flattened array; ``descending=True`` sorts from
    largest to smallest (NaNs first).
    """
    _check_kind_order("sort", kind, order)
    a = _asarray("sort", a)
    if axis is None:
        a, axis = _ravel(a), 0
    axis = canonicalize_axis(axis, aval(a).ndim)
    out = lax.sort(a, axis, is_stable=stable)
    return lax.rev(out, (axis,)) if descending else out


def _index_dtype(length: int) -> np.dtype:
    # As JAX: the default integer (int64 under x64, as numpy), wider only past int32.
    return np.dtype(np.int64) if length > np.iinfo(np.int32).max else dtypes.default_int_dtype()


def argsort(
    a,
    axis: int | None = -1,
    *,
    kind=None,
    order=None,
    stable: bool = True,
    descending: bool = False,
    dtype=None,
):
    """Return the indices that sort ``a`` along ``axis`` (jax.numpy.argsort).

    Sorting is stable by default, also when ``descending`` (ties keep their
    order); the indices have the default integer dtype (int64 under x64) unless
    ``dtype`` says otherwise.
    """
    _check_kind_order("argsort", kind, order)
    a = _asarray("argsort", a)
    if axis is None:
        a, axis = _ravel(a), 0
    axis = canonicalize_axis(axis, aval(a).ndim)
    index_dtype = _index_dtype(aval(a).shape[axis]) if dtype is None else dtype
    return _lax_argsort(a, axis, is_stable=stable, descending=descending, index_dtype=index_dtype)


def lexsort(keys, axis: int = -1):
    """Return the indices that sort by several keys, the last key primary (jax.numpy.lexsort)."""
    if isinstance(keys, tuple | list):
        key_arrays = [_asarray("lexsort", k) for k in keys]
    else:
        arr = _asarray("lexsort", keys)
        if aval(arr).ndim < 1:
            raise TypeError("lexsort keys must be a sequence of arrays or an array of rank >= 1")
        rows, rest = aval(arr).shape[0], aval(arr).shape[1:]
        key_arrays = [
            lax.reshape(lax.slice(arr, (i,) + (0,) * len(rest), (i + 1, *rest)), rest)
            for i in range(rows)
        ]
    if not key_arrays:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {aval(k).shape for k in key_arrays}
    if len(shapes) != 1:
        raise ValueError(f"all keys need to be the same shape, got {sorted(shapes)}")
    shape = shapes.pop()
    if not shape:  # one scalar key per sort: its only index is 0, as JAX
        return lax.full((), 0, dtypes.default_int_dtype())
    axis = canonicalize_axis(axis, len(shape))
    iota = lax.broadcasted_iota(_index_dtype(shape[axis]), shape, axis)
    out = sort_p.bind(
        *key_arrays[::-1], iota, dimension=axis, is_stable=True, num_keys=len(key_arrays)
    )
    return out[-1]


def sort_complex(a):
    """Sort ``a`` along its last axis by real then imaginary part (jax.numpy.sort_complex).

    The result is complex (real input is converted) and strongly typed, as JAX's; a 0-d
    ``a`` has no last axis (ValueError, as JAX and numpy).
    """
    a = sort(_asarray("sort_complex", a), axis=-1)
    dtype = aval(a).dtype
    if kind(dtype) != "c":
        # As JAX: the complex dtype of the inexact dtype (int64 and float64: complex128).
        wide = to_inexact(dtype) == np.float64
        dtype = dtypes.canonicalize_dtype(np.complex128 if wide else np.complex64)
    return lax.convert_element_type(a, dtype)


# --- partition ---------------------------------------------------------------------------------


def partition(a, kth: int, axis: int = -1):
    """Return ``a`` with its ``kth`` element in sorted position (jax.numpy.partition).

    As JAX's (two ``lax.top_k``): the ``kth + 1`` smallest values come first in
    ascending order, then the others in descending order. Complex values raise
    NotImplementedError and bools TypeError, as in JAX.
    """
    arr, kth, axis = _partition_operand("partition", a, kth, axis)
    n = aval(arr).shape[-1]
    if kind(aval(arr).dtype) == "u":  # negation would wrap zero: shift it first
        smallest = lax.neg(lax.top_k(lax.neg(lax.add(arr, _one(arr))), kth + 1)[0])
        bottom = lax.sub(smallest, _one(smallest))
    else:
        bottom = lax.neg(lax.top_k(lax.neg(arr), kth + 1)[0])
    top = lax.top_k(arr, n - kth - 1)[0]
    return swapaxes(lax.concatenate([bottom, top], aval(arr).ndim - 1), -1, axis)


def argpartition(a, kth: int, axis: int = -1):
    """Return indices that partition ``a`` around its ``kth`` element (jax.numpy.argpartition).

    As JAX's: the indices of the ``kth + 1`` smallest values in ascending order of
    value, then the other indices in increasing order.
    """
    arr, kth, axis = _partition_operand("argpartition", a, kth, axis)
    n = aval(arr).shape[-1]
    operand = lax.add(arr, _one(arr)) if kind(aval(arr).dtype) == "u" else arr
    bottom = lax.top_k(lax.neg(operand), kth + 1)[1]
    # The rest in index order: the positions not taken, found as the ones of a mask.
    taken = _onehot_rows(bottom, n)
    rest = lax.top_k(lax.sub(_one(taken), taken), n - kth - 1)[1]
    out = swapaxes(lax.concatenate([bottom, rest], aval(arr).ndim - 1), -1, axis)
    if aval(arr).weak_type:  # JAX's indices (from top_k) are weakly typed when ``a`` is
        out = _convert_element_type(out, aval(out).dtype, weak_type=True)
    return out


def _partition_operand(name: str, a, kth, axis):
    a = _asarray(name, a)
    if kind(aval(a).dtype) == "c":
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    # A 0-d ``a`` has no axis to partition: canonicalize_axis raises JAX's ValueError.
    axis = canonicalize_axis(axis, aval(a).ndim)
    n = aval(a).shape[axis]
    _check_kth(kth, n)
    kth = operator.index(kth) % n
    if kind(aval(a).dtype) == "b":
        raise TypeError(
            "neg does not accept dtype bool. Accepted dtypes are subtypes of integer, "
            "floating, complexfloating."
        )
    return swapaxes(a, axis, -1), kth, axis


def _one(x):
    return lax.full_like(x, 1)


def _onehot_rows(indices, n: int):
    """1 at each of ``indices`` (along the last axis, of length ``n``), 0 elsewhere."""
    hits = lax.eq(
        lax.expand_dims(indices, (aval(indices).ndim,)),
        lax.broadcasted_iota(aval(indices).dtype, (*aval(indices).shape, n), aval(indices).ndim),
    )
    return lax.reduce_max(lax.convert_element_type(hits, np.int32), (aval(indices).ndim - 1,))


def _check_kth(kth, n: int) -> None:
    kth = operator.index(concrete_or_error(kth, "kth of partition"))
    if not -n <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds {n}")


# --- searchsorted ------------------------------------------------------------------------------


def _isnan(x):
    return lax.ne(x, x)


def _sort_lt(x, y):
    """``x < y`` in sort order: NaN is greatest, ``-0.0`` equals ``0.0`` (real dtypes)."""
    lt = lax.lt(x, y)
    if kind(aval(x).dtype) != "f":
        return lt
    return lax.bitwise_or(lt, lax.bitwise_and(_isnan(y), lax.bitwise_not(_isnan(x))))


def _gather_1d(a, idx):
    """``a[idx]`` for a 1-D ``a`` and in-bounds integer ``idx`` of any shape (clamped)."""
    from modjax.lax.indexing import GatherDimensionNumbers, gather

    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    return gather(a, lax.expand_dims(idx, (aval(idx).ndim,)), dn, (1,), mode="clip")


def _searchsorted_scan(a, v, side: str, dtype):
    """An unrolled binary search (the loop of JAX's "scan" method has a static trip count)."""
    n = aval(a).shape[0]
    shape = aval(v).shape
    lo = lax.full(shape, np.asarray(0, dtype))
    hi = lax.full(shape, np.asarray(n, dtype))
    one = np.asarray(1, dtype)
    for _ in range(int(n).bit_length()):
        active = lax.lt(lo, hi)
        mid = lax.div(lax.add(lo, hi), np.asarray(2, dtype))
        pivot = _gather_1d(a, mid)
        # left: is a[mid] < v;  right: is a[mid] <= v (i.e. not v < a[mid])
        go_right = _sort_lt(pivot, v) if side == "left" else lax.bitwise_not(_sort_lt(v, pivot))
        lo = lax.select_n(lax.bitwise_and(active, go_right), lo, lax.add(mid, one))
        hi = lax.select_n(lax.bitwise_and(active, lax.bitwise_not(go_right)), hi, mid)
    return lo


def _searchsorted_compare_all(a, v, side: str, dtype):
    nd = aval(v).ndim
    shape = aval(v).shape + (aval(a).shape[0],)
    av = lax.broadcast_in_dim(a, shape, (nd,))
    vv = lax.broadcast_in_dim(v, shape, tuple(range(nd)))
    hit = _sort_lt(av, vv) if side == "left" else lax.bitwise_not(_sort_lt(vv, av))
    return lax.reduce_sum(lax.convert_element_type(hit, dtype), (nd,))


def _searchsorted_sort(a, v, side: str, dtype):
    """Merge ``a`` and ``v`` in one stable sort; count the elements of ``a`` before each ``v``."""
    n = aval(a).shape[0]
    shape = aval(v).shape
    flat_v = _ravel(v)
    m = aval(flat_v).shape[0]
    keys = lax.concatenate([a, flat_v], 0)
    # Ties: with side="left" each v goes before equal elements of a, with "right" after.
    a_tag, v_tag = (1, 0) if side == "left" else (0, 1)
    tags = lax.concatenate([lax.full((n,), np.int8(a_tag)), lax.full((m,), np.int8(v_tag))], 0)
    position = lax.iota(np.int32, n + m)
    _, _, order = sort_p.bind(keys, tags, position, dimension=0, is_stable=True, num_keys=2)
    from_a = lax.convert_element_type(lax.lt(order, np.int32(n)), dtype)
    before = lax.cumsum(from_a)  # at a v: how many elements of a precede it
    _, counts = sort_p.bind(order, before, dimension=0, is_stable=True, num_keys=1)
    return lax.reshape(lax.slice(counts, (n,), (n + m,)), shape)


_SEARCH_METHODS = {
    "scan": _searchsorted_scan,
    "scan_unrolled": _searchsorted_scan,
    "compare_all": _searchsorted_compare_all,
    "sort": _searchsorted_sort,
}


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Return where to insert ``v`` into the sorted 1-D ``a`` (jax.numpy.searchsorted).

    ``side="left"`` gives the first suitable index, ``"right"`` the last; NaNs
    sort last. ``method`` picks the algorithm (``"scan"``/``"scan_unrolled"``: a
    binary search, ``"compare_all"``: compare every pair, ``"sort"``: a merge by
    sorting), all with the same result. The indices are int32.
    """
    from ._util import promote_dtypes

    check_arraylike("searchsorted", a, v)
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'")
    if method not in _SEARCH_METHODS:
        raise ValueError(
            f"method={method!r} not recognized; allowed values are {sorted(_SEARCH_METHODS)}"
        )
    a, v = (_asarray("searchsorted", x) for x in promote_dtypes(a, v))
    if aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = _gather_1d(a, _asarray("searchsorted", sorter))
    dtype = np.dtype(np.int32)
    if aval(a).shape[0] == 0:
        return lax.full(aval(v).shape, np.int32(0))
    if kind(aval(a).dtype) == "c":
        method = "sort"  # complex values have no lt; the merge sort orders them
    if kind(aval(a).dtype) == "b":
        a, v = (lax.convert_element_type(x, np.int8) for x in (a, v))
    return _SEARCH_METHODS[method](a, v, side, dtype)


# --- unique --------------------------------------------------------------------------------------


class _UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class _UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _columns(x) -> list:
    """The columns of the 2-D ``x`` as 1-D arrays: the sort keys of unique rows."""
    n, m = aval(x).shape
    return [lax.reshape(lax.slice(x, (0, j), (n, j + 1)), (n,)) for j in range(m)]


def _differs(prev, cur, equal_nan: bool):
    """Where adjacent sorted keys differ (NaNs equal to each other with ``equal_nan``)."""
    differs = lax.ne(prev, cur)
    if equal_nan and kind(aval(prev).dtype) in "fc":
        both_nan = lax.bitwise_and(_isnan(prev), _isnan(cur))
        differs = lax.bitwise_and(differs, lax.bitwise_not(both_nan))
    return differs


def _unique_flat(x, *, equal_nan: bool, size, fill_value, want_index, want_inverse, want_counts):
    """Unique values of the 1-D ``x`` and, as asked, first indices, inverse and counts.

    A 2-D ``x`` gives its unique rows, ordered lexicographically (one sort key per column).
    """
    rows = aval(x).ndim == 2
    n = aval(x).shape[0]
    dtype = aval(x).dtype
    position = lax.iota(np.int32, n)
    keys = _columns(x) if rows else [x]
    if keys:
        *sorted_keys, perm = sort_p.bind(
            *keys, position, dimension=0, is_stable=True, num_keys=len(keys)
        )
    else:  # rows of no elements are all equal: the first one is the only unique row
        sorted_keys, perm = [], position
    s = None if rows else sorted_keys[0]
    # A new value starts where a sorted element differs from its predecessor.
    if n:
        differs = lax.full((n - 1,), np.False_)
        for key in sorted_keys:
            prev, cur = lax.slice(key, (0,), (n - 1,)), lax.slice(key, (1,), (n,))
            differs = lax.bitwise_or(differs, _differs(prev, cur, equal_nan))
        starts = lax.concatenate([lax.full((1,), np.True_), differs], 0)
    else:
        starts = lax.full((0,), np.True_)
    if size is None:
        count = concrete_or_error(
            lax.reduce_sum(lax.convert_element_type(starts, np.int32), (0,)),
            "The size argument of jnp.unique must be statically specified to use jnp.unique "
            "under a transformation (jit, vmap, ...)",
        )
        size = int(np.asarray(count))
        count_value = None
    else:
        size = operator.index(concrete_or_error(size, "size argument of jnp.unique"))
        if size < 0:
            raise ValueError(f"jnp.unique: size must be non-negative, got {size}")
        if n == 0 and size and fill_value is None:
            raise ValueError(
                "jnp.unique: for zero-sized input with nonzero size argument, fill_value must be "
                "specified"
            )
        count_value = lax.reduce_sum(lax.convert_element_type(starts, np.int32), (0,))
    # Move the starts to the front (a stable sort on "not a start"), keeping their order.
    not_start = lax.convert_element_type(lax.bitwise_not(starts), np.int8)
    if rows:
        _, first, where = sort_p.bind(
            not_start, perm, position, dimension=0, is_stable=True, num_keys=1
        )
    else:
        _, values, first, where = sort_p.bind(
            not_start, s, perm, position, dimension=0, is_stable=True, num_keys=1
        )
    group = lax.sub(lax.cumsum(lax.convert_element_type(starts, np.int32)), np.int32(1))

    def fit(arr, fill):
        """Truncate or pad ``arr`` (length n) to ``size``."""
        if size <= n:
            return lax.slice(arr, (0,), (size,))
        return lax.pad(arr, np.asarray(fill, aval(arr).dtype), ((0, size - n, 0),))

    results = {}
    slot = lax.iota(np.int32, size)
    valid = None if count_value is None else lax.lt(slot, count_value)
    if rows:
        results["values"] = _unique_rows(x, fit(first, 0), valid, fill_value)
    else:
        results["values"] = _unique_values(values, fit, valid, fill_value, size, n, dtype)
    if want_index:
        idx = fit(first, 0)
        if valid is not None:
            first_fill = (
                lax.broadcast_in_dim(lax.slice(first, (0,), (1,)), (size,), (0,))
                if n
                else lax.full((size,), np.int32(0))
            )
            idx = lax.select_n(valid, first_fill, idx)
        results["index"] = idx
    if want_inverse:
        _, inverse = sort_p.bind(perm, group, dimension=0, is_stable=True, num_keys=1)
        results["inverse"] = inverse
    if want_counts:
        total = count_value if count_value is not None else np.int32(size)
        nxt = (
            lax.concatenate([lax.slice(where, (1,), (n,)), lax.full((1,), np.int32(n))], 0)
            if n
            else where
        )
        slot_n = lax.iota(np.int32, n)
        last = lax.ge(lax.add(slot_n, np.int32(1)), total)
        nxt = lax.select_n(last, nxt, lax.full((n,), np.int32(n)))
        counts = lax.sub(nxt, where)
        counts = fit(counts, 0)
        if valid is not None:
            counts = lax.select_n(valid, lax.full((size,), np.int32(0)), counts)
        results["counts"] = counts
    # Worked out in int32; returned in the default integer dtype (int64 under x64), as JAX.
    index_dtype = dtypes.default_int_dtype()
    for name in ("index", "inverse", "counts"):
        if name in results:
            results[name] = lax.convert_element_type(results[name], index_dtype)
    return results


def _unique_values(values, fit, valid, fill_value, size, n, dtype):
    """The sorted unique values, padded with ``fill_value`` (or the smallest) beyond the count."""
    fill_scalar = lax.slice(values, (0,), (1,)) if n and fill_value is None else None
    vals = fit(values, 0)
    if valid is not None:
        if fill_value is not None:
            from ._util import convert

            fill_arr = lax.full((size,), convert(fill_value, dtype))
        else:
            fill_arr = lax.broadcast_in_dim(fill_scalar, (size,), (0,))
        vals = lax.select_n(valid, fill_arr, vals)
    return vals


def _unique_rows(x, first, valid, fill_value):
    """The rows of the 2-D ``x`` at ``first``; beyond the count ``fill_value`` (or the first row).

    ``fill_value`` broadcasts against one row.
    """
    from ._indexing import take

    size, m = aval(first).shape[0], aval(x).shape[1]
    if aval(x).shape[0] == 0:  # nothing to take from: every slot is a fill slot
        picked = lax.full((size, m), 0, aval(x).dtype)
    else:
        picked = take(x, first, axis=0, mode="clip")
    if valid is None:
        return picked
    if fill_value is None:
        fill = lax.broadcast_in_dim(lax.slice(picked, (0, 0), (1, m)), (size, m), (0, 1))
    else:
        from ._util import broadcast_to, convert

        fill = broadcast_to(convert(_asarray("unique", fill_value), aval(x).dtype), (m,))
        fill = lax.broadcast_in_dim(fill, (size, m), (1,))
    mask = lax.broadcast_in_dim(valid, (size, m), (0,))
    return lax.select_n(mask, fill, picked)


def unique(
    ar,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value=None,
    sorted: bool = True,
):  # noqa: A002
    """Return the sorted unique elements of ``ar`` (jax.numpy.unique).

    With ``return_index``/``return_inverse``/``return_counts`` also the index of
    each value's first occurrence, the index into the result of each input
    element (in the input's shape) and the number of occurrences. ``size``
    fixes the length of the result (needed under ``jit``): extra slots hold
    ``fill_value`` (default: the smallest unique value), its first index, and
    zero counts. ``equal_nan=False`` keeps each NaN separate.
    """
    del sorted  # the result is always sorted, as in JAX
    arr = _asarray("unique", ar)
    if axis is not None:
        return _unique_axis(
            arr, axis, return_index, return_inverse, return_counts, equal_nan, size, fill_value
        )
    shape = aval(arr).shape
    flat = _ravel(arr)
    res = _unique_flat(
        flat,
        equal_nan=bool(equal_nan),
        size=size,
        fill_value=fill_value,
        want_index=return_index,
        want_inverse=return_inverse,
        want_counts=return_counts,
    )
    out = [res["values"]]
    if return_index:
        out.append(res["index"])
    if return_inverse:
        inverse = res["inverse"]
        out.append(lax.reshape(inverse, shape) if shape else lax.reshape(inverse, ()))
    if return_counts:
        out.append(res["counts"])
    return out[0] if len(out) == 1 else tuple(out)


def _unique_axis(arr, axis, return_index, return_inverse, return_counts, equal_nan, size, fill):
    """``unique`` of the slices along ``axis``: the unique rows of the array with ``axis``
    first and the other axes flattened, then put back in place."""
    shape = aval(arr).shape
    axis = canonicalize_axis(axis, len(shape))
    moved = lax.transpose(arr, (axis, *(i for i in range(len(shape)) if i != axis)))
    rest = aval(moved).shape[1:]
    rows = lax.reshape(moved, (shape[axis], int(np.prod(rest, dtype=np.int64))))
    res = _unique_flat(
        rows,
        equal_nan=bool(equal_nan),
        size=size,
        fill_value=fill,
        want_index=return_index,
        want_inverse=return_inverse,
        want_counts=return_counts,
    )
    values = lax.reshape(res["values"], (aval(res["values"]).shape[0], *rest))
    order = list(range(1, len(shape)))
    order.insert(axis, 0)
    out = [lax.transpose(values, tuple(order))]
    wanted = (("index", return_index), ("inverse", return_inverse), ("counts", return_counts))
    out += [res[k] for k, want in wanted if want]
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, /, *, size: int | None = None, fill_value=None):
    """Return the unique values of ``x`` (Array API; jax.numpy.unique_values)."""
    # As JAX (and the Array API): every NaN is its own unique value here.
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size: int | None = None, fill_value=None):
    """Return the unique values of ``x`` and their counts (Array API; jax.numpy.unique_counts)."""
    values, counts = unique(
        x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return _UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size: int | None = None, fill_value=None):
    """Return the unique values of ``x`` and the index of each element (jnp.unique_inverse)."""
    values, inverse = unique(
        x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return _UniqueInverseResult(values, inverse)


def unique_all(x, /, *, size: int | None = None, fill_value=None):
    """Return unique values, first indices, inverse indices and counts (jax.numpy.unique_all)."""
    values, index, inverse, counts = unique(
        x,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        equal_nan=False,
        size=size,
        fill_value=fill_value,
    )
    return _UniqueAllResult(values, index, inverse, counts)


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(
    globals(),
    "argpartition partition searchsorted sort_complex unique",
    values={"searchsorted": "v", "unique": "fill_value"},
)
