"""The few array primitives batching needs, and the axis helpers rules are written with.

batching knows nothing of lax, so it declares its own tiny primitives, each with
a numpy impl, an abstract eval and a batching rule (their StableHLO lowering and
autodiff rules are registered by the runtime package, which depends on all three
tables' owners):

* ``moveaxis_p[source, destination]``: move one axis (to honor ``out_axes`` and
  to put a batch dimension where a rule needs it);
* ``broadcast_batch_p[size, axis]``: insert a new axis of length ``size``
  (materialize an unbatched value along the batch axis);
* ``expand_dims_p[dimensions]`` / ``squeeze_p[dimensions]``: insert / remove
  size-1 axes (align operands of broadcasting primitives, loop dims of vectorize);
* ``iota_p[size, dtype]``: ``0, 1, ..., size-1``;
* ``axis_index_p[axis_name]``: the position along a named mapped axis.

The helpers ``moveaxis``, ``broadcast``, ``bdim_at_front`` and ``matchaxis`` bind
nothing when there is nothing to do.
"""

from __future__ import annotations

import numpy as np

from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.state import AbstractRef

from .batch_trace import (
    AxisData,
    _unbound,
    axis_frames,
    axis_primitive_batchers,
    batching_rules,
)

__all__ = [
    "moveaxis_p",
    "broadcast_batch_p",
    "expand_dims_p",
    "squeeze_p",
    "iota_p",
    "axis_index_p",
    "moveaxis",
    "broadcast",
    "expand_dims",
    "squeeze",
    "iota",
    "axis_index",
    "bdim_at_front",
    "matchaxis",
    "canonicalize_axis",
]


def canonicalize_axis(axis: int, ndim: int) -> int:
    """Return ``axis`` in ``[0, ndim)``, negative ones counted from the end (canonicalize_axis).

    Raise ``numpy.exceptions.AxisError`` (a ValueError and an IndexError) when out of range.
    """
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis + ndim if axis < 0 else axis


def _ndim(x) -> int:
    return len(to_aval(x).shape)


def _as_array(x) -> np.ndarray:
    """Return ``x`` as an array of its aval's dtype (Python scalars: the canonical one)."""
    return x if isinstance(x, np.ndarray) else np.asarray(x, to_aval(x).dtype)


# --- moveaxis ---------------------------------------------------------------------------

moveaxis_p = Primitive("moveaxis")
moveaxis_p.def_impl(lambda x, *, source, destination: np.moveaxis(x, source, destination))


@moveaxis_p.def_abstract_eval
def _moveaxis_abstract_eval(x, *, source, destination):
    shape = list(x.shape)
    if not (0 <= source < len(shape) and 0 <= destination < len(shape)):
        raise ValueError(
            f"moveaxis: source {source} and destination {destination} must be axes of an "
            f"array of shape {x.shape}"
        )
    shape.insert(destination, shape.pop(source))
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _move_with_batch(src: int, dst: int, bdim: int) -> tuple[int, int, int]:
    """Turn a move of logical axis ``src`` to ``dst`` into one on the batched array.

    Returns ``(real_src, real_dst, new_bdim)``: the batch axis stays between the
    same neighbours, so the result is again a single move (or nothing).
    """
    real_src = src if src < bdim else src + 1
    bdim_after_removal = bdim - (real_src < bdim)
    real_dst = dst if dst <= bdim_after_removal else dst + 1
    new_bdim = bdim_after_removal + (real_dst <= bdim_after_removal)
    return real_src, real_dst, new_bdim


def _moveaxis_batching_rule(args, dims, *, source, destination):
    (x,), (bdim,) = args, dims
    src, dst, new_bdim = _move_with_batch(source, destination, bdim)
    return moveaxis(x, src, dst), new_bdim


batching_rules[moveaxis_p] = _moveaxis_batching_rule


def moveaxis(x, source: int, destination: int):
    """Move axis ``source`` of ``x`` to ``destination`` (numpy.moveaxis for one axis).

    Negative axes count from the end; binds nothing when the axis stays put.
    """
    ndim = _ndim(x)
    source = canonicalize_axis(source, ndim)
    destination = canonicalize_axis(destination, ndim)
    if source == destination:
        return x
    if type(to_aval(x)) is AbstractRef:
        # A reference cannot be relaid out (its writes must reach the caller's array):
        # a loop body closing over one vmapped along another axis, a scan over a batched
        # reference. JAX 0.10.2 fails on both too.
        raise NotImplementedError(
            f"vmap: moving axis {source} of a reference of type {to_aval(x).str_short()} to "
            f"{destination} (a loop closing over a reference vmapped along an axis other than "
            "0, or a scan over a batched reference)"
        )
    return moveaxis_p.bind(x, source=source, destination=destination)


# --- broadcast_batch ----------------------------------------------------------------------

broadcast_batch_p = Primitive("broadcast_batch")


@broadcast_batch_p.def_impl
def _broadcast_batch_impl(x, *, size, axis):
    x = _as_array(x)
    shape = list(x.shape)
    shape.insert(axis, size)
    return np.broadcast_to(np.expand_dims(x, axis), tuple(shape)).copy()


@broadcast_batch_p.def_abstract_eval
def _broadcast_batch_abstract_eval(x, *, size, axis):
    if not hasattr(x, "shape"):  # a token: it has no batch dimension to add
        raise TypeError(f"vmap: a value of type {x.str_short()} cannot be batched")
    if not 0 <= axis <= len(x.shape):
        raise ValueError(f"broadcast_batch: axis {axis} out of range for shape {x.shape}")
    shape = list(x.shape)
    shape.insert(axis, size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _insert_with_batch(axis: int, bdim: int) -> tuple[int, int]:
    """Turn an insertion at logical ``axis`` into one on the batched array."""
    real = axis if axis <= bdim else axis + 1
    return real, bdim + (real <= bdim)


def _broadcast_batch_batching_rule(args, dims, *, size, axis):
    (x,), (bdim,) = args, dims
    real, new_bdim = _insert_with_batch(axis, bdim)
    return broadcast_batch_p.bind(x, size=size, axis=real), new_bdim


batching_rules[broadcast_batch_p] = _broadcast_batch_batching_rule


def broadcast(x, size: int, axis: int):
    """Return ``x`` repeated ``size`` times along a new axis ``axis`` (jax's batching.broadcast).

    ``axis`` counts in the result, so it lies in ``[-(ndim+1), ndim]``.
    """
    axis = canonicalize_axis(axis, _ndim(x) + 1)
    return broadcast_batch_p.bind(x, size=size, axis=axis)


# --- expand_dims / squeeze --------------------------------------------------------------------

expand_dims_p = Primitive("expand_dims")
expand_dims_p.def_impl(lambda x, *, dimensions: np.expand_dims(_as_array(x), dimensions))


@expand_dims_p.def_abstract_eval
def _expand_dims_abstract_eval(x, *, dimensions):
    ndim = len(x.shape) + len(dimensions)
    if list(dimensions) != sorted(set(dimensions)) or not all(0 <= d < ndim for d in dimensions):
        raise ValueError(
            f"expand_dims: dimensions {dimensions} must be increasing axes of the result "
            f"(of rank {ndim})"
        )
    shape = list(x.shape)
    for d in dimensions:
        shape.insert(d, 1)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _expand_dims_batching_rule(args, dims, *, dimensions):
    (x,), (bdim,) = args, dims
    out_ndim = _ndim(x) - 1 + len(dimensions)
    kept = [p for p in range(out_ndim) if p not in dimensions]  # where old axes go
    # The batch axis stays just before the logical axis that followed it.
    out_bdim = kept[bdim] if bdim < len(kept) else out_ndim
    real = tuple(d if d < out_bdim else d + 1 for d in dimensions)
    return expand_dims_p.bind(x, dimensions=real), out_bdim


batching_rules[expand_dims_p] = _expand_dims_batching_rule


def expand_dims(x, dimensions):
    """Insert size-1 axes at ``dimensions`` of the result (jax.lax.expand_dims)."""
    ndim = _ndim(x) + len(dimensions)
    dims = tuple(sorted(canonicalize_axis(d, ndim) for d in dimensions))
    if not dims:
        return x
    return expand_dims_p.bind(x, dimensions=dims)


squeeze_p = Primitive("squeeze_dims")
squeeze_p.def_impl(lambda x, *, dimensions: np.squeeze(_as_array(x), dimensions))


@squeeze_p.def_abstract_eval
def _squeeze_abstract_eval(x, *, dimensions):
    if list(dimensions) != sorted(set(dimensions)) or any(
        not 0 <= d < len(x.shape) or x.shape[d] != 1 for d in dimensions
    ):
        raise ValueError(
            f"squeeze: dimensions {dimensions} must be increasing axes of size 1 of an array "
            f"of shape {x.shape}"
        )
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _squeeze_batching_rule(args, dims, *, dimensions):
    (x,), (bdim,) = args, dims
    real = tuple(d if d < bdim else d + 1 for d in dimensions)
    return squeeze_p.bind(x, dimensions=real), bdim - sum(d < bdim for d in dimensions)


batching_rules[squeeze_p] = _squeeze_batching_rule


def squeeze(x, dimensions):
    """Remove the size-1 axes ``dimensions`` (jax.lax.squeeze)."""
    ndim = _ndim(x)
    dims = tuple(sorted({canonicalize_axis(d, ndim) for d in dimensions}))
    if not dims:
        return x
    return squeeze_p.bind(x, dimensions=dims)


# --- iota and axis_index ------------------------------------------------------------------------

iota_p = Primitive("arange")
iota_p.def_impl(lambda *, size, dtype: np.arange(size, dtype=dtype))
iota_p.def_abstract_eval(lambda *, size, dtype: ShapedArray((size,), dtype))


def iota(size: int, dtype=np.int32):
    """Return ``[0, 1, ..., size-1]`` (jax.lax.iota, one-dimensional)."""
    return iota_p.bind(size=int(size), dtype=np.dtype(dtype))


axis_index_p = Primitive("axis_index")


def _index_entries(axis_name) -> tuple:
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _positional_sizes(axis_name) -> tuple:
    return tuple(e for e in _index_entries(axis_name) if isinstance(e, int))


# A tuple ``axis_name`` numbers the members row-major over its names. vmaps replace
# their name by their size (an int): the result gets an axis per int entry, in order.
axis_index_p.def_abstract_eval(
    lambda *, axis_name: ShapedArray(_positional_sizes(axis_name), np.int32)
)


@axis_index_p.def_impl
def _axis_index_impl(*, axis_name):
    # A name left here was handled by no mapping transform on its way out.
    for entry in _index_entries(axis_name):
        if not isinstance(entry, int):
            raise _unbound(entry)
    sizes = _positional_sizes(axis_name)
    return np.arange(int(np.prod(sizes)), dtype=np.int32).reshape(sizes)


def _axis_index_batcher(axis_data: AxisData, args, dims, *, axis_name):
    if isinstance(axis_name, tuple):
        entries, name = axis_name, axis_data.name
        if name is None or isinstance(name, int) or name not in entries:
            return axis_index_p.bind(axis_name=entries), None
        at = entries.index(name)
        out_dim = sum(isinstance(e, int) for e in entries[:at])
        entries = (*entries[:at], axis_data.size, *entries[at + 1 :])
        return axis_index_p.bind(axis_name=entries), out_dim
    if axis_name is not None and axis_data.name == axis_name:
        return iota(axis_data.size, np.int32), 0
    return axis_index_p.bind(axis_name=axis_name), None


axis_primitive_batchers[axis_index_p] = _axis_index_batcher


def axis_index(axis_name):
    """Return the index along the mapped axis ``axis_name`` (jax.lax.axis_index).

    Inside ``vmap(f, axis_name="i")`` it is ``0, 1, ..., size-1`` along the batch.
    A tuple of names numbers the members row-major (the first name major).
    Raise NameError when no enclosing vmap (or shard_map) binds a name.
    """
    names = tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)
    bound = {frame.name for frame in axis_frames()}
    for name in names:
        if name is None or isinstance(name, int) or name not in bound:
            raise _unbound(name)
    return axis_index_p.bind(axis_name=names if len(names) > 1 else names[0])


# --- putting batch dims where rules want them ---------------------------------------------------


def bdim_at_front(x, bdim: int | None, size: int, mesh_axis=None):
    """Return ``x`` with its batch axis at 0, broadcasting it if unbatched (jax's bdim_at_front).

    ``mesh_axis`` (JAX's explicit mesh axis of the batch, for a sharded broadcast)
    must be None: batching here has no mesh axes of its own.
    """
    if mesh_axis is not None:
        raise NotImplementedError(f"bdim_at_front(mesh_axis={mesh_axis!r}): only None")
    if bdim is None:
        return broadcast_batch_p.bind(x, size=size, axis=0)
    return moveaxis(x, bdim, 0)


def matchaxis(axis_size: int, src: int | None, dst: int | None, x):
    """Return ``x`` with its batch axis moved from ``src`` to ``dst`` (jax's matchaxis).

    ``src=None`` (unbatched) with an int ``dst`` broadcasts ``x`` to ``axis_size``
    along ``dst``; ``dst=None`` keeps an unbatched ``x``. A batched ``x`` cannot
    become unbatched: that raises ValueError. Negative ``dst`` counts from the end
    of the batched result.
    """
    if src == dst:
        return x
    if dst is None:
        raise ValueError(f"cannot make a value batched along axis {src} unbatched")
    if src is None:
        return broadcast(x, axis_size, dst)
    return moveaxis(x, src, dst)
