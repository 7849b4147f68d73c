"""Compressed row pointers: from row indices (``indptr``) and back (one row per entry).

``row_pointers(rows, n_rows)`` counts the entries of each row (rows outside
``[0, n_rows)`` are not counted) and accumulates the counts: entry ``k`` of a row
``r`` lies in ``indptr[r] <= k < indptr[r + 1]``. ``pointer_rows(indptr, nse)`` is
the inverse: entry ``k``'s row is the number of pointers at or before ``k``, less
one, so entries past ``indptr[-1]`` (padding) get row ``n_rows``, outside the matrix.
Both are written for one matrix; the formats map them over batch dimensions.
"""

from __future__ import annotations

import modjax.numpy as jnp

__all__ = ["pointer_rows", "row_pointers"]


def row_pointers(rows, n_rows: int, dtype):
    """The ``(n_rows + 1,)`` row pointers of entries in rows ``rows`` (sorted by row)."""
    counts = jnp.bincount(rows, length=n_rows).astype(dtype)
    return jnp.concatenate([jnp.zeros((1,), dtype), jnp.cumsum(counts).astype(dtype)])


def pointer_rows(indptr, nse: int, dtype):
    """The row of each of ``nse`` entries described by the row pointers ``indptr``."""
    starts = jnp.zeros((nse,), dtype).at[indptr].add(jnp.ones((), dtype))
    return jnp.cumsum(starts).astype(dtype) - jnp.ones((), dtype)
