"""Running totals, differences and counting: ``cumsum``, ``cumprod``, ``nancumsum``,
``nancumprod``, ``cumulative_sum``, ``cumulative_prod``, ``diff``, ``ediff1d``, ``histogram``,
``histogram_bin_edges``, ``bincount``, ``digitize``.

Dtypes follow JAX: ``cumsum``/``cumprod`` keep the input's dtype (int8 stays
int8 and wraps) except that bool accumulates in the default integer;
the Array API's ``cumulative_sum`` widens small integers to the default
(unsigned) integer as ``sum`` does, ``cumulative_prod`` does not; an explicit
bool ``dtype`` gives a bool result. Counting functions
(``bincount``, ``histogram``) scatter-add into a static number of bins.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.sharding.constraint import operation_out_sharding, resharded_result
from modjax.tracecore import dtypes
from modjax.tracecore.core import concrete_or_error
from modjax.tracecore.sharding_types import ShardingTypeError

from ._eager_jit import compile_on_arrays
from ._ufunc_factories import _bool_as_int
from ._util import (
    aval,
    canonical_dtype,
    canonicalize_axis,
    check_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
    shape_of,
    to_inexact,
)

__all__ = [
    "bincount",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "digitize",
    "ediff1d",
    "histogram",
    "histogram_bin_edges",
    "nancumprod",
    "nancumsum",
]


def _asarray(name: str, a: Any, dtype=None):
    check_arraylike(name, a)
    from ._creation import asarray

    return asarray(a, dtype=dtype)


def _widen_int(dtype: np.dtype) -> np.dtype:
    """bool and integers narrower than the default integer widen to it (as ``sum`` does)."""
    k = kind(dtype)
    if k == "b":
        return dtypes.default_int_dtype()
    if k == "i" and np.dtype(dtype).itemsize < dtypes.default_int_dtype().itemsize:
        return dtypes.default_int_dtype()
    if k == "u" and np.dtype(dtype).itemsize < dtypes.default_uint_dtype().itemsize:
        return dtypes.default_uint_dtype()
    return dtype


def _cumulative(name: str, lax_fn, a, axis, dtype, out, *, widen: bool, nan_fill=None):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = _asarray(name, a)
    if axis is None:
        a = lax.reshape(a, (aval(a).size,))
        axis = 0
    axis = canonicalize_axis(axis, aval(a).ndim)
    if nan_fill is not None and kind(aval(a).dtype) in "fc":
        a = lax.select_n(lax.ne(a, a), a, lax.full_like(a, nan_fill))
    result = aval(a).dtype if dtype is None else canonical_dtype(dtype, name)
    compute = result
    if dtype is None:
        if widen or kind(result) == "b":
            result = compute = _widen_int(result)
    elif kind(result) == "b":
        # As JAX: a bool result accumulates the truth of each element in the default
        # integer (so -1 and 1 cannot cancel) and converts the totals back to bool.
        if kind(aval(a).dtype) != "b":
            a = lax.ne(a, lax.full_like(a, 0))
        compute = _widen_int(result)
    a = lax.convert_element_type(a, compute)
    return lax.convert_element_type(lax_fn(a, axis), result)


def cumsum(a, axis: int | None = None, dtype=None, out=None):
    """Return the cumulative sum of ``a`` along ``axis`` (flattened if None) (jax.numpy.cumsum).

    The dtype is ``a``'s (int8 stays int8), bool sums in the default integer.
    """
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype, out, widen=False)


def cumprod(a, axis: int | None = None, dtype=None, out=None):
    """Return the cumulative product of ``a`` along ``axis`` (flattened if None) (jnp.cumprod)."""
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype, out, widen=False)


def nancumsum(a, axis: int | None = None, dtype=None, out=None):
    """Return the cumulative sum of ``a``, NaNs counting as zero (jax.numpy.nancumsum)."""
    return _cumulative("nancumsum", lax.cumsum, a, axis, dtype, out, widen=False, nan_fill=0)


def nancumprod(a, axis: int | None = None, dtype=None, out=None):
    """Return the cumulative product of ``a``, NaNs counting as one (jax.numpy.nancumprod)."""
    return _cumulative("nancumprod", lax.cumprod, a, axis, dtype, out, widen=False, nan_fill=1)


def _cumulative_api(name: str, lax_fn, x, axis, dtype, include_initial: bool, initial: int):
    x = _asarray(name, x)
    ndim = aval(x).ndim
    if ndim == 0:
        raise ValueError(
            f"The input must be non-scalar to take a {name.replace('_', ' ')}, however a scalar "
            "value or scalar array was given."
        )
    if axis is None:
        if ndim > 1:
            raise ValueError(
                f"The input array has rank {ndim}, however axis was not set to an explicit "
                "value. The axis argument is only optional for one-dimensional arrays."
            )
        axis = 0
    axis = canonicalize_axis(axis, ndim)
    # As JAX: only the sum widens small integers; the product keeps int8 (bool: the default int).
    out = _cumulative(name, lax_fn, x, axis, dtype, None, widen=name == "cumulative_sum")
    if include_initial:
        shape = list(aval(out).shape)
        shape[axis] = 1
        first = lax.full(tuple(shape), np.asarray(initial, aval(out).dtype))
        out = lax.concatenate([first, out], axis)
    return out


def cumulative_sum(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False):
    """Return the cumulative sum of ``x`` along ``axis`` (Array API; jax.numpy.cumulative_sum).

    ``axis`` may be omitted for 1-D input only; small integers accumulate in the
    default integer; ``include_initial`` prepends a zero.
    """
    return _cumulative_api("cumulative_sum", lax.cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False):
    """Return the cumulative product of ``x`` along ``axis`` (Array API; jax.numpy.cumulative_prod).

    ``include_initial`` prepends a one.
    """
    return _cumulative_api("cumulative_prod", lax.cumprod, x, axis, dtype, include_initial, 1)


# --- differences ----------------------------------------------------------------------------


def _slice_axis(x, axis: int, start: int, stop: int):
    shape = aval(x).shape
    starts = [0] * len(shape)
    limits = list(shape)
    starts[axis], limits[axis] = start, stop
    return lax.slice(x, starts, limits)


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """Return the ``n``-th discrete difference of ``a`` along ``axis`` (jax.numpy.diff).

    ``prepend``/``append`` values (scalars broadcast) are joined to ``a`` first;
    for bool input the difference is ``!=``.
    """
    from ._manipulation import concatenate

    arr = _asarray("diff", a)
    n = operator.index(concrete_or_error(n, "'n' argument of jnp.diff"))
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return arr
    if aval(arr).ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = canonicalize_axis(axis, aval(arr).ndim)

    def edge(extra):
        extra = _asarray("diff", extra)
        if aval(extra).ndim == 0:
            shape = list(aval(arr).shape)
            shape[axis] = 1
            extra = lax.broadcast_in_dim(extra, tuple(shape), ())
        return extra

    parts = [arr]
    if prepend is not None:
        parts.insert(0, edge(prepend))
    if append is not None:
        parts.append(edge(append))
    if len(parts) > 1:
        arr = concatenate(parts, axis)
    op = lax.ne if kind(aval(arr).dtype) == "b" else lax.sub
    for _ in range(n):
        size = aval(arr).shape[axis]
        if size == 0:
            break
        arr = op(_slice_axis(arr, axis, 1, size), _slice_axis(arr, axis, 0, size - 1))
    return arr


def ediff1d(ary, to_end=None, to_begin=None):
    """Return the differences of consecutive elements of the flattened ``ary`` (jax.numpy.ediff1d).

    ``to_begin``/``to_end`` (cast to ``ary``'s dtype) are put before and after.
    """
    arr = _asarray("ediff1d", ary)
    arr = lax.reshape(arr, (aval(arr).size,))
    size = aval(arr).shape[0]
    result = (
        lax.sub(lax.slice(arr, (1,), (size,)), lax.slice(arr, (0,), (size - 1,))) if size else arr
    )
    dtype = aval(arr).dtype
    parts = []
    if to_begin is not None:
        begin = _asarray("ediff1d", to_begin, dtype)
        parts.append(lax.reshape(begin, (aval(begin).size,)))
    parts.append(result)
    if to_end is not None:
        end = _asarray("ediff1d", to_end, dtype)
        parts.append(lax.reshape(end, (aval(end).size,)))
    return lax.concatenate(parts, 0) if len(parts) > 1 else result


# --- counting ----------------------------------------------------------------------------------


def _scatter_add_1d(length: int, indices, updates, dtype):
    """``zeros(length).at[indices].add(updates)``, dropping out-of-bounds indices."""
    from modjax.lax.indexing import ScatterDimensionNumbers, scatter_add

    dn = ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    zeros = lax.full((length,), np.zeros((), dtype))
    if length == 0 or aval(indices).size == 0:
        return zeros
    index = lax.reshape(indices, (aval(indices).size, 1))
    return scatter_add(zeros, index, updates, dn, mode="drop")


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None, out_sharding=None):
    """Count the occurrences of each non-negative integer in ``x`` (jax.numpy.bincount).

    The result has ``length`` bins (by default ``max(x) + 1``, at least
    ``minlength``: that needs a concrete ``x``, so pass ``length`` under ``jit``);
    negative values count in bin 0 and values past the last bin are dropped,
    as in JAX. With ``weights``, bins sum the weights instead. ``out_sharding``
    (a replicated NamedSharding, or PartitionSpec on the current mesh) is the result's.
    """
    if out_sharding is not None:
        operation_out_sharding(out_sharding, "jnp.bincount")  # JAX's errors come first
        spec = getattr(out_sharding, "spec", out_sharding)
        if any(entry is not None for entry in spec):
            raise ShardingTypeError(
                "out_sharding passed to `jnp.bincount` can only be fully replicated or fully "
                "unreduced along all mesh axes"
            )
        out = bincount(x, weights, minlength, length=length)
        operands = [aval(_asarray("bincount", x))]
        return resharded_result(out, out_sharding, "jnp.bincount", operands)
    arr = _asarray("bincount", x)
    if kind(aval(arr).dtype) not in "biu":
        raise TypeError(
            "x argument to bincount must have an integer type; got "
            f"{dtypes.dtype_name(aval(arr).dtype)}"
        )
    if aval(arr).ndim != 1:
        raise ValueError(f"only 1-dimensional input supported, got shape {aval(arr).shape}.")
    arr = _bool_as_int(arr)  # JAX counts bools as the integers 0 and 1
    minlength = operator.index(concrete_or_error(minlength, "minlength argument of bincount"))
    if minlength < 0:
        raise ValueError(f"minlength must be non-negative, got {minlength}")
    if length is None:
        values = np.asarray(
            concrete_or_error(
                arr,
                "The error occurred because of argument 'x' of jnp.bincount. To avoid this "
                "error, pass a static `length` argument.",
            )
        )
        length = max(minlength, int(values.max()) + 1 if values.size else 0)
    else:
        length = operator.index(concrete_or_error(length, "length argument of bincount"))
    if weights is None:
        dtype = dtypes.default_int_dtype()
        updates = lax.full(aval(arr).shape, np.ones((), dtype))
    else:
        updates = _asarray("bincount", weights)
        if aval(updates).shape != aval(arr).shape:
            raise ValueError(
                f"shape of weights must match shape of x, got {aval(updates).shape} and "
                f"{aval(arr).shape}."
            )
        dtype = aval(updates).dtype
        if aval(updates).weak_type:
            updates = lax.convert_element_type(updates, dtype)
    indices = lax.max(arr, np.zeros((), aval(arr).dtype))
    return _scatter_add_1d(length, indices, updates, dtype)


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """Return the edges of equal-width bins spanning ``range`` (jax.numpy.histogram_bin_edges).

    ``range`` defaults to ``(a.min(), a.max())`` (widened by 0.5 on both sides
    when that is empty); an array ``bins`` is returned as the edges.
    """
    from ._creation import asarray, linspace

    del weights  # accepted for numpy compatibility; equal-width edges don't use it
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    arr = asarray(a)
    dtype = to_inexact(aval(arr).dtype)
    if len(shape_of(bins)) == 1:
        return asarray(bins, dtype=dtype)
    bins = operator.index(concrete_or_error(bins, "bins argument of histogram_bin_edges"))
    if range is None:
        if aval(arr).size == 0:  # JAX's arr.min() raises this
            raise ValueError("zero-size array to reduction operation min which has no identity")
        flat = lax.reshape(arr, (aval(arr).size,))
        bounds = [lax.reduce_min(flat, (0,)), lax.reduce_max(flat, (0,))]
    else:
        bounds = range
    bounds = asarray(bounds, dtype=dtype)
    if aval(bounds).shape != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {bounds}")
    lo = lax.reshape(lax.slice(bounds, (0,), (1,)), ())
    hi = lax.reshape(lax.slice(bounds, (1,), (2,)), ())
    # JAX widens an empty range where its peak-to-peak is 0 (so an infinite bound is
    # not widened), then takes its linspace program for the edges: the same bits.
    empty = lax.eq(lax.sub(lax.max(lo, hi), lax.min(lo, hi)), np.zeros((), dtype))
    half = np.asarray(0.5, dtype)
    lo = lax.select_n(empty, lo, lax.sub(lo, half))
    hi = lax.select_n(empty, hi, lax.add(hi, half))
    return linspace(lo, hi, bins + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density: bool | None = None):  # noqa: A002
    """Return the histogram of ``a`` and its bin edges (jax.numpy.histogram).

    Each bin but the last is half-open ``[left, right)``; the last includes its
    right edge; values outside the edges are ignored. ``weights`` sum instead of
    counting; ``density`` normalizes to a probability density.
    """
    from ._sorting import searchsorted

    if isinstance(bins, str):  # JAX converts ``bins`` to an array first: a name is refused there
        raise TypeError(f"asarray: expected ArrayLike, got {bins} of type {type(bins)}.")
    if weights is None:
        check_arraylike("histogram", a)
        (arr,) = promote_dtypes_inexact(_asarray("histogram", a))
        arr = _asarray("histogram", arr)
        w = lax.full(aval(arr).shape, np.ones((), aval(arr).dtype))
    else:
        check_arraylike("histogram", a, weights)
        if shape_of(a) != shape_of(weights):
            raise ValueError("weights should have the same shape as a.")
        arr, w = (_asarray("histogram", v) for v in promote_dtypes_inexact(a, weights))
    edges = histogram_bin_edges(arr, bins, range)
    if aval(edges).dtype != aval(arr).dtype:
        edges = lax.convert_element_type(edges, aval(arr).dtype)
    n_edges = aval(edges).shape[0]
    if n_edges == 0:  # no edges (bins=-1): JAX's read of the last edge fails
        raise IndexError("index is out of bounds for axis 0 with size 0")
    flat = lax.reshape(arr, (aval(arr).size,))
    idx = searchsorted(edges, flat, side="right")
    last = lax.reshape(lax.slice(edges, (n_edges - 1,), (n_edges,)), ())
    idx = lax.select_n(lax.eq(flat, last), idx, lax.full_like(idx, n_edges - 1))
    counts = _scatter_add_1d(n_edges, idx, lax.reshape(w, (aval(w).size,)), aval(w).dtype)
    counts = lax.slice(counts, (1,), (n_edges,))
    if density:
        widths = lax.sub(lax.slice(edges, (1,), (n_edges,)), lax.slice(edges, (0,), (n_edges - 1,)))
        total = lax.reduce_sum(counts, (0,))
        counts = lax.div(
            lax.div(counts, lax.convert_element_type(widths, aval(counts).dtype)), total
        )
    return counts, edges


def digitize(x, bins, right: bool = False, *, method: str | None = None):
    """Return the index of the bin each value of ``x`` falls in (jax.numpy.digitize).

    ``bins`` is 1-D and monotonic (increasing or decreasing); ``right`` says
    whether a bin includes its right edge instead of its left.
    """
    from ._sorting import searchsorted

    check_arraylike("digitize", x, bins)
    xs, edges = (_asarray("digitize", v) for v in promote_dtypes(x, bins))
    if aval(edges).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins!r}")
    n = aval(edges).shape[0]
    if n == 0:
        return lax.full(aval(xs).shape, np.int32(0))
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    increasing = searchsorted(edges, xs, side=side, **kw)
    decreasing = lax.sub(
        lax.full(aval(xs).shape, np.int32(n)),
        searchsorted(lax.rev(edges, (0,)), xs, side=side, **kw),
    )
    first = lax.reshape(lax.slice(edges, (0,), (1,)), ())
    last_edge = lax.reshape(lax.slice(edges, (n - 1,), (n,)), ())
    return lax.select_n(lax.ge(last_edge, first), decreasing, increasing)


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(
    globals(),
    "diff ediff1d digitize bincount",
    values={"diff": "prepend append", "ediff1d": "to_end to_begin"},
)
