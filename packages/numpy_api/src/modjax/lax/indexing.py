"""Indexing primitives: ``gather``, the ``scatter`` family, ``dynamic_slice`` and
``dynamic_update_slice``, and the public functions built on them.

Each primitive is declared with its abstract evaluation (XLA's shape rules,
errors naming the primitive), its eager ``impl`` (runtime's
``apply_primitive``), its StableHLO lowering, its JVP/transpose rules
(``modjax.autodiff``) and its batching rule (``modjax.batching``).

Out-of-bounds indices follow JAX's ``GatherScatterMode``:

* ``CLIP``: indices are clamped so that the whole slice or window is in bounds;
* ``FILL_OR_DROP``: a gather returns ``fill_value`` for slices that are not
  entirely in bounds; a scatter skips such windows;
* ``PROMISE_IN_BOUNDS``: the caller promises in-bounds indices; XLA's native
  semantics apply (gathers clamp, scatters skip).

``lax.gather`` defaults to ``PROMISE_IN_BOUNDS``, the scatters to
``FILL_OR_DROP``, as in JAX. The index vector is always the last dimension of
the indices.
"""

from __future__ import annotations

import enum
import math
import operator
import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import NamedTuple

import numpy as np

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.lowering import hlo, ir, ir_type, lower_fun, lower_jaxpr_inline, register_lowering
from modjax.lowering import lowering_rules as _lowering_rules
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray, physical_aval
from modjax.tracecore.core import Primitive
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer

from . import elementwise as _ew
from . import reductions as _red
from . import structural as _st
from ._common import ANY, NUM, Category, aval_of, check_dtype, kind, reducer_region

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_slice_p",
    "gather",
    "gather_p",
    "index_in_dim",
    "index_take",
    "scatter",
    "scatter_add",
    "scatter_apply",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_sub",
    "scatter_p",
    "scatter_add_p",
    "scatter_sub_p",
    "scatter_mul_p",
    "scatter_min_p",
    "scatter_max_p",
    "scatter_apply_p",
    "slice_in_dim",
]


# --- dimension numbers and modes ------------------------------------------------------------


class GatherDimensionNumbers(NamedTuple):
    """How a gather maps indices to operand slices (jax.lax.GatherDimensionNumbers).

    ``offset_dims``: the output dimensions that index into a slice;
    ``collapsed_slice_dims``: operand dimensions of size-1 slices that the output
    drops; ``start_index_map``: the operand dimension each component of the index
    vector (the last dimension of the indices) starts; ``operand_batching_dims``
    and ``start_indices_batching_dims``: paired batch dimensions of the operand
    and the indices.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps indices and updates to operand windows (jax.lax.ScatterDimensionNumbers).

    ``update_window_dims``: the dimensions of the updates that lie in a window;
    ``inserted_window_dims``: operand dimensions of size-1 windows absent from
    the updates; ``scatter_dims_to_operand_dims``: the operand dimension each
    component of the index vector addresses; ``operand_batching_dims`` and
    ``scatter_indices_batching_dims``: paired batch dimensions.
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What gathers and scatters do with out-of-bounds indices (jax.lax.GatherScatterMode)."""

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3

    def __str__(self) -> str:
        return f"GatherScatterMode.{self.name}"

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """Return the mode named by ``s``: a mode, ``"clip"``, ``"fill"``/``"drop"``/None,
        or ``"promise_in_bounds"``."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            raise NotImplementedError("GatherScatterMode.ONE_HOT is not supported yet")
        raise ValueError(f'Unknown gather mode "{s}"')


CLIP = GatherScatterMode.CLIP
FILL_OR_DROP = GatherScatterMode.FILL_OR_DROP
PROMISE_IN_BOUNDS = GatherScatterMode.PROMISE_IN_BOUNDS


def _ints(values, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of integers, got {values!r}") from None


def _gather_dnums(dn) -> GatherDimensionNumbers:
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(
            f"gather dimension_numbers must be a GatherDimensionNumbers, got {type(dn).__name__}"
        )
    return GatherDimensionNumbers(
        *(_ints(v, f"gather {f}") for f, v in zip(dn._fields, dn, strict=False))
    )


def _scatter_dnums(dn) -> ScatterDimensionNumbers:
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(
            f"scatter dimension_numbers must be a ScatterDimensionNumbers, got {type(dn).__name__}"
        )
    return ScatterDimensionNumbers(
        *(_ints(v, f"scatter {f}") for f, v in zip(dn._fields, dn, strict=False))
    )


# Param text: ``GatherDimensionNumbers(offset_dims=(1,), ...)`` and ``GatherScatterMode.CLIP``.


def _format_dnums(dn) -> str:
    fields = ", ".join(
        f"{name}=({', '.join(map(str, v))}{',' if len(v) == 1 else ''})"
        for name, v in zip(dn._fields, dn, strict=False)
    )
    return f"{type(dn).__name__}({fields})"


_FIELD = re.compile(r"(\w+)=\(([^)]*)\)")


def _dnums_parser(cls):
    def parse(text: str):
        text = text.strip()
        if not text.startswith(cls.__name__ + "("):
            raise ValueError(f"expected {cls.__name__}(...), got {text!r}")
        fields = {
            name: tuple(int(v) for v in body.split(",") if v.strip())
            for name, body in _FIELD.findall(text)
        }
        return cls(**fields)

    return parse


def _parse_mode(text: str) -> GatherScatterMode:
    return GatherScatterMode[text.strip().rsplit(".", 1)[-1]]


def _register_param_text(prim: Primitive, dnums_cls) -> None:
    register_param_printer(prim, "dimension_numbers", _format_dnums)
    register_param_parser(prim, "dimension_numbers", _dnums_parser(dnums_cls))
    register_param_printer(prim, "mode", str)
    register_param_parser(prim, "mode", _parse_mode)


# --- shared checks -------------------------------------------------------------------------------


def _check_sorted_unique(name: str, what: str, dims: tuple[int, ...], bound: int, bound_name: str):
    if list(dims) != sorted(set(dims)):
        raise TypeError(
            f"{name} {what} in dimension_numbers must be sorted and unique; got {dims}."
        )
    _check_in_range(name, what, dims, bound, bound_name)


def _check_in_range(name: str, what: str, dims: tuple[int, ...], bound: int, bound_name: str):
    for d in dims:
        if not 0 <= d < bound:
            raise TypeError(
                f"{name} {what} in dimension_numbers must be in the range [0, {bound}) of the "
                f"{bound_name}; got {dims}."
            )


def _check_unique(name: str, what: str, dims: tuple[int, ...]):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} {what} in dimension_numbers must not repeat; got {dims}.")


def _check_indices(name: str, indices: ShapedArray):
    if kind(indices.dtype) not in "iu":
        raise ValueError(
            f"{name} indices must have an integer type, got {dtypes.dtype_name(indices.dtype)}"
        )
    if indices.ndim < 1:
        raise TypeError(
            f"{name} indices must have at least one dimension (the last one is the index "
            f"vector); got shape {indices.shape}"
        )


def _check_batching(name, operand, indices, obd, ibd, obd_name, ibd_name):
    _check_sorted_unique(name, obd_name, obd, operand.ndim, "operand rank")
    _check_unique(name, ibd_name, ibd)
    _check_in_range(name, ibd_name, ibd, indices.ndim - 1, "index batch dimensions")
    if len(obd) != len(ibd):
        raise TypeError(
            f"{name} {obd_name} and {ibd_name} must have the same length; got {obd} and {ibd}."
        )
    for o, i in zip(obd, ibd, strict=True):
        if operand.shape[o] != indices.shape[i]:
            raise TypeError(
                f"{name} operand batching dimension {o} (size {operand.shape[o]}) and indices "
                f"batching dimension {i} (size {indices.shape[i]}) must have the same size; got "
                f"operand shape {operand.shape} and indices shape {indices.shape}."
            )


# --- gather ---------------------------------------------------------------------------------------


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


def _gather_to_scatter_dnums(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )


def _scatter_to_gather_dnums(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
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


def _move_to_front(x, bdim):
    """Move the batch axis ``bdim`` of ``x`` to 0 (one lax.transpose, or nothing)."""
    if bdim == 0:
        return x
    ndim = aval_of(x).ndim
    perm = (bdim, *(i for i in range(ndim) if i != bdim))
    return _st.transpose(x, perm)


def _front(x, bdim, size):
    """Return ``x`` batched along 0: moved there, or broadcast if unbatched."""
    if bdim is None:
        return _st.broadcast(x, (size,))
    return _move_to_front(x, bdim)


def _batch_size(args, dims) -> int:
    return next(aval_of(x).shape[d] for x, d in zip(args, dims, strict=True) if d is not None)


def _unbatched_aval(x) -> ShapedArray:
    """The aval of one member of ``x``, batched along 0."""
    a = aval_of(x)
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


def _shift(dims, by=1) -> tuple[int, ...]:
    return tuple(d + by for d in dims)


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


# --- scatter -------------------------------------------------------------------------------------


def _window_sizes(dn: ScatterDimensionNumbers, operand_ndim: int, update_shape) -> list[int]:
    """Return each operand dimension's window size for updates of ``update_shape``."""
    sizes = []
    window = iter(dn.update_window_dims)
    for d in range(operand_ndim):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(update_shape[next(window)])
    return sizes


def _scatter_shape_rule(name, operand, indices, update_shape, dn):
    _check_indices(name, indices)
    if kind(operand.dtype) == "?" and not isinstance(operand.dtype, dtypes.ExtendedDType):
        raise TypeError(f"{name} does not accept operand dtype {operand.dtype}")
    update_rank = len(update_shape)
    _check_sorted_unique(
        name, "update_window_dims", dn.update_window_dims, update_rank, "updates rank"
    )
    _check_sorted_unique(
        name, "inserted_window_dims", dn.inserted_window_dims, operand.ndim, "operand rank"
    )
    _check_batching(
        name,
        operand,
        indices,
        dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
        "operand_batching_dims",
        "scatter_indices_batching_dims",
    )
    if set(dn.inserted_window_dims) & set(dn.operand_batching_dims):
        raise TypeError(
            f"{name} inserted_window_dims and operand_batching_dims must be disjoint; got "
            f"{dn.inserted_window_dims} and {dn.operand_batching_dims}."
        )
    if update_rank != len(dn.update_window_dims) + indices.ndim - 1:
        raise TypeError(
            f"{name} updates must have rank len(update_window_dims) + indices rank - 1 = "
            f"{len(dn.update_window_dims) + indices.ndim - 1}; got updates of shape "
            f"{update_shape} with update_window_dims {dn.update_window_dims} and indices of "
            f"shape {indices.shape}."
        )
    windows = len(dn.update_window_dims) + len(dn.inserted_window_dims)
    if windows + len(dn.operand_batching_dims) != operand.ndim:
        raise TypeError(
            f"{name} operand rank {operand.ndim} must equal the number of update_window_dims, "
            f"inserted_window_dims and operand_batching_dims; got {dn}."
        )
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[-1]:
        raise TypeError(
            f"{name} scatter_dims_to_operand_dims has {len(dn.scatter_dims_to_operand_dims)} "
            f"entries but the index vector (the last dimension of indices of shape "
            f"{indices.shape}) has {indices.shape[-1]}."
        )
    sdod = dn.scatter_dims_to_operand_dims
    _check_unique(name, "scatter_dims_to_operand_dims", sdod)
    _check_in_range(name, "scatter_dims_to_operand_dims", sdod, operand.ndim, "operand rank")
    if set(sdod) & set(dn.operand_batching_dims):
        raise TypeError(
            f"{name} scatter_dims_to_operand_dims and operand_batching_dims must be disjoint; "
            f"got {sdod} and {dn.operand_batching_dims}."
        )
    sizes = _window_sizes(dn, operand.ndim, update_shape)
    for d, (w, s) in enumerate(zip(sizes, operand.shape, strict=True)):
        if w > s:
            raise TypeError(
                f"{name} window size {w} of operand dimension {d} exceeds its size {s}; got "
                f"operand shape {operand.shape} and updates shape {update_shape}."
            )
    scatter_dims = [d for d in range(update_rank) if d not in dn.update_window_dims]
    for k, (u, i) in enumerate(zip(scatter_dims, range(indices.ndim - 1), strict=True)):
        if update_shape[u] != indices.shape[i]:
            raise TypeError(
                f"{name}: the bounds of the scatter dimensions of updates must be those of the "
                f"index batch dimensions; for scatter dimension {k}, updates bound is "
                f"{update_shape[u]}, indices bound is {indices.shape[i]} (updates shape "
                f"{update_shape}, indices shape {indices.shape})."
            )


def _scatter_abstract_eval(
    name,
    accepted,
    operand,
    indices,
    updates,
    *,
    dimension_numbers,
    indices_are_sorted,
    unique_indices,
    mode,
):
    if operand.dtype != updates.dtype:
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got "
            f"{dtypes.dtype_name(operand.dtype)}, {dtypes.dtype_name(updates.dtype)}."
        )
    if not (name == "scatter" and isinstance(operand.dtype, dtypes.ExtendedDType)):
        check_dtype(name, operand, accepted)  # a plain scatter also moves keys
    _scatter_shape_rule(name, operand, indices, updates.shape, dimension_numbers)
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _scatter_attr(dn: ScatterDimensionNumbers, index_vector_dim: int):
    return hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(dn.update_window_dims),
        inserted_window_dims=list(dn.inserted_window_dims),
        input_batching_dims=list(dn.operand_batching_dims),
        scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
        index_vector_dim=index_vector_dim,
    )


def _clamp_indices(indices, operand_shape, dn: ScatterDimensionNumbers, update_shape):
    """Clamp each index vector so its window lies inside the operand (mode CLIP)."""
    aval = aval_of(indices)
    dtype = aval.dtype
    info = np.iinfo(dtype)
    sizes = _window_sizes(dn, len(operand_shape), update_shape)
    upper = np.array(
        [
            max(min(operand_shape[d] - sizes[d], info.max), 0)
            for d in dn.scatter_dims_to_operand_dims
        ],
        dtype,
    )
    upper = _st.broadcast_in_dim(upper, aval.shape, (aval.ndim - 1,))
    return _ew.clamp(np.zeros((), dtype), indices, upper)


def _scatter_region(ctx, combine: Primitive | None, operand, indices, updates, dn, params):
    """Emit ``stablehlo.scatter`` whose update computation applies ``combine`` (None: replace)."""
    aval = ctx.avals_out[0]
    op = hlo.ScatterOp(
        [ir_type(aval)],
        [operand],
        indices,
        [updates],
        _scatter_attr(dn, ctx.avals_in[1].ndim - 1),
        indices_are_sorted=ir.BoolAttr.get(bool(params["indices_are_sorted"])),
        unique_indices=ir.BoolAttr.get(bool(params["unique_indices"])),
    )
    block = reducer_region(op, aval.dtype)
    with ir.InsertionPoint(block):
        x, y = block.arguments
        if combine is None:
            result = y
        else:
            scalar = ShapedArray((), aval.dtype)
            sub = ctx.replace(primitive=combine, avals_in=[scalar, scalar], avals_out=[scalar])
            result = _lowering_rules[combine](sub, x, y)
        hlo.return_([result])
    return op.results[0]


def _scatter_lowering(
    prim, combine, ctx, operand, indices, updates, *, dimension_numbers, mode, **params
):
    if mode == CLIP:

        def clipped(operand, indices, updates):
            indices = _clamp_indices(
                indices, aval_of(operand).shape, dimension_numbers, aval_of(updates).shape
            )
            return prim.bind(
                operand,
                indices,
                updates,
                dimension_numbers=dimension_numbers,
                mode=PROMISE_IN_BOUNDS,
                **params,
            )

        return lower_fun(clipped)(ctx, operand, indices, updates)
    # XLA skips windows that are not entirely in bounds: that is FILL_OR_DROP.
    return _scatter_region(ctx, combine, operand, indices, updates, dimension_numbers, params)


def _declare_scatter(name: str, accepted: Sequence[Category], combine: Primitive | None):
    prim = Primitive(name)
    prim.def_abstract_eval(partial(_scatter_abstract_eval, name, accepted))
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, partial(_scatter_lowering, prim, combine))
    _register_param_text(prim, ScatterDimensionNumbers)
    batching_rules[prim] = partial(_scatter_batching, prim)
    return prim


def _scatter_batching(prim, args, dims, *, dimension_numbers, **params):
    operand, indices, updates = args
    od, idd, ud = dims
    size = _batch_size(args, dims)
    operand = _front(operand, od, size)
    if size == 0:  # zero members update nothing (and size-1 windows of a size-0 axis fail)
        return operand, 0
    updates = _front(updates, ud, size)
    dn = dimension_numbers
    if idd is None:  # the batch axis is one more window dimension
        dn = ScatterDimensionNumbers(
            update_window_dims=(0, *_shift(dn.update_window_dims)),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
        )
    else:  # a batching dimension of the operand, the indices and the updates
        indices = _move_to_front(indices, idd)
        dn = ScatterDimensionNumbers(
            update_window_dims=_shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)),
        )
    return prim.bind(operand, indices, updates, dimension_numbers=dn, **params), 0


scatter_p = _declare_scatter("scatter", ANY, None)
scatter_add_p = _declare_scatter("scatter-add", NUM, _ew.add_p)
scatter_sub_p = _declare_scatter("scatter-sub", NUM, _ew.sub_p)
scatter_mul_p = _declare_scatter("scatter-mul", NUM, _ew.mul_p)
scatter_min_p = _declare_scatter("scatter-min", ANY, _ew.min_p)
scatter_max_p = _declare_scatter("scatter-max", ANY, _ew.max_p)


def _scatter_fn(prim: Primitive, doc: str) -> Callable:
    def fn(
        operand,
        scatter_indices,
        updates,
        dimension_numbers: ScatterDimensionNumbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | GatherScatterMode | None = None,
    ):
        return prim.bind(
            operand,
            scatter_indices,
            updates,
            dimension_numbers=_scatter_dnums(dimension_numbers),
            indices_are_sorted=bool(indices_are_sorted),
            unique_indices=bool(unique_indices),
            mode=GatherScatterMode.from_any(mode),
        )

    fn.__doc__ = doc
    return fn


_SCATTER_DOC = (
    "{what} (jax.lax.{name}).\n\n    The last dimension of ``scatter_indices`` is the index "
    'vector. ``mode`` None or ``"drop"`` skips\n    out-of-bounds windows, ``"clip"`` '
    "clamps them into bounds.\n    "
)
scatter = _scatter_fn(
    scatter_p,
    _SCATTER_DOC.format(
        what="Replace windows of ``operand`` by ``updates`` at ``scatter_indices``", name="scatter"
    ),
)
scatter_add = _scatter_fn(
    scatter_add_p,
    _SCATTER_DOC.format(what="Add ``updates`` into windows of ``operand``", name="scatter_add"),
)
scatter_sub = _scatter_fn(
    scatter_sub_p,
    _SCATTER_DOC.format(
        what="Subtract ``updates`` from windows of ``operand``", name="scatter_sub"
    ),
)
scatter_mul = _scatter_fn(
    scatter_mul_p,
    _SCATTER_DOC.format(what="Multiply windows of ``operand`` by ``updates``", name="scatter_mul"),
)
scatter_min = _scatter_fn(
    scatter_min_p,
    _SCATTER_DOC.format(
        what="Take the minimum of windows of ``operand`` and ``updates``", name="scatter_min"
    ),
)
scatter_max = _scatter_fn(
    scatter_max_p,
    _SCATTER_DOC.format(
        what="Take the maximum of windows of ``operand`` and ``updates``", name="scatter_max"
    ),
)


# --- scatter rules: autodiff ------------------------------------------------------------------


def _zeros(aval: ShapedArray):
    return _st.full(aval.shape, 0, aval.dtype)


def _instantiate(t, primal):
    if type(t) is Zero:
        return _zeros(aval_of(primal))
    return t


def _gather_updates(x, indices, dn, operand_ndim, update_shape, mode, fill, **flags):
    """Gather, at each update, what a scatter with ``dn`` and ``mode`` writes there.

    The gather uses the scatter's mode: a dropped window reads ``fill``, a
    clamped one the clamped window.
    """
    return gather_p.bind(
        x,
        indices,
        dimension_numbers=_scatter_to_gather_dnums(dn),
        slice_sizes=tuple(_window_sizes(dn, operand_ndim, update_shape)),
        mode=mode,
        fill_value=fill if mode == FILL_OR_DROP else None,
        **flags,
    )


def _scatter_linear_jvp(prim, primals, tangents, **params):
    operand, indices, updates = primals
    out = prim.bind(operand, indices, updates, **params)
    t_op, _, t_up = tangents
    if type(t_op) is Zero and type(t_up) is Zero:
        return out, Zero(t_op.aval)
    t_out = prim.bind(_instantiate(t_op, operand), indices, _instantiate(t_up, updates), **params)
    return out, t_out


def _scatter_add_transpose(
    negate,
    ct,
    operand,
    indices,
    updates,
    *,
    dimension_numbers,
    mode,
    indices_are_sorted,
    unique_indices,
):
    if is_undefined_primal(indices):
        raise ValueError("scatter-add is not linear in its indices")
    op_ct = ct if is_undefined_primal(operand) else None
    up_ct = None
    if is_undefined_primal(updates):
        aval = updates.aval
        if type(ct) is Zero:
            up_ct = Zero(aval)
        else:
            up_ct = _gather_updates(
                ct,
                indices,
                dimension_numbers,
                len(aval_of(ct).shape),
                aval.shape,
                mode,
                0,
                indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices,
            )
            if negate:
                up_ct = _ew.neg(up_ct)
    return [op_ct, None, up_ct]


jvp_rules[scatter_add_p] = partial(_scatter_linear_jvp, scatter_add_p)
jvp_rules[scatter_sub_p] = partial(_scatter_linear_jvp, scatter_sub_p)
transpose_rules[scatter_add_p] = partial(_scatter_add_transpose, False)
transpose_rules[scatter_sub_p] = partial(_scatter_add_transpose, True)


def _update_ids(updates_aval: ShapedArray, dn: ScatterDimensionNumbers):
    """Number the scatter positions of the updates 1, 2, ... (constant over each window)."""
    scatter_dims = tuple(d for d in range(updates_aval.ndim) if d not in dn.update_window_dims)
    scatter_shape = tuple(updates_aval.shape[d] for d in scatter_dims)
    count = math.prod(scatter_shape)
    dtype = np.dtype(np.int32) if count < 2**31 - 1 else np.dtype(np.int64)
    ids = _st.reshape(_ew.add(_st.iota(dtype, count), np.ones((), dtype)), scatter_shape)
    return _st.broadcast_in_dim(ids, updates_aval.shape, scatter_dims), dtype


def _scatter_jvp(primals, tangents, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
    """JVP of scatter (replace): with repeated indices, only the update that wins counts.

    The updates are numbered; scattering the numbers tells which update landed
    on each operand element, and gathering them back tells each update whether
    it won. Value and tangent are then sums of disjoint contributions.
    """
    operand, indices, updates = primals
    params = {
        "dimension_numbers": dimension_numbers,
        "indices_are_sorted": indices_are_sorted,
        "unique_indices": unique_indices,
        "mode": mode,
    }
    t_op, _, t_up = tangents
    if type(t_op) is Zero and type(t_up) is Zero:
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, Zero(t_op.aval)
    if unique_indices:
        return _scatter_linear_jvp(scatter_p, primals, tangents, **params)
    op_aval, up_aval = aval_of(operand), aval_of(updates)
    ids, id_dtype = _update_ids(up_aval, dimension_numbers)
    id_zeros = _st.full(op_aval.shape, 0, id_dtype)
    won_by = scatter_p.bind(id_zeros, indices, ids, **params)
    winner = _gather_updates(
        won_by,
        indices,
        dimension_numbers,
        op_aval.ndim,
        up_aval.shape,
        mode,
        0,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
    )
    wins = _ew.eq(ids, winner)
    kept = _ew.eq(won_by, np.zeros((), id_dtype))

    def combine(x, u):
        x = _ew.select_n(kept, _zeros(aval_of(x)), x)
        u = _ew.select_n(wins, _zeros(aval_of(u)), u)
        return scatter_add_p.bind(x, indices, u, **params)

    out = combine(operand, updates)
    return out, combine(_instantiate(t_op, operand), _instantiate(t_up, updates))


def _scatter_transpose(
    ct, operand, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices, mode
):
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
    if is_undefined_primal(indices):
        raise ValueError("scatter is not linear in its indices")
    params = {
        "dimension_numbers": dimension_numbers,
        "indices_are_sorted": indices_are_sorted,
        "unique_indices": unique_indices,
        "mode": mode,
    }
    up_aval = updates.aval if is_undefined_primal(updates) else aval_of(updates)
    op_ct = up_ct = None
    if type(ct) is Zero:
        return [
            Zero(operand.aval) if is_undefined_primal(operand) else None,
            None,
            Zero(up_aval) if is_undefined_primal(updates) else None,
        ]
    if is_undefined_primal(operand):
        op_ct = scatter_p.bind(ct, indices, _zeros(up_aval), **params)
    if is_undefined_primal(updates):
        up_ct = _gather_updates(
            ct,
            indices,
            dimension_numbers,
            len(aval_of(ct).shape),
            up_aval.shape,
            mode,
            0,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
        )
    return [op_ct, None, up_ct]


jvp_rules[scatter_p] = _scatter_jvp
transpose_rules[scatter_p] = _scatter_transpose


def _scatter_mul_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    t_op, _, t_up = tangents
    t_out = Zero(t_op.aval) if type(t_op) is Zero else None
    if type(t_op) is not Zero:
        t_out = scatter_mul_p.bind(t_op, indices, updates, **params)
    if type(t_up) is not Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`"
            )
        spread = scatter_add_p.bind(_zeros(aval_of(operand)), indices, t_up, **params)
        term = _ew.mul(operand, spread)
        t_out = term if type(t_out) is Zero else _ew.add(t_out, term)
    return out, t_out


def _scatter_mul_transpose(
    ct, operand, indices, updates, *, dimension_numbers, mode, indices_are_sorted, unique_indices
):
    params = {
        "dimension_numbers": dimension_numbers,
        "indices_are_sorted": indices_are_sorted,
        "unique_indices": unique_indices,
        "mode": mode,
    }
    if is_undefined_primal(updates):
        if is_undefined_primal(operand):
            raise ValueError("scatter-mul is not jointly linear in its operand and updates")
        if not unique_indices:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`"
            )
        if type(ct) is Zero:
            return [None, None, Zero(updates.aval)]
        up_ct = _gather_updates(
            _ew.mul(ct, operand),
            indices,
            dimension_numbers,
            len(aval_of(ct).shape),
            updates.aval.shape,
            mode,
            0,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
        )
        return [None, None, up_ct]
    if type(ct) is Zero:
        return [Zero(operand.aval), None, None]
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose_rules[scatter_mul_p] = _scatter_mul_transpose


def _scatter_extremal_jvp(
    prim, primals, tangents, *, dimension_numbers, indices_are_sorted, unique_indices, mode
):
    """JVP of scatter-min/max: the tangent of each result is shared evenly by its ties."""
    operand, indices, updates = primals
    params = {
        "dimension_numbers": dimension_numbers,
        "indices_are_sorted": indices_are_sorted,
        "unique_indices": unique_indices,
        "mode": mode,
    }
    out = prim.bind(operand, indices, updates, **params)
    t_op, _, t_up = tangents
    if type(t_op) is Zero and type(t_up) is Zero:
        return out, Zero(t_op.aval)
    op_aval, up_aval = aval_of(operand), aval_of(updates)
    t_op, t_up = _instantiate(t_op, operand), _instantiate(t_up, updates)
    from_operand = _ew.eq(operand, out)
    at_target = _gather_updates(
        out,
        indices,
        dimension_numbers,
        op_aval.ndim,
        up_aval.shape,
        mode,
        np.nan,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
    )
    from_update = _ew.eq(updates, at_target)
    one_op, one_up = (
        _st.full(op_aval.shape, 1, op_aval.dtype),
        _st.full(up_aval.shape, 1, up_aval.dtype),
    )
    zero_op, zero_up = _zeros(op_aval), _zeros(up_aval)
    count = scatter_add_p.bind(
        _ew.select_n(from_operand, zero_op, one_op),
        indices,
        _ew.select_n(from_update, zero_up, one_up),
        **params,
    )
    count = _ew.select_n(_ew.eq(count, zero_op), count, one_op)
    total = scatter_add_p.bind(
        _ew.select_n(from_operand, zero_op, t_op),
        indices,
        _ew.select_n(from_update, zero_up, t_up),
        **params,
    )
    return out, _ew.div(total, count)


jvp_rules[scatter_min_p] = partial(_scatter_extremal_jvp, scatter_min_p)
jvp_rules[scatter_max_p] = partial(_scatter_extremal_jvp, scatter_max_p)


# --- scatter_apply ------------------------------------------------------------------------------


def _scatter_apply_abstract_eval(
    operand,
    indices,
    *,
    dimension_numbers,
    update_shape,
    update_jaxpr,
    indices_are_sorted,
    unique_indices,
    mode,
):
    _scatter_shape_rule("scatter-apply", operand, indices, update_shape, dimension_numbers)
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _scatter_apply_lowering(
    ctx, operand, indices, *, dimension_numbers, update_shape, update_jaxpr, mode, **params
):
    aval = ctx.avals_out[0]
    if mode == CLIP:

        def clipped(operand, indices):
            indices = _clamp_indices(
                indices, aval_of(operand).shape, dimension_numbers, update_shape
            )
            return scatter_apply_p.bind(
                operand,
                indices,
                dimension_numbers=dimension_numbers,
                update_shape=update_shape,
                update_jaxpr=update_jaxpr,
                mode=PROMISE_IN_BOUNDS,
                **params,
            )

        return lower_fun(clipped)(ctx, operand, indices)
    from ._common import full as _ir_full

    updates = _ir_full(0, aval.update(shape=tuple(update_shape)))
    op = hlo.ScatterOp(
        [ir_type(aval)],
        [operand],
        indices,
        [updates],
        _scatter_attr(dimension_numbers, ctx.avals_in[1].ndim - 1),
        indices_are_sorted=ir.BoolAttr.get(bool(params["indices_are_sorted"])),
        unique_indices=ir.BoolAttr.get(bool(params["unique_indices"])),
    )
    block = reducer_region(op, aval.dtype)
    with ir.InsertionPoint(block):
        x, _ = block.arguments
        (result,) = lower_jaxpr_inline(ctx, update_jaxpr, [x])
        hlo.return_([result])
    return op.results[0]


def _scatter_apply_jvp(primals, tangents, **params):
    raise NotImplementedError(
        "differentiation of scatter-apply (x.at[idx].apply(f)) is not supported yet"
    )


def _scatter_apply_batching(args, dims, *, dimension_numbers, update_shape, **params):
    (operand, indices), (od, idd) = args, dims
    size = _batch_size(args, dims)
    operand = _front(operand, od, size)
    dn = dimension_numbers
    if idd is None:
        dn = ScatterDimensionNumbers(
            update_window_dims=(0, *_shift(dn.update_window_dims)),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
        )
    else:
        indices = _move_to_front(indices, idd)
        dn = ScatterDimensionNumbers(
            update_window_dims=_shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)),
        )
    out = scatter_apply_p.bind(
        operand, indices, dimension_numbers=dn, update_shape=(size, *update_shape), **params
    )
    return out, 0


scatter_apply_p = Primitive("scatter-apply")
scatter_apply_p.def_abstract_eval(_scatter_apply_abstract_eval)
scatter_apply_p.def_impl(partial(apply_primitive, scatter_apply_p))
register_lowering(scatter_apply_p, _scatter_apply_lowering)
_register_param_text(scatter_apply_p, ScatterDimensionNumbers)
jvp_rules[scatter_apply_p] = _scatter_apply_jvp
batching_rules[scatter_apply_p] = _scatter_apply_batching


def scatter_apply(
    operand,
    scatter_indices,
    func: Callable,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
):
    """Apply the scalar function ``func`` to windows of ``operand`` (jax.lax.scatter_apply).

    ``update_shape`` is the shape updates would have (the windows and the index
    batch dimensions); an element hit ``k`` times gets ``func`` applied ``k``
    times, as in JAX.
    """
    from modjax.tracecore import make_jaxpr

    aval = aval_of(operand)
    scalar = ShapedArray((), aval.dtype, aval.weak_type)
    closed = make_jaxpr(func)(scalar)
    out_avals = [v.aval for v in closed.jaxpr.outvars]
    if len(out_avals) != 1 or out_avals[0].shape != () or out_avals[0].dtype != aval.dtype:
        raise TypeError(
            f"scatter_apply func must map a {dtypes.dtype_name(aval.dtype)} scalar to one "
            f"scalar of the same dtype; got {[a.str_short() for a in out_avals]}"
        )
    return scatter_apply_p.bind(
        operand,
        scatter_indices,
        dimension_numbers=_scatter_dnums(dimension_numbers),
        update_shape=_ints(update_shape, "scatter_apply update_shape"),
        update_jaxpr=closed,
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode),
    )


# --- dynamic_slice and dynamic_update_slice --------------------------------------------------


def _check_start_indices(name, operand, starts):
    if len(starts) != operand.ndim:
        raise TypeError(
            f"{name} start_indices must have length equal to the number of dimensions of the "
            f"operand, got start_indices of length {len(starts)} for operand shape "
            f"{operand.shape}."
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
        raise TypeError(
            "dynamic_slice slice_sizes must be nonnegative and less than or equal to the operand "
            f"shape, got slice_sizes {slice_sizes} for operand shape {operand.shape}."
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
    if operand.dtype != update.dtype:
        raise TypeError(
            "dynamic_update_slice update must have the same dtype as the operand, got operand "
            f"{dtypes.dtype_name(operand.dtype)} and update {dtypes.dtype_name(update.dtype)}."
        )
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


def _normalize_starts(name, operand_shape, start_indices, allow_negative_indices):
    """Convert start indices to scalars of one dtype, wrapping negative ones (``i + size``)."""
    if isinstance(start_indices, np.ndarray) or not isinstance(start_indices, Sequence):
        aval = aval_of(start_indices)
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
        raise TypeError(
            f"{name} start_indices must have length equal to the number of dimensions of the "
            f"operand, got start_indices of length {len(starts)} for operand shape "
            f"{operand_shape}."
        )
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = [allow_negative_indices] * len(starts)
    dtype = _start_index_dtype(starts)
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


def _axis(axis, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def dynamic_slice_in_dim(
    operand, start_index, slice_size: int, axis: int = 0, *, allow_negative_indices: bool = True
):
    """Slice ``slice_size`` items along ``axis`` from a traced start (lax.dynamic_slice_in_dim)."""
    shape = aval_of(operand).shape
    axis = _axis(axis, len(shape))
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    allow = [False] * len(shape)
    allow[axis] = allow_negative_indices
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(
    operand, index, axis: int = 0, keepdims: bool = True, *, allow_negative_indices: bool = True
):
    """Take element ``index`` (traced) along ``axis`` (jax.lax.dynamic_index_in_dim)."""
    out = dynamic_slice_in_dim(
        operand, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    if keepdims:
        return out
    return _st.squeeze(out, (_axis(axis, aval_of(operand).ndim),))


def dynamic_update_slice_in_dim(
    operand, update, start_index, axis: int, *, allow_negative_indices: bool = True
):
    """Write ``update`` at a traced start along ``axis`` (jax.lax.dynamic_update_slice_in_dim)."""
    ndim = aval_of(operand).ndim
    axis = _axis(axis, ndim)
    starts = [0] * ndim
    starts[axis] = start_index
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(
    operand, update, index, axis: int, *, allow_negative_indices: bool = True
):
    """Write ``update`` at position ``index`` along ``axis`` (jax.lax.dynamic_update_index_in_dim).

    ``update`` may lack the ``axis`` dimension; it is added.
    """
    ndim = aval_of(operand).ndim
    axis = _axis(axis, ndim)
    if aval_of(update).ndim == ndim - 1:
        update = _st.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(
        operand, update, index, axis, allow_negative_indices=allow_negative_indices
    )


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """Take the static element ``index`` along ``axis`` (jax.lax.index_in_dim)."""
    shape = aval_of(operand).shape
    axis = _axis(axis, len(shape))
    index = operator.index(index)
    size = shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else _st.squeeze(out, (axis,))


def slice_in_dim(
    operand, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0
):
    """Take the static slice ``[start:limit:stride]`` along ``axis`` (jax.lax.slice_in_dim).

    Negative bounds count from the end; None means the whole extent.
    """
    shape = aval_of(operand).shape
    axis = _axis(axis, len(shape))
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return _st.slice(operand, starts, limits, strides)


def index_take(src, idxs, axes: Sequence[int]):
    """Take ``src[idxs[0], idxs[1], ...]`` along ``axes`` with a gather (jax.lax.index_take).

    Indices are taken modulo the size of their axis.
    """
    shape = aval_of(src).shape
    axes = tuple(_axis(a, len(shape)) for a in axes)
    idxs = list(idxs)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: got {len(idxs)} index arrays for {len(axes)} axes")
    batch = aval_of(idxs[0]).shape
    dtype = _start_index_dtype(idxs)
    columns = []
    for i, axis in zip(idxs, axes, strict=True):
        i = _ew.convert_element_type(i, dtype)
        size = np.asarray(max(shape[axis], 1), dtype)
        i = _ew.rem(i, size)
        i = _ew.select_n(_ew.lt(i, np.zeros((), dtype)), i, _ew.add(i, size))
        columns.append(_st.reshape(i, (*batch, 1)))
    indices = _st.concatenate(columns, len(batch))
    slice_sizes = tuple(1 if d in axes else s for d, s in enumerate(shape))
    offset = tuple(range(len(batch), len(batch) + len(shape) - len(axes)))
    dn = GatherDimensionNumbers(
        offset_dims=offset, collapsed_slice_dims=tuple(sorted(axes)), start_index_map=axes
    )
    return gather(src, indices, dn, slice_sizes)
