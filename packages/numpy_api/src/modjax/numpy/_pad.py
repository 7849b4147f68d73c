"""``pad``: numpy's padding modes on lax's structural primitives (jax.numpy.pad).

Constant padding is one ``lax.pad``; the modes that only copy elements (edge,
wrap, even reflect/symmetric) let numpy pad an index vector on the host and
turn it into slices; odd reflection, linear ramps and the statistic modes are
built axis by axis from slices, ``rev`` and ``concatenate``. Pad widths must be
static, as in JAX; pad values may be traced.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.lax.elementwise import _convert_element_type
from modjax.tracecore import dtypes
from modjax.tracecore.core import Tracer, concrete_or_error

from . import _util
from ._eager_jit import compile_on_arrays
from ._manipulation import _array, _slice_axis, _static_int, moveaxis, take_static, unstack
from ._util import ARRAY_TYPES, aval, convert

__all__ = ["pad"]


def _pad_widths(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    pad_width = concrete_or_error(pad_width, "the pad_width of jnp.pad")
    arr = np.asarray(pad_width.tolist() if hasattr(pad_width, "tolist") else pad_width)
    if arr.dtype.kind not in "iu":
        if arr.size and not np.all(np.equal(np.mod(arr, 1), 0)):
            raise TypeError(f"`pad_width` must be of integral type, got {pad_width!r}")
        arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError("index can't contain negative values")
    if arr.shape not in {(ndim, 2), (1, 2), (2,), (1,), ()}:  # JAX's accepted forms
        raise ValueError(
            f"jnp.pad: pad_width with nd={ndim} has unsupported shape {arr.shape}. "
            f"Valid shapes are ({ndim}, 2), (1, 2), (2,), (1,), or ()."
        )
    return [(int(lo), int(hi)) for lo, hi in np.broadcast_to(arr, (ndim, 2))]


def _pair_values(values: Any, ndim: int, name: str) -> list[tuple[Any, Any]]:
    """Broadcast numpy's per-axis ``(before, after)`` values (scalars allowed) to ``ndim`` pairs."""
    # Values are data, never shapes: a tracer stays one even when its value is known
    # (a JVP tracer's tangent must reach the padding).
    if isinstance(values, Tracer):
        flat = values
        s = aval(flat).shape
        if s == ():
            return [(flat, flat)] * ndim
        b = _util.broadcast_to(flat, (ndim, 2))
        return [(b[i, 0], b[i, 1]) for i in range(ndim)]
    if isinstance(values, ARRAY_TYPES):
        values = np.asarray(concrete_or_error(values))
    if np.ndim(values) == 0:
        return [(values, values)] * ndim
    try:
        arr = np.broadcast_to(np.asarray(values, dtype=object), (ndim, 2))
    except ValueError:
        raise ValueError(f"jnp.pad: {name} {values!r} does not broadcast to ({ndim}, 2)") from None
    return [(arr[i, 0], arr[i, 1]) for i in range(ndim)]


def _scalar_as(value: Any, dtype: np.dtype):
    """Cast a pad value (Python, numpy or a 0-d array) to ``dtype`` as a scalar operand."""
    if isinstance(value, ARRAY_TYPES):
        return lax.convert_element_type(value, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(value).astype(dtype)[()]


def _pad_constant(a, widths, constant_values):
    dtype = aval(a).dtype
    if (
        np.ndim(constant_values) == 0
        if not isinstance(constant_values, ARRAY_TYPES)
        else (aval(constant_values).ndim == 0)
    ):
        value = _scalar_as(constant_values, dtype)
        return lax.pad(a, value, [(lo, hi, 0) for lo, hi in widths])
    pairs = _pair_values(constant_values, len(widths), "constant_values")
    n = len(widths)
    for ax, ((lo, hi), (v_lo, v_hi)) in enumerate(zip(widths, pairs, strict=True)):
        config = [(0, 0, 0)] * n
        if lo:
            config[ax] = (lo, 0, 0)
            a = lax.pad(a, _scalar_as(v_lo, dtype), config)
        if hi:
            config[ax] = (0, hi, 0)
            a = lax.pad(a, _scalar_as(v_hi, dtype), config)
    return a


def _pad_extended(a, widths, mode: str, constant_values):
    """Pad an array of an extended dtype (keys) by concatenating filled blocks.

    ``empty`` pads with elements whose data are zeros, as JAX does; ``constant`` takes
    an element of the dtype (a 0-d key), and any other value fails to convert to the
    dtype with JAX's ValueError.
    """
    dtype = aval(a).dtype
    fill = 0
    if mode == "constant":
        is_element = isinstance(constant_values, ARRAY_TYPES) and aval(constant_values).ndim == 0
        fill = (
            constant_values
            if is_element and aval(constant_values).dtype == dtype
            else lax.convert_element_type(constant_values, dtype)
        )
    for axis, (lo, hi) in enumerate(widths):
        before = [_filled_like(a, axis, lo, fill)] if lo else []
        after = [_filled_like(a, axis, hi, fill)] if hi else []
        if before or after:
            a = lax.concatenate([*before, a, *after], axis)
    return a


def _filled_like(a, axis: int, width: int, fill):
    """A block of ``a``'s dtype and shape, ``width`` long along ``axis``, filled with ``fill``."""
    shape = list(aval(a).shape)
    shape[axis] = width
    return lax.full(tuple(shape), fill, aval(a).dtype)


def _check_nonempty_axis(mode: str, n: int, lo: int, hi: int):
    if n == 0 and (lo or hi):
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_by_index(a, widths, mode: str, **kwargs):
    """Pad with a mode that only copies elements (edge, wrap, even reflect/symmetric).

    numpy pads an ``arange`` on the host to tell which element lands where;
    ``take_static`` turns that index map into a few slices.
    """
    for ax, (lo, hi) in enumerate(widths):
        n = aval(a).shape[ax]
        _check_nonempty_axis(mode, n, lo, hi)
        if lo or hi:
            index = np.pad(np.arange(n), (lo, hi), mode=mode, **kwargs)
            a = take_static(a, index, ax)
    return a


def _pad_reflect(a, widths, mode: str, reflect_type: str):
    """numpy's reflect/symmetric padding: reflect repeatedly about the current edge."""
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    for ax, (lo, hi) in enumerate(widths):
        n = aval(a).shape[ax]
        _check_nonempty_axis(mode, n, lo, hi)
        offset = 1 if mode == "reflect" and n > 1 else 0
        for before, remaining in ((True, lo), (False, hi)):
            while remaining > 0:
                size_now = aval(a).shape[ax]
                chunk = builtins.min(remaining, n - offset)
                remaining -= chunk
                if before:
                    piece = lax.rev(_slice_axis(a, offset, offset + chunk, ax), (ax,))
                    edge = _slice_axis(a, 0, 1, ax)
                else:
                    stop = size_now - offset
                    piece = lax.rev(_slice_axis(a, stop - chunk, stop, ax), (ax,))
                    edge = _slice_axis(a, size_now - 1, size_now, ax)
                if reflect_type == "odd":
                    edge = _util.broadcast_to(edge, aval(piece).shape)
                    piece = lax.sub(lax.add(edge, edge), piece)
                a = lax.concatenate([piece, a] if before else [a, piece], ax)
    return a


def _pad_linear_ramp(a, widths, end_values):
    dtype = aval(a).dtype
    pairs = _pair_values(end_values, len(widths), "end_values")
    from ._creation import linspace

    for ax, ((lo, hi), (v_lo, v_hi)) in enumerate(zip(widths, pairs, strict=True)):
        n = aval(a).shape[ax]
        _check_nonempty_axis("linear_ramp", n, lo, hi)
        parts = []
        if lo:
            edge = lax.squeeze(_slice_axis(a, 0, 1, ax), (ax,))
            parts.append(
                linspace(_scalar_as(v_lo, dtype), edge, lo, endpoint=False, dtype=dtype, axis=ax)
            )
        parts.append(a)
        if hi:
            size_now = aval(a).shape[ax]
            edge = lax.squeeze(_slice_axis(a, size_now - 1, size_now, ax), (ax,))
            ramp = linspace(_scalar_as(v_hi, dtype), edge, hi, endpoint=False, dtype=dtype, axis=ax)
            parts.append(lax.rev(ramp, (ax,)))
        if len(parts) > 1:
            a = lax.concatenate(parts, ax)
    return a


def _pad_stats(a, widths, stat_name: str, stat_length: Any):
    from . import _reductions

    stat = getattr(_reductions, {"maximum": "max", "minimum": "min"}.get(stat_name, stat_name))
    dtype = aval(a).dtype
    ndim = len(widths)
    lengths = (
        [(None, None)] * ndim
        if stat_length is None
        else [
            (_static_int(lo, "stat_length"), _static_int(hi, "stat_length"))
            for lo, hi in _pair_values(stat_length, ndim, "stat_length")
        ]
    )
    for ax, ((lo, hi), (len_lo, len_hi)) in enumerate(zip(widths, lengths, strict=True)):
        n = aval(a).shape[ax]
        _check_nonempty_axis(stat_name, n, lo, hi)
        if not (lo or hi):
            continue
        for length in (len_lo, len_hi):
            if length is not None and length < 0:
                raise ValueError("stat_length can't contain negative values")
        if (len_lo == 0 and lo) or (len_hi == 0 and hi):
            raise ValueError(f"stat_length of 0 yields no value for padding mode '{stat_name}'")
        first = _slice_axis(a, 0, n if len_lo is None else builtins.min(len_lo, n), ax)
        last = _slice_axis(a, n - (n if len_hi is None else builtins.min(len_hi, n)), n, ax)
        parts = []
        for side, count, piece in (("lo", lo, first), ("hi", hi, last)):
            if not count:
                continue
            value = stat(piece, axis=ax, keepdims=True)
            if kind(dtype) in "iu" and kind(aval(value).dtype) in "fc":
                from ._ufuncs import round as _round

                value = _round(value)
            value = convert(value, dtype)
            target = list(aval(a).shape)
            target[ax] = count
            filled = lax.broadcast_in_dim(value, tuple(target), tuple(range(ndim)))
            parts.append((side, filled))
        pieces = [p for s, p in parts if s == "lo"] + [a] + [p for s, p in parts if s == "hi"]
        a = lax.concatenate(pieces, ax)
    return a


def _pad_callable(a, widths, func: Callable, kwargs: dict):
    """numpy's callable mode: ``func(vector, (before, after), axis, kwargs)`` returns the vector.

    The array is zero-padded, then each 1-d vector along each axis is passed
    to ``func`` in turn (a Python loop over the vectors).
    """
    a = _pad_constant(a, widths, 0)
    for ax in range(len(widths)):
        moved = moveaxis(a, ax, -1)
        shape_moved = aval(moved).shape
        rows = lax.reshape(moved, (math.prod(shape_moved[:-1]), shape_moved[-1]))
        outs = []
        for row in unstack(rows, axis=0) if aval(rows).shape[0] else ():
            out = func(row, widths[ax], ax, kwargs)
            out = _array(out, "pad")
            if aval(out).shape != aval(row).shape:
                raise ValueError(
                    f"jnp.pad: the padding function must return a vector of shape "
                    f"{aval(row).shape}, got {aval(out).shape}"
                )
            outs.append(convert(out, aval(a).dtype))
        if outs:
            rows = lax.concatenate([lax.expand_dims(o, (0,)) for o in outs], 0)
        a = moveaxis(lax.reshape(rows, shape_moved), -1, ax)
    return a


_PAD_KWARGS = {
    "constant": {"constant_values"},
    "empty": set(),
    "edge": set(),
    "wrap": set(),
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
    "linear_ramp": {"end_values"},
    "maximum": {"stat_length"},
    "mean": {"stat_length"},
    "median": {"stat_length"},
    "minimum": {"stat_length"},
}


def pad(array: Any, pad_width: Any, mode: str | Callable = "constant", **kwargs: Any):
    """Pad ``array`` with numpy's padding modes (jax.numpy.pad).

    ``pad_width`` is an int, a ``(before, after)`` pair or one pair per axis.
    Modes: ``constant`` (``constant_values``), ``empty`` (zeros here),
    ``edge``, ``wrap``, ``reflect`` and ``symmetric`` (``reflect_type``
    even/odd), ``linear_ramp`` (``end_values``), ``maximum``/``minimum``/
    ``mean``/``median`` (``stat_length``) or a callable
    ``f(vector, pad_width, iaxis, kwargs)`` returning the padded vector.
    The result is weakly typed when ``array`` is, whatever the mode (as JAX's).
    """
    array = _array(array, "pad")
    out = _pad_mode(array, _pad_widths(pad_width, aval(array).ndim), mode, kwargs)
    a, a_out = aval(array), aval(out)
    if a.weak_type and not a_out.weak_type and a_out.dtype == a.dtype:
        out = _convert_element_type(out, a.dtype, weak_type=True)
    return out


def _pad_mode(array: Any, widths: list, mode: str | Callable, kwargs: dict):
    """``array`` padded by ``widths`` in ``mode`` (the body of ``pad``)."""
    if callable(mode):
        return _pad_callable(array, widths, mode, kwargs)
    if mode not in _PAD_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unexpected = set(kwargs) - _PAD_KWARGS[mode]
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unexpected}")
    if isinstance(aval(array).dtype, dtypes.ExtendedDType) and mode in ("constant", "empty"):
        return _pad_extended(array, widths, mode, kwargs.get("constant_values", 0))
    if mode == "constant":
        return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    if mode == "empty":
        return _pad_constant(array, widths, 0)
    if mode in ("edge", "wrap"):
        return _pad_by_index(array, widths, mode)
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type == "even":
            return _pad_by_index(array, widths, mode)
        return _pad_reflect(array, widths, mode, reflect_type)
    if mode == "linear_ramp":
        return _pad_linear_ramp(array, widths, kwargs.get("end_values", 0))
    return _pad_stats(array, widths, mode, kwargs.get("stat_length"))


# Eagerly on device Arrays, one compiled program per signature (as JAX jits it).
compile_on_arrays(globals(), "pad", values={"pad": "constant_values end_values"})
