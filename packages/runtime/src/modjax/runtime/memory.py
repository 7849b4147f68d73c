"""Memory spaces (``jax.memory.Space``) and the memory kinds they stand for.

A CPU device of jaxlib 0.10 addresses three memories, by kind: ``device`` (the
default), ``pinned_host`` and ``unpinned_host``. ``device_put(x, Space.Host)``
places ``x`` in ``pinned_host`` memory and ``Space.Device`` in ``device``
memory, keeping ``x``'s devices and layout, as JAX 0.10.2 does.
"""

from __future__ import annotations

import enum

__all__ = ["MemorySpace", "space_memory_kind"]


class MemorySpace(enum.Enum):
    """Where an array's memory lives (``jax.memory.Space``): ``Device``, ``Host`` or ``Any``."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__  # by identity, as JAX's (Enum hashes the member's name)


_KINDS = {MemorySpace.Device: "device", MemorySpace.Host: "pinned_host"}


def space_memory_kind(space: MemorySpace) -> str:
    """Return the memory kind that ``device_put`` places arrays of memory ``space`` in."""
    kind = _KINDS.get(space)
    if kind is None:
        raise ValueError(
            f"device_put: an array cannot be placed in {space!r}; use MemorySpace.Device "
            "or MemorySpace.Host"
        )
    return kind
