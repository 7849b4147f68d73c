"""NumPy indexing of Arrays and tracers: ``x[idx]``, ``x.at[idx].op(...)``, ``take`` and friends.

An index is parsed once into a list of items (new axes, slices, integers,
integer arrays) and then takes one of three paths:

* static integers, slices, ``None`` and ``...``: at most one ``slice``, one
  ``rev``, one ``squeeze`` and one ``broadcast_in_dim``;
* traced scalar integers among them: the static part as above, then one
  ``dynamic_slice``;
* integer or boolean arrays: one ``gather`` (and ``x.at[idx]`` always one
  ``scatter``), whose index vector holds the integer indices, the starts of
  contiguous slices and ``iota``\\ s for strided ones.

Advanced indices follow NumPy: they broadcast together, and their dimensions
replace theirs in place when they are adjacent and go first otherwise
(integers count as advanced indices when an array index is present).
Negative indices count from the end; out-of-bounds reads clamp and
out-of-bounds writes are dropped, as in JAX. Boolean masks need concrete
values (their result's shape depends on them): under tracing they raise
``NonConcreteBooleanIndexError``, an IndexError as in JAX.
"""

from __future__ import annotations

import math
import operator
import string
from typing import Any, NamedTuple

import numpy as np
from modjax import lax
from modjax.lax import indexing as _lax_indexing
from modjax.lax import state as _lax_state
from modjax.lax._common import kind
from modjax.lax.indexing import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers
from modjax.lax.indexing.dimension_numbers import _gather_to_scatter_dnums
from modjax.lax.structural import unsharded_in_type
from modjax.sharding import reshard
from modjax.sharding.constraint import operation_out_sharding
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import sharding_entries
from modjax.tracecore.core import JAXIndexError, Tracer, concrete_or_error
from modjax.tracecore.state import AbstractRef

from . import _util
from ._eager_jit import compile_on_arrays
from ._util import ARRAY_TYPES, aval, canonicalize_axis, check_arraylike, convert

# ``Slice``/``ds`` are jax.ds (the metapackage exports them), not names of jax.numpy.
__all__ = [
    "argwhere",
    "flatnonzero",
    "nonzero",
    "put_along_axis",
    "take",
    "take_along_axis",
]

_INTEGER = (int, np.integer)


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index whose values are not known while tracing (JAX's error of that name)."""


class Slice:
    """``size`` elements from ``start``, ``stride`` apart, on one axis (JAX's ``indexing.Slice``).

    ``start`` may be traced: ``x[ds(i, 2)]`` reads a window of static size at a
    dynamic position (a window running past the end moves back inside, as
    ``lax.dynamic_slice`` does; with ``stride > 1`` each index clamps instead).
    """

    __slots__ = ("start", "size", "stride")

    def __init__(self, start: Any, size: int, stride: int = 1):
        self.start, self.size, self.stride = start, operator.index(size), operator.index(stride)
        if self.size < 0:
            raise ValueError(f"ds: size must be non-negative, got {size}")
        if self.stride < 1:
            raise ValueError(f"ds: stride must be positive, got {stride}")

    def __repr__(self) -> str:
        return f"Slice(start={self.start!r}, size={self.size}, stride={self.stride})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Slice):
            return NotImplemented
        return (self.start, self.size, self.stride) == (other.start, other.size, other.stride)

    __hash__ = None  # type: ignore[assignment]  # as JAX's: compared by value, not hashable

    @property
    def is_dynamic_start(self) -> bool:
        """Whether the start is an array (possibly traced) rather than a Python int."""
        return not isinstance(self.start, int)


def ds(start: Any, size: int | None = None, stride: int | None = None):
    """Return a ``Slice`` of ``size`` elements from ``start`` (jax.ds, jax's ``dslice``).

    ``ds(None)`` is ``:``, ``ds(j)`` is ``:j``, ``ds(i, j)`` is ``i:i+j`` and
    ``ds(i, j, stride)`` takes ``j`` elements ``stride`` apart; ``i`` may be traced.
    """
    if start is None:
        return slice(None)
    if size is None:
        return Slice(0, start, 1)
    return Slice(start, size, 1 if stride is None else stride)


# --- parsing -------------------------------------------------------------------------------


class _Item(NamedTuple):
    """One index item after parsing: ``kind`` is new, bool, slice, int, dyn, array or gap.

    A gap is an Ellipsis that stands for no dimension: it only keeps advanced
    indices on its two sides apart, as in NumPy.
    """

    kind: str
    dim: int = -1  # the operand dimension it consumes (-1 for new axes)
    value: Any = None  # int, traced scalar, or array (numpy or traced)
    start: int = 0  # slices: start, step and element count
    step: int = 1
    count: int = 0
    empty: bool = False  # new axes from a False scalar mask


def _static_int(v: Any, what: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, Tracer):
        concrete = v.to_concrete_value()
        if concrete is None:
            raise IndexError(
                "Array slice indices must have static start/stop/step to be used with NumPy "
                f"indexing syntax; found a traced {what}. To index a statically sized array at "
                "a dynamic position, try lax.dynamic_slice or lax.dynamic_update_slice."
            )
        v = np.asarray(concrete)
    try:
        return operator.index(v)
    except TypeError:
        if isinstance(v, (np.ndarray, *ARRAY_TYPES)) and np.ndim(v) == 0:
            a = np.asarray(v)
            if kind(a.dtype) in "iu":
                return int(a)
        raise TypeError(f"slice indices must be integers or None, got {v!r}") from None


def _concrete_mask(item: Any) -> np.ndarray:
    if isinstance(item, Tracer):
        concrete = item.to_concrete_value()
        if concrete is None:
            raise NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {item.aval.str_short()}\n\n"
                "See https://docs.jax.dev/en/latest/errors.html"
                "#jax.errors.NonConcreteBooleanIndexError"
            )
        return np.asarray(concrete)
    return np.asarray(item)


def _classify(item: Any) -> tuple[str, Any]:
    """Return ``(kind, value)`` for one raw index item."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, Slice):
        return "dslice", item
    if isinstance(item, bool | np.bool_):
        return "bool", bool(item)
    if isinstance(item, _INTEGER):
        return "int", int(item)
    if isinstance(item, str):
        raise TypeError(f"modjax does not support string indexing; got idx={item!r}")
    if isinstance(item, tuple | list):  # inside a tuple index, a sequence is an index array
        item = _sequence_index(item)
    if isinstance(item, (np.ndarray, np.generic, *ARRAY_TYPES)):
        item_aval = aval(item)
        k = kind(item_aval.dtype)
        if k == "b":
            mask = _concrete_mask(item)
            return ("bool", bool(mask)) if mask.ndim == 0 else ("mask", mask)
        if k not in "iu":
            raise TypeError(
                f"Indexer must have integer or boolean type, got indexer with type "
                f"{dtypes.dtype_name(item_aval.dtype)}"
            )
        if isinstance(item, np.ndarray | np.generic):
            return ("int", int(item)) if np.ndim(item) == 0 else ("array", np.asarray(item))
        return ("dyn", item) if item_aval.ndim == 0 else ("array", item)
    # JAX names the dtype numpy gives a Python float or complex.
    scalar = isinstance(item, float | complex)
    name = np.asarray(item).dtype.name if scalar else type(item).__name__
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {name}")


def _sequence_index(items: tuple | list):
    """An index array from a sequence of ints/bools (or arrays, which are stacked)."""
    if any(isinstance(x, ARRAY_TYPES) for x in items):
        from ._creation import asarray

        return asarray(items)
    return np.asarray(items)


def _parse(shape: tuple[int, ...], idx: Any) -> list[_Item]:
    """Parse ``idx`` for an array of ``shape`` into items covering every dimension."""
    if isinstance(idx, list):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]`. See "
            "https://github.com/jax-ml/jax/issues/4564 for more information."
        )
    raw = [_classify(i) for i in (idx if isinstance(idx, tuple) else (idx,))]
    if sum(k == "ellipsis" for k, _ in raw) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(
        np.ndim(v) if k == "mask" else k in ("slice", "dslice", "int", "dyn", "array")
        for k, v in raw
    )
    ndim = len(shape)
    if consumed > ndim:
        raise IndexError(
            f"Too many indices: array is {ndim}-dimensional, but {consumed} were indexed"
        )
    fill = [("slice", slice(None))] * (ndim - consumed)
    at = next((i for i, (k, _) in enumerate(raw) if k == "ellipsis"), len(raw))
    if at < len(raw) and not fill:  # an empty ``...`` still separates advanced indices
        fill = [("gap", None)]
    raw = raw[:at] + fill + raw[at + 1 :]

    items: list[_Item] = []
    dim = 0
    for k, v in raw:
        if k == "gap":
            items.append(_Item("gap"))
            continue
        if k in ("new", "bool"):
            items.append(_Item(k, empty=(k == "bool" and not v)))
            continue
        if k == "mask":
            for axis, (m, s) in enumerate(zip(v.shape, shape[dim : dim + v.ndim], strict=True)):
                if m not in (0, s):  # JAX lets an empty mask select nothing along any axis
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {dim + axis}; "
                        f"size of axis is {s} but size of corresponding boolean axis is {m}"
                    )
            for i, where in enumerate(np.nonzero(v)):
                items.append(_Item("array", dim + i, where.astype(np.int64)))
            dim += v.ndim
            continue
        size = shape[dim]
        if k == "dslice":
            items.append(_dslice_item(v, dim, size))
        elif k == "slice":
            start, stop, step = (
                _static_int(v.start, "start"),
                _static_int(v.stop, "stop"),
                _static_int(v.step, "step"),
            )
            if step == 0:
                raise ValueError("slice step cannot be zero")
            start, stop, step = slice(start, stop, step).indices(size)
            count = len(range(start, stop, step))
            items.append(_Item("slice", dim, None, start, step, count))
        else:
            items.append(_Item(k, dim, v))
        dim += 1
    return items


def _dslice_item(sl: Slice, dim: int, size: int) -> _Item:
    """The item of a ``ds(start, size, stride)`` index on a dimension of ``size``.

    A window (stride 1) is a slice whose start is clamped so the window fits, as
    ``dynamic_slice`` clamps (a traced start is kept as the item's ``value`` and
    goes into the gather's index vector); a strided one is an index array whose
    entries clamp one by one, as in JAX.
    """
    if sl.size > size and sl.stride == 1:
        raise TypeError(
            f"slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
            f"({sl.size},) for operand shape ({size},)."
        )
    start = sl.start
    if isinstance(start, Tracer) and start.to_concrete_value() is not None:
        start = np.asarray(start.to_concrete_value())
    if isinstance(start, Tracer):
        if sl.stride == 1:
            return _Item("slice", dim, start, 0, 1, sl.size)
        ramp = lax.iota(np.int32, sl.size) * sl.stride
        return _Item("array", dim, lax.add(convert(start, np.int32), ramp))
    first = _static_int(start, "start")
    assert first is not None
    if first < 0:
        first += size
    if sl.stride == 1:
        return _Item("slice", dim, None, min(max(first, 0), size - sl.size), 1, sl.size)
    return _Item("array", dim, (first + sl.stride * np.arange(sl.size)).astype(np.int64))


def _refuse_scalar_index_of_empty_axis(items: list[_Item], shape: tuple[int, ...]) -> None:
    """Raise JAX's IndexError for a scalar integer index (static or traced) into a size-0 axis.

    XLA cannot take a size-1 slice there. With an array index of rank >= 1 present
    the scalars join the gather instead, which fails with the gather's own error.
    """
    scalar = [it for it in items if it.kind in ("int", "dyn", "array") and not _shape(it.value)]
    if any(it.kind == "array" and _shape(it.value) for it in items):
        return
    for it in scalar:
        if shape[it.dim] == 0:
            raise IndexError(f"index is out of bounds for axis {it.dim} with size 0")


# --- static and dynamic-slice paths ----------------------------------------------------------


def _basic(x: Any, items: list[_Item], shape: tuple[int, ...], wrap: bool = True):
    """``x[idx]`` for static ints, slices and new axes: slice, rev, squeeze, broadcast."""
    ndim = len(shape)
    starts, limits, strides = [0] * ndim, list(shape), [1] * ndim
    reversed_dims, int_dims, new_axes, empty_axes = [], [], [], []
    out_pos = 0
    for it in items:
        if it.kind == "gap":
            continue
        if it.kind in ("new", "bool"):
            new_axes.append(out_pos)
            if it.empty:
                empty_axes.append(out_pos)
            out_pos += 1
            continue
        d = it.dim
        if it.kind == "int":
            size = shape[d]
            if size == 0:
                raise IndexError(f"index is out of bounds for axis {d} with size 0")
            i = it.value + size if it.value < 0 and wrap else it.value
            i = min(max(i, 0), size - 1)  # out-of-range static reads clamp, as in JAX
            starts[d], limits[d] = i, i + 1
            int_dims.append(d)
        elif it.kind == "slice":
            if it.count == 0:
                starts[d], limits[d] = 0, 0
            elif it.step > 0:
                starts[d], limits[d] = it.start, it.start + (it.count - 1) * it.step + 1
                strides[d] = it.step
            else:
                last = it.start + (it.count - 1) * it.step
                starts[d], limits[d], strides[d] = last, it.start + 1, -it.step
                if it.count > 1:
                    reversed_dims.append(d)
            out_pos += 1
        else:  # dyn: left whole here, sliced by the caller
            out_pos += 1
    out = x
    if starts != [0] * ndim or limits != list(shape) or strides != [1] * ndim:
        out = lax.slice(out, starts, limits, strides)
    if reversed_dims:
        out = lax.rev(out, reversed_dims)
    if int_dims:
        out = lax.squeeze(out, int_dims)
    if new_axes:
        out = lax.expand_dims(out, new_axes)
    for axis in empty_axes:
        out = lax.slice_in_dim(out, 0, 0, axis=axis)
    return out


def _dynamic(x: Any, items: list[_Item], shape: tuple[int, ...], wrap: bool):
    """``x[idx]`` with traced scalar ints: static part first, then one dynamic_slice."""
    static = [
        it._replace(kind="slice", start=0, step=1, count=shape[it.dim]) if it.kind == "dyn" else it
        for it in items
    ]
    # Positions (in the static result) of the dims the traced ints index.
    out_dims, pos = [], 0
    for it in items:
        if it.kind == "dyn":
            out_dims.append(pos)
        if it.kind not in ("int", "gap"):
            pos += 1
    out = _basic(x, static, shape, wrap)
    out_shape = aval(out).shape
    starts = [0] * len(out_shape)
    sizes = list(out_shape)
    for d, it in zip(out_dims, [it for it in items if it.kind == "dyn"], strict=True):
        starts[d] = it.value
        sizes[d] = 1
    out = lax.dynamic_slice(out, starts, sizes, allow_negative_indices=wrap)
    return lax.squeeze(out, out_dims)


# --- the gather/scatter plan ---------------------------------------------------------------------


class _Plan(NamedTuple):
    """How ``x[idx]`` maps onto one gather (and ``x.at[idx]`` onto one scatter)."""

    indices: Any  # [*batch, n] integer index array
    dnums: GatherDimensionNumbers
    slice_sizes: tuple[int, ...]
    gather_shape: tuple[int, ...]  # the gather's result shape (no new axes)
    new_axes: tuple[int, ...]  # positions of new axes in x[idx]
    empty_axes: tuple[int, ...]  # new axes of size 0 (False scalar masks)
    out_shape: tuple[int, ...]  # the shape of x[idx]
    collapsed_empty: bool  # an integer index addresses a dimension of size 0
    unique: bool  # indices are known unique and sorted (no arrays)
    sorted: bool


def _index_dtype(arrays: list) -> np.dtype:
    """int32 for the index vector, or int64 (with x64) if an index needs it."""
    wide = False
    for a in arrays:
        if isinstance(a, np.ndarray):
            wide = wide or bool(a.size and (a.max() > 2**31 - 1 or a.min() < -(2**31)))
        else:
            dt = aval(a).dtype
            wide = wide or dt.itemsize >= 8 or dt == np.uint32
    return dtypes.canonicalize_dtype(np.int64 if wide else np.int32)


def _shape(v: Any) -> tuple[int, ...]:
    return np.shape(v) if isinstance(v, np.ndarray | int) else aval(v).shape


def _column(v: Any, dims: tuple[int, ...], batch_shape: tuple[int, ...]):
    """Broadcast ``v`` (its axis ``j`` going to ``dims[j]``) to ``batch_shape``."""
    v_shape = _shape(v)
    keep = [j for j, s in enumerate(v_shape) if s != 1]
    target = tuple(dims[j] for j in keep)
    if isinstance(v, np.ndarray):
        shape = [1] * len(batch_shape)
        for j, d in zip(keep, target, strict=True):
            shape[d] = v_shape[j]
        return np.broadcast_to(v.reshape(shape), batch_shape)
    if len(keep) != len(v_shape):
        v = lax.reshape(v, tuple(v_shape[j] for j in keep))
    return lax.broadcast_in_dim(v, batch_shape, target)


def _normalized(value: Any, size: int, dtype: np.dtype, wrap: bool):
    """Return an index (array) as ``dtype``, negative values counted from the end if ``wrap``."""
    if isinstance(value, int | np.ndarray):
        v = np.asarray(value)
        if wrap:
            v = np.where(v < 0, v + size, v)
        info = np.iinfo(dtype)
        return np.asarray(np.clip(v, info.min, info.max), dtype)
    src = aval(value).dtype
    if src != dtype:
        value = lax.convert_element_type(value, dtype)
    if wrap and kind(src) == "i":
        value = lax.select_n(
            lax.lt(value, np.zeros((), dtype)), value, lax.add(value, np.asarray(size, dtype))
        )
    return value


def _plan(shape: tuple[int, ...], items: list[_Item], wrap: bool) -> _Plan:
    kinds = {it.kind for it in items}
    if "bool" in kinds and kinds & {"array", "dyn"}:
        raise NotImplementedError(
            "indexing with a boolean scalar together with array indices is not supported yet"
        )
    has_arrays = any(it.kind == "array" for it in items)
    advanced = [i for i, it in enumerate(items) if it.kind in ("array", "dyn", "int")]
    adv_items = [items[i] for i in advanced]
    try:
        batch = np.broadcast_shapes(*(_shape(it.value) for it in adv_items))
    except ValueError:
        shapes = " ".join(str(_shape(it.value)) for it in adv_items)
        raise IndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}"
        ) from None
    batch = tuple(batch)
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1)) if advanced else True

    # The result's entries, in order: ("B",), ("new", item) or ("slice", item).
    entries: list[tuple[str, _Item | None]] = []
    if advanced and not adjacent:
        entries.append(("B", None))
    for i, it in enumerate(items):
        if it.kind in ("new", "bool"):
            entries.append(("new", it))
        elif it.kind == "slice":
            entries.append(("slice", it))
        elif advanced and adjacent and i == advanced[0]:
            entries.append(("B", None))

    def strided(it: _Item) -> bool:
        return it.step != 1 and it.count > 1

    # Dimensions of the gather's result; those that are not windows are index batch dims.
    gather_shape, offset_dims, batch_shape, b_at, strided_at = [], [], [], 0, {}
    for name, it in entries:
        if name == "new":
            continue
        if name == "B":
            b_at = len(batch_shape)
            batch_shape.extend(batch)
            gather_shape.extend(batch)
        elif strided(it):
            strided_at[it.dim] = len(batch_shape)
            batch_shape.append(it.count)
            gather_shape.append(it.count)
        else:
            offset_dims.append(len(gather_shape))
            gather_shape.append(it.count)
    batch_shape = tuple(batch_shape)

    dtype = _index_dtype(
        [it.value for it in adv_items if it.kind != "int"]
        + [it.value for it in items if it.kind == "slice" and it.value is not None]
    )
    b_dims = tuple(range(b_at, b_at + len(batch)))
    columns, index_map = [], []
    for it in adv_items:
        v = _normalized(it.value, shape[it.dim], dtype, wrap)
        lead = len(batch) - len(_shape(v))
        columns.append(_column(v, b_dims[lead:], batch_shape))
        index_map.append(it.dim)
    for it in items:
        if it.kind != "slice":
            continue
        if strided(it):
            ramp = (it.start + it.step * np.arange(it.count)).astype(dtype)
            columns.append(_column(ramp, (strided_at[it.dim],), batch_shape))
            index_map.append(it.dim)
        elif it.value is not None:  # a window at a traced start (ds(i, n)): clamped by gather
            start = _normalized(it.value, shape[it.dim], dtype, wrap)
            columns.append(_column(start, (), batch_shape))
            index_map.append(it.dim)
        elif (it.start or it.count != shape[it.dim]) and it.count:
            # A partial slice starting at 0 is indexed too (as JAX does): the
            # gather's sharding rule sees the dimension is cut.
            columns.append(_column(np.asarray(it.start, dtype), (), batch_shape))
            index_map.append(it.dim)
    if all(isinstance(c, np.ndarray) for c in columns):
        indices = np.stack(columns, axis=-1) if columns else np.zeros((*batch_shape, 0), dtype)
    else:
        columns = [
            np.reshape(c, (*batch_shape, 1))
            if isinstance(c, np.ndarray)
            else lax.reshape(c, (*batch_shape, 1))
            for c in columns
        ]
        indices = lax.concatenate(columns, len(batch_shape))

    collapsed = sorted([it.dim for it in adv_items] + list(strided_at))
    slice_sizes = []
    for d, _size in enumerate(shape):
        if d in collapsed:
            slice_sizes.append(1)
        else:
            it = next(it for it in items if it.kind == "slice" and it.dim == d)
            slice_sizes.append(it.count)
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(offset_dims),
        collapsed_slice_dims=tuple(collapsed),
        start_index_map=tuple(index_map),
    )
    new_axes, empty_axes, out_shape, g = [], [], [], iter(gather_shape)
    pos = 0
    for name, it in entries:
        if name == "new":
            new_axes.append(pos)
            if it.empty:
                empty_axes.append(pos)
            out_shape.append(0 if it.empty else 1)
            pos += 1
        elif name == "B":
            out_shape.extend(next(g) for _ in batch)
            pos += len(batch)
        else:
            out_shape.append(next(g))
            pos += 1
    return _Plan(
        indices=indices,
        dnums=dnums,
        slice_sizes=tuple(slice_sizes),
        gather_shape=tuple(gather_shape),
        new_axes=tuple(new_axes),
        empty_axes=tuple(empty_axes),
        out_shape=tuple(out_shape),
        collapsed_empty=any(shape[d] == 0 for d in collapsed),
        unique=not has_arrays,
        sorted=not has_arrays and all(it.step > 0 for it in items if it.kind == "slice"),
    )


def _finish(out: Any, plan: _Plan):
    """Add the new axes of ``x[idx]`` to a gather's result."""
    if plan.new_axes:
        out = lax.expand_dims(out, plan.new_axes)
    for axis in plan.empty_axes:
        out = lax.slice_in_dim(out, 0, 0, axis=axis)
    return out


# --- x[idx] ----------------------------------------------------------------------------------


def _partial_take_of_typed_array(x: Any, items: list[_Item], shape: tuple[int, ...]) -> bool:
    """Tell whether ``x[idx]`` gathers, as in JAX, rather than slices.

    JAX indexes a concrete Array on several devices with integers or partial
    slices by a gather, whose sharding rule then types the result (and asks
    for ``.at[...].get(out_sharding=)`` where a sharded dimension is cut); for
    an Array whose type has no sharding both paths give the same result, so
    only typed ones take it here.
    """
    if isinstance(x, Tracer) or getattr(aval(x), "type_sharding", None) is None:
        return False
    return any(
        it.kind in ("int", "dyn")
        or (it.kind == "slice" and (it.step != 1 or it.count != shape[it.dim]))
        for it in items
    )


def getitem(x: Any, idx: Any):
    """Return ``x[idx]`` with NumPy's indexing rules, as jax.numpy arrays do."""
    if type(getattr(x, "aval", None)) is AbstractRef:  # a traced mutable reference: a read
        return _lax_state.ref_get(x, idx)
    return rewriting_take(x, idx)


def rewriting_take(
    x: Any,
    idx: Any,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value: Any = None,
    wrap_negative_indices: bool = True,
    out_sharding: Any = None,
):
    """Return ``x[idx]`` by slicing, a dynamic_slice or a gather (jnp's ``_rewriting_take``).

    ``out_sharding`` (``x.at[idx].get(out_sharding=)``) gives the result's
    sharding: the take runs on ``x`` gathered in its type, then reshards.
    """
    if out_sharding is not None:  # JAX ignores it for an operand with no mesh, outside one
        out_sharding = operation_out_sharding(out_sharding, ".get", [aval(x)])
    if out_sharding is not None:
        out = rewriting_take(
            unsharded_in_type(x),
            idx,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            fill_value=fill_value,
            wrap_negative_indices=wrap_negative_indices,
        )
        return reshard(out, out_sharding)
    shape = aval(x).shape
    items = _parse(shape, idx)
    _refuse_scalar_index_of_empty_axis(items, shape)
    parsed = None if mode is None else GatherScatterMode.from_any(mode)
    fill = parsed == GatherScatterMode.FILL_OR_DROP
    kinds = {it.kind for it in items}
    traced_window = any(it.kind == "slice" and it.value is not None for it in items)
    if (
        "array" not in kinds
        and not fill
        and not traced_window
        and not _partial_take_of_typed_array(x, items, shape)
    ):
        if "dyn" not in kinds:
            return _basic(x, items, shape, wrap_negative_indices)
        return _dynamic(x, items, shape, wrap_negative_indices)
    plan = _plan(shape, items, wrap_negative_indices)
    if plan.collapsed_empty:
        if math.prod(plan.out_shape) == 0:
            return lax.full(plan.out_shape, 0, aval(x).dtype)
        # An index array into a size-0 axis: JAX's gather refuses its size-1 slice, in
        # every mode (``fill`` included).
        d = next(d for d in plan.dnums.collapsed_slice_dims if shape[d] == 0)
        raise TypeError(
            f"Slice size at index {d} in gather op is out of range, must be within "
            "[0, 0 + 1), got 1."
        )
    out = lax.gather(
        x,
        plan.indices,
        plan.dnums,
        plan.slice_sizes,
        indices_are_sorted=indices_are_sorted or plan.sorted,
        unique_indices=unique_indices or plan.unique,
        mode=GatherScatterMode.PROMISE_IN_BOUNDS if parsed is None else parsed,
        fill_value=fill_value,
    )
    return _finish(out, plan)


def setitem(x: Any, idx: Any, value: Any):
    """Refuse in-place assignment: modjax arrays are immutable (references are written)."""
    if type(getattr(x, "aval", None)) is AbstractRef:
        _lax_state.ref_set(x, idx, value)
        return
    raise TypeError(
        "JAX arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
    )


# --- x.at[idx].op(y) -------------------------------------------------------------------------


_SCATTERS = {
    "set": _lax_indexing.scatter_p,
    "add": _lax_indexing.scatter_add_p,
    "sub": _lax_indexing.scatter_sub_p,
    "mul": _lax_indexing.scatter_mul_p,
    "min": _lax_indexing.scatter_min_p,
    "max": _lax_indexing.scatter_max_p,
}


def scatter_update(
    x: Any,
    idx: Any,
    y: Any,
    op: str,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
    wrap_negative_indices: bool = True,
    func=None,
):
    """Return ``x`` with ``x[idx]`` combined with ``y`` by ``op`` (set/add/sub/mul/min/max/apply).

    ``y`` is cast to ``x``'s dtype and broadcast to the shape of ``x[idx]``;
    out-of-bounds windows are dropped unless ``mode="clip"``.
    """
    x_aval = aval(x)
    shape = x_aval.shape
    items = _parse(shape, idx)
    _refuse_scalar_index_of_empty_axis(items, shape)
    if any(it.kind == "bool" for it in items):
        raise NotImplementedError("x.at[] with a boolean scalar index is not supported yet")
    plan = _plan(shape, items, wrap_negative_indices)
    parsed = GatherScatterMode.from_any(mode)
    dnums = _gather_to_scatter_dnums(plan.dnums)
    flags = {
        "indices_are_sorted": bool(indices_are_sorted or plan.sorted),
        "unique_indices": bool(unique_indices or plan.unique),
        "mode": parsed,
    }
    if op == "apply":
        if plan.collapsed_empty or math.prod(plan.gather_shape) == 0:
            return x
        return lax.scatter_apply(
            x, plan.indices, func, dnums, update_shape=plan.gather_shape, **flags
        )
    check_arraylike(f"x.at[...].{op}", y)
    y = convert(y, x_aval.dtype, x_aval.weak_type)
    y_shape = np.shape(y) if not isinstance(y, ARRAY_TYPES) else aval(y).shape
    if len(y_shape) > len(plan.out_shape) or any(
        a != 1 and a != b for a, b in zip(y_shape[::-1], plan.out_shape[::-1], strict=False)
    ):
        raise ValueError(
            f"x.at[...].{op}: cannot broadcast the update of shape {y_shape} to the indexed "
            f"shape {plan.out_shape} (x of shape {shape})."
        )
    if plan.collapsed_empty or math.prod(plan.out_shape) == 0:
        return x
    if x_aval.type_sharding is not None:
        # As JAX's: the update takes the sharding of the indexed slice of x.
        slice_sharding = x_aval.type_sharding.update(spec=_slice_entries(x_aval, items))
        y = _util.broadcast_to(y, plan.out_shape, slice_sharding)
    elif y_shape != plan.out_shape:
        offset = len(plan.out_shape) - len(y_shape)
        y = lax.broadcast_in_dim(y, plan.out_shape, tuple(range(offset, len(plan.out_shape))))
    if plan.new_axes:
        y = lax.reshape(y, plan.gather_shape)
    return _SCATTERS[op].bind(x, plan.indices, y, dimension_numbers=dnums, **flags)


def _slice_entries(x_aval, items: list[_Item]) -> list:
    """The sharding entries of ``x[idx]`` (JAX's ``slice_spec``): a sliced dimension keeps
    ``x``'s entry; new axes and the dimensions of array indices are unsharded."""
    x_entries = sharding_entries(x_aval)
    advanced = [i for i, it in enumerate(items) if it.kind in ("array", "dyn", "int")]
    batch_ndim = len(np.broadcast_shapes(*(_shape(items[i].value) for i in advanced)))
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1)) if advanced else True
    out: list = [None] * batch_ndim if advanced and not adjacent else []
    for i, it in enumerate(items):
        if it.kind in ("new", "bool"):
            out.append(None)
        elif it.kind == "slice":
            out.append(x_entries[it.dim])
        elif advanced and adjacent and i == advanced[0]:
            out.extend([None] * batch_ndim)
    return out


# --- take, take_along_axis, put_along_axis ----------------------------------------------------


def take(
    a: Any,
    indices: Any,
    axis: int | None = None,
    out: None = None,
    mode: str | None = None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value: Any = None,
):
    """Take elements of ``a`` at ``indices`` along ``axis`` (jax.numpy.take).

    ``axis=None`` indexes the flattened array. ``mode`` is ``"fill"`` (the
    default: negative indices count from the end, out-of-bounds ones give
    ``fill_value``, NaN for inexact types), ``"clip"`` (numpy's: indices are
    clamped to ``[0, n - 1]``) or ``"wrap"`` (indices are taken modulo ``n``).
    """
    check_arraylike("take", a, indices)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    if axis is None:
        a = lax.reshape(a, (math.prod(aval(a).shape),))
        axis = 0
    ndim = aval(a).ndim
    axis = canonicalize_axis(axis, ndim)
    if isinstance(indices, float | complex) or (
        isinstance(indices, (*ARRAY_TYPES, np.ndarray, np.generic))
        and kind(aval(indices).dtype) not in "iu"
    ):
        raise ValueError("indices must have an integer type")  # JAX's class and text for take
    indices = _as_index_array("take", indices)
    if aval(a).shape[axis] == 0 and math.prod(_shape(indices)) != 0:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    wrap_negative = True
    if mode is None or mode == "fill":
        mode = "fill"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = _wrap(indices, aval(a).shape[axis])
        mode = "promise_in_bounds"
    elif mode == "clip":
        wrap_negative = False  # numpy's clip: negative indices clamp to 0
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    idx = (slice(None),) * axis + (indices,)
    return rewriting_take(
        a,
        idx,
        mode=mode,
        fill_value=fill_value,
        unique_indices=unique_indices,
        indices_are_sorted=indices_are_sorted,
        wrap_negative_indices=wrap_negative,
    )


def _as_index_array(name: str, indices: Any):
    if isinstance(indices, (*ARRAY_TYPES, np.ndarray, np.generic)):
        a = aval(indices)
    elif isinstance(indices, int) and not isinstance(indices, bool):
        return np.asarray(indices)
    else:
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(indices)}.")
    if kind(a.dtype) not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {dtypes.dtype_name(a.dtype)}")
    return indices if not isinstance(indices, np.generic) else np.asarray(indices)


def _wrap(indices: Any, size: int):
    if size == 0:
        return indices
    if isinstance(indices, np.ndarray):
        return np.mod(indices, size)
    dtype = aval(indices).dtype
    m = lax.rem(indices, np.asarray(size, dtype))
    if kind(dtype) == "u":
        return m
    return lax.select_n(lax.lt(m, np.zeros((), dtype)), m, lax.add(m, np.asarray(size, dtype)))


def _along_axis_index(name: str, arr_shape, indices, axis: int | None):
    """The advanced index tuple that ``take_along_axis``/``put_along_axis`` use."""
    idx_shape = np.shape(indices) if isinstance(indices, np.ndarray) else aval(indices).shape
    if len(idx_shape) != len(arr_shape):
        raise ValueError(
            f"{name}: indices and arr must have the same number of dimensions; got indices "
            f"shape {idx_shape} for arr shape {arr_shape}"
        )
    shape = []
    for d, (i, s) in enumerate(zip(idx_shape, arr_shape, strict=True)):
        if d == axis:
            shape.append(i)
        elif i != s and i != 1 and s != 1:
            raise ValueError(
                f"{name}: indices shape {idx_shape} and arr shape {arr_shape} are incompatible "
                f"along axis {d}"
            )
        else:
            shape.append(max(i, s) if 0 not in (i, s) else 0)
    index = []
    for d in range(len(arr_shape)):
        if d == axis:
            index.append(indices)
        else:
            ramp_shape = [1] * len(arr_shape)
            ramp_shape[d] = arr_shape[d]
            ramp = np.arange(arr_shape[d], dtype=np.int32).reshape(ramp_shape)
            if arr_shape[d] == 1 and shape[d] != 1:
                ramp = np.zeros([1] * len(arr_shape), np.int32)
            index.append(ramp)
    return tuple(index)


_LETTERS = string.ascii_letters


def _along_index_dtype(dtype: np.dtype, size: int, wrap: bool) -> np.dtype:
    """The dtype indices take along an axis of ``size`` (JAX's ``index_dtype_for_axis_size``).

    Wrapped negative indices are signed and wide enough for ``index + size``.
    """
    if not wrap:
        return dtype
    return dtypes.canonicalize_dtype(np.int64 if size > 2**31 - 1 else np.int32)


def _one_hot_take(a, indices, axis: int, size: int):
    """``take_along_axis(mode="one_hot")``: a one-hot contraction instead of a gather."""
    from modjax import nn

    from ._einsum import einsum

    hot = nn.one_hot(indices, size, dtype=np.bool_)
    if aval(a).ndim == 1:
        return einsum("...b,b->...", hot, a, preferred_element_type=aval(a).dtype)
    if axis > len(_LETTERS) - 2:
        raise ValueError("One Hot indexing is only supported for up to 50 leading dimensions.")
    labels = _LETTERS[:axis]
    return einsum(
        f"{labels}y...z,{labels}z...->{labels}y...",
        hot,
        a,
        precision=lax.Precision.HIGHEST,
        preferred_element_type=aval(a).dtype,
    )


def take_along_axis(
    arr: Any,
    indices: Any,
    axis: int | None = -1,
    mode: str | GatherScatterMode | None = None,
    fill_value: Any = None,
    *,
    wrap_negative_indices: bool | None = None,
):
    """Take values of ``arr`` at ``indices`` along ``axis`` (jax.numpy.take_along_axis).

    ``indices`` has ``arr``'s rank; other dimensions broadcast. Out-of-bounds
    indices give ``fill_value`` (NaN for inexact types) unless ``mode="clip"``;
    ``mode="one_hot"`` contracts with a one-hot encoding instead of gathering. The
    gather is JAX's: the other dimensions are batching dimensions of one gather.
    """
    from ._creation import asarray

    check_arraylike("take_along_axis", arr, indices)
    a, indices = asarray(arr), asarray(indices)
    index_dtype = aval(indices).dtype
    idx_shape = aval(indices).shape
    if kind(index_dtype) not in "iu":
        raise TypeError(
            f"take_along_axis indices must be of integer type, got {dtypes.dtype_name(index_dtype)}"
        )
    if axis is None:
        if len(idx_shape) != 1:
            raise ValueError(
                f"take_along_axis indices must be 1D if axis=None, got shape {idx_shape}"
            )
        a = lax.reshape(a, (math.prod(aval(a).shape),))
        axis = 0
    rank = aval(a).ndim
    if rank != len(idx_shape):
        raise ValueError(
            f"indices and arr must have the same number of dimensions; {len(idx_shape)} vs. {rank}"
        )
    axis = canonicalize_axis(axis, rank)
    size = aval(a).shape[axis]
    arr_shape = tuple(1 if d == axis else n for d, n in enumerate(aval(a).shape))
    out_shape = lax.broadcast_shapes(idx_shape, arr_shape)
    if size == 0 or 0 in out_shape:  # nothing to gather (JAX gathers an empty result)
        return lax.full(out_shape, 0, aval(a).dtype)
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    indices = lax.convert_element_type(
        indices, _along_index_dtype(index_dtype, size, wrap_negative_indices)
    )
    if wrap_negative_indices and kind(aval(indices).dtype) == "i":
        dtype = aval(indices).dtype
        indices = lax.select_n(
            lax.lt(indices, np.zeros((), dtype)), indices, lax.add(indices, np.asarray(size, dtype))
        )
    if mode == "one_hot":
        return _one_hot_take(a, indices, axis, size)
    # JAX's gather: the axis indexed, a size-1 index dimension a full slice, a size-1
    # array dimension squeezed away, and every other dimension a batching dimension.
    kept = [d for d, n in enumerate(idx_shape) if d == axis or n != 1]
    gather_indices = lax.reshape(indices, (*(out_shape[d] for d in kept), 1))
    slice_sizes, offset_dims, batching, index_batching, squeezed = [], [], [], [], []
    new_d = j = 0
    for d in range(rank):
        if d == axis:
            slice_sizes.append(1)
            index_d, new_d, j = new_d, new_d + 1, j + 1
        elif idx_shape[d] == 1:
            offset_dims.append(d)
            slice_sizes.append(arr_shape[d])
            new_d += 1
        elif arr_shape[d] == 1:
            squeezed.append(d)
            j += 1
        else:
            slice_sizes.append(0 if arr_shape[d] == 0 else 1)
            batching.append(new_d)
            index_batching.append(j)
            new_d, j = new_d + 1, j + 1
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(offset_dims),
        collapsed_slice_dims=(index_d,),
        start_index_map=(index_d,),
        operand_batching_dims=tuple(batching),
        start_indices_batching_dims=tuple(index_batching),
    )
    return lax.gather(
        lax.squeeze(a, tuple(squeezed)),
        gather_indices,
        dnums,
        tuple(slice_sizes),
        mode="fill" if mode is None else mode,
        fill_value=fill_value,
    )


def put_along_axis(
    arr: Any,
    indices: Any,
    values: Any,
    axis: int | None,
    inplace: bool = True,
    *,
    mode: str | None = None,
):
    """Return ``arr`` with ``values`` put at ``indices`` along ``axis`` (jax.numpy.put_along_axis).

    modjax arrays are immutable: pass ``inplace=False``, as JAX requires.
    """
    if inplace:
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays are "
            "immutable. Pass inplace=False to instead return an updated array."
        )
    check_arraylike("put_along_axis", arr, indices, values)
    indices = _as_index_array("put_along_axis", indices)
    original = aval(arr).shape
    if axis is None:
        arr = lax.reshape(arr, (math.prod(original),))
        axis = 0
    shape = aval(arr).shape
    axis = canonicalize_axis(axis, len(shape))
    idx = _along_axis_index("put_along_axis", shape, indices, axis)
    out = scatter_update(arr, idx, values, "set", mode=mode)
    return lax.reshape(out, original) if aval(out).shape != original else out


# --- nonzero, argwhere, flatnonzero ----------------------------------------------------------


def _prefix_sum(x: Any):
    """Inclusive prefix sum along the only axis, in log2(n) shifted adds (no cumsum needed)."""
    n = aval(x).shape[0]
    shift = 1
    while shift < n:
        shifted = lax.pad(x, np.zeros((), aval(x).dtype), [(shift, -shift, 0)])
        x = lax.add(x, shifted)
        shift *= 2
    return x


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None):
    """Return the indices of the nonzero elements of ``a``, one array per axis (jax.numpy.nonzero).

    Without ``size`` the result's length depends on the values, so ``a`` must
    be concrete; with ``size`` the first ``size`` indices are returned, padded
    with ``fill_value`` (default 0, or one value per axis).
    """
    check_arraylike("nonzero", a)
    a_aval = aval(a)
    if a_aval.ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
            "instead."
        )
    index_dtype = dtypes.default_int_dtype()
    if size is None:  # fill_value is ignored, as in JAX
        concrete = np.asarray(
            concrete_or_error(
                a,
                "The size argument of jnp.nonzero must be statically specified to use "
                "jnp.nonzero within JAX transformations.",
            )
        )
        return tuple(_to_array(np.asarray(i, index_dtype)) for i in np.nonzero(concrete))
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"nonzero: size must be nonnegative, got {size}")
    ndim = a_aval.ndim
    if size == 0:
        return tuple(_to_array(np.zeros((0,), index_dtype)) for _ in range(ndim))
    fills = fill_value if isinstance(fill_value, tuple | list) else (fill_value,) * ndim
    if len(fills) != ndim:
        raise ValueError(
            f"nonzero: fill_value must be a scalar or a tuple of length {ndim}; got {fill_value!r}"
        )
    n = a_aval.size
    flat = lax.reshape(a, (n,))
    mask = lax.ne(flat, np.zeros((), a_aval.dtype)) if a_aval.dtype != np.bool_ else flat
    dtype = index_dtype
    ones = lax.convert_element_type(mask, dtype)
    position = lax.sub(_prefix_sum(ones), np.ones((), dtype)) if n else ones
    # Each nonzero element writes its flat index at its rank; the others are dropped.
    target = lax.select_n(mask, np.full((n,), size, dtype), position) if n else position
    flat_index = lax.iota(dtype, n)
    sentinel = np.asarray(-1, dtype)
    found = lax.full((size,), sentinel, dtype)
    sdn = ScatterDimensionNumbers((), (0,), (0,))
    found = lax.scatter(
        found,
        lax.reshape(target, (n, 1)),
        flat_index,
        sdn,
        mode="drop",
        indices_are_sorted=True,
        unique_indices=False,
    )
    missing = lax.eq(found, sentinel)
    out = []
    strides = [math.prod(a_aval.shape[d + 1 :]) for d in range(ndim)]
    for d in range(ndim):
        coord = found
        if strides[d] != 1:
            coord = lax.div(coord, np.asarray(strides[d], dtype))
        if d > 0:
            coord = lax.rem(coord, np.asarray(a_aval.shape[d], dtype))
        fill = 0 if fills[d] is None else fills[d]
        fill = convert(fill, dtype) if not isinstance(fill, ARRAY_TYPES) else fill
        if isinstance(fill, ARRAY_TYPES) and aval(fill).shape:
            raise ValueError(f"nonzero: fill_value must be scalars, got shape {aval(fill).shape}")
        fill_arr = lax.broadcast_in_dim(
            lax.convert_element_type(fill, dtype)
            if isinstance(fill, ARRAY_TYPES)
            else np.asarray(fill, dtype),
            (size,),
            (),
        )
        out.append(lax.select_n(missing, coord, fill_arr))
    return tuple(out)


def _to_array(x: np.ndarray):
    from ._creation import asarray

    return asarray(x)


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None):
    """Return the indices of nonzero elements as a ``[count, ndim]`` array (jax.numpy.argwhere)."""
    check_arraylike("argwhere", a)
    if aval(a).ndim == 0:  # numpy: a (1, 0) or (0, 0) result
        found = nonzero(lax.reshape(a, (1,)), size=size, fill_value=fill_value)[0]
        return lax.full((aval(found).shape[0], 0), 0, aval(found).dtype)
    parts = nonzero(a, size=size, fill_value=fill_value)
    count = aval(parts[0]).shape[0]
    return lax.concatenate([lax.reshape(p, (count, 1)) for p in parts], 1)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None):
    """Return the indices of the nonzero elements of the flattened ``a`` (jax.numpy.flatnonzero)."""
    check_arraylike("flatnonzero", a)
    flat = lax.reshape(a, (aval(a).size,))
    return nonzero(flat, size=size, fill_value=fill_value)[0]


def where_indices(condition: Any, *, size: int | None = None, fill_value: Any = None):
    """``jnp.where(condition)`` with one argument: ``nonzero(condition)`` (jax.numpy.where)."""
    return nonzero(condition, size=size, fill_value=fill_value)


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(globals(), "take take_along_axis")
