"""How one operand of ``pallas_call`` is cut into blocks, as JAX's interpret mode cuts it.

An operand is padded (with the uninitialized value: NaN, the smallest integer,
False) up to a whole number of blocks in each dimension; a grid step reads its
block with ``lax.dynamic_slice`` (a start past the end moves back inside, as in
JAX) and writes it back with ``lax.dynamic_update_slice``; at the end the
padding is cut off, so writes to it are dropped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from modjax import lax
from modjax import numpy as jnp
from modjax.experimental.pallas.helpers import uninitialized_value
from modjax.experimental.pallas.specs import (
    Blocked,
    BlockSpec,
    BoundedSlice,
    Element,
    Indirect,
    NoBlockSpec,
    Squeezed,
)

__all__ = ["BlockMapping", "block_mapping"]


def _func_name(f: Callable[..., Any]) -> str:
    name = getattr(f, "__name__", repr(f))
    code = getattr(f, "__code__", None)
    if code is not None:
        return f"{name} at {code.co_filename}:{code.co_firstlineno}"
    return name


def _canonical_dim(d: Any) -> Any:
    if d is None or isinstance(d, Squeezed):
        return Squeezed()
    if isinstance(d, (Blocked, Element)):
        return d
    if isinstance(d, (BoundedSlice, Indirect)):
        raise NotImplementedError(
            f"jax.experimental.pallas.{type(d).__name__} block dimensions are not implemented "
            "in modjax yet"
        )
    if isinstance(d, (int, np.integer)):
        return Blocked(int(d))
    raise ValueError(f"Unsupported block dimension type: {type(d)}")


def _size(d: Any) -> int:
    return 1 if isinstance(d, Squeezed) else d.block_size


@dataclasses.dataclass(frozen=True)
class BlockMapping:
    """One operand's block dimensions, index map, and the array it cuts."""

    origin: str
    dims: tuple[Any, ...]
    index_map: Callable[..., Any] | None
    shape: tuple[int, ...]
    dtype: Any

    @property
    def block_sizes(self) -> tuple[int, ...]:
        return tuple(map(_size, self.dims))

    @property
    def squeezed(self) -> tuple[int, ...]:
        return tuple(i for i, d in enumerate(self.dims) if isinstance(d, Squeezed))

    @property
    def ref_shape(self) -> tuple[int, ...]:
        """The shape of the block the kernel sees (squeezed dimensions removed)."""
        return tuple(_size(d) for d in self.dims if not isinstance(d, Squeezed))

    @property
    def _element_padding(self) -> list[tuple[int, int]]:
        return [d.padding if isinstance(d, Element) else (0, 0) for d in self.dims]

    def has_element_padding(self) -> bool:
        return any(p != (0, 0) for p in self._element_padding)

    def start_indices(self, grid_indices: Sequence[Any]) -> list[Any]:
        """Element offsets (int32 scalars) of the block at ``grid_indices``."""
        if self.index_map is None:
            indices: Any = (0,) * len(self.dims)
        else:
            indices = self.index_map(*grid_indices)
            if not isinstance(indices, (tuple, list)):
                indices = (indices,)
        if len(indices) != len(self.dims):
            raise ValueError(
                f"Index map function {_func_name(self.index_map)} for {self.origin} must "
                f"return {len(self.dims)} values to match block_shape={self.dims}. "
                f"Currently returning {len(indices)} values:"
            )
        starts = []
        for i, (idx, d) in enumerate(zip(indices, self.dims, strict=True)):
            idx = jnp.asarray(idx)
            if idx.shape or not jnp.issubdtype(idx.dtype, jnp.integer):
                raise ValueError(
                    f"Index map function {_func_name(self.index_map)} for {self.origin} must "
                    f"return integer scalars. Output[{i}] has type {idx.dtype}{list(idx.shape)}."
                )
            idx = idx.astype(jnp.int32)
            starts.append(idx * d.block_size if isinstance(d, Blocked) else idx)
        return starts

    def prepare(self, x: Any) -> Any:
        """``x`` padded by Element paddings, then up to a whole number of blocks."""
        pad = uninitialized_value((), x.dtype)
        if self.has_element_padding():
            x = lax.pad(x, pad, [(lo, hi, 0) for lo, hi in self._element_padding])
        padded = tuple(-(-s // b) * b for s, b in zip(x.shape, self.block_sizes, strict=True))
        if padded != tuple(x.shape):
            x = lax.pad(x, pad, [(0, p - s, 0) for p, s in zip(padded, x.shape, strict=True)])
        return x

    def read(self, x: Any, starts: Sequence[Any]) -> Any:
        block = lax.dynamic_slice(x, list(starts), self.block_sizes)
        return lax.squeeze(block, self.squeezed) if self.squeezed else block

    def write(self, x: Any, starts: Sequence[Any], block: Any) -> Any:
        if self.squeezed:
            block = jnp.expand_dims(block, self.squeezed)
        return lax.dynamic_update_slice(x, block, list(starts))

    def finish(self, x: Any) -> Any:
        """The operand's own elements of a prepared (padded) array."""
        lows = [lo for lo, _ in self._element_padding]
        limits = [lo + s for lo, s in zip(lows, self.shape, strict=True)]
        if tuple(x.shape) == self.shape:
            return x
        return lax.slice(x, lows, limits)


def block_mapping(spec: Any, shape: tuple[int, ...], dtype: Any, origin: str) -> BlockMapping:
    """The BlockMapping of ``spec`` (a BlockSpec, or ``no_block_spec``/None: the whole array)."""
    shape = tuple(int(s) for s in shape)
    if spec is None or isinstance(spec, NoBlockSpec):
        return BlockMapping(origin, tuple(Blocked(s) for s in shape), None, shape, dtype)
    if not isinstance(spec, BlockSpec):
        raise TypeError(f"pallas_call: the spec for {origin} must be a BlockSpec, got {spec!r}")
    if spec.block_shape is None:
        dims = tuple(Blocked(s) for s in shape)
    else:
        dims = tuple(map(_canonical_dim, spec.block_shape))
        if len(dims) != len(shape):
            raise ValueError(
                f"Block shape for {origin} (= {dims}) must have the same number of "
                f"dimensions as the array shape {shape}."
            )
    return BlockMapping(origin, dims, spec.index_map, shape, dtype)
