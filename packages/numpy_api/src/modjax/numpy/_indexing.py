"""Basic indexing, ``x[idx]``: integers, slices, ``None`` and ``...``.

It lowers to at most one ``slice`` (with strides), one ``rev`` (for negative
steps), one ``squeeze`` (for integer indices) and one ``broadcast_in_dim``
(for ``None``). Static integer indices out of range are clamped, as JAX's
reads are. Advanced indexing (integer or boolean arrays, traced integers)
needs ``gather``/``dynamic_slice``, which come later: they raise
NotImplementedError naming them.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.tracecore.core import Tracer

from ._util import ARRAY_TYPES, aval

_INTEGER = (int, np.integer)


def _classify(item: Any) -> Any:
    """Return ``item`` as None, Ellipsis, a slice or a Python int; raise for what is unsupported."""
    if item is None or item is Ellipsis or isinstance(item, slice):
        return item
    if isinstance(item, bool | np.bool_):
        raise NotImplementedError("boolean scalar indices (x[True]) are not supported yet")
    if isinstance(item, _INTEGER):
        return int(item)
    if isinstance(item, list):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]`."
        )
    if isinstance(item, str):
        raise TypeError(f"modjax does not support string indexing; got idx={item!r}")
    if isinstance(item, (tuple, np.ndarray, np.generic, *ARRAY_TYPES)):
        item_aval = aval(np.asarray(item) if isinstance(item, tuple) else item)
        k = kind(item_aval.dtype)
        if k not in "biu":
            raise TypeError(
                f"Indexer must have integer or boolean type, got indexer with type "
                f"{item_aval.dtype.name}"
            )
        if k == "b":
            raise NotImplementedError(
                "boolean array indexing (x[mask]) needs data-dependent shapes and is not "
                "supported yet"
            )
        if item_aval.ndim:
            raise NotImplementedError(
                "integer array indexing (x[int_array]) needs the gather primitive, which is "
                "not supported yet"
            )
        if isinstance(item, Tracer):
            concrete = item.to_concrete_value()
            if concrete is None:
                raise NotImplementedError(
                    "indexing with a traced integer needs the dynamic_slice primitive, which is "
                    "not supported yet; index with a static Python int"
                )
            return int(np.asarray(concrete))
        return operator.index(np.asarray(item).item())
    raise TypeError(
        f"Indexer must have integer or boolean type, got indexer with type {type(item).__name__}"
    )


def getitem(x: Any, idx: Any):
    """Return ``x[idx]`` for basic (static) indices, as jax.numpy arrays do."""
    shape = aval(x).shape
    ndim = len(shape)
    items = [_classify(i) for i in (idx if isinstance(idx, tuple) else (idx,))]
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consuming = sum(isinstance(i, int | slice) for i in items)
    if consuming > ndim:
        raise IndexError(
            f"Too many indices: array is {ndim}-dimensional, but {consuming} were indexed"
        )
    fill = [slice(None)] * (ndim - consuming)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + fill + items[at + 1 :]
    else:
        items = items + fill

    starts, limits, strides = [], [], []
    reversed_dims, int_dims, new_axes = [], [], []
    dim = out_pos = 0
    for item in items:
        if item is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        size = shape[dim]
        if isinstance(item, int):
            if size == 0:
                raise IndexError(f"index {item} is out of bounds for axis {dim} with size 0")
            i = item + size if item < 0 else item
            i = min(max(i, 0), size - 1)  # out-of-range static reads clamp, as in JAX
            starts.append(i), limits.append(i + 1), strides.append(1)
            int_dims.append(dim)
        else:
            start, stop, step = item.indices(size)
            count = len(range(start, stop, step))
            if count == 0:
                starts.append(0), limits.append(0), strides.append(1)
            elif step > 0:
                starts.append(start), limits.append(start + (count - 1) * step + 1)
                strides.append(step)
            else:
                last = start + (count - 1) * step
                starts.append(last), limits.append(start + 1), strides.append(-step)
                if count > 1:
                    reversed_dims.append(dim)
            out_pos += 1
        dim += 1

    out = x
    if starts != [0] * ndim or limits != list(shape) or strides != [1] * ndim:
        out = lax.slice(out, starts, limits, strides)
    if reversed_dims:
        out = lax.rev(out, reversed_dims)
    if int_dims:
        out = lax.squeeze(out, int_dims)
    if new_axes:
        out = lax.expand_dims(out, new_axes)
    return out


def setitem(x: Any, idx: Any, value: Any):
    """Refuse in-place assignment: modjax arrays are immutable."""
    raise TypeError(
        "modjax arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) (coming with the scatter primitive) or "
        "jnp.where."
    )
