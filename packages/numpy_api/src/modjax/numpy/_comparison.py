"""Comparisons of whole arrays and dtype/shape predicates: ``isclose``, ``allclose``,
``array_equal``, ``array_equiv``, ``iscomplexobj``, ``isrealobj``, ``isscalar``, ``can_cast``.

``isclose`` is ``|a - b| <= atol + rtol * |b|`` with infinities equal only to
themselves and NaNs equal only under ``equal_nan``; integer and bool operands
compare exactly, as in JAX. The whole-array predicates return a bool Array
(``array_equal`` of differently shaped arrays is ``Array(False)``), the
dtype predicates Python bools.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind, real_dtype
from modjax.tracecore import dtypes

from ._eager_jit import compile_on_arrays
from ._util import ARRAY_TYPES, aval, check_arraylike, promote_args, shape_of

__all__ = [
    "allclose",
    "array_equal",
    "array_equiv",
    "can_cast",
    "iscomplexobj",
    "isclose",
    "isrealobj",
    "isscalar",
    "iterable",
]


def _isfinite(x):
    if kind(aval(x).dtype) == "c":
        re, im = lax.real(x), lax.imag(x)
        return lax.bitwise_and(lax.is_finite(re), lax.is_finite(im))
    return lax.is_finite(x)


def _isnan(x):
    return lax.ne(x, x)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False):
    """Tell elementwise whether ``a`` and ``b`` are equal within a tolerance (jax.numpy.isclose).

    ``|a - b| <= atol + rtol * |b|``, computed in the promoted dtype; infinities
    are close only to an equal infinity; NaNs are close to NaNs only with
    ``equal_nan``. Integer and bool arrays compare exactly.
    """
    check_arraylike("isclose", a, b)
    a, b = promote_args("isclose", a, b)
    dtype = aval(a).dtype
    if kind(dtype) not in "fc":
        from ._ufuncs import equal

        return equal(a, b)
    real = real_dtype(dtype)
    rtol = _tolerance(rtol, real)
    atol = _tolerance(atol, real)
    from ._util import broadcast_all

    a, b = broadcast_all(a, b)
    diff = lax.abs(lax.sub(a, b))
    bound = lax.add(atol, lax.mul(rtol, lax.abs(b)))
    close = lax.bitwise_and(_isfinite(b), lax.le(diff, bound))
    out = lax.bitwise_or(lax.eq(a, b), close)
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(_isnan(a), _isnan(b)))
    return out


def _tolerance(value: Any, dtype: np.dtype):
    if isinstance(value, ARRAY_TYPES):
        return lax.convert_element_type(value, dtype)
    with np.errstate(over="ignore"):
        return np.asarray(value).astype(dtype)[()]


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False):
    """Tell whether all elements of ``a`` and ``b`` are close (jax.numpy.allclose)."""
    from ._reductions import all as _all

    return _all(isclose(a, b, rtol, atol, equal_nan))


def _as_array(x: Any):
    if isinstance(x, ARRAY_TYPES):
        return x
    from ._creation import asarray

    return asarray(x)


def array_equal(a1: Any, a2: Any, equal_nan: bool = False):
    """Tell whether two arrays have the same shape and elements (jax.numpy.array_equal).

    Arrays of different shapes are not equal (no error); ``equal_nan`` makes
    NaN equal to NaN.
    """
    from ._creation import asarray
    from ._reductions import all as _all
    from ._ufuncs import equal

    try:
        a1, a2 = _as_array(a1), _as_array(a2)
    except TypeError:
        return asarray(False)
    if aval(a1).shape != aval(a2).shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        a1, a2 = promote_args("array_equal", a1, a2)
        if kind(aval(a1).dtype) in "fc":
            eq = lax.bitwise_or(eq, lax.bitwise_and(_isnan(a1), _isnan(a2)))
    return _all(eq)


def array_equiv(a1: Any, a2: Any):
    """Tell whether two arrays are equal after broadcasting (jax.numpy.array_equiv).

    Shapes that do not broadcast give ``Array(False)``.
    """
    from ._creation import asarray
    from ._reductions import all as _all
    from ._ufuncs import equal

    try:
        a1, a2 = _as_array(a1), _as_array(a2)
    except TypeError:
        return asarray(False)
    try:
        np.broadcast_shapes(aval(a1).shape, aval(a2).shape)
    except ValueError:
        return asarray(False)
    return _all(equal(a1, a2))


def _dtype_of(x: Any) -> np.dtype:
    if isinstance(x, ARRAY_TYPES):
        return aval(x).dtype
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    return np.asarray(x).dtype


def iscomplexobj(x: Any) -> bool:
    """Tell whether ``x`` has a complex dtype (jax.numpy.iscomplexobj)."""
    if x is None:
        return False
    return kind(_dtype_of(x)) == "c"


def isrealobj(x: Any) -> bool:
    """Tell whether ``x`` does not have a complex dtype (jax.numpy.isrealobj)."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """Tell whether ``element`` is a Python/numpy scalar or a 0-d array (jax.numpy.isscalar).

    Unlike numpy, 0-d arrays (modjax's and numpy's) count as scalars, as in JAX.
    """
    if hasattr(element, "__jax_array__"):
        element = element.__jax_array__()
    if isinstance(element, ARRAY_TYPES + (np.ndarray,)):
        return len(shape_of(element)) == 0
    return bool(np.isscalar(element))


def iterable(y: Any) -> bool:
    """Tell whether ``y`` can be iterated over (jax.numpy.iterable; a 0-d array cannot)."""
    return bool(np.iterable(y))


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Tell whether a cast between two dtypes (or arrays' dtypes) is allowed (jax.numpy.can_cast).

    ``casting`` is numpy's: ``"no"``/``"equiv"`` (same dtype), ``"safe"``
    (no value can change), ``"same_kind"`` (safe, or within a kind or to a
    higher kind), ``"unsafe"``. Python scalars are refused, as in numpy 2.
    """
    if casting not in _CASTINGS:
        raise ValueError(f"casting must be one of {_CASTINGS}, got {casting!r}")
    if type(from_) in (bool, int, float, complex):
        raise TypeError(
            "can_cast() does not support Python ints, floats, and complex because the result "
            "used to depend on the value."
        )
    source = _dtype_of(from_) if isinstance(from_, ARRAY_TYPES + (np.ndarray,)) else None
    source = dtypes.dtype(from_) if source is None else source
    target = dtypes.dtype(to)
    if casting in ("no", "equiv"):
        return source == target
    if casting == "unsafe":
        return True
    if source.type.__module__ == "numpy" and target.type.__module__ == "numpy":
        return bool(np.can_cast(source, target, casting))
    if np.can_cast(source, target, "safe"):
        return True
    if casting == "safe":
        return False
    ks, kt = kind(source), kind(target)  # an ml_dtypes type (bfloat16, float8, int4) is involved
    if ks == kt:
        return True
    return _KIND_RANK.get(ks, 9) < _KIND_RANK.get(kt, -1) and not (ks in "iu" and kt in "iu")


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(
    globals(),
    "allclose array_equal array_equiv isclose",
    values={
        "allclose": "b rtol atol",
        "isclose": "b rtol atol",
        "array_equal": "a2",
        "array_equiv": "a2",
    },
)
