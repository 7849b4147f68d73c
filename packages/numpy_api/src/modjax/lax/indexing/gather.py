"""``gather``: slices of an operand at a batch of start indices (jax.lax.gather).

Its JVP is a gather of the tangent; its transpose is a ``scatter-add`` of the
cotangent; vmap folds batch axes into the dimension numbers' batching dims.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.lowering import hlo, ir_type, lower_fun, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray, physical_aval
from modjax.tracecore.core import Primitive

from .. import elementwise as _ew
from .. import reductions as _red
from .. import structural as _st
from .._common import aval_of, kind
from ._shared import (
    _check_batching,
    _check_in_range,
    _check_indices,
    _check_sorted_unique,
    _check_unique,
    _move_to_front,
    _shift,
    _unbatched_aval,
)
from .dimension_numbers import (
    FILL_OR_DROP,
    PROMISE_IN_BOUNDS,
    GatherDimensionNumbers,
    GatherScatterMode,
    _gather_dnums,
    _gather_to_scatter_dnums,
    _ints,
    _register_param_text,
)


def _gather_abstract_eval(
    operand,
    indices,
    *,
    dimension_numbers,
    slice_sizes,
    indices_are_sorted,
    unique_indices,
    mode,
    fill_value,
):
    dn = dimension_numbers
    _check_indices("gather", indices)
    if kind(operand.dtype) == "?" and not isinstance(operand.dtype, dtypes.ExtendedDType):
        raise TypeError(f"gather does not accept operand dtype {operand.dtype}")
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    _check_sorted_unique("gather", "offset_dims", dn.offset_dims, out_rank, "output rank")
    _check_sorted_unique(
        "gather", "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim, "operand rank"
    )
    _check_batching(
        "gather",
        operand,
        indices,
        dn.operand_batching_dims,
        dn.start_indices_batching_dims,
        "operand_batching_dims",
        "start_indices_batching_dims",
    )
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims):
        raise TypeError(
            "gather collapsed_slice_dims and operand_batching_dims must be disjoint; got "
            f"{dn.collapsed_slice_dims} and {dn.operand_batching_dims}."
        )
    if len(dn.start_index_map) != indices.shape[-1]:
        raise TypeError(
            f"gather start_index_map has {len(dn.start_index_map)} entries but the index vector "
            f"(the last dimension of indices of shape {indices.shape}) has {indices.shape[-1]}."
        )
    _check_unique("gather", "start_index_map", dn.start_index_map)
    _check_in_range("gather", "start_index_map", dn.start_index_map, operand.ndim, "operand rank")
    if set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise TypeError(
            "gather start_index_map and operand_batching_dims must be disjoint; got "
            f"{dn.start_index_map} and {dn.operand_batching_dims}."
        )
    if len(slice_sizes) != operand.ndim:
        raise TypeError(
            f"gather slice_sizes must have one entry per operand dimension; got slice_sizes "
            f"{slice_sizes} for operand shape {operand.shape}."
        )
    for i, (s, d) in enumerate(zip(slice_sizes, operand.shape, strict=True)):
        if not 0 <= s <= d:
            raise TypeError(
                f"gather slice size {s} at index {i} is out of range [0, {d}] for operand shape "
                f"{operand.shape}."
            )
    for what, dims in (
        ("collapsed_slice_dims", dn.collapsed_slice_dims),
        ("operand_batching_dims", dn.operand_batching_dims),
    ):
        for d in dims:
            if slice_sizes[d] != 1:
                raise TypeError(
                    f"gather can only have slice size 1 in its {what}, but the slice size of "
                    f"dimension {d} is {slice_sizes[d]} (slice_sizes {slice_sizes})."
                )
    window = [
        s
        for i, s in enumerate(slice_sizes)
        if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims
    ]
    if len(window) != len(dn.offset_dims):
        raise TypeError(
            f"gather offset_dims {dn.offset_dims} must have one entry per operand dimension that "
            f"is neither collapsed nor batching ({len(window)} for operand shape "
            f"{operand.shape} with collapsed_slice_dims {dn.collapsed_slice_dims} and "
            f"operand_batching_dims {dn.operand_batching_dims})."
        )
    batch = iter(indices.shape[:-1])
    window_it = iter(window)
    shape = tuple(next(window_it) if i in dn.offset_dims else next(batch) for i in range(out_rank))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_attr(dn: GatherDimensionNumbers, index_vector_dim: int):
    return hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims),
        collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map),
        index_vector_dim=index_vector_dim,
    )


def _in_bounds_mask(indices, operand_shape, dims, window_sizes):
    """Return ``indices.shape[:-1]`` booleans: is every index vector in bounds for its window?"""
    aval = aval_of(indices)
    dtype = aval.dtype
    info = np.iinfo(dtype)
    upper = np.array(
        [min(operand_shape[d] - w, info.max) for d, w in zip(dims, window_sizes, strict=True)],
        dtype,
    )
    upper = _st.broadcast_in_dim(upper, aval.shape, (aval.ndim - 1,))
    ok = _ew.le(indices, upper)
    if kind(dtype) == "i":
        ok = _ew.bitwise_and(ok, _ew.ge(indices, np.zeros((), dtype)))
    return _red.reduce_and(ok, (aval.ndim - 1,))


def _gather_fill(operand, indices, *, dimension_numbers, slice_sizes, fill_value, **params):
    """``FILL_OR_DROP``: a clamped gather, then ``fill_value`` where the slice was out of bounds."""
    dn = dimension_numbers
    out = gather_p.bind(
        operand,
        indices,
        dimension_numbers=dn,
        slice_sizes=slice_sizes,
        mode=PROMISE_IN_BOUNDS,
        fill_value=None,
        **params,
    )
    out_aval = aval_of(out)
    windows = [slice_sizes[d] for d in dn.start_index_map]
    mask = _in_bounds_mask(indices, aval_of(operand).shape, dn.start_index_map, windows)
    batch_dims = tuple(i for i in range(out_aval.ndim) if i not in dn.offset_dims)
    mask = _st.broadcast_in_dim(mask, out_aval.shape, batch_dims)
    fill = _st.full(out_aval.shape, _fill_scalar(fill_value, out_aval.dtype))
    return _ew.select_n(mask, fill, out)


def _gather_lowering(ctx, operand, indices, *, dimension_numbers, slice_sizes, mode, **params):
    if mode == FILL_OR_DROP:
        rule = lower_fun(_gather_fill)
        return rule(
            ctx,
            operand,
            indices,
            dimension_numbers=dimension_numbers,
            slice_sizes=slice_sizes,
            **params,
        )
    # XLA's gather clamps start indices so that slices stay in bounds: that is CLIP.
    return hlo.gather(
        operand,
        indices,
        _gather_attr(dimension_numbers, ctx.avals_in[1].ndim - 1),
        list(slice_sizes),
        indices_are_sorted=bool(params["indices_are_sorted"]),
        results=[ir_type(ctx.avals_out[0])],
    )


def _fill_scalar(fill_value, dtype) -> np.generic:
    """Return ``fill_value`` as a ``dtype`` scalar; None gives JAX's default for the dtype."""
    if fill_value is None:
        k = kind(dtype)
        if k in "fc":
            fill_value = np.nan
        elif k == "i":
            fill_value = dtypes.iinfo(dtype).min
        elif k == "u":
            fill_value = dtypes.iinfo(dtype).max
        else:
            fill_value = True
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(fill_value).astype(dtype)[()]


gather_p = Primitive("gather")
gather_p.def_abstract_eval(_gather_abstract_eval)
gather_p.def_impl(partial(apply_primitive, gather_p))
register_lowering(gather_p, _gather_lowering)
_register_param_text(gather_p, GatherDimensionNumbers)


def _python_fill(fill_value, dtype):
    """Return a hashable Python scalar for the ``fill_value`` param (None: the dtype default)."""
    value = _fill_scalar(fill_value, dtype)
    value = {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind(dtype)](value)
    # NaNs hash by identity: one shared object keeps eager compile caches hitting.
    if type(value) is float and value != value:
        return _NAN
    if type(value) is complex and value.real != value.real and value.imag != value.imag:
        return _NAN_COMPLEX
    return value


_NAN = float("nan")
_NAN_COMPLEX = complex(_NAN, _NAN)


def gather(
    operand,
    start_indices,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value=None,
):
    """Gather slices of ``operand`` at ``start_indices`` (jax.lax.gather).

    The last dimension of ``start_indices`` is the index vector. ``mode`` None
    means ``PROMISE_IN_BOUNDS`` (XLA clamps); ``"fill"`` returns ``fill_value``
    (default: NaN, the minimum signed or maximum unsigned integer, True) for
    out-of-bounds slices; ``"clip"`` clamps.
    """
    dn = _gather_dnums(dimension_numbers)
    parsed = PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
    fill = None
    if parsed == FILL_OR_DROP:
        # Keys (extended dtypes) are filled in their data's dtype.
        fill = _python_fill(fill_value, physical_aval(aval_of(operand)).dtype)
    return gather_p.bind(
        operand,
        start_indices,
        dimension_numbers=dn,
        slice_sizes=_ints(slice_sizes, "gather slice_sizes"),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=parsed,
        fill_value=fill,
    )


def _gather_jvp(primals, tangents, *, mode, fill_value, **params):
    operand, indices = primals
    out = gather_p.bind(operand, indices, mode=mode, fill_value=fill_value, **params)
    t = tangents[0]
    if type(t) is Zero:
        return out, Zero(t.aval.update(shape=aval_of(out).shape))
    t_fill = 0 if mode == FILL_OR_DROP else None
    return out, gather_p.bind(t, indices, mode=mode, fill_value=t_fill, **params)


def _gather_transpose(
    ct,
    operand,
    indices,
    *,
    dimension_numbers,
    slice_sizes,
    indices_are_sorted,
    unique_indices,
    mode,
    fill_value,
):
    if is_undefined_primal(indices):
        raise ValueError("gather is not linear in its indices")
    aval = operand.aval
    if type(ct) is Zero:
        return [Zero(aval), None]
    from .scatter import scatter_add_p  # scatter.py imports this module

    zeros = _st.full(aval.shape, 0, aval.dtype)
    out = scatter_add_p.bind(
        zeros,
        indices,
        ct,
        dimension_numbers=_gather_to_scatter_dnums(dimension_numbers),
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )
    return [out, None]


def _gather_batched(operand, od, indices, idd, *, dimension_numbers, slice_sizes, **params):
    """Gather with batch axes (or None) on the operand and the indices; the result's is 0."""
    dn = dimension_numbers
    if idd is None:
        operand = _move_to_front(operand, od)
        size = aval_of(operand).shape[0]
        dn = GatherDimensionNumbers(
            offset_dims=(0, *_shift(dn.offset_dims)),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        slice_sizes = (size, *slice_sizes)
    elif od is None:
        indices = _move_to_front(indices, idd)
        params = {**params, "indices_are_sorted": False, "unique_indices": False}
        dn = dn._replace(
            offset_dims=_shift(dn.offset_dims),
            start_indices_batching_dims=_shift(dn.start_indices_batching_dims),
        )
    else:
        operand = _move_to_front(operand, od)
        indices = _move_to_front(indices, idd)
        if aval_of(operand).shape[0] == 0:
            # A batching dimension takes size-1 slices, which a size-0 axis cannot give;
            # zero members gather nothing.
            one = gather_p.abstract_eval(
                _unbatched_aval(operand),
                _unbatched_aval(indices),
                dimension_numbers=dn,
                slice_sizes=slice_sizes,
                **params,
            )
            return _st.full((0, *one.shape), 0, one.dtype), 0
        params = {**params, "indices_are_sorted": False}
        dn = GatherDimensionNumbers(
            offset_dims=_shift(dn.offset_dims),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
            start_indices_batching_dims=(0, *_shift(dn.start_indices_batching_dims)),
        )
        slice_sizes = (1, *slice_sizes)
    out = gather_p.bind(operand, indices, dimension_numbers=dn, slice_sizes=slice_sizes, **params)
    return out, 0


def _gather_batching(args, dims, **params):
    (operand, indices), (od, idd) = args, dims
    return _gather_batched(operand, od, indices, idd, **params)


jvp_rules[gather_p] = _gather_jvp
transpose_rules[gather_p] = _gather_transpose
batching_rules[gather_p] = _gather_batching
