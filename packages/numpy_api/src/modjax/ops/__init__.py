"""Segment reductions (``jax.ops``): ``segment_sum``, ``_prod``, ``_max`` and ``_min``.

Each is one scatter of ``data`` (along its leading axis) into ``num_segments``
rows filled with the reduction's identity, at rows ``segment_ids``; ids outside
``[0, num_segments)`` are dropped (``mode`` defaults to FILL_OR_DROP, as in JAX).
With ``bucket_size``, the scatter goes into one row block per bucket of
``bucket_size`` consecutive elements, and the blocks are reduced afterwards (more
accurate for long sums and products). ``out_sharding`` gives the result's sharding
(not with ``bucket_size``: NotImplementedError, as in JAX).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax.lax.indexing import GatherScatterMode
from modjax.numpy._indexing import scatter_update
from modjax.numpy._util import check_arraylike
from modjax.sharding import reshard
from modjax.sharding.constraint import placed_out_sharding
from modjax.tracecore.core import concrete_or_error

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(op: str, dtype) -> Any:
    if op == "add":
        return 0
    if op == "mul":
        return 1
    if dtype == np.dtype(bool):
        return op == "min"
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.max if op == "min" else info.min
    return np.inf if op == "min" else -np.inf


def _segment(
    name,
    op,
    reducer,
    data,
    segment_ids,
    num_segments,
    sorted_,
    unique,
    bucket_size,
    mode,
    out_sharding,
):
    check_arraylike(name, data, segment_ids)
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    dtype = data.dtype
    if num_segments is None:
        ids = np.asarray(concrete_or_error(segment_ids, f"{name}() `num_segments` argument"))
        num_segments = int(np.max(ids)) + 1 if ids.size else 0
    num_segments = int(concrete_or_error(num_segments, f"{name}() `num_segments` argument"))
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else mode
    flags = {"indices_are_sorted": sorted_, "unique_indices": unique, "mode": mode}
    if bucket_size is None:
        out = jnp.full((num_segments, *data.shape[1:]), _identity(op, dtype), dtype=dtype)
        out = scatter_update(out, segment_ids, data, op, wrap_negative_indices=False, **flags)
        if out_sharding is None:
            return out
        return reshard(out, placed_out_sharding(out_sharding, name, out))
    if out_sharding is not None:
        raise NotImplementedError(f"{name}(): out_sharding together with bucket_size")
    n = segment_ids.shape[0]
    buckets = -(-n // bucket_size)
    out = jnp.full((buckets, num_segments, *data.shape[1:]), _identity(op, dtype), dtype=dtype)
    index = (jnp.arange(n) // bucket_size, segment_ids)
    out = scatter_update(out, index, data, op, wrap_negative_indices=False, **flags)
    return reducer(out, axis=0).astype(dtype)


def segment_sum(
    data,
    segment_ids,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode=None,
    out_sharding=None,
):
    """Sum the rows of ``data`` that share a segment id (jax.ops.segment_sum).

    ``num_segments`` (default: the largest id plus one, which needs concrete
    ids) is the result's leading size; empty segments are 0.
    """
    return _segment(
        "segment_sum", "add", jnp.sum, data, segment_ids, num_segments,
        indices_are_sorted, unique_indices, bucket_size, mode, out_sharding,
    )  # fmt: skip


def segment_prod(
    data,
    segment_ids,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode=None,
    out_sharding=None,
):
    """Multiply the rows of ``data`` per segment id (jax.ops.segment_prod); empty ones are 1."""
    return _segment(
        "segment_prod", "mul", jnp.prod, data, segment_ids, num_segments,
        indices_are_sorted, unique_indices, bucket_size, mode, out_sharding,
    )  # fmt: skip


def segment_max(
    data,
    segment_ids,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode=None,
    out_sharding=None,
):
    """Maximum of the rows of ``data`` per segment id (jax.ops.segment_max); empty ones are -inf
    (or the dtype's minimum)."""
    return _segment(
        "segment_max", "max", jnp.max, data, segment_ids, num_segments,
        indices_are_sorted, unique_indices, bucket_size, mode, out_sharding,
    )  # fmt: skip


def segment_min(
    data,
    segment_ids,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    bucket_size: int | None = None,
    mode=None,
    out_sharding=None,
):
    """Minimum of the rows of ``data`` per segment id (jax.ops.segment_min); empty ones are +inf
    (or the dtype's maximum)."""
    return _segment(
        "segment_min", "min", jnp.min, data, segment_ids, num_segments,
        indices_are_sorted, unique_indices, bucket_size, mode, out_sharding,
    )  # fmt: skip
