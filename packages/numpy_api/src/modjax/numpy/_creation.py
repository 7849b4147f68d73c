"""Making arrays: ``array``, ``asarray``, ``zeros``, ``ones``, ``full``, ``arange``, ...

Host data (Python scalars, nested lists, numpy arrays) is converted with numpy
to its canonical dtype (float64 becomes float32 with x64 off) and placed on the
default device with runtime's ``device_put``; arrays and tracers are converted
with lax. A Python scalar makes a weakly typed array, as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.runtime import Array, device_put
from modjax.tracecore import dtypes
from modjax.tracecore.core import concrete_or_error

from ._util import ARRAY_TYPES, PYTHON_SCALARS, aval, canonical_dtype, convert, shape_of

__all__ = [
    "arange",
    "array",
    "asarray",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "identity",
    "linspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]


def _host_array(value: Any, dtype: np.dtype | None) -> np.ndarray:
    """Convert host data to a numpy array of its canonical (or the given) dtype.

    numpy values convert with ``astype`` (integers wrap: ``jnp.int8(np.int32(300))``
    is 44); Python data converts with ``np.asarray``, so an out-of-range Python
    int raises OverflowError (``jnp.int8(300)``, ``jnp.array(2**31)``).
    """
    if value is None:
        raise ValueError("None is not a valid value for jnp.array")
    if isinstance(value, np.ndarray | np.generic):
        arr = _checked(np.asarray(value), value)
        if dtype is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                return arr.astype(dtype)
        return _canonical(arr)
    if dtype is not None:
        return np.asarray(value, dtype=dtype)
    if type(value) is int:
        dtypes.check_int_range(value, dtypes.default_int_dtype())
    return _canonical(_checked(np.asarray(value), value))


def _checked(arr: np.ndarray, value: Any) -> np.ndarray:
    if arr.dtype not in _SUPPORTED:
        raise TypeError(
            f"Value {value!r} with dtype {arr.dtype} is not a valid modjax array type. Only "
            "arrays of numeric types are supported."
        )
    return arr


_SUPPORTED = frozenset(dtypes.supported_dtypes())


def _canonical(arr: np.ndarray) -> np.ndarray:
    canonical = dtypes.canonicalize_dtype(arr.dtype)
    if canonical == arr.dtype:
        return arr
    if arr.dtype.kind in "iu" and arr.size:
        info = np.iinfo(canonical)
        low, high = arr.min(), arr.max()
        if low < info.min or high > info.max:
            bad = high if high > info.max else low
            raise OverflowError(f"Python integer {bad} out of bounds for {canonical}")
    return arr.astype(canonical)


def _nested_leaves(obj: Any) -> list:
    if isinstance(obj, list | tuple):
        return [leaf for item in obj for leaf in _nested_leaves(item)]
    return [obj]


def _stack_nested(obj: Any, dtype: np.dtype) -> Any:
    if isinstance(obj, list | tuple):
        parts = [_stack_nested(item, dtype) for item in obj]
        shapes = {shape_of(p) for p in parts}
        if len(shapes) != 1:
            raise ValueError(
                "setting an array element with a sequence: the nested sequences have "
                f"inhomogeneous shapes {sorted(shapes)}"
            )
        if not parts:
            return np.zeros((0,), dtype)
        return lax.concatenate([lax.expand_dims(p, (0,)) for p in parts], 0)
    return convert(obj, dtype, False)


def array(
    object: Any, dtype: Any = None, copy: bool = True, order: str | None = "K", ndmin: int = 0
):  # noqa: A002
    """Create an array from an array, scalar or nested sequence (jax.numpy.array).

    Python scalars give weakly typed arrays; lists of arrays are stacked; host
    data is placed on the default device. A Python int out of the default
    integer range raises OverflowError, as in JAX.
    """
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"jnp.array: order={order!r} is not supported")
    dt = None if dtype is None else canonical_dtype(dtype)
    if isinstance(object, ARRAY_TYPES):
        out = object if dt is None else convert(object, dt)
        if copy and out is object and isinstance(object, Array):
            out = lax.copy(object)
    elif type(object) in PYTHON_SCALARS:
        out = device_put(object) if dt is None else device_put(_host_array(object, dt))
    elif isinstance(object, list | tuple) and any(
        isinstance(leaf, ARRAY_TYPES) for leaf in _nested_leaves(object)
    ):
        leaves = _nested_leaves(object)
        if dt is None:
            dt = dtypes.result_type(*leaves)
        out = _stack_nested(object, dt)
        if isinstance(out, np.ndarray):
            out = device_put(out)
    elif hasattr(object, "__jax_array__"):
        return array(object.__jax_array__(), dtype, copy, order, ndmin)
    else:
        out = device_put(_host_array(object, dt))
    ndim = aval(out).ndim
    if ndmin > ndim:
        out = lax.expand_dims(out, tuple(range(ndmin - ndim)))
    return out


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None):
    """Convert ``a`` to an array, without copying arrays that already fit (jax.numpy.asarray)."""
    return array(a, dtype=dtype, copy=bool(copy), order=order)


def _shape(shape: Any, name: str) -> tuple[int, ...]:
    if isinstance(shape, Sequence):
        dims = tuple(operator.index(concrete_or_error(d, f"{name} shape")) for d in shape)
    else:
        dims = (operator.index(concrete_or_error(shape, f"{name} shape")),)
    if any(d < 0 for d in dims):
        raise TypeError(f"{name}: shape must have every element be nonnegative, got {dims}.")
    return dims


def _dtype_or_default(dtype: Any) -> np.dtype:
    return dtypes.default_float_dtype() if dtype is None else canonical_dtype(dtype)


def zeros(shape: Any, dtype: Any = None, *, device=None):
    """Return an array of ``shape`` filled with zeros, float32 by default (jax.numpy.zeros)."""
    return lax.full(_shape(shape, "zeros"), 0, _dtype_or_default(dtype))


def ones(shape: Any, dtype: Any = None, *, device=None):
    """Return an array of ``shape`` filled with ones, float32 by default (jax.numpy.ones)."""
    return lax.full(_shape(shape, "ones"), 1, _dtype_or_default(dtype))


def empty(shape: Any, dtype: Any = None, *, device=None):
    """Return a zero-filled array: XLA has no uninitialized memory (jax.numpy.empty)."""
    return zeros(shape, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device=None):
    """Return an array of ``shape`` filled with ``fill_value`` (jax.numpy.full)."""
    shape = _shape(shape, "full")
    if shape_of(fill_value) == ():
        return lax.full(shape, fill_value, None if dtype is None else canonical_dtype(dtype))
    from ._manipulation import broadcast_to

    return broadcast_to(asarray(fill_value, dtype=dtype), shape)


def _like(name: str, a: Any, value: Any, dtype: Any, shape: Any):
    av = aval(a)
    dt = av.dtype if dtype is None else canonical_dtype(dtype)
    sh = av.shape if shape is None else _shape(shape, name)
    if shape_of(value) != ():
        from ._manipulation import broadcast_to

        return broadcast_to(asarray(value, dtype=dt), sh)
    return lax.full(sh, value, dt)


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device=None):
    """Return zeros with the shape and dtype of ``a`` (jax.numpy.zeros_like)."""
    return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device=None):
    """Return ones with the shape and dtype of ``a`` (jax.numpy.ones_like)."""
    return _like("ones_like", a, 1, dtype, shape)


def empty_like(a: Any, dtype: Any = None, shape: Any = None, *, device=None):
    """Return zeros with the shape and dtype of ``a`` (jax.numpy.empty_like)."""
    return _like("empty_like", a, 0, dtype, shape)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *, device=None):
    """Return ``fill_value`` broadcast to the shape of ``a``, in its dtype (jax.numpy.full_like)."""
    return _like("full_like", a, fill_value, dtype, shape)


def _static_scalar(x: Any, name: str):
    value = concrete_or_error(x, f"the {name} argument of jnp.arange")
    if isinstance(value, np.ndarray | np.generic) or hasattr(value, "__array__"):
        value = np.asarray(value)
        if value.ndim:
            raise ValueError(f"jnp.arange: {name} must be a scalar, got shape {value.shape}")
        value = value.item()
    return value


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *, device=None):
    """Return evenly spaced values in ``[start, stop)`` by ``step`` (jax.numpy.arange).

    The bounds must be concrete (not traced). Integer ranges from 0 lower to
    ``iota``; others are computed with numpy. The dtype defaults to the
    promoted type of the bounds (int32 or float32 with x64 off).
    """
    values = [
        _static_scalar(v, n)
        for v, n in ((start, "start"), (stop, "stop"), (step, "step"))
        if v is not None
    ]
    dt = canonical_dtype(dtype) if dtype is not None else dtypes.result_type(*values)
    start_v = values[0]
    if stop is None and step is None:
        if kind(dt) in "iu" and isinstance(start_v, int):
            return lax.iota(dt, max(int(start_v), 0))
        return device_put(np.arange(start_v, dtype=dt))
    stop_v = _static_scalar(stop, "stop") if stop is not None else None
    step_v = _static_scalar(step, "step") if step is not None else None
    if step_v is None and kind(dt) in "iu" and all(isinstance(v, int) for v in values):
        n = max(int(stop_v) - int(start_v), 0)
        out = lax.iota(dt, n)
        return lax.add(out, np.asarray(start_v).astype(dt)[()]) if start_v else out
    return device_put(np.arange(start_v, stop_v, step_v).astype(dt))


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device=None,
):
    """Return ``num`` evenly spaced values from ``start`` to ``stop`` (jax.numpy.linspace).

    ``start`` and ``stop`` must be concrete scalars here (traced bounds are not
    supported yet).
    """
    start_v = _static_scalar(start, "start")
    stop_v = _static_scalar(stop, "stop")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dt = (
        canonical_dtype(dtype)
        if dtype is not None
        else dtypes.canonicalize_dtype(
            dtypes.promote_types(dtypes.result_type(start_v, stop_v), float)
        )
    )
    values, step = np.linspace(start_v, stop_v, num, endpoint=endpoint, retstep=True)
    out = device_put(values.astype(dt))
    return (out, step) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None, *, device=None):  # noqa: N803
    """Return a 2-D array with ones on the ``k``-th diagonal, zeros elsewhere (jax.numpy.eye)."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    k = operator.index(k)
    rows = lax.broadcasted_iota(np.int32, (n, m), 0)
    cols = lax.broadcasted_iota(np.int32, (n, m), 1)
    return lax.convert_element_type(
        lax.eq(lax.add(rows, np.int32(k)), cols), _dtype_or_default(dtype)
    )


def identity(n: int, dtype: Any = None):
    """Return the ``n`` by ``n`` identity matrix (jax.numpy.identity)."""
    return eye(n, dtype=dtype)
