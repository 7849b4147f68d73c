"""Index arithmetic: ``r_``/``c_``, ``ravel_multi_index``, ``unravel_index``, ``mask_indices``.

``jnp.r_[...]`` and ``jnp.c_[...]`` concatenate their items (arrays, scalars and
slices, which become ``arange``/``linspace`` ranges) along an axis, with numpy's
string directives: ``'axis'``, ``'axis,ndmin'``, ``'axis,ndmin,trans1d'`` and
``'r'``/``'c'``. The items may be traced; slice bounds must be concrete.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.lax.elementwise import _convert_element_type
from modjax.tracecore import dtypes
from modjax.tracecore.core import Tracer, concrete_or_error

from ._creation import array, ones, slice_range
from ._indexing import nonzero
from ._manipulation import concatenate, swapaxes, transpose
from ._ufuncs import floor_divide, remainder
from ._util import aval, broadcast_all, check_arraylike

__all__ = ["c_", "mask_indices", "r_", "ravel_multi_index", "unravel_index"]


# --- r_ and c_ ---------------------------------------------------------------------------------


def _parse_directive(name: str, text: str, defaults: tuple[int, int, int]):
    """Return ``(axis, ndmin, trans1d, matrix)`` from a string directive of ``jnp.r_``/``c_``."""
    axis, ndmin, trans1d = defaults
    if text in ("r", "c"):
        return axis, ndmin, trans1d, text
    try:
        fields = [int(f) for f in text.split(",")] if "," in text else [int(text)]
    except ValueError:
        raise ValueError(f"jnp.{name}: could not understand directive {text!r}") from None
    axis = fields[0]
    if len(fields) > 1:
        ndmin = fields[1]
    if len(fields) == 3:  # numpy ignores the third field when there are more than three
        trans1d = fields[2]
    return axis, ndmin, trans1d, None


def _with_ndmin(piece: Any, ndmin: int, trans1d: int):
    """numpy's placement of an item of rank < ndmin: new leading axes, then ``trans1d``."""
    rank = aval(piece).ndim
    piece = array(piece, copy=False, ndmin=ndmin)
    if trans1d == -1 or rank >= ndmin:
        return piece
    k2 = ndmin - rank
    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
    order = list(range(ndmin))
    return transpose(piece, order[:k1] + order[k2:] + order[k1:k2])


class _AxisConcatenator:
    """``jnp.r_`` and ``jnp.c_``: index with items to concatenate them along an axis."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self.name = name
        self.defaults = (axis, ndmin, trans1d)

    def __getitem__(self, key: Any):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.defaults
        matrix = None
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d, matrix = _parse_directive(self.name, items[0], self.defaults)
            items = items[1:]
        pieces = []
        for item in items:
            if isinstance(item, str):
                raise ValueError(
                    f"jnp.{self.name}: a string directive must be placed at the beginning, "
                    f"got {item!r} after other items"
                )
            if isinstance(item, slice):
                piece = array(slice_range(self.name, item), copy=False, ndmin=ndmin)
                if trans1d != -1 and ndmin > 1:  # numpy swaps the range's axis into place
                    piece = swapaxes(piece, -1, trans1d)
            else:
                piece = _with_ndmin(array(item, copy=False), ndmin, trans1d)
            pieces.append(piece)
        if not pieces:
            raise IndexError(f"jnp.{self.name}[] needs at least one item to concatenate")
        out = concatenate(pieces, axis)
        if matrix is not None and aval(out).ndim == 1:
            n = aval(out).shape[0]
            out = lax.reshape(out, (1, n) if matrix == "r" else (n, 1))
        return out

    def __len__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return f"modjax.numpy.{self.name}"


#: ``jnp.r_[a, 0, 1:4]``: concatenate items along the first axis (jax.numpy.r_).
r_ = _AxisConcatenator("r_", axis=0, ndmin=1, trans1d=-1)
#: ``jnp.c_[a, b]``: stack items as columns, the last axis of 2-d pieces (jax.numpy.c_).
c_ = _AxisConcatenator("c_", axis=-1, ndmin=2, trans1d=0)


# --- ravel_multi_index, unravel_index ----------------------------------------------------------

_RAVEL_MODES = ("raise", "wrap", "clip", "ignore")


def _static_dims(name: str, dims: Any) -> tuple[int, ...]:
    dims = (dims,) if np.ndim(dims) == 0 and not isinstance(dims, tuple | list) else dims
    dims = tuple(operator.index(d) for d in dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"{name}: dimensions must be non-negative, got {dims}")
    return dims


def ravel_multi_index(
    multi_index: Any,
    dims: Any,
    mode: str = "raise",
    order: str = "C",
    *,
    dtype: Any = None,
):
    """Convert coordinate arrays to flat indices into ``dims`` (jax.numpy.ravel_multi_index).

    ``mode="raise"`` checks the coordinates, so they must be concrete; ``"wrap"``
    takes them modulo each dimension, ``"clip"`` clamps them and ``"ignore"``
    trusts them; these three trace.
    The result has the promoted dtype of the coordinates, or ``dtype``.
    """
    if mode not in _RAVEL_MODES:
        raise ValueError(
            f"ravel_multi_index: invalid mode={mode!r}. Expected one of {_RAVEL_MODES}"
        )
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: invalid order={order!r}. Expected 'C' or 'F'")
    dims = _static_dims("ravel_multi_index", dims)
    multi_index = tuple(multi_index)
    if len(multi_index) != len(dims):
        raise ValueError(
            f"ravel_multi_index: got {len(multi_index)} coordinate arrays for {len(dims)} "
            f"dimensions {dims}"
        )
    check_arraylike("ravel_multi_index", *multi_index)
    for i in multi_index:
        if kind(aval(i).dtype) not in "iu":
            raise TypeError(f"ravel_multi_index: only int indices permitted, got {aval(i).dtype}")
    if dtype is None:
        dtype = dtypes.result_type(*multi_index) if multi_index else dtypes.default_int_dtype()
    dtype = dtypes.canonicalize_dtype(dtypes.dtype(dtype))
    if kind(dtype) not in "iu":
        raise ValueError(f"ravel_multi_index: dtype={dtype} is not an integer type.")
    if not multi_index:
        return lax.full((), 0, dtype)
    coords = [lax.convert_element_type(i, dtype) for i in broadcast_all(*multi_index)]
    if mode == "raise":
        for c, d in zip(multi_index, dims, strict=True):
            value = np.asarray(
                concrete_or_error(
                    c,
                    "The error occurred because ravel_multi_index was jit-compiled"
                    " with mode='raise'. Use mode='wrap' or mode='clip' instead.",
                )
            )
            if np.any((value < 0) | (value >= d)):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
    elif mode == "wrap":
        coords = [
            remainder(c, np.asarray(d, dtype)) if d else c
            for c, d in zip(coords, dims, strict=True)
        ]
    elif mode == "clip":
        coords = [
            lax.clamp(np.asarray(0, dtype), c, np.asarray(max(d - 1, 0), dtype))
            for c, d in zip(coords, dims, strict=True)
        ]
    axes = range(len(dims)) if order == "F" else reversed(range(len(dims)))
    out, stride = None, 1
    for a in axes:
        term = coords[a] if stride == 1 else lax.mul(coords[a], np.asarray(stride, dtype))
        out = term if out is None else lax.add(out, term)
        stride *= dims[a]
    return out


def unravel_index(indices: Any, shape: Any) -> tuple:
    """Convert flat indices into coordinate arrays for ``shape`` (jax.numpy.unravel_index).

    Negative indices count from the end and out-of-range ones are clamped to
    the first or last element, as in JAX; the coordinates keep the indices' dtype.
    """
    check_arraylike("unravel_index", indices)
    shape = _static_dims("unravel_index", shape)
    if not shape:
        return ()
    total = math.prod(shape)
    a = aval(indices)
    idx = indices if isinstance(indices, Tracer) else array(indices, copy=False)
    # The size of the array may not fit narrow integer indices (uint8 indices into 300
    # elements): compute in the widest integer type, then give the coordinates back in
    # the indices' dtype, which holds them (each is at most the index).
    widest = dtypes.canonicalize_dtype(np.int64)
    narrow = kind(a.dtype) in "iu" and a.dtype.itemsize < widest.itemsize
    dt = widest if narrow else a.dtype
    idx = lax.convert_element_type(idx, dt)
    idx = lax.select_n(lax.lt(idx, lax.full((), 0, dt)), idx, lax.add(idx, lax.full((), total, dt)))
    idx = lax.clamp(lax.full((), 0, dt), idx, lax.full((), max(total - 1, 0), dt))
    out = []
    for d in reversed(shape):
        d_ = lax.full((), d, dt)
        out.append(remainder(idx, d_) if d else idx)
        idx = floor_divide(idx, d_) if d else idx
    # In the indices' dtype and weak type (a Python int gives weak coordinates, as in JAX).
    return tuple(_convert_element_type(c, a.dtype, a.weak_type) for c in reversed(out))


# --- mask_indices ------------------------------------------------------------------------------


def mask_indices(n: int, mask_func: Any, k: int = 0, *, size: int | None = None) -> tuple:
    """Return the indices where ``mask_func(ones((n, n)), k)`` is nonzero (jax.numpy.mask_indices).

    ``mask_func`` is a function like ``jnp.triu``; ``size`` makes the result's
    length static, as in ``jnp.nonzero``.
    """
    n = operator.index(n)
    mask = mask_func(ones((n, n), dtypes.default_int_dtype()), k)
    return nonzero(mask, size=size)
