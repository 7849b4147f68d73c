"""lax functions written with other lax operations: ``reciprocal``, ``select``, ``collapse``,
``broadcast_to_rank``, ``broadcast_shapes``, ``batch_matmul``.

They trace to the operations they stand for, so every transform already has their
rules. Shapes and errors are JAX's. (``split``, ``stack``, ``unstack`` and ``tile`` are
primitives of their own, as in JAX: ``split_stack.py``.)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import elementwise as _ew
from . import structural as _st
from ._common import aval_of
from .dot import dot_general

__all__ = [
    "batch_matmul",
    "broadcast_shapes",
    "broadcast_to_rank",
    "collapse",
    "reciprocal",
    "select",
]


def _axis(axis: int, ndim: int, name: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"lax.{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def reciprocal(x: Any):
    """Return ``1 / x`` elementwise, as ``integer_pow(x, -1)`` (jax.lax.reciprocal)."""
    return _ew.integer_pow(x, -1)


def select(pred: Any, on_true: Any, on_false: Any):
    """Return ``on_true`` where the boolean ``pred`` holds, else ``on_false`` (jax.lax.select).

    ``pred`` is a scalar or has the branches' shape; ``select_n`` with the cases
    in the other order.
    """
    return _ew.select_n(pred, on_false, on_true)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None):
    """Merge dimensions ``start_dimension`` up to ``stop_dimension`` into one (jax.lax.collapse).

    ``stop_dimension`` is exclusive; negative dimensions count from the end and
    ``stop_dimension=None`` is the rank.
    """
    shape = aval_of(operand).shape
    ndim = len(shape)
    # Python's slice rules, as JAX's: out-of-range bounds are clipped to the rank.
    start, stop, _ = slice(start_dimension, stop_dimension).indices(ndim)
    if stop < start:
        raise ValueError(
            f"Invalid dimension range passed to collapse: {shape}"
            f"[{start_dimension}:{stop_dimension}]"
        )
    merged = math.prod(shape[start:stop])
    return _st.reshape(operand, shape[:start] + (merged,) + shape[stop:])


def broadcast_to_rank(x: Any, rank: int):
    """Add leading size-1 dimensions until ``x`` has rank ``rank`` (jax.lax.broadcast_to_rank)."""
    shape = aval_of(x).shape
    if len(shape) >= rank:
        return x
    return _st.reshape(x, (1,) * (rank - len(shape)) + shape)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Return the shape numpy broadcasting gives ``shapes`` (jax.lax.broadcast_shapes).

    Raises ValueError for shapes that do not broadcast, naming them.
    """
    shapes = [tuple(operator.index(d) for d in s) for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(
            f"Incompatible shapes for broadcasting: shapes={[list(s) for s in shapes]}"
        ) from None


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None):
    """Multiply the matrices of ``lhs`` and ``rhs`` batch by batch (jax.lax.batch_matmul).

    Both have rank at least 2 and the same leading (batch) dimensions.
    """
    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    if len(lhs_shape) != len(rhs_shape) or len(lhs_shape) < 2:
        raise ValueError(
            "lax.batch_matmul needs operands of the same rank, at least 2; got shapes "
            f"{lhs_shape} and {rhs_shape}"
        )
    # Unequal batch dimensions: dot_general raises JAX's TypeError.
    batch = tuple(range(len(lhs_shape) - 2))
    contract = (((len(lhs_shape) - 1,), (len(rhs_shape) - 2,)), (batch, batch))
    return dot_general(lhs, rhs, contract, precision=precision)
