"""Memory spaces, pipelining and compiler hints of Pallas (``pl.ANY``, ``pl.Buffered``, ...).

In interpret mode every block lives in ordinary arrays, so memory spaces, buffer
counts, compiler parameters and cost estimates are accepted and ignored, as JAX's
interpret mode ignores them.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import numpy as np

from modjax.tracecore.abstract import ShapedArray

__all__ = [
    "ANY",
    "HOST",
    "Buffered",
    "CompilerParams",
    "CostEstimate",
    "DeviceIdType",
    "MemoryRef",
    "MemorySpace",
    "RevisitMode",
]


@dataclasses.dataclass(frozen=True)
class MemoryRef:
    """The type of a buffer in a memory space (``pl.ANY((8,), jnp.float32)``)."""

    inner_aval: Any
    memory_space: Any

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.inner_aval.shape)

    @property
    def dtype(self):
        return self.inner_aval.dtype


class MemorySpace(enum.Enum):
    """Logical memory spaces; calling one gives the ``MemoryRef`` type of a buffer in it."""

    ANY = "any"
    DEFAULT = "default"
    ERROR = "error"
    INDEX = "index"
    KEY = "key"
    HOST = "host"

    def from_type(self, type: Any) -> MemoryRef:  # noqa: A002  (JAX's parameter name)
        return MemoryRef(type, memory_space=self)

    def __call__(self, shape: tuple[int, ...], dtype: Any) -> MemoryRef:
        return self.from_type(ShapedArray(tuple(shape), np.dtype(dtype)))

    def __str__(self) -> str:
        return self.value


ANY = MemorySpace.ANY
HOST = MemorySpace.HOST


class RevisitMode(enum.Enum):
    """How a pipelined buffer treats a block revisited by consecutive grid steps."""

    DEFAULT = "default"
    ALWAYS = "always"
    NEVER = "never"


@dataclasses.dataclass(frozen=True)
class Buffered:
    """A BlockSpec's ``pipeline_mode``: how many buffers pipelining uses (ignored here)."""

    buffer_count: int
    use_lookahead: bool = False
    revisit: RevisitMode | None = None


class CompilerParams:
    """Base of the backends' compiler parameters (``pltpu.CompilerParams``, ...); ignored here."""

    BACKEND: Any = None


@dataclasses.dataclass(frozen=True)
class CostEstimate:
    """A kernel's cost for XLA's scheduler (accepted by ``pallas_call``; ignored here)."""

    flops: int
    transcendentals: int
    bytes_accessed: int
    remote_bytes_transferred: int = 0


class DeviceIdType(enum.Enum):
    """How a remote device is named in semaphore and DMA calls."""

    MESH = "mesh"
    LOGICAL = "logical"
