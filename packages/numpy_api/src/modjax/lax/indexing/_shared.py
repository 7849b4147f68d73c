"""Checks, batching helpers and zeros shared by the indexing primitives."""

from __future__ import annotations

from modjax.autodiff import Zero
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray

from .. import structural as _st
from .._common import aval_of, kind


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


def _zeros(aval: ShapedArray):
    # Typed like ``aval`` (as JAX's zeros of a typed aval): dynamic_update_slice needs
    # its operand and update typed alike, and the transposes pair zeros with cotangents.
    return _st.typed_as(_st.full(aval.shape, 0, aval.dtype), aval.type_sharding)


def _instantiate(t, primal):
    if type(t) is Zero:
        return _zeros(aval_of(primal))
    return t
