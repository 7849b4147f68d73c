"""Block specifications and grids: ``BlockSpec``, ``GridSpec`` and the block dimensions.

A block shape entry is an int (a ``Blocked`` dimension: block index ``i`` covers
elements ``[i*b, (i+1)*b)``), ``None`` or ``Squeezed()`` (a size-1 dimension the
kernel does not see: the index map gives an element index), or ``Element(b)``
(the index map gives the element offset of the block).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "BlockDim",
    "BlockSpec",
    "Blocked",
    "BoundedSlice",
    "Element",
    "GridSpec",
    "Indirect",
    "NoBlockSpec",
    "Squeezed",
    "no_block_spec",
    "squeezed",
]


@dataclasses.dataclass(frozen=True)
class Blocked:
    """A dimension split into blocks of ``block_size``; the index map gives block indices."""

    block_size: int

    def __str__(self) -> str:
        return f"Blocked({self.block_size})"


@dataclasses.dataclass(frozen=True)
class Squeezed:
    """A size-1 block dimension removed from the kernel's view (``None`` in a block shape)."""


squeezed = Squeezed()


@dataclasses.dataclass(frozen=True)
class Element:
    """A dimension whose index map gives the element offset of the block (with padding)."""

    block_size: int
    padding: tuple[int, int] = (0, 0)

    def __str__(self) -> str:
        if self.padding == (0, 0):
            return f"Element({self.block_size})"
        return f"Element({self.block_size}, {self.padding})"


@dataclasses.dataclass(frozen=True)
class BoundedSlice:
    """A dimension whose index map gives a ``pl.ds`` window (not supported in modjax yet)."""

    block_size: int


@dataclasses.dataclass(frozen=True)
class Indirect:
    """A dimension indexed through an array of indices (not supported in modjax yet)."""

    block_size: int


BlockDim = Element | Squeezed | Blocked | BoundedSlice | Indirect


class NoBlockSpec:
    """The absence of a block spec: the kernel sees the whole array."""

    def __repr__(self) -> str:
        return "NoBlockSpec"


no_block_spec = NoBlockSpec()


@dataclasses.dataclass
class BlockSpec:
    """How each grid step sees an array: ``block_shape`` and ``index_map(*grid_indices)``.

    ``block_shape=None`` is the whole array; ``index_map=None`` maps every grid
    point to block 0. ``pipeline_mode`` and ``memory_space`` are ignored in
    interpret mode.
    """

    block_shape: Sequence[Any] | None = None
    index_map: Callable[..., Any] | None = None
    pipeline_mode: Any | None = None
    memory_space: Any | None = dataclasses.field(kw_only=True, default=None)


@dataclasses.dataclass(init=False)
class GridSpec:
    """A grid with the block specs of the inputs and outputs (``pallas_call(grid_spec=...)``)."""

    grid: tuple[Any, ...]
    grid_names: tuple[Any, ...] | None
    in_specs: Any
    out_specs: Any
    scratch_shapes: Any

    def __init__(
        self,
        grid: Any = (),
        in_specs: Any = no_block_spec,
        out_specs: Any = no_block_spec,
        scratch_shapes: Any = (),
    ):
        self.grid = normalize_grid(grid)
        self.grid_names = None
        self.in_specs = tuple(in_specs) if isinstance(in_specs, list) else in_specs
        self.out_specs = tuple(out_specs) if isinstance(out_specs, list) else out_specs
        self.scratch_shapes = tuple(scratch_shapes)


def normalize_grid(grid: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple; dynamic grid sizes are not supported."""
    if isinstance(grid, int):
        grid = (grid,)
    grid = tuple(grid)
    for g in grid:
        if not isinstance(g, int):
            try:
                int(g)
            except Exception:
                raise NotImplementedError(
                    "pallas_call with a grid size known only at run time is not implemented "
                    "in modjax yet"
                ) from None
    return tuple(int(g) for g in grid)
