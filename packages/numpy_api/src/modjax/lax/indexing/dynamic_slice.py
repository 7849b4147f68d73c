"""``dynamic_slice`` and ``dynamic_update_slice``: a window at traced start indices.

Starts are clamped so the window stays in bounds, as in XLA; the two are each
other's transpose, and vmap over batched starts turns them into gather/scatter.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.lowering import hlo, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from .. import elementwise as _ew
from .. import structural as _st
from .._common import aval_of, check_same_dtypes, kind
from ._shared import _batch_size, _front, _instantiate, _move_to_front, _zeros
from .dimension_numbers import CLIP, GatherDimensionNumbers, ScatterDimensionNumbers, _ints
from .gather import _gather_batched
from .scatter import _scatter_batching, scatter_p


def _check_start_indices(name, operand, starts):
    if len(starts) != operand.ndim:
        raise ValueError(  # JAX's text
            "Length of slice indices must match number of operand dimensions "
            f"({len(starts)} vs {operand.shape})"
        )
    for s in starts:
        if s.shape or kind(s.dtype) not in "iu":
            raise TypeError(
                f"{name} start indices must be scalar integers, got {s.str_short()} (operand "
                f"shape {operand.shape})."
            )
    if len({s.dtype for s in starts}) > 1:
        raise TypeError(
            f"{name} start indices must all have the same dtype, got "
            f"{', '.join(dtypes.dtype_name(s.dtype) for s in starts)}."
        )


def _dynamic_slice_abstract_eval(operand, *starts, slice_sizes):
    _check_start_indices("dynamic_slice", operand, starts)
    if len(slice_sizes) != operand.ndim:
        raise TypeError(
            "dynamic_slice slice_sizes must have the same length as the operand shape, got "
            f"slice_sizes {slice_sizes} for operand shape {operand.shape}."
        )
    if any(not 0 <= s <= d for s, d in zip(slice_sizes, operand.shape, strict=True)):
        # JAX's texts (its slice rule's): too large first, then negative.
        if any(sz > d for sz, d in zip(slice_sizes, operand.shape, strict=True)):
            raise TypeError(
                "slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
                f"{slice_sizes} for operand shape {operand.shape}."
            )
        raise TypeError(
            "slice slice_sizes must be greater than or equal to zero, got slice_sizes of "
            f"{slice_sizes}."
        )
    return ShapedArray(tuple(slice_sizes), operand.dtype, operand.weak_type)


def _dynamic_slice_lowering(ctx, operand, *starts, slice_sizes):
    return hlo.dynamic_slice(operand, list(starts), list(slice_sizes))


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    operand, *starts = primals
    out = dynamic_slice_p.bind(operand, *starts, slice_sizes=slice_sizes)
    t = tangents[0]
    if type(t) is Zero:
        return out, Zero(t.aval.update(shape=tuple(slice_sizes)))
    return out, dynamic_slice_p.bind(t, *starts, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, operand, *starts, slice_sizes):
    if any(is_undefined_primal(s) for s in starts):
        raise ValueError("dynamic_slice is not linear in its start indices")
    aval = operand.aval
    if type(ct) is Zero:
        return [Zero(aval), *([None] * len(starts))]
    out = dynamic_update_slice_p.bind(_zeros(aval), ct, *starts)
    return [out, *([None] * len(starts))]


def _index_vector(starts, dims, size):
    """Stack scalar (or batched ``[size]``) start indices into a ``[size, n]`` index array."""
    columns = []
    for s, d in zip(starts, dims, strict=True):
        s = _st.broadcast(s, (size,)) if d is None else s
        columns.append(_st.reshape(s, (size, 1)))
    return _st.concatenate(columns, 1)


def _dynamic_slice_batching(args, dims, *, slice_sizes):
    operand, *starts = args
    od, *sd = dims
    ndim = len(slice_sizes)
    if all(d is None for d in sd):
        operand = _move_to_front(operand, od)
        size = aval_of(operand).shape[0]
        zero = np.zeros((), aval_of(starts[0]).dtype if starts else np.int32)
        out = dynamic_slice_p.bind(operand, zero, *starts, slice_sizes=(size, *slice_sizes))
        return out, 0
    size = _batch_size(args, dims)
    indices = _index_vector(starts, sd, size)
    dn = GatherDimensionNumbers(
        offset_dims=tuple(range(ndim)), collapsed_slice_dims=(), start_index_map=tuple(range(ndim))
    )
    return _gather_batched(
        operand,
        od,
        indices,
        0,
        dimension_numbers=dn,
        slice_sizes=tuple(slice_sizes),
        indices_are_sorted=True,
        unique_indices=True,
        mode=CLIP,
        fill_value=None,
    )


dynamic_slice_p = Primitive("dynamic_slice")
dynamic_slice_p.def_abstract_eval(_dynamic_slice_abstract_eval)
dynamic_slice_p.def_impl(partial(apply_primitive, dynamic_slice_p))
register_lowering(dynamic_slice_p, _dynamic_slice_lowering)
jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose
batching_rules[dynamic_slice_p] = _dynamic_slice_batching


def _dynamic_update_slice_abstract_eval(operand, update, *starts):
    _check_start_indices("dynamic_update_slice", operand, starts)
    if update.ndim != operand.ndim:
        raise TypeError(
            "dynamic_update_slice update must have the same rank as operand, got update shape "
            f"{update.shape} for operand shape {operand.shape}."
        )
    if any(u > d for u, d in zip(update.shape, operand.shape, strict=True)):
        raise TypeError(
            "dynamic_update_slice update shape must be smaller than operand shape, got update "
            f"shape {update.shape} for operand shape {operand.shape}."
        )
    check_same_dtypes("dynamic_update_slice", [operand, update])  # after the shapes, as JAX's
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _dynamic_update_slice_lowering(ctx, operand, update, *starts):
    return hlo.dynamic_update_slice(operand, update, list(starts))


def _dynamic_update_slice_jvp(primals, tangents):
    operand, update, *starts = primals
    out = dynamic_update_slice_p.bind(operand, update, *starts)
    t_op, t_up = tangents[:2]
    if type(t_op) is Zero and type(t_up) is Zero:
        return out, Zero(t_op.aval)
    t_out = dynamic_update_slice_p.bind(
        _instantiate(t_op, operand), _instantiate(t_up, update), *starts
    )
    return out, t_out


def _dynamic_update_slice_transpose(ct, operand, update, *starts):
    if any(is_undefined_primal(s) for s in starts):
        raise ValueError("dynamic_update_slice is not linear in its start indices")
    up_aval = update.aval if is_undefined_primal(update) else aval_of(update)
    op_ct = up_ct = None
    if is_undefined_primal(operand):
        op_ct = (
            Zero(operand.aval)
            if type(ct) is Zero
            else dynamic_update_slice_p.bind(ct, _zeros(up_aval), *starts)
        )
    if is_undefined_primal(update):
        up_ct = (
            Zero(up_aval)
            if type(ct) is Zero
            else dynamic_slice_p.bind(ct, *starts, slice_sizes=up_aval.shape)
        )
    return [op_ct, up_ct, *([None] * len(starts))]


def _dynamic_update_slice_batching(args, dims):
    operand, update, *starts = args
    od, ud, *sd = dims
    size = _batch_size(args, dims)
    if all(d is None for d in sd):
        operand, update = _front(operand, od, size), _front(update, ud, size)
        zero = np.zeros((), aval_of(starts[0]).dtype if starts else np.int32)
        return dynamic_update_slice_p.bind(operand, update, zero, *starts), 0
    ndim = aval_of(update).ndim - (ud is not None)
    indices = _index_vector(starts, sd, size)
    dn = ScatterDimensionNumbers(
        update_window_dims=tuple(range(ndim)),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(range(ndim)),
    )
    return _scatter_batching(
        scatter_p,
        (operand, indices, update),
        (od, 0, ud),
        dimension_numbers=dn,
        indices_are_sorted=True,
        unique_indices=True,
        mode=CLIP,
    )


dynamic_update_slice_p = Primitive("dynamic_update_slice")
dynamic_update_slice_p.def_abstract_eval(_dynamic_update_slice_abstract_eval)
dynamic_update_slice_p.def_impl(partial(apply_primitive, dynamic_update_slice_p))
register_lowering(dynamic_update_slice_p, _dynamic_update_slice_lowering)
jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
transpose_rules[dynamic_update_slice_p] = _dynamic_update_slice_transpose
batching_rules[dynamic_update_slice_p] = _dynamic_update_slice_batching


def _start_index_dtype(starts) -> np.dtype:
    """The one dtype start indices are converted to: int32, or int64 (with x64) if one is wider."""
    wide = False
    for s in starts:
        if not isinstance(s, int | np.integer):
            dt = aval_of(s).dtype
            wide = wide or dt.itemsize >= 8 or dt == np.uint32
    return dtypes.canonicalize_dtype(np.int64 if wide else np.int32)


def _check_integer_starts(name, starts, dtype) -> None:
    """Raise JAX's TypeError if a start index is not an integer (Python ints count as ``dtype``)."""
    dts = [dtype if isinstance(s, int | np.integer) else aval_of(s).dtype for s in starts]
    if all(kind(dt) in "iu" for dt in dts):
        return
    colon = ":" if name == "dynamic_slice" else ""  # JAX's two texts differ by it
    raise TypeError(
        f"index arguments to {name} must be integers of the same type, got{colon} "
        f"{', '.join(dtypes.dtype_name(dt) for dt in dts)}"
    )


def _normalize_starts(name, operand_shape, start_indices, allow_negative_indices):
    """Convert start indices to scalars of one dtype, wrapping negative ones (``i + size``)."""
    if isinstance(start_indices, np.ndarray) or not isinstance(start_indices, Sequence):
        aval = aval_of(start_indices)
        if aval.ndim > 1 and aval.shape[0] != len(operand_shape):
            raise ValueError(  # JAX's text: it counts the rows of the array
                "Length of slice indices must match number of operand dimensions "
                f"({aval.shape[0]} vs {tuple(operand_shape)})"
            )
        if aval.ndim != 1:
            raise TypeError(
                f"{name} start_indices must be a sequence of scalars or a 1-D array, got shape "
                f"{aval.shape}"
            )
        start_indices = [
            _st.squeeze(_st.slice(start_indices, (i,), (i + 1,)), (0,))
            if not isinstance(start_indices, np.ndarray)
            else start_indices[i]
            for i in range(aval.shape[0])
        ]
    starts = list(start_indices)
    if len(starts) != len(operand_shape):
        raise ValueError(  # JAX's text
            "Length of slice indices must match number of operand dimensions "
            f"({len(starts)} vs {tuple(operand_shape)})"
        )
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = [allow_negative_indices] * len(starts)
    dtype = _start_index_dtype(starts)
    _check_integer_starts(name, starts, dtype)
    out = []
    for s, size, wrap in zip(starts, operand_shape, allow_negative_indices, strict=True):
        if isinstance(s, int | np.integer):
            s = int(s)
            if wrap and s < 0:
                s += size
            out.append(np.asarray(min(max(s, np.iinfo(dtype).min), np.iinfo(dtype).max), dtype))
            continue
        s_aval = aval_of(s)
        if s_aval.shape or kind(s_aval.dtype) not in "iu":
            raise TypeError(
                f"{name} start indices must be scalar integers, got {s_aval.str_short()}"
            )
        if s_aval.dtype != dtype:
            s = _ew.convert_element_type(s, dtype)
        if wrap and kind(s_aval.dtype) == "i":
            s = _ew.select_n(_ew.lt(s, np.zeros((), dtype)), s, _ew.add(s, np.asarray(size, dtype)))
        out.append(s)
    return out


def dynamic_slice(
    operand,
    start_indices,
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
):
    """Slice ``operand`` at (possibly traced) ``start_indices`` (jax.lax.dynamic_slice).

    Negative start indices count from the end (unless ``allow_negative_indices``
    is False); then each start is clamped so that the slice fits, as XLA does.
    """
    shape = aval_of(operand).shape
    starts = _normalize_starts("dynamic_slice", shape, start_indices, allow_negative_indices)
    return dynamic_slice_p.bind(
        operand, *starts, slice_sizes=_ints(slice_sizes, "dynamic_slice slice_sizes")
    )


def dynamic_update_slice(
    operand,
    update,
    start_indices,
    *,
    allow_negative_indices: bool | Sequence[bool] = True,
):
    """Write ``update`` into ``operand`` at ``start_indices`` (jax.lax.dynamic_update_slice).

    Start indices wrap when negative and are clamped so that ``update`` fits.
    """
    shape = aval_of(operand).shape
    starts = _normalize_starts("dynamic_update_slice", shape, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)
