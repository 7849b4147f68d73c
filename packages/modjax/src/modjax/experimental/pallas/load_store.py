"""Masked reads and writes of references: ``load``, ``store`` and ``swap``.

With windows (``pl.ds``, slices) and scalar indices, a window running past the
end of the reference is not moved back inside (as ``lax.dynamic_slice`` would):
its elements past the end read as the uninitialized value (NaN, the smallest
integer) and writes to them are dropped, as in JAX's interpret mode. ``mask``
selects the elements read or written; ``other`` fills the masked-off reads.
JAX 0.10.2 exports these from ``jax.experimental.pallas.triton``; older JAX (and
the Pallas quickstart) from ``jax.experimental.pallas``: modjax has them here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from modjax import lax
from modjax import numpy as jnp
from modjax.experimental.pallas.helpers import uninitialized_value
from modjax.numpy._indexing import Slice

__all__ = ["load", "store", "swap"]


def _is_window_or_scalar(item: Any) -> bool:
    return isinstance(item, Slice) or np.ndim(item) == 0


def _normalize(shape: tuple[int, ...], idx: Any) -> tuple[Any, ...]:
    """``idx`` as one item per dimension: Slices for windows, scalars, or index arrays."""
    items = idx if isinstance(idx, tuple) else (idx,)
    n_ellipsis = sum(item is Ellipsis for item in items)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    explicit = len(items) - n_ellipsis
    if explicit > len(shape):
        raise IndexError(f"too many indices for a reference of rank {len(shape)}: {idx!r}")
    full: list[Any] = []
    for item in items:
        if item is Ellipsis:
            full.extend([slice(None)] * (len(shape) - explicit))
        else:
            full.append(item)
    full.extend([slice(None)] * (len(shape) - len(full)))
    out = []
    for item, dim in zip(full, shape, strict=True):
        if isinstance(item, slice):
            start, stop, step = item.indices(dim)
            if step != 1:
                raise NotImplementedError("Unimplemented stride support.")
            item = Slice(start, max(stop - start, 0))
        elif isinstance(item, Slice):
            if item.stride > 1:
                raise NotImplementedError("Unimplemented stride support.")
            start = item.start if isinstance(item.start, (int, np.integer)) else None
            if start:  # a window known to run past the end (JAX 0.10.2's checks)
                if start >= dim:
                    raise ValueError(f"Out of bound slice: start={start}, dim={dim}.")
                if item.size and start + item.size - 1 >= dim:
                    raise ValueError(
                        f"Out of bound slice: start={start}, size={item.size}, "
                        f"stride={item.stride}, dim={dim}."
                    )
        elif item is None:
            raise NotImplementedError("pl.load/pl.store: None (new axes) in an index")
        out.append(item)
    return tuple(out)


def _window(shape, items):
    """(starts, sizes, scalar dims) of an index of windows and scalars."""
    starts = [jnp.asarray(s.start if isinstance(s, Slice) else s).astype(jnp.int32) for s in items]
    sizes = tuple(s.size if isinstance(s, Slice) else 1 for s in items)
    scalar_dims = tuple(i for i, s in enumerate(items) if not isinstance(s, Slice))
    return starts, sizes, scalar_dims


def _padded(value, sizes):
    """``value`` with ``sizes[d]`` uninitialized elements after each dimension ``d``."""
    pad = uninitialized_value((), value.dtype)
    return lax.pad(value, pad, [(0, s, 0) for s in sizes])


def load(
    x_ref_or_view: Any, idx: Any = None, *, mask: Any = None, other: Any = None, **_hints: Any
):
    """Read ``ref[idx]``; where ``mask`` is False, give ``other`` (when given).

    ``cache_modifier``, ``eviction_policy`` and ``volatile`` are accepted and ignored.
    """
    ref = x_ref_or_view
    shape = tuple(ref.shape)
    items = _normalize(shape, ... if idx is None else idx)
    if all(map(_is_window_or_scalar, items)):
        starts, sizes, scalar_dims = _window(shape, items)
        value = _padded(ref[...], sizes)
        out = lax.dynamic_slice(value, starts, sizes)
        out = lax.squeeze(out, scalar_dims)
    elif not any(isinstance(s, Slice) for s in items):
        out = ref[items]
    else:
        raise NotImplementedError("pl.load: index arrays mixed with windows")
    if mask is not None and other is not None:
        out = jnp.where(mask, out, jnp.asarray(other, out.dtype))
    return out


def swap(x_ref_or_view: Any, idx: Any, val: Any, *, mask: Any = None, **_hints: Any):
    """Write ``val`` to ``ref[idx]`` where ``mask`` holds; return what was there.

    Where ``mask`` is False, the reference keeps its elements and the result
    gives ``val``'s (as JAX's interpret mode does).
    """
    ref = x_ref_or_view
    shape = tuple(ref.shape)
    items = _normalize(shape, idx)
    if all(map(_is_window_or_scalar, items)):
        starts, sizes, scalar_dims = _window(shape, items)
        value = _padded(ref[...], sizes)
        old = lax.squeeze(lax.dynamic_slice(value, starts, sizes), scalar_dims)
        val = jnp.broadcast_to(jnp.asarray(val, old.dtype), old.shape)
        out = old
        if mask is not None:
            out = jnp.where(mask, old, val)
            val = jnp.where(mask, val, old)
        val = lax.expand_dims(val, scalar_dims)
        new = lax.dynamic_update_slice(value, val, starts)
        ref[...] = lax.slice(new, (0,) * len(shape), shape)
        return out
    if any(isinstance(s, Slice) for s in items):
        raise NotImplementedError("pl.store: index arrays mixed with windows")
    old = ref[items]
    val = jnp.broadcast_to(jnp.asarray(val, old.dtype), old.shape)
    out = old
    if mask is not None:
        out = jnp.where(mask, old, val)
        val = jnp.where(mask, val, old)
    ref[items] = val
    return out


def store(x_ref_or_view: Any, idx: Any, val: Any, *, mask: Any = None, **_hints: Any) -> None:
    """Write ``val`` to ``ref[idx]`` where ``mask`` holds (``eviction_policy`` is ignored)."""
    swap(x_ref_or_view, idx, val, mask=mask)
