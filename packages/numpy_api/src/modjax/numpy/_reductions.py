"""Reductions of modjax.numpy: ``sum``, ``mean``, ``var``, the ``nan*`` family, ``quantile``, ...

Every reduction takes ``axis`` (None, an int or a tuple), ``keepdims`` and,
where JAX has them, ``where`` (a boolean mask broadcast against the input),
``dtype`` and ``initial``; ``out`` must be None. On device Arrays each public
function runs as one compiled program per signature (``_compiled``), as JAX's do.
Dtypes follow JAX: ``sum``/``prod`` of bool and small integers accumulate in the
default integer type (int8 -> int32, uint8 -> uint32), means of integers are
float32, and float16/bfloat16 means accumulate in float32 and round back. Results
are strongly typed. ``median`` and ``quantile`` sort with ``lax.sort`` and pick
with ``take_along_axis``.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind, real_dtype
from modjax.lax.elementwise import _convert_element_type
from modjax.runtime import jit
from modjax.tracecore import dtypes

from . import _util
from ._eager_jit import compiled_on_arrays
from ._util import (
    ARRAY_TYPES,
    aval,
    canonical_dtype,
    canonicalize_axes,
    canonicalize_axis,
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
    "average",
    "count_nonzero",
    "max",
    "mean",
    "median",
    "min",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmedian",
    "nanmin",
    "nanpercentile",
    "nanprod",
    "nanquantile",
    "nanstd",
    "nansum",
    "nanvar",
    "percentile",
    "prod",
    "ptp",
    "quantile",
    "std",
    "sum",
    "var",
]


# --- shared argument handling ---------------------------------------------------------------


def _asarray(name: str, a: Any):
    check_arraylike(name, a)
    if not isinstance(a, ARRAY_TYPES):
        from ._creation import asarray

        a = asarray(a)
    return a


def _prepare(name: str, a: Any, out: Any):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = _asarray(name, a)
    if a.weak_type:  # reductions give strongly typed results, as in JAX
        a = _convert_element_type(a, a.dtype, weak_type=False)
    return a


def _mask(name: str, where: Any, shape: tuple[int, ...]):
    """Return the ``where`` mask as a bool array broadcast to ``shape`` (None stays None).

    As in JAX, the mask must be boolean: numpy's truthiness of other dtypes is refused.
    """
    if where is None:
        return None
    where = _asarray(name, where)
    if aval(where).dtype != np.bool_:
        raise ValueError(
            f"jnp.{name}: where must be None or a boolean array; got where.dtype="
            f"{aval(where).dtype!r}."
        )
    try:
        return _util.broadcast_to(where, shape)
    except ValueError:
        raise ValueError(
            f"jnp.{name}: where of shape {aval(where).shape} does not broadcast to the input "
            f"shape {shape}"
        ) from None


def _masked(x, mask, fill):
    """``x`` where ``mask`` holds, else the scalar ``fill`` (in ``x``'s dtype)."""
    if mask is None:
        return x
    return lax.select_n(mask, lax.full_like(x, fill), x)


def _initial(name: str, initial: Any, dtype: np.dtype):
    """Return the scalar ``initial`` in ``dtype``; arrays of other shapes are refused, as in JAX."""
    shape = np.shape(initial) if not isinstance(initial, ARRAY_TYPES) else aval(initial).shape
    if shape != ():
        raise ValueError(f"jnp.{name}: initial value must be a scalar. Got array of shape {shape}")
    check_arraylike(name, initial)
    return convert(initial, dtype, False)


def _keep(result, axes: tuple[int, ...], keepdims: bool):
    return lax.expand_dims(result, axes) if keepdims and axes else result


def _scalar(value: Any, dtype: np.dtype):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.asarray(value).astype(dtype)[()]


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


def _isnan(x):
    return lax.ne(x, x)


# --- sum and prod ---------------------------------------------------------------------------


# By name: naming bfloat16 here would import ml_dtypes with modjax.numpy.
_HALF_FLOATS = ("float16", "bfloat16")


def _sum_like(name, a, axis, dtype, out, keepdims, initial, where, promote_integers, nan_to=None):
    a = _prepare(name, a, out)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    is_sum = name in ("sum", "nansum")
    if dtype is not None:
        target = canonical_dtype(dtype, name)
    elif promote_integers or kind(av.dtype) == "b":
        target = _upcast_int(av.dtype)
    else:
        target = av.dtype
    if nan_to is not None and kind(av.dtype) in "fc":
        a = lax.select_n(_isnan(a), a, lax.full_like(a, nan_to))
    a = convert(a, target)
    a = _masked(a, _mask(name, where, av.shape), 0 if is_sum else 1)
    if kind(target) == "b":  # a bool dtype asked for: sum is "any", prod is "all"
        result = (lax.reduce_or if is_sum else lax.reduce_and)(a, axes)
    elif np.dtype(target).name in _HALF_FLOATS:  # accumulate in float32, as JAX does
        wide = (lax.reduce_sum if is_sum else lax.reduce_prod)(convert(a, np.float32), axes)
        result = convert(wide, target)
    else:
        result = (lax.reduce_sum if is_sum else lax.reduce_prod)(a, axes)
    if initial is not None:
        combine = (
            (lax.bitwise_or if is_sum else lax.bitwise_and)
            if kind(target) == "b"
            else (lax.add if is_sum else lax.mul)
        )
        result = combine(result, _initial(name, initial, target))
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
    return _sum_like("sum", a, axis, dtype, out, keepdims, initial, where, promote_integers)


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
    return _sum_like("prod", a, axis, dtype, out, keepdims, initial, where, promote_integers)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum elements over ``axis``, treating NaN as zero (jax.numpy.nansum)."""
    return _sum_like("nansum", a, axis, dtype, out, keepdims, initial, where, True, nan_to=0)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Multiply elements over ``axis``, treating NaN as one (jax.numpy.nanprod)."""
    return _sum_like("nanprod", a, axis, dtype, out, keepdims, initial, where, True, nan_to=1)


# --- max and min ------------------------------------------------------------------------------


def _lowest(dtype: np.dtype, largest: bool):
    """The identity of max (``largest=False``: the lowest value) or of min."""
    k = kind(dtype)
    if k == "b":
        return largest
    if k in "iu":
        info = dtypes.iinfo(dtype)
        return int(info.max if largest else info.min)
    inf = np.inf if largest else -np.inf
    return complex(inf, inf) if k == "c" else inf


def _extreme(name, a, axis, out, keepdims, initial, where, largest: bool, skip_nan=False):
    a = _prepare(name, a, out)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    mask = _mask(name, where, av.shape)
    if mask is not None and initial is None:
        raise ValueError(
            f"reduction operation {name.removeprefix('nan')} does not have an identity, so to "
            "use a where mask one has to specify 'initial'"
        )
    if initial is None and builtins.any(av.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    identity = _lowest(av.dtype, largest)
    x = _masked(a, mask, identity)
    all_nan = None
    if skip_nan and kind(av.dtype) in "fc":
        nan = _isnan(x)
        x = lax.select_n(nan, x, lax.full_like(x, identity))
        if initial is None:
            all_nan = lax.reduce_and(
                nan if mask is None else lax.bitwise_or(nan, lax.bitwise_not(mask)), axes
            )
    result = (lax.reduce_min if largest else lax.reduce_max)(x, axes)
    if initial is not None:
        result = (lax.min if largest else lax.max)(result, _initial(name, initial, av.dtype))
    if all_nan is not None:
        result = lax.select_n(all_nan, result, lax.full_like(result, np.nan))
    return _keep(result, axes, keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Return the maximum over ``axis``; NaN propagates (jax.numpy.max).

    A ``where`` mask needs ``initial`` (max has no identity).
    """
    return _extreme("max", a, axis, out, keepdims, initial, where, largest=False)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Return the minimum over ``axis``; NaN propagates (jax.numpy.min)."""
    return _extreme("min", a, axis, out, keepdims, initial, where, largest=True)


amax = max
amin = min


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Return the maximum over ``axis`` ignoring NaN; all-NaN slices give NaN (jax.numpy.nanmax)."""
    return _extreme("nanmax", a, axis, out, keepdims, initial, where, largest=False, skip_nan=True)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Return the minimum over ``axis`` ignoring NaN; all-NaN slices give NaN (jax.numpy.nanmin)."""
    return _extreme("nanmin", a, axis, out, keepdims, initial, where, largest=True, skip_nan=True)


def ptp(a, axis=None, out=None, keepdims=False):
    """Return the range (maximum minus minimum) over ``axis`` (jax.numpy.ptp)."""
    from ._ufuncs import subtract

    a = _prepare("ptp", a, out)
    return subtract(max(a, axis, None, keepdims), min(a, axis, None, keepdims))


# --- all, any, count_nonzero ------------------------------------------------------------------


def _logical(name, lax_reduce, a, axis, out, keepdims, where):
    a = _prepare(name, a, out)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    if av.dtype != np.bool_:
        a = lax.ne(a, np.zeros((), av.dtype))
    a = _masked(a, _mask(name, where, av.shape), name == "all")
    return _keep(lax_reduce(a, axes), axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Tell whether every element over ``axis`` is true (jax.numpy.all)."""
    return _logical("all", lax.reduce_and, a, axis, out, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Tell whether some element over ``axis`` is true (jax.numpy.any)."""
    return _logical("any", lax.reduce_or, a, axis, out, keepdims, where)


def count_nonzero(a, axis=None, keepdims=False):
    """Count the nonzero elements over ``axis``, as the default int (jax.numpy.count_nonzero)."""
    a = _prepare("count_nonzero", a, None)
    av = aval(a)
    nonzero = a if av.dtype == np.bool_ else lax.ne(a, np.zeros((), av.dtype))
    return sum(nonzero, axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


# --- mean, var, std ---------------------------------------------------------------------------


def _upcast_half(dtype: np.dtype) -> np.dtype:
    """float16/bfloat16 accumulate in float32 (JAX's ``_upcast_f16``); other dtypes as they are."""
    # By name: no need to load the narrow dtypes.
    return np.dtype(np.float32) if np.dtype(dtype).name in _HALF_FLOATS else dtype


def _mean_dtypes(dtype_in: np.dtype, dtype, name: str) -> tuple[np.dtype, np.dtype]:
    """Return (result dtype, accumulation dtype) of a mean (``name``: the function called).

    As in JAX, a ``dtype`` asked for is the accumulation dtype too (an integer one makes
    the mean an integer division; a half float one is not widened): only the default
    half-float result accumulates in float32.
    """
    if dtype is not None:
        result = canonical_dtype(dtype, name)
        return result, result
    result = to_inexact(dtype_in)
    return result, _upcast_half(result)


def _numeric(x, dtype: np.dtype):
    """``x`` converted to ``dtype``; a bool array through the default int, as JAX's ``sum`` does."""
    if aval(x).dtype == np.bool_ and np.dtype(dtype) != np.bool_:
        x = convert(x, _upcast_int(np.dtype(np.bool_)))
    return convert(x, dtype)


def _sum_as(x, axes, keepdims, mask):
    """JAX's ``sum(x, axis, dtype=x.dtype, keepdims=..., where=mask)`` on a converted ``x``.

    Masked, reduced, and only then given back its reduced axes (so a mean divides the
    kept-dims sum, as JAX's does). A bool sum is an "or", as in JAX.
    """
    x = _masked(x, mask, 0)
    reduce = lax.reduce_or if aval(x).dtype == np.bool_ else lax.reduce_sum
    return _keep(reduce(x, axes), axes, keepdims)


def _count(av, axes, keepdims, mask, dtype):
    """The number of elements reduced, in ``dtype``: static, or the sum of the mask."""
    if mask is None:
        return _scalar(math.prod(av.shape[i] for i in axes), dtype)
    return _sum_as(_numeric(mask, dtype), axes, keepdims, None)


def _mean(name, a, axis, dtype, out, keepdims, where):
    a = _prepare(name, a, out)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    result_dtype, compute = _mean_dtypes(av.dtype, dtype, name)
    mask = _mask(name, where, av.shape)
    count = _count(av, axes, keepdims, mask, compute)
    total = _sum_as(_numeric(a, compute), axes, keepdims, mask)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = lax.div(total, count)
    return convert(result, result_dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Return the arithmetic mean over ``axis``; integers average as float32 (jax.numpy.mean)."""
    return _mean("mean", a, axis, dtype, out, keepdims, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Return the mean over ``axis`` ignoring NaN; all-NaN slices give NaN (jax.numpy.nanmean)."""
    a = _prepare("nanmean", a, out)
    av = aval(a)
    mask = _mask("nanmean", where, av.shape)  # checked under this name first, as in JAX
    if kind(av.dtype) not in "fc":  # no NaN to skip: the mean (and its dtype rules)
        return _mean("mean", a, axis, dtype, None, keepdims, where)
    axes = canonicalize_axes(axis, av.ndim)
    dtype = av.dtype if dtype is None else canonical_dtype(dtype, "mean")
    # As JAX's: the count and the NaN-zeroed sum in ``dtype`` (a half float is not upcast).
    count = _sum_as(_numeric(lax.bitwise_not(_isnan(a)), dtype), axes, keepdims, mask)
    zeroed = lax.select_n(_isnan(a), a, lax.full_like(a, 0))
    total = _sum_as(convert(zeroed, dtype), axes, keepdims, mask)
    with np.errstate(divide="ignore", invalid="ignore"):
        return lax.div(total, count)


def _var_dtypes(name: str, dtype_in: np.dtype, dtype) -> tuple[np.dtype, np.dtype]:
    """Return (result dtype, accumulation dtype) of a variance (JAX's ``_var_promote_types``).

    Without ``dtype`` the result is real (float32 for integers); an explicit ``dtype``
    is both the result and the accumulation dtype (an integer one too: the means and
    quotients are then integer divisions); a complex ``dtype`` keeps a complex result
    (of zero imaginary part) and a real one is refused for complex input, as in JAX.
    """
    if dtype is None:
        if kind(dtype_in) in "fc":
            return real_dtype(dtype_in), _upcast_half(dtype_in)
        result = to_inexact(dtype_in)
        return result, result
    dtype = canonical_dtype(dtype, name)
    if kind(dtype_in) == "c" and kind(dtype) != "c":
        raise ValueError(
            f"jnp.{name} of complex input does not support the real dtype {dtype} (as in JAX: "
            "numpy's semantics are unclear there)"
        )
    if name == "std" and kind(dtype) not in "fc":
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    return dtype, _upcast_half(dtype)


def _squares(centered):
    if kind(aval(centered).dtype) == "c":  # |c|^2 as c * conj(c), as JAX's
        return lax.real(lax.mul(centered, lax.conj(centered)))
    return lax.square(centered)


def _nan_float(x):
    """``x`` as JAX's ``where(..., x, nan)`` promotes it: a non-float to the default float, weak."""
    if kind(aval(x).dtype) in "fc":
        return x
    return convert(x, dtypes.canonicalize_dtype(np.float64), True)


def _var_operands(name, a, axis, out, ddof, where, correction, a_mean):
    """Check a var/std call and return its operands and static axes, as JAX's ``var`` does."""
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    a = _prepare(name, a, out)
    if where is not None and not isinstance(where, ARRAY_TYPES):
        where = np.asarray(where)
    if a_mean is not None:
        a_mean = _asarray(name, a_mean)
    return a, ddof, where, a_mean, canonicalize_axes(axis, aval(a).ndim)


def _var(name, a, axis, dtype, out, ddof, keepdims, where, correction, a_mean):
    """The variance as JAX computes it: one jitted program ``_var`` (not inlined).

    Its boundary is visible to autodiff: the cotangent of ``a`` sums the program's own
    contributions first, as in JAX, so gradients through var and std are JAX's bits.
    ``ddof`` (JAX's ``correction``) is an operand, as in JAX.
    """
    a, ddof, where, a_mean, axes = _var_operands(
        name, a, axis, out, ddof, where, correction, a_mean
    )
    return _var_program(
        a, ddof, where, a_mean, name=name, axes=axes, dtype=dtype, keepdims=keepdims
    )


def _var_computation(a, ddof, where, a_mean, *, name, axes, dtype, keepdims):
    av = aval(a)
    result_dtype, compute = _var_dtypes(name, av.dtype, dtype)
    mask = _mask(name, where, av.shape)
    x = convert(a, compute)
    if a_mean is None:  # JAX's mean in the accumulation dtype, with kept dims
        count = _count(av, axes, True, mask, compute)
        with np.errstate(divide="ignore", invalid="ignore"):
            a_mean = lax.div(_sum_as(_numeric(x, compute), axes, True, mask), count)
    else:  # a given mean has the keepdims shape (or is a scalar); lax.sub checks the ranks
        a_mean = convert(_asarray(name, a_mean), compute)
    # Squared, then masked by the sum (as JAX's: a masked-out NaN reaches the derivative).
    squares = _squares(lax.sub(x, a_mean))
    real = aval(squares).dtype
    normalizer = lax.sub(_count(av, axes, keepdims, mask, real), _as(ddof, real))
    with np.errstate(divide="ignore", invalid="ignore"):
        result = lax.div(_sum_as(squares, axes, keepdims, mask), normalizer)
    result = _nan_float(convert(result, result_dtype))
    positive = lax.gt(normalizer, _scalar(0, real))  # ddof may be traced (a value parameter)
    return lax.select_n(positive, lax.full_like(result, np.nan), result)


_var_computation.__name__ = _var_computation.__qualname__ = "_var"  # JAX's equation name
_VAR_STATICS = ("name", "axes", "dtype", "keepdims")
_var_program = jit(_var_computation, static_argnames=_VAR_STATICS)


def _std_computation(a, ddof, where, a_mean, *, name, axes, dtype, keepdims):
    statics = {"name": name, "axes": axes, "dtype": dtype, "keepdims": keepdims}
    return lax.sqrt(_var_program(a, ddof, where, a_mean, **statics))


_std_computation.__name__ = _std_computation.__qualname__ = "_std"
_std_program = jit(_std_computation, static_argnames=_VAR_STATICS)


def _nanvar(name, a, axis, dtype, out, ddof, keepdims, where, a_mean):
    a = _prepare(name, a, out)
    av = aval(a)
    axes = canonicalize_axes(axis, av.ndim)
    _mask(name, where, av.shape)  # checked under this name first, as in JAX
    result_dtype, compute = _var_dtypes(name, av.dtype, dtype)
    x = convert(a, compute)
    if a_mean is None:
        a_mean = nanmean(x, axes, dtype=compute, keepdims=True, where=where)
    else:
        a_mean = convert(_asarray(name, a_mean), compute)
    centered = lax.sub(x, a_mean)
    # Zeroed where x is NaN before squaring, so that NaNs reach no derivative (as JAX's).
    squares = _squares(lax.select_n(_isnan(x), centered, lax.full_like(centered, 0)))
    present = lax.bitwise_not(_isnan(x))
    normalizer = sum(present, axis=axes, keepdims=keepdims, where=where)
    normalizer = lax.sub(normalizer, _as(ddof, aval(normalizer).dtype))
    empty = lax.le(normalizer, _scalar(0, aval(normalizer).dtype))
    result = _nan_float(sum(squares, axis=axes, keepdims=keepdims, where=where))
    result = lax.select_n(empty, result, lax.full_like(result, np.nan))
    divisor = lax.select_n(empty, normalizer, lax.full_like(normalizer, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        result = lax.div(result, convert(divisor, aval(result).dtype))
    return convert(result, result_dtype)


def _as(value, dtype):
    if isinstance(value, ARRAY_TYPES):
        return lax.convert_element_type(value, dtype)
    return _scalar(value, dtype)


def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=None,
    mean=None,
    correction=None,
):
    """Return the variance over ``axis`` with ``ddof`` delta degrees of freedom (jax.numpy.var).

    Complex inputs give the real variance of the modulus; no degrees of freedom
    left (``count <= ddof``) gives NaN, as in JAX. ``mean``, a precomputed mean
    of the ``keepdims=True`` shape (or a scalar), replaces the computed one.
    """
    return _var("var", a, axis, dtype, out, ddof, keepdims, where, correction, mean)


def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=None,
    mean=None,
    correction=None,
):
    """Return the standard deviation over ``axis`` (jax.numpy.std); ``mean`` as in ``var``.

    As in JAX, one program ``_std`` (the square root of ``_var``'s).
    """
    a, ddof, where, mean, axes = _var_operands("std", a, axis, out, ddof, where, correction, mean)
    return _std_program(a, ddof, where, mean, name="std", axes=axes, dtype=dtype, keepdims=keepdims)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Return the variance over ``axis`` ignoring NaN (jax.numpy.nanvar); ``mean`` as in ``var``.

    An integer ``dtype`` gives an integer result (the quotient truncated), as in JAX.
    """
    return _nanvar("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Return the standard deviation over ``axis`` ignoring NaN (jax.numpy.nanstd)."""
    return lax.sqrt(_nanvar("nanstd", a, axis, dtype, out, ddof, keepdims, where, mean))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Return the (weighted) average over ``axis`` (jax.numpy.average).

    ``weights`` has ``a``'s shape, or is 1-d along a single ``axis``; with
    ``returned`` the sum of the weights comes too, broadcast to the result.
    """
    a = _prepare("average", a, None)
    av = aval(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        axes = canonicalize_axes(axis, av.ndim)
        count = _scalar(math.prod(av.shape[i] for i in axes), aval(avg).dtype)
        return (avg, lax.full_like(avg, count)) if returned else avg
    weights = _asarray("average", weights)
    dtype = to_inexact(_util.result_type(a, weights)[0])
    a, weights = convert(a, dtype), convert(weights, dtype, False)
    wv = aval(weights)
    axes = canonicalize_axes(axis, av.ndim)
    if wv.shape != av.shape:
        if axis is None:
            raise ValueError("Axis must be specified when shapes of a and weights differ.")
        if wv.shape != tuple(av.shape[i] for i in axes):
            raise ValueError(
                "Shape of weights must be consistent with shape of a along specified axis."
            )
        weights = lax.broadcast_in_dim(weights, av.shape, axes)
    weight_sum = lax.reduce_sum(weights, axes)
    total = lax.reduce_sum(lax.mul(a, weights), axes)
    avg = _keep(lax.div(total, weight_sum), axes, keepdims)
    if not returned:
        return avg
    return avg, _keep(weight_sum, axes, keepdims)


# --- argmax and argmin ------------------------------------------------------------------------


def _arg(name, lax_fn, a, axis, out, keepdims, skip_nan=False):
    a = _prepare(name, a, out)
    av = aval(a)
    index_dtype = dtypes.default_int_dtype()
    if axis is None:
        flat = lax.reshape(a, (av.size,))
        axes, ax, x = tuple(range(av.ndim)), 0, flat
    else:
        ax = canonicalize_axis(axis, av.ndim)
        axes, x = (ax,), a
    if aval(x).shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    all_nan = None
    if skip_nan and kind(av.dtype) == "f":
        nan = _isnan(x)
        fill = -np.inf if name == "nanargmax" else np.inf
        x = lax.select_n(nan, x, lax.full_like(x, fill))
        all_nan = lax.reduce_and(nan, (ax,))
    result = lax_fn(x, ax, index_dtype)
    if all_nan is not None:
        result = lax.select_n(all_nan, result, lax.full_like(result, -1))
    if axis is None:
        return lax.reshape(result, (1,) * av.ndim) if keepdims else result
    return _keep(result, axes, keepdims)


def argmax(a, axis=None, out=None, keepdims=None):
    """Return the first maximum's index (in the flattened array by default) (jax.numpy.argmax)."""
    return _arg("argmax", lax.argmax, a, axis, out, bool(keepdims))


def argmin(a, axis=None, out=None, keepdims=None):
    """Return the first minimum's index (in the flattened array by default) (jax.numpy.argmin)."""
    return _arg("argmin", lax.argmin, a, axis, out, bool(keepdims))


def nanargmax(a, axis=None, out=None, keepdims=None):
    """Return the index of the maximum ignoring NaN (-1 for all-NaN) (jax.numpy.nanargmax)."""
    return _arg("nanargmax", lax.argmax, a, axis, out, bool(keepdims), skip_nan=True)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """Return the index of the minimum ignoring NaN (-1 for all-NaN) (jax.numpy.nanargmin)."""
    return _arg("nanargmin", lax.argmin, a, axis, out, bool(keepdims), skip_nan=True)


# --- quantiles --------------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _take_last(x, index):
    """Pick ``x[..., index[q, ...]]``: ``x`` is (B..., n), ``index`` (Q, B...) -> (Q, B...)."""
    from ._indexing import take_along_axis

    picked = take_along_axis(
        lax.expand_dims(x, (0,)), lax.expand_dims(index, (aval(index).ndim,)), -1
    )
    return lax.squeeze(picked, (aval(picked).ndim - 1,))


def _take_columns(x, index):
    """Pick ``x[..., index[q]]``: ``x`` is (B..., n), ``index`` (Q,) within [0, n) -> (Q, B...)."""
    nb = aval(x).ndim - 1
    picked = lax.gather(
        x,
        lax.expand_dims(index, (1,)),
        lax.GatherDimensionNumbers(
            offset_dims=tuple(range(1, nb + 1)), collapsed_slice_dims=(nb,), start_index_map=(nb,)
        ),
        slice_sizes=(*aval(x).shape[:nb], 1),
        mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS,
    )
    return picked


def _snap(pos):
    """Round positions within a few ulps of an integer to it.

    ``q`` often arrives rounded (``percentile``'s ``q / 100`` may compile to
    ``q * 0.01``, so 100 becomes 0.99999994), and ``floor``/``ceil`` would then
    pick the neighbouring element; numpy, computing in float64, does not.
    """
    dtype = aval(pos).dtype
    rounded = lax.round(pos)
    tolerance = lax.mul(
        lax.max(lax.abs(rounded), _scalar(1, dtype)), _scalar(2 * dtypes.finfo(dtype).eps, dtype)
    )
    near = lax.le(lax.abs(lax.sub(pos, rounded)), tolerance)
    return lax.select_n(near, pos, rounded)


def _weights_like(weights, shape, axis):
    """Broadcast quantile ``weights`` to ``shape``: equal to it, or to the reduced axes' sizes."""
    wshape = aval(weights).shape
    if wshape == tuple(shape):
        return weights
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    axes = canonicalize_axes(axis, len(shape))
    reduced = tuple(shape[i] for i in axes)
    if wshape != reduced:
        raise ValueError(f"Weights shape {wshape} must match reduction axes {reduced}")
    return lax.broadcast_in_dim(weights, tuple(shape), axes)


def _weighted_inverted_cdf(x, w, q, skip_nan):
    """The weighted ``inverted_cdf`` quantiles of sorted ``x`` (B..., n) with weights ``w``.

    The result is the first value whose cumulative weight reaches ``q`` times the
    total; negative or NaN weights, and (without ``skip_nan``) NaN data, give NaN.
    """
    dtype = aval(x).dtype
    last_axis = aval(x).ndim - 1
    batch = aval(x).shape[:last_axis]
    n = aval(x).shape[last_axis]
    nan = _isnan(x)
    zero = lax.full_like(w, 0)
    bad = lax.bitwise_or(lax.lt(w, zero), _isnan(w))
    cum = lax.cumsum(lax.select_n(lax.bitwise_or(bad, nan), w, zero), axis=last_axis)
    total = lax.squeeze(lax.slice_in_dim(cum, n - 1, n, axis=last_axis), (last_axis,))
    q_shape = aval(q).shape
    qn = len(q_shape)
    out_shape = (*q_shape, *batch)
    target = lax.mul(
        lax.broadcast_in_dim(q, out_shape, tuple(range(qn))),
        lax.broadcast_in_dim(total, out_shape, tuple(range(qn, len(out_shape)))),
    )
    full = (*out_shape, n)
    below = lax.lt(
        lax.broadcast_in_dim(cum, full, tuple(range(qn, len(full)))),
        lax.broadcast_in_dim(target, full, tuple(range(len(out_shape)))),
    )
    index_dtype = dtypes.default_int_dtype()
    idx = lax.reduce_sum(lax.convert_element_type(below, index_dtype), (len(out_shape),))
    if skip_nan:
        valid = lax.reduce_sum(
            lax.convert_element_type(lax.bitwise_not(nan), index_dtype), (last_axis,)
        )
    else:
        valid = lax.full(batch, n, index_dtype)
    limit = lax.broadcast_in_dim(
        lax.sub(valid, lax.full_like(valid, 1)), out_shape, tuple(range(qn, len(out_shape)))
    )
    idx = lax.max(lax.full_like(idx, 0), lax.min(idx, limit))
    flat_idx = idx if qn else lax.reshape(idx, (1, *batch))
    result = _take_last(x, flat_idx)
    if not qn:
        result = lax.reshape(result, batch)
    if skip_nan:
        nan_slice = lax.eq(valid, lax.full_like(valid, 0))
    else:
        nan_slice = lax.reduce_or(nan, (last_axis,))
    force = lax.bitwise_or(lax.reduce_or(bad, (last_axis,)), nan_slice)
    force = lax.broadcast_in_dim(force, out_shape, tuple(range(qn, len(out_shape))))
    return lax.select_n(force, result, lax.full_like(result, np.nan, dtype))


def _quantile(name, a, q, axis, out, method, keepdims, skip_nan, weights=None, overwrite=False):
    if out is not None or overwrite:
        family = "nanquantile" if skip_nan else "quantile"
        raise ValueError(
            f"jnp.{name}: jax.numpy.{family} does not support overwrite_input=True or out != None"
        )
    if method not in _METHODS:
        raise ValueError(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or "
            "'inverted_cdf'"
        )
    a = _asarray(name, a)
    # As JAX: the result has a's dtype made inexact, whatever q's (int32 a: float32, x64 too).
    dtype = to_inexact(aval(a).dtype)
    if weights is not None:
        weights = _asarray(name, weights)
        if kind(aval(weights).dtype) == "c":
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(
                f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights."
            )
        # As JAX: data and weights are promoted together, and the result takes that type.
        dtype = to_inexact(_util.result_type(a, weights)[0])
        weights = _weights_like(weights, aval(a).shape, axis)
    # A Python number (median's 0.5) stays a literal of the program: as an Array it
    # would be one more operand of every call.
    q = np.asarray(q, dtype) if type(q) in (int, float) else _asarray(name, q)
    if kind(dtype) == "c":
        raise ValueError(
            f"{name} does not support complex input, as the operation is poorly defined."
        )
    a = convert(a, dtype)
    if aval(a).weak_type:
        a = _convert_element_type(a, dtype, weak_type=False)
    q = lax.convert_element_type(q, dtype)
    av = aval(a)
    q_shape = aval(q).shape
    if len(q_shape) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
    axes = canonicalize_axes(axis, av.ndim)
    rest = [i for i in range(av.ndim) if i not in axes]
    x = lax.transpose(a, tuple(rest + list(axes)))
    batch = tuple(av.shape[i] for i in rest)
    n = math.prod(av.shape[i] for i in axes)
    x = lax.reshape(x, batch + (n,))
    if n == 0:
        raise ValueError(f"jnp.{name} of an empty array (reduced size 0) is undefined")
    nan = _isnan(x)
    if not skip_nan:
        any_nan = lax.reduce_or(nan, (len(batch),))
    if weights is not None:
        w = convert(weights, dtype, False)
        w = lax.reshape(lax.transpose(w, tuple(rest + list(axes))), batch + (n,))
        # NaNs sort last, whatever their sign bit, so they drop out of the cumulative weights.
        x = lax.select_n(nan, x, lax.full_like(x, np.nan))
        x, w = lax.sort_key_val(x, w, dimension=len(batch))
        result = _weighted_inverted_cdf(x, w, q, skip_nan)
        if keepdims:
            kept = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
            result = lax.reshape(result, (*q_shape, *kept))
        return result
    x = lax.sort(x, dimension=len(batch))
    qs = q if q_shape else lax.reshape(q, (1,))
    nq = aval(qs).shape[0]
    full = (nq, *batch)
    if skip_nan:
        count = lax.reduce_sum(lax.convert_element_type(lax.bitwise_not(nan), dtype), (len(batch),))
        count = lax.broadcast_in_dim(count, full, tuple(range(1, len(full))))
        qb = lax.broadcast_in_dim(qs, full, (0,))
    else:
        # Every slice has n values: the positions are the same for all of them, so
        # compute them once per q and pick whole columns (fewer ops and no index
        # constants in the program; the same values as per slice).
        count = lax.full((nq,), n, dtype)
        qb = qs
    last = lax.sub(count, _scalar(1, dtype))
    if method == "inverted_cdf":
        pos = lax.sub(lax.ceil(_snap(lax.mul(qb, count))), _scalar(1, dtype))
        low = high = lax.clamp(_scalar(0, dtype), pos, lax.max(last, _scalar(0, dtype)))
        high_weight = lax.full_like(low, 0)
    else:
        pos = _snap(lax.mul(qb, last))
        low, high = lax.floor(pos), lax.ceil(pos)
        high_weight = lax.sub(pos, low)
        zero = _scalar(0, dtype)
        low = lax.max(zero, lax.min(low, last))
        high = lax.max(zero, lax.min(high, last))
    index_dtype = dtypes.default_int_dtype()
    pick = _take_last if skip_nan else _take_columns
    low_value = pick(x, lax.convert_element_type(low, index_dtype))
    high_value = pick(x, lax.convert_element_type(high, index_dtype))
    if not skip_nan:
        high_weight = lax.broadcast_in_dim(high_weight, full, (0,))
    if method == "linear":
        result = lax.add(
            lax.mul(low_value, lax.sub(_scalar(1, dtype), high_weight)),
            lax.mul(high_value, high_weight),
        )
    elif method in ("lower", "inverted_cdf"):
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = lax.select_n(lax.le(high_weight, _scalar(0.5, dtype)), high_value, low_value)
    else:  # midpoint
        result = lax.mul(lax.add(low_value, high_value), _scalar(0.5, dtype))
    if not skip_nan:
        nan_b = lax.broadcast_in_dim(any_nan, full, tuple(range(1, len(full))))
        result = lax.select_n(nan_b, result, lax.full_like(result, np.nan))
    if keepdims:
        kept = tuple(1 if i in axes else d for i, d in enumerate(av.shape))
        result = lax.reshape(result, (nq, *kept))
    if not q_shape:
        result = lax.reshape(result, aval(result).shape[1:])
    return result


def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """Return the ``q``-th quantiles over ``axis`` (jax.numpy.quantile).

    ``q`` is a scalar or 1-d (its axis comes first in the result); methods
    ``linear``, ``lower``, ``higher``, ``midpoint``, ``nearest`` (ties go to
    the lower value, as in JAX) and ``inverted_cdf``. A NaN in a slice makes
    its quantiles NaN.
    """
    return _quantile("quantile", a, q, axis, out, method, keepdims, False, weights, overwrite_input)


def nanquantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """Return the ``q``-th quantiles over ``axis`` ignoring NaN (jax.numpy.nanquantile)."""
    return _quantile(
        "nanquantile", a, q, axis, out, method, keepdims, True, weights, overwrite_input
    )


def _percent(q):
    from ._ufuncs import divide

    return divide(_asarray("percentile", q), 100)


def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    out_sharding=None,
):
    """Return the ``q``-th percentiles over ``axis`` (jax.numpy.percentile).

    With ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current
    mesh) the percentiles are computed with the mesh's explicit axes automatic
    and the result takes that sharding, as in JAX.
    """
    q = _percent(q)

    def percentiles(a, q, weights):
        return _quantile(
            "percentile", a, q, axis, out, method, keepdims, False, weights, overwrite_input
        )

    if out_sharding is not None:
        from modjax.sharding import auto_axes, reshard  # noqa: PLC0415 - only sharded programs
        from modjax.sharding.constraint import out_named_sharding  # noqa: PLC0415

        a = _asarray("percentile", a)
        sharding = out_named_sharding(out_sharding, "jnp.percentile", [aval(a)])
        explicit = () if sharding is None else sharding.mesh.explicit_axes
        if explicit:
            return auto_axes(percentiles, out_sharding=sharding, axes=explicit)(a, q, weights)
        if sharding is not None:
            return reshard(percentiles(a, q, weights), sharding)
    return percentiles(a, q, weights)


def nanpercentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """Return the ``q``-th percentiles over ``axis`` ignoring NaN (jax.numpy.nanpercentile)."""
    q = _percent(q)
    return _quantile(
        "nanpercentile", a, q, axis, out, method, keepdims, True, weights, overwrite_input
    )


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Return the median over ``axis``: the midpoint of the middle values (jax.numpy.median)."""
    return _quantile(
        "median", a, 0.5, axis, out, "midpoint", keepdims, False, None, overwrite_input
    )


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Return the median over ``axis`` ignoring NaN (jax.numpy.nanmedian)."""
    return _quantile(
        "nanmedian", a, 0.5, axis, out, "midpoint", keepdims, True, None, overwrite_input
    )


# The parameters that take values: a Python number there is an operand, so a new
# one compiles nothing (as in JAX, whose reductions trace them).
_VALUES = {
    **dict.fromkeys("amax amin max min nanmax nanmin nanprod nansum prod sum".split(), "initial"),
    **dict.fromkeys("std var".split(), "ddof correction"),
    **dict.fromkeys("nanstd nanvar".split(), "ddof"),
    **dict.fromkeys("nanpercentile nanquantile percentile quantile".split(), "q"),
}
# The static parameters of those made bare PjitFunctions (JAX's ``static_argnames``).
_STATICS = {
    **dict.fromkeys("median nanmedian".split(), "axis overwrite_input keepdims"),
    **dict.fromkeys(
        "nanpercentile nanquantile percentile quantile".split(),
        "axis overwrite_input keepdims method",
    ),
}
for _name in __all__:
    globals()[_name] = compiled_on_arrays(
        globals()[_name], _VALUES.get(_name, ""), _STATICS.get(_name)
    )
del _name
