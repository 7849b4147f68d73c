"""Set operations on flattened arrays: ``isin``, ``intersect1d``, ``setdiff1d``, ``setxor1d``,
``union1d``.

Every operation works on static shapes: the inputs are sorted, the members of
the result are marked with a mask, and a stable sort on "not a member" moves
them to the front in order. Without ``size=`` the number of members must be
known, so the inputs must be concrete (as in JAX); with ``size=`` the result
is truncated or padded with ``fill_value`` and works under ``jit`` and ``vmap``.
Default fills follow JAX: ``setdiff1d`` pads with 0, ``intersect1d`` and
``setxor1d`` with their smallest member (0 when there is none), ``union1d``
like ``unique``; ``intersect1d``'s padded indices are the inputs' lengths.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax.sorting import sort_p
from modjax.tracecore import dtypes
from modjax.tracecore.core import concrete_or_error

from ._eager_jit import compile_on_arrays
from ._util import aval, check_arraylike, from_jax_array_protocol, promote_dtypes

__all__ = ["intersect1d", "isin", "setdiff1d", "setxor1d", "union1d"]

_ISIN_METHODS = ("compare_all", "binary_search", "sort", "auto")


def _flat(x: Any):
    from ._creation import asarray

    arr = asarray(x)
    return lax.reshape(arr, (aval(arr).size,))


def _static_size(name: str, size, *arrays) -> int | None:
    """``size`` as an int; without it, check that ``arrays`` are concrete (the count is data)."""
    if size is None:
        for a in arrays:
            concrete_or_error(
                a,
                f"The size argument of jnp.{name} must be statically specified to use "
                f"jnp.{name} under a transformation (jit, vmap, ...)",
            )
        return None
    size = operator.index(concrete_or_error(size, f"size argument of jnp.{name}"))
    if size < 0:
        raise ValueError(f"jnp.{name}: size must be non-negative, got {size}")
    return size


def _sort_with_positions(x):
    """``x`` sorted (stable, NaN last) and the original position of each sorted element."""
    n = aval(x).shape[0]
    return sort_p.bind(x, lax.iota(np.int32, n), dimension=0, is_stable=True, num_keys=1)


def _firsts(s):
    """Where a sorted ``s`` starts a run of equal values (NaNs equal to each other)."""
    n = aval(s).shape[0]
    if n == 0:
        return lax.full((0,), np.True_)
    prev, cur = lax.slice(s, (0,), (n - 1,)), lax.slice(s, (1,), (n,))
    differs = lax.ne(prev, cur)
    if np.dtype(aval(s).dtype).kind in "fc":
        both_nan = lax.bitwise_and(lax.ne(prev, prev), lax.ne(cur, cur))
        differs = lax.bitwise_and(differs, lax.bitwise_not(both_nan))
    return lax.concatenate([lax.full((1,), np.True_), differs], 0)


def _count(keep):
    return lax.reduce_sum(lax.convert_element_type(keep, np.int32), (0,))


def _compact(keep, arrays, size, fills, num_keys: int = 1):
    """The elements of ``arrays`` where ``keep``, in order, fitted to ``size``.

    ``num_keys - 1`` leading ``arrays`` also order the kept elements. Without
    ``size`` the count is concrete and nothing is padded; beyond the count slot
    ``i`` of array ``j`` holds ``fills[j](packed_j, count)``.
    """
    n = aval(keep).shape[0]
    count = _count(keep)
    not_keep = lax.convert_element_type(lax.bitwise_not(keep), np.int8)
    packed = sort_p.bind(not_keep, *arrays, dimension=0, is_stable=True, num_keys=num_keys)[1:]
    if size is None:
        count = int(np.asarray(concrete_or_error(count)))
        return [lax.slice(p, (0,), (count,)) for p in packed]
    out = []
    valid = lax.lt(lax.iota(np.int32, size), count)
    for p, fill in zip(packed, fills, strict=True):
        dtype = aval(p).dtype
        fitted = (
            lax.slice(p, (0,), (size,))
            if size <= n
            else lax.pad(p, np.zeros((), dtype), ((0, size - n, 0),))
        )
        fill_arr = lax.broadcast_in_dim(fill(p, count), (size,), ())
        out.append(lax.select_n(valid, fill_arr, fitted))
    return out


def _given_or(fill_value, default):
    """A fill function: ``fill_value`` cast to the array's dtype, else ``default``."""
    if fill_value is None:
        return default
    from ._creation import asarray

    def given(p, count):
        value = asarray(fill_value)
        if aval(value).ndim:
            raise ValueError(f"fill_value must be a scalar, got shape {aval(value).shape}")
        return lax.convert_element_type(value, aval(p).dtype)

    return given


def _zero(p, count):
    return lax.full((), 0, aval(p).dtype)


def _smallest_or_zero(p, count):
    """The first packed element (the smallest member) if there is one, else 0."""
    if aval(p).shape[0] == 0:
        return _zero(p, count)
    first = lax.reshape(lax.slice(p, (0,), (1,)), ())
    return lax.select_n(lax.gt(count, np.int32(0)), _zero(p, count), first)


def _length(n: int):
    return lambda p, count: lax.full((), n, aval(p).dtype)


def _contains(elements, tests, method: str):
    """For each of the 1-D ``elements``, whether it equals one of the 1-D ``tests``."""
    m, k = aval(elements).shape[0], aval(tests).shape[0]
    if k == 0:
        return lax.full((m,), np.False_)
    if method in ("compare_all", "auto"):
        eq = lax.eq(
            lax.broadcast_in_dim(elements, (m, k), (0,)),
            lax.broadcast_in_dim(tests, (m, k), (1,)),
        )
        return lax.reduce_or(eq, (1,))
    from ._sorting import searchsorted

    ordered = lax.sort(tests)
    idx = lax.min(searchsorted(ordered, elements), np.int32(k - 1))
    from ._indexing import take

    return lax.eq(take(ordered, idx), elements)


def isin(
    element, test_elements, assume_unique: bool = False, invert: bool = False, *, method="auto"
):
    """Return whether each element of ``element`` is in ``test_elements`` (jax.numpy.isin).

    The result has ``element``'s shape; ``invert`` negates it. ``method`` picks
    the algorithm (``"compare_all"``, ``"binary_search"``/``"sort"``, ``"auto"``),
    all with the same result; NaN is in nothing.
    """
    del assume_unique  # the result does not depend on it
    check_arraylike("isin", element, test_elements)
    if method not in _ISIN_METHODS:
        raise ValueError(
            f"method={method!r} is not implemented; options are 'compare_all', "
            "'binary_search', 'sort', and 'auto'"
        )
    from ._creation import asarray

    e, t = map(from_jax_array_protocol, (element, test_elements))
    e, t = (asarray(v) for v in promote_dtypes(e, t))
    shape = aval(e).shape
    found = _contains(_flat(e), _flat(t), method)
    if invert:
        found = lax.bitwise_not(found)
    return lax.convert_element_type(lax.reshape(found, shape), np.bool_)  # strong, as JAX's


def union1d(ar1, ar2, *, size: int | None = None, fill_value=None):
    """Return the sorted unique values of both inputs together (jax.numpy.union1d).

    ``size``/``fill_value`` fix the result's length as in ``unique`` (needed
    under ``jit``).
    """
    from ._sorting import unique

    check_arraylike("union1d", ar1, ar2)
    a1, a2 = (_flat(v) for v in promote_dtypes(ar1, ar2))
    size = _static_size("union1d", size, a1, a2)
    return unique(lax.concatenate([a1, a2], 0), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None, fill_value=None):
    """Return the unique values of ``ar1`` that are not in ``ar2`` (jax.numpy.setdiff1d).

    The result keeps ``ar1``'s dtype and is sorted, unless ``assume_unique``
    (then ``ar1``'s order is kept). With ``size`` extra slots hold
    ``fill_value`` (default 0).
    """
    check_arraylike("setdiff1d", ar1, ar2)
    a1 = _flat(ar1)
    size = _static_size("setdiff1d", size, a1, ar2)
    if assume_unique:
        values, keep = a1, lax.full(aval(a1).shape, np.True_)
    else:
        values, _ = _sort_with_positions(a1)
        keep = _firsts(values)
    c1, c2 = (_flat(v) for v in promote_dtypes(values, ar2))
    keep = lax.bitwise_and(keep, lax.bitwise_not(_contains(c1, c2, "auto")))
    return _compact(keep, [values], size, [_given_or(fill_value, _zero)])[0]


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None, fill_value=None):
    """Return the sorted values that are in exactly one of the inputs (jax.numpy.setxor1d).

    With ``size`` extra slots hold ``fill_value`` (default: the smallest value
    of the result, or 0 if it is empty).
    """
    check_arraylike("setxor1d", ar1, ar2)
    a1, a2 = (_flat(v) for v in promote_dtypes(ar1, ar2))
    size = _static_size("setxor1d", size, a1, a2)
    if assume_unique:
        # Within the sorted concatenation, a value in exactly one input appears once.
        values = lax.sort(lax.concatenate([a1, a2], 0))
        n = aval(values).shape[0]
        if n < 2:
            keep = lax.full((n,), np.True_)
        else:
            differs = lax.ne(lax.slice(values, (0,), (n - 1,)), lax.slice(values, (1,), (n,)))
            true = lax.full((1,), np.True_)
            keep = lax.bitwise_and(
                lax.concatenate([true, differs], 0), lax.concatenate([differs, true], 0)
            )
        return _compact(keep, [values], size, [_given_or(fill_value, _smallest_or_zero)])[0]
    s1, _ = _sort_with_positions(a1)
    s2, _ = _sort_with_positions(a2)
    keep1 = lax.bitwise_and(_firsts(s1), lax.bitwise_not(_contains(s1, a2, "auto")))
    keep2 = lax.bitwise_and(_firsts(s2), lax.bitwise_not(_contains(s2, a1, "auto")))
    values = lax.concatenate([s1, s2], 0)
    keep = lax.concatenate([keep1, keep2], 0)
    fills = [_given_or(fill_value, _smallest_or_zero)]
    return _compact(keep, [values], size, fills, num_keys=2)[0]


def intersect1d(
    ar1,
    ar2,
    assume_unique: bool = False,
    return_indices: bool = False,
    *,
    size: int | None = None,
    fill_value=None,
):
    """Return the sorted unique values that are in both inputs (jax.numpy.intersect1d).

    ``return_indices`` also gives the index of each value's first occurrence in
    the flattened ``ar1`` and ``ar2``. With ``size`` extra slots hold
    ``fill_value`` (default: the smallest common value, or 0) and the indices
    there are the inputs' lengths.
    """
    check_arraylike("intersect1d", ar1, ar2)
    a1, a2 = (_flat(v) for v in promote_dtypes(ar1, ar2))
    size = _static_size("intersect1d", size, a1, a2)
    n1, n2 = aval(a1).shape[0], aval(a2).shape[0]
    s1, p1 = _sort_with_positions(a1)
    s2, p2 = _sort_with_positions(a2)
    keep = lax.full((n1,), np.True_) if assume_unique else _firsts(s1)
    if n2:
        from ._indexing import take
        from ._sorting import searchsorted

        # The leftmost match in the stably sorted ar2 is its first occurrence.
        at = lax.min(searchsorted(s2, s1), np.int32(n2 - 1))
        keep = lax.bitwise_and(keep, lax.eq(take(s2, at), s1))
        index2 = take(p2, at)
    else:
        keep = lax.full((n1,), np.False_)
        index2 = lax.full((n1,), np.int32(0))
    fills = [_given_or(fill_value, _smallest_or_zero), _length(n1), _length(n2)]
    values, index1, index2 = _compact(keep, [s1, p1, index2], size, fills)
    if not return_indices:
        return values
    if size is not None or not assume_unique:
        # JAX's indices come from unique's or an arange: the default integer (int64
        # with x64); only its sorted-positions path (assume_unique, no size) is int32.
        index_dtype = dtypes.default_int_dtype()
        index1 = lax.convert_element_type(index1, index_dtype)
        index2 = lax.convert_element_type(index2, index_dtype)
    return values, index1, index2


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(
    globals(),
    "intersect1d isin setdiff1d setxor1d union1d",
    values={
        "intersect1d": "fill_value",
        "isin": "test_elements",
        "setdiff1d": "fill_value",
        "setxor1d": "fill_value",
        "union1d": "fill_value",
    },
)
