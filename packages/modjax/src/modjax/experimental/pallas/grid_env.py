"""The grid a kernel runs over: ``program_id`` and ``num_programs``.

``pallas_call`` runs the kernel once per grid point inside ``grid_env``; the
kernel (and any function it calls, including ``pl.when`` bodies) reads the
current point from there.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["grid_env", "num_programs", "program_id"]

_state = threading.local()


def _stack() -> list[tuple[tuple[Any, ...], tuple[int, ...]]]:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


@contextlib.contextmanager
def grid_env(indices: Sequence[Any], grid: Sequence[int]) -> Iterator[None]:
    """Make ``indices`` (int32 scalars) the current point of ``grid`` while tracing a kernel."""
    stack = _stack()
    stack.append((tuple(indices), tuple(grid)))
    try:
        yield
    finally:
        stack.pop()


def _current(name: str, axis: int) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    stack = _stack()
    # JAX raises a bare AssertionError outside a kernel; we keep its type and say why.
    if not stack:
        raise AssertionError(f"pl.{name} can only be called inside a pallas_call kernel")
    indices, grid = stack[-1]
    if not -len(grid) <= axis < len(grid):
        raise ValueError(f"{name}: axis {axis} is out of range for a grid of rank {len(grid)}")
    return indices, grid


def program_id(axis: int):
    """The index (an int32 scalar) of the current kernel invocation along grid ``axis``."""
    indices, _ = _current("program_id", axis)
    return indices[axis]


def num_programs(axis: int) -> int:
    """The size of the grid along ``axis`` (a Python int: modjax's grids are static)."""
    _, grid = _current("num_programs", axis)
    return grid[axis]
