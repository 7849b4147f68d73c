"""Argument checks shared by the samplers: keys, dtypes, shapes (jax.random's conventions).

Each helper raises the error class and message JAX 0.10 raises for the same
mistake, so that a program ported from JAX fails the same way.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from modjax.sharding import reshard
from modjax.sharding.constraint import placed_out_sharding
from modjax.tracecore import core, dtypes
from modjax.tracecore.abstract import canonicalize_shape

from ._keys import check_key


def single_key(name: str, key: Any):
    """Return ``key`` as a typed scalar key; raise JAX's ValueError for a key array."""
    return check_key(key, name, allow_batched=False)


def user_dtype(dtype: Any, name: str = "") -> np.dtype:
    """Canonicalize a user's dtype as JAX does (Python types give the defaults).

    An explicit 64-bit dtype with x64 off is truncated with JAX's UserWarning;
    the samplers name no function in it, as in JAX.
    """
    return dtypes.check_and_canonicalize_user_dtype(dtype, name or None)


def float_dtype(name: str, dtype: Any, *, inexact: bool = False) -> np.dtype:
    """Return the canonical float dtype for sampler ``name`` (``float`` when None).

    Raise JAX's ValueError when it is not a float (or, with ``inexact``, not a
    float or complex) dtype.
    """
    dt = user_dtype(float if dtype is None else dtype)
    if inexact:
        if not dtypes.issubdtype(dt, np.inexact):
            raise ValueError(
                f"dtype argument to `{name}` must be a float or complex dtype, got {dt}"
            )
    elif not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


def int_dtype(dtype: Any) -> np.dtype:
    """Return the canonical integer-ish dtype (``int`` when None) without checking its kind."""
    return user_dtype(int if dtype is None else dtype)


def shape_arg(shape: Any) -> tuple[int, ...]:
    """Return ``shape`` as a tuple of ints (an int is a 1-d shape, as in JAX)."""
    if isinstance(shape, int | np.integer):
        shape = (shape,)
    return canonicalize_shape(shape)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Return numpy's broadcast of ``shapes``, raising JAX's ValueError when they clash."""
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(
            f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}"
        ) from None


def check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    """Raise JAX's ValueError unless ``param_shapes`` broadcast to exactly ``shape``."""
    if param_shapes:
        result = broadcast_shapes(shape, *param_shapes)
        if result != tuple(shape):
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape "
                "argument, and the result of broadcasting the shapes must equal "
                f"the shape argument, but got result {result} for shape argument {shape}."
            )


def result_shape(name: str, shape: Any, *args: Any) -> tuple[int, ...]:
    """Return the sample shape: ``shape`` checked against ``args``, or their broadcast."""
    arg_shapes = [np.shape(a) if not hasattr(a, "shape") else tuple(a.shape) for a in args]
    if shape is None:
        return broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = shape_arg(shape)
    check_shape(name, shape, *arg_shapes)
    return shape


def check_safe_to_cast(name: str, dtype: np.dtype, *args: Any) -> None:
    """Raise JAX's TypePromotionError if an argument's dtype does not promote to ``dtype``."""
    for arg in args:
        arg_dtype = dtypes.dtype(arg, canonicalize=True)
        if arg_dtype == dtype:
            continue
        if dtypes.result_type(arg, dtype) != dtype:
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type "
                f"{arg_dtype} to {dtype}"
            )


def size_of(shape: tuple[int, ...]) -> int:
    """Return the number of elements of ``shape``."""
    return math.prod(shape)


def honours_out_sharding(sampler):
    """Make ``sampler``'s ``out_sharding=`` (a NamedSharding, or a PartitionSpec on the
    current mesh) the sharding of its result, as jax.random's samplers do.

    The numbers do not depend on it: threefry's partitionable mode makes each
    element's bits a function of its index alone. It is read as JAX 0.10.2
    reads it (``placed_out_sharding``: its errors name the sampler).
    """

    @functools.wraps(sampler)
    def wrapper(*args, out_sharding=None, **kwargs):
        out = sampler(*args, **kwargs)
        if out_sharding is not None:
            operands = [*args, *kwargs.values()]
            out_sharding = placed_out_sharding(
                out_sharding, wrapper.__name__, out, operand_avals(operands)
            )
        return out if out_sharding is None else reshard(out, out_sharding)

    return wrapper


def operand_avals(values) -> list:
    """The types of those of ``values`` that are arrays (keys, parameters)."""
    avals = []
    for x in values:
        try:
            avals.append(core.to_aval(x))
        except TypeError:  # a shape, a dtype, a Python scalar: no mesh
            continue
    return avals
