"""Small lax helpers about whole arrays: ``dtype``, ``empty``, ``broadcast_like``,
``shape_as_value``, ``stage``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from modjax.autodiff import deflinear
from modjax.batching import defvectorized
from modjax.lowering import register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.core import Primitive

from ._common import aval_of
from .structural import broadcast_in_dim, full

__all__ = ["broadcast_like", "dtype", "empty", "shape_as_value", "stage", "stage_p"]


def dtype(x: Any) -> np.dtype:
    """Return the dtype ``x`` has as a modjax value, canonicalized for x64 (jax.lax.dtype).

    ``x`` may also name a dtype (a dtype, a scalar type or its name): an explicit 64-bit
    one warns with x64 off and gives its 32-bit counterpart, as in JAX.
    """
    if x is None:
        raise ValueError("Invalid argument to dtype: None.")
    if isinstance(x, np.dtype | str | type):
        return dtypes.check_and_canonicalize_user_dtype(x, "dtype")
    if not hasattr(x, "shape") and isinstance(getattr(x, "dtype", None), np.dtype):
        return dtypes.canonicalize_dtype(
            x.dtype
        )  # a ShapeDtypeStruct, a numpy scalar type's instance
    return aval_of(x).dtype


def empty(shape: Sequence[int], dtype: Any, *, out_sharding=None):
    """Return an array of ``shape`` and ``dtype`` whose values are unspecified (jax.lax.empty).

    On CPU the values are zeros; programs must not rely on them. ``out_sharding``
    other than None is not supported yet.
    """
    if out_sharding is not None:
        raise NotImplementedError("lax.empty: out_sharding is not supported yet")
    dtype = dtypes.check_and_canonicalize_user_dtype(dtype, "empty")
    return full(shape, np.zeros((), dtype)[()], dtype)


def broadcast_like(arr: Any, like_arr: Any):
    """Broadcast ``arr`` to the shape of ``like_arr``, NumPy style (jax.lax.broadcast_like)."""
    src, like = aval_of(arr), aval_of(like_arr)
    if src.shape == like.shape:
        return arr
    offset = len(like.shape) - len(src.shape)
    compatible = offset >= 0 and all(
        d in (1, t) for d, t in zip(src.shape, like.shape[offset:], strict=True)
    )
    if not compatible:
        raise ValueError(
            f"Incompatible types for broadcasting: input type={src.str_short()} and requested "
            f"type={src.update(shape=like.shape).str_short()}"
        )
    # broadcast_in_dim also stretches the size-1 axes.
    return broadcast_in_dim(arr, like.shape, tuple(range(offset, len(like.shape))))


def shape_as_value(shape: Sequence[int]):
    """Return ``shape`` as an integer array (jax.lax.shape_as_value).

    int32, or int64 when a dimension does not fit; modjax's shapes are static, so
    this is a numpy constant (an empty shape gives an empty device array, as in JAX).
    """
    shape = tuple(int(d) for d in shape)
    fits = all(d <= np.iinfo(np.int32).max for d in shape)
    dt = np.dtype(np.int32 if fits else np.int64)
    if not shape:
        return full((0,), np.array(0, dt))
    return np.asarray(shape, dtype=dt)


# stage: the identity, as an equation, so a constant becomes a value of the trace.
stage_p = Primitive("stage")
stage_p.def_abstract_eval(lambda x: x)
stage_p.def_impl(partial(apply_primitive, stage_p))
register_lowering(stage_p, lambda ctx, x: x)
deflinear(stage_p, lambda ct, x: [ct])
defvectorized(stage_p)


def stage(x, /):
    """Lift ``x`` (a Python scalar, numpy array, ...) into the current trace (jax.lax.stage).

    The identity: eagerly it returns a device array; under a transformation the
    value of the trace. (JAX makes a traced constant of it; modjax records one
    ``stage`` equation.)
    """
    return stage_p.bind(x)
