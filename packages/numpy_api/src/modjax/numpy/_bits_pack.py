"""Packing booleans into bytes and back: ``packbits`` and ``unpackbits``."""

from __future__ import annotations

from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind

from ._creation import asarray
from ._eager_jit import compile_on_arrays
from ._manipulation import ravel
from ._util import aval, canonicalize_axis, check_arraylike

__all__ = ["packbits", "unpackbits"]

#: The shift of each of a byte's 8 bits, first bit first, for each bit order.
_SHIFTS = {
    "big": np.arange(7, -1, -1, dtype=np.uint8),
    "little": np.arange(8, dtype=np.uint8),
}


def _check_bitorder(bitorder: str) -> np.ndarray:
    if bitorder not in _SHIFTS:
        raise ValueError(f"'order' must be either 'little' or 'big', got {bitorder!r}")
    return _SHIFTS[bitorder]


def _along(shifts: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """The shifts shaped to broadcast along a new axis after ``axis`` of a rank-``ndim`` array."""
    shape = [1] * (ndim + 1)
    shape[axis + 1] = 8
    return shifts.reshape(shape)


def packbits(a: Any, axis: int | None = None, bitorder: str = "big"):
    """Pack the truth of each element of ``a`` into the bits of uint8 values (jax.numpy.packbits).

    Along ``axis`` (the flattened array by default) every 8 elements make one
    byte, the last one padded with zeros; ``bitorder`` says whether the first
    element is the highest (``"big"``) or lowest bit.
    """
    check_arraylike("packbits", a)
    a = asarray(a)
    if kind(aval(a).dtype) not in "biu":
        raise TypeError(
            f"jnp.packbits: expected an input array of integer or boolean data type, got "
            f"{aval(a).dtype}"
        )
    shifts = _check_bitorder(bitorder)
    if axis is None:
        a, axis = ravel(a), 0
    shape = aval(a).shape
    axis = canonicalize_axis(axis, len(shape))
    bits = a if aval(a).dtype == np.bool_ else lax.ne(a, lax.full((), 0, aval(a).dtype))
    bits = lax.convert_element_type(bits, np.uint8)
    n = shape[axis]
    padded = -n % 8
    if padded:
        config = [(0, 0, 0)] * len(shape)
        config[axis] = (0, padded, 0)
        bits = lax.pad(bits, np.uint8(0), config)
    groups = shape[:axis] + ((n + padded) // 8, 8) + shape[axis + 1 :]
    bits = lax.reshape(bits, groups)
    weighted = lax.shift_left(bits, _along(shifts, len(shape), axis))
    return lax.reduce_or(weighted, (axis + 1,))


def unpackbits(a: Any, axis: int | None = None, count: int | None = None, bitorder: str = "big"):
    """Unpack the bits of the uint8 array ``a`` into 0/1 values (jax.numpy.unpackbits).

    Each byte along ``axis`` (the flattened array by default) gives 8 values in
    ``bitorder``; ``count`` keeps that many (padding with zeros), or drops
    ``-count`` from the end when negative.
    """
    check_arraylike("unpackbits", a)
    a = asarray(a)
    if aval(a).dtype != np.uint8:
        raise TypeError(
            f"jnp.unpackbits: expected an input array of unsigned byte data type, got "
            f"{aval(a).dtype}"
        )
    shifts = _check_bitorder(bitorder)
    if axis is None:
        a, axis = ravel(a), 0
    shape = aval(a).shape
    axis = canonicalize_axis(axis, len(shape))
    spread = lax.broadcast_in_dim(
        a,
        shape[: axis + 1] + (8,) + shape[axis + 1 :],
        tuple(d if d <= axis else d + 1 for d in range(len(shape))),
    )
    bits = lax.bitwise_and(
        lax.shift_right_logical(spread, _along(shifts, len(shape), axis)), np.uint8(1)
    )
    total = shape[axis] * 8
    bits = lax.reshape(bits, shape[:axis] + (total,) + shape[axis + 1 :])
    if count is None:
        return bits
    count = int(count)
    length = max(total + count, 0) if count < 0 else count
    config = [(0, 0, 0)] * len(shape)
    config[axis] = (0, length - total, 0)
    return lax.pad(bits, np.uint8(0), config) if length != total else bits


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(globals(), "packbits unpackbits")
