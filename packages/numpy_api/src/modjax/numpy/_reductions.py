"""Reductions of modjax.numpy: ``sum``, ``prod``, ``max``, ``min``, ``mean``, ``var``, ...

Dtypes follow JAX: ``sum``/``prod`` of bool and small integers accumulate in
the default integer type (int8 -> int32, uint8 -> uint32), ``mean`` of integers
is float32, and float16/bfloat16 means accumulate in float32 and round back.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.lax.elementwise import _convert_element_type
from modjax.tracecore import dtypes

from ._util import (
    ARRAY_TYPES,
    aval,
    canonical_dtype,
    canonicalize_axes,
    check_arraylike,
    convert,
    to_inexact,
)

__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "max",
    "mean",
    "min",
    "prod",
    "std",
    "sum",
    "var",
]


def _prepare(name: str, a: Any, out: Any, where: Any):
    check_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    if where is not None:
        raise NotImplementedError(f"The 'where' argument to jnp.{name} is not supported yet.")
    if not isinstance(a, ARRAY_TYPES):
        from ._creation import asarray

        a = asarray(a)
    if a.weak_type:  # reductions give strongly typed results, as in JAX
        a = _convert_element_type(a, a.dtype, weak_type=False)
    return a


def _keep(result, axes: tuple[int, ...], keepdims: bool):
    return lax.expand_dims(result, axes) if keepdims and axes else result


def _upcast_int(dtype: np.dtype) -> np.dtype:
    """The accumulation dtype of sum/prod: small ints and bool widen to the default int."""
    k = kind(dtype)
    if k == "b" or k == "i":
        default = dtypes.default_int_dtype()
        return default if np.dtype(dtype).itemsize < default.itemsize or k == "b" else dtype
    if k == "u":
        default = dtypes.default_uint_dtype()
        return default if np.dtype(dtype).itemsize < default.itemsize else dtype
    return dtype


def _sum_like(name, lax_reduce, identity, a, axis, dtype, out, keepdims, initial, where):
    a = _prepare(name, a, out, where)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    target = _upcast_int(av.dtype) if dtype is None else canonical_dtype(dtype)
    a = convert(a, target)
    if kind(target) == "b":  # a bool dtype asked for: sum is "any", prod is "all"
        result = (lax.reduce_or if name == "sum" else lax.reduce_and)(a, axes)
    else:
        result = lax_reduce(a, axes)
    if initial is not None:
        combine = lax.add if name == "sum" else lax.mul
        result = combine(result, convert(initial, target, False))
    return _keep(result, axes, keepdims)


def sum(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):  # noqa: A001
    """Sum elements over ``axis``; bool and small ints widen to the default int (jax.numpy.sum)."""
    return _sum_like("sum", lax.reduce_sum, 0, a, axis, dtype, out, keepdims, initial, where)


def prod(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):
    """Multiply elements over ``axis``; small ints widen to the default int (jax.numpy.prod)."""
    return _sum_like("prod", lax.reduce_prod, 1, a, axis, dtype, out, keepdims, initial, where)


def _extreme(name, lax_reduce, combine, a, axis, out, keepdims, initial, where):
    a = _prepare(name, a, out, where)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    if initial is None and builtins.any(av.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    result = lax_reduce(a, axes)
    if initial is not None:
        result = combine(result, convert(initial, av.dtype))
    return _keep(result, axes, keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Return the maximum over ``axis``; NaN propagates (jax.numpy.max)."""
    return _extreme("max", lax.reduce_max, lax.max, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Return the minimum over ``axis``; NaN propagates (jax.numpy.min)."""
    return _extreme("min", lax.reduce_min, lax.min, a, axis, out, keepdims, initial, where)


amax = max
amin = min


def _logical(name, lax_reduce, a, axis, out, keepdims, where):
    a = _prepare(name, a, out, where)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    if av.dtype != np.bool_:
        a = lax.ne(a, np.zeros((), av.dtype))
    return _keep(lax_reduce(a, axes), axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Tell whether every element over ``axis`` is true (jax.numpy.all)."""
    return _logical("all", lax.reduce_and, a, axis, out, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Tell whether some element over ``axis`` is true (jax.numpy.any)."""
    return _logical("any", lax.reduce_or, a, axis, out, keepdims, where)


def _mean_dtypes(av, dtype) -> tuple[np.dtype, np.dtype]:
    """Return (result dtype, accumulation dtype) of a mean."""
    result = to_inexact(av.dtype) if dtype is None else canonical_dtype(dtype)
    compute = to_inexact(result)
    if compute in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
        compute = np.dtype(np.float32)
    return result, compute


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Return the arithmetic mean over ``axis``; integers average as float32 (jax.numpy.mean)."""
    a = _prepare("mean", a, out, where)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    result_dtype, compute = _mean_dtypes(av, dtype)
    count = math.prod(av.shape[i] for i in axes)
    total = lax.reduce_sum(convert(a, compute), axes)
    with np.errstate(divide="ignore", invalid="ignore"):
        divisor = np.asarray(count, compute)[()]
    result = convert(lax.div(total, divisor), result_dtype)
    return _keep(result, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Return the variance over ``axis``, with ``ddof`` delta degrees of freedom (jax.numpy.var)."""
    a = _prepare("var", a, out, where)
    if correction is not None:
        ddof = correction
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    result_dtype, compute = _mean_dtypes(av, dtype)
    if kind(compute) == "c":
        raise NotImplementedError("jnp.var of complex arrays is not supported yet")
    x = convert(a, compute, False)
    centered = lax.sub(x, mean(x, axis=axes, keepdims=True))
    count = math.prod(av.shape[i] for i in axes) - operator.index(ddof)
    total = lax.reduce_sum(lax.square(centered), axes)
    result = lax.div(total, np.asarray(count, compute)[()])
    return _keep(convert(result, result_dtype, False), axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Return the standard deviation over ``axis`` (jax.numpy.std)."""
    v = var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction)
    return lax.sqrt(v)


def _arg(name, lax_fn, a, axis, out, keepdims):
    a = _prepare(name, a, out, None)
    av = aval(a)
    if axis is None:
        a = lax.reshape(a, (av.size,))
        if av.size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = lax_fn(a, 0, dtypes.default_int_dtype())
        return lax.reshape(result, (1,) * av.ndim) if keepdims else result
    from ._util import canonicalize_axis

    ax = canonicalize_axis(axis, av.ndim)
    if av.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    return _keep(lax_fn(a, ax, dtypes.default_int_dtype()), (ax,), keepdims)


def argmax(a, axis=None, out=None, keepdims=None):
    """Return the first maximum's index in the flattened array by default (jax.numpy.argmax)."""
    return _arg("argmax", lax.argmax, a, axis, out, bool(keepdims))


def argmin(a, axis=None, out=None, keepdims=None):
    """Return the first minimum's index in the flattened array by default (jax.numpy.argmin)."""
    return _arg("argmin", lax.argmin, a, axis, out, bool(keepdims))
