"""Comparing values and types: what "agrees" means for each dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval

__all__ = ["as_list", "aval_of", "assert_same_type", "assert_values_close", "host", "tolerance"]

# Relative (and absolute) tolerance of two computations of the same value by XLA
# (a batched op against a loop, a fused program against one op), by dtype name.
_TOLERANCE = {
    "float16": 2e-3,
    "bfloat16": 2e-2,
    "float32": 1e-5,
    "float64": 1e-12,
    "complex64": 1e-5,
    "complex128": 1e-12,
}


def tolerance(dtype: Any, table: dict | None = None) -> float:
    """Return the tolerance of ``dtype`` in ``table`` (default: agreement of two XLA runs)."""
    name = np.dtype(dtype).name if not dtypes.issubdtype(dtype, dtypes.extended) else ""
    return (table or _TOLERANCE).get(name, 0.0)


def as_list(prim, out) -> list:
    """Return a primitive's result as a list of its outputs."""
    return list(out) if prim.multiple_results else [out]


def host(value: Any) -> np.ndarray:
    """Return ``value`` as a numpy array; an array of an extended dtype gives its data."""
    aval = to_aval(value)
    if dtypes.issubdtype(aval.dtype, dtypes.extended):
        # The physical data: key data for PRNG keys, the primal values for EArrays.
        return np.asarray(value._base_array)
    return np.asarray(value)


def like_extended(arg: Any, data: np.ndarray) -> Any:
    """Return ``data`` (physical data) as an array of ``arg``'s extended dtype."""
    from modjax.runtime import device_put
    from modjax.runtime.extended import wrap

    dtype = to_aval(arg).dtype
    element_ndim = len(np.shape(arg._base_array)) - len(np.shape(arg))
    shape = data.shape[: data.ndim - element_ndim]
    return wrap(ShapedArray(shape, dtype), device_put(data))


def aval_of(value: Any) -> ShapedArray:
    """Return ``value``'s abstract value (``value`` itself when it is one)."""
    return value if isinstance(value, ShapedArray) else to_aval(value)


def assert_same_type(actual: Any, expected: Any, what: str) -> None:
    """Raise AssertionError unless the avals have one shape, dtype and weak type."""
    a, e = aval_of(actual), aval_of(expected)
    if (a.shape, a.dtype, a.weak_type) != (e.shape, e.dtype, e.weak_type):
        raise AssertionError(
            f"{what}: {a} (weak_type={a.weak_type}) vs {e} (weak_type={e.weak_type})"
        )


def assert_values_close(actual: Any, expected: Any, what: str, table: dict | None = None):
    """Raise AssertionError unless the values agree: exactly, or within the dtype's tolerance.

    Shapes and dtypes must be equal; NaNs must sit at the same places.
    """
    a, e = host(actual), host(expected)
    if a.shape != e.shape or a.dtype != e.dtype:
        raise AssertionError(f"{what}: {a.dtype}{list(a.shape)} vs {e.dtype}{list(e.shape)}")
    if a.dtype == dtypes.float0:
        return
    if not dtypes.issubdtype(a.dtype, np.inexact):
        np.testing.assert_array_equal(a, e, err_msg=what)
        return
    wide = np.complex128 if dtypes.issubdtype(a.dtype, np.complexfloating) else np.float64
    tol = tolerance(a.dtype, table)
    np.testing.assert_allclose(
        a.astype(wide), e.astype(wide), rtol=tol, atol=tol, equal_nan=True, err_msg=what
    )
