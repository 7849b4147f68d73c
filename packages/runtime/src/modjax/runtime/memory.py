"""Memory spaces (``jax.memory.Space``) and the memory kinds they stand for.

A CPU device of jaxlib 0.10 addresses three memories, by kind: ``device`` (the
default), ``pinned_host`` and ``unpinned_host``. ``device_put(x, Space.Host)``
places ``x`` in ``pinned_host`` memory and ``Space.Device`` in ``device``
memory, keeping ``x``'s devices and layout, as JAX 0.10.2 does. An array's
type carries its memory space (tracecore's ``MemorySpace``): ``pinned_host``
is ``Host``, the other kinds ``Device``, as in JAX.
"""

from __future__ import annotations

from modjax.tracecore.abstract import MemorySpace

__all__ = ["MemorySpace", "space_memory_kind", "kind_memory_space"]


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


def kind_memory_space(kind: str | None) -> MemorySpace:
    """Return the memory space of memory kind ``kind`` (JAX's ``mem_kind_to_space``)."""
    return MemorySpace.Host if kind == "pinned_host" else MemorySpace.Device
