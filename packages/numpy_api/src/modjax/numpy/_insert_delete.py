"""Growing and shrinking an axis: ``insert`` and ``delete``.

``insert`` takes concrete or traced positions (clamped to the axis, as JAX
does) and writes the array and the new values into their slots with two
scatters of distinct positions. ``delete`` keeps the other slices with one
gather; its positions must be concrete unless ``assume_unique_indices=True``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.tracecore.core import Tracer, concrete_or_error

from ._creation import array, asarray
from ._eager_jit import compile_on_arrays
from ._indexing import scatter_update, take
from ._manipulation import moveaxis, ravel
from ._sorting import argsort, searchsorted
from ._util import (
    ARRAY_TYPES,
    aval,
    broadcast_to,
    canonicalize_axis,
    check_arraylike,
    convert,
    from_jax_array_protocol,
    shape_of,
)

__all__ = ["delete", "insert"]


def _flattened(arr: Any, axis: int | None) -> tuple[Any, int]:
    arr = asarray(arr)
    if axis is None:
        return ravel(arr), 0
    return arr, canonicalize_axis(axis, aval(arr).ndim)


def _check_arrays(name: str, arr: Any, obj: Any, *rest: Any) -> None:
    """Refuse lists and other non-arrays, naming their position (a slice ``obj`` is fine)."""
    check_arraylike(name, arr, 0 if isinstance(obj, slice) else obj, *rest)


# --- insert ------------------------------------------------------------------------------------


def _insert_positions(index: Any, n: int):
    """Where the new values and the old slices land, for positions ``index`` into length ``n``.

    A value inserted at ``i`` goes before old slice ``i``; values at the same
    position keep their order. Concrete positions are computed with numpy.
    """
    m = shape_of(index)[0]
    if not isinstance(index, Tracer):
        index = np.asarray(index).astype(np.int64)
        index = np.clip(np.where(index < 0, index + n, index), 0, n)
        rank = np.empty(m, np.int64)
        rank[np.argsort(index, kind="stable")] = np.arange(m)
        old = np.arange(n) + np.searchsorted(np.sort(index), np.arange(n), side="right")
        return (index + rank).astype(np.int32), old.astype(np.int32)
    index = lax.convert_element_type(index, np.int32)
    index = lax.select_n(lax.lt(index, np.int32(0)), index, lax.add(index, np.int32(n)))
    index = lax.clamp(np.int32(0), index, np.int32(n))
    rank = argsort(argsort(index, stable=True), stable=True)
    slots = lax.iota(np.int32, n)
    old = lax.add(slots, searchsorted(lax.sort(index, 0), slots, side="right"))
    return lax.add(index, rank), old


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None):
    """Insert ``values`` before the positions ``obj`` along ``axis`` (jax.numpy.insert).

    ``obj`` is a scalar, a 1-d integer array (maybe traced) or a slice;
    positions past either end are clamped to it. ``values`` is cast to
    ``arr``'s dtype and broadcast as numpy's ``insert`` does; ``axis=None``
    inserts into the flattened array.
    """
    _check_arrays("insert", arr, obj, values)
    arr, axis = _flattened(arr, axis)
    a_aval = aval(arr)
    n = a_aval.shape[axis]
    if isinstance(obj, slice):
        obj = np.arange(*obj.indices(n), dtype=np.int32)
    obj_aval = aval(obj)
    if kind(obj_aval.dtype) not in "iu":
        raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj!r}")
    if obj_aval.ndim > 1:
        raise ValueError(
            f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj!r}"
        )
    if isinstance(values, ARRAY_TYPES):
        values = lax.convert_element_type(values, a_aval.dtype)
    else:
        values = asarray(convert(values, a_aval.dtype, a_aval.weak_type))
    if obj_aval.ndim == 0 or obj_aval.shape[0] == 1:
        # One position: the values form a block, numpy's rule (a scalar moves axis 0 to axis).
        values = array(values, copy=False, ndmin=a_aval.ndim)
        if obj_aval.ndim == 0:
            values = moveaxis(values, 0, axis)
        count = shape_of(values)[axis]
        position = obj if obj_aval.ndim == 0 else lax.reshape(obj, ())
        if isinstance(position, Tracer):
            index = lax.broadcast_in_dim(position, (count,), ())
        else:
            index = np.full((count,), np.asarray(position), np.int64)
    else:
        index = obj
        count = obj_aval.shape[0]
    block_shape = a_aval.shape[:axis] + (count,) + a_aval.shape[axis + 1 :]
    values = broadcast_to(values, block_shape)
    if count == 0:
        return arr
    new, old = _insert_positions(index, n)
    out = lax.full_like(arr, 0, shape=a_aval.shape[:axis] + (n + count,) + a_aval.shape[axis + 1 :])
    lead = (slice(None),) * axis
    out = scatter_update(out, lead + (old,), arr, "set", unique_indices=True)
    return scatter_update(out, lead + (new,), values, "set", unique_indices=True)


# --- delete ------------------------------------------------------------------------------------


def _kept_unique(index: Any, n: int, kept: int):
    """The slices that remain when the distinct positions ``index`` are deleted (traceable)."""
    index = lax.convert_element_type(index, np.int32)
    index = lax.select_n(lax.lt(index, np.int32(0)), index, lax.add(index, np.int32(n)))
    m = shape_of(index)[0]
    # Output slot p takes old slice p + (the number of deleted positions it has passed).
    shifted = lax.sub(lax.sort(index, 0), lax.iota(np.int32, m))
    slots = lax.iota(np.int32, kept)
    return lax.add(slots, searchsorted(shifted, slots, side="right"))


def _kept_concrete(obj: Any, n: int, axis: int) -> np.ndarray:
    obj = np.asarray(
        concrete_or_error(
            obj,
            "The 'obj' argument of jnp.delete must be concrete; pass assume_unique_indices=True "
            "to delete at traced positions.",
        )
    )
    if obj.dtype == np.bool_:
        if obj.shape != (n,):
            raise ValueError(
                "jnp.delete(arr, obj): for boolean indices, obj must be one-dimensional with "
                f"length matching specified axis, got shape {obj.shape} for axis of size {n}"
            )
        return np.flatnonzero(~obj)
    if kind(obj.dtype) not in "iu":
        raise ValueError(
            f"jnp.delete(arr, obj): got obj.dtype={obj.dtype}; must be integer or bool."
        )
    bad = (obj < -n) | (obj >= n)
    if bad.any():
        first = obj[bad].flat[0]
        error = ValueError if obj.ndim == 0 else IndexError
        raise error(f"jnp.delete: index {first} is out of bounds for axis {axis} with size {n}")
    return np.delete(np.arange(n), obj.ravel())


def delete(arr: Any, obj: Any, axis: int | None = None, *, assume_unique_indices: bool = False):
    """Remove the slices at positions ``obj`` along ``axis`` (jax.numpy.delete).

    ``obj`` is a slice, an integer or boolean array, or a scalar; it must be
    concrete, except with ``assume_unique_indices=True``, which promises
    distinct in-range integer positions and then traces (a boolean ``obj``
    ignores it, as in JAX). ``axis=None`` deletes from the flattened array.
    """
    _check_arrays("delete", arr, obj)
    obj = from_jax_array_protocol(obj)
    arr, axis = _flattened(arr, axis)
    n = aval(arr).shape[axis]
    if isinstance(obj, slice):
        keep = np.delete(np.arange(n), obj)
    elif assume_unique_indices and kind(aval(obj).dtype) in "iu":
        index = ravel(asarray(obj))
        m = shape_of(index)[0]
        if m > n:
            raise ValueError(f"jnp.delete: cannot delete {m} unique positions from an axis of {n}")
        keep = _kept_unique(index, n, n - m)
    else:
        keep = _kept_concrete(obj, n, axis)
    if not isinstance(keep, Tracer) and len(keep) == n:
        return arr
    return take(arr, keep, axis=axis, mode="clip")


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(globals(), "delete insert", values={"insert": "values"})
