"""Pallas' switches: ``enable_debug_checks``, ``enable_poison_buffers`` and
``pallas_export_experimental``.

Each flag reads as ``.value`` and is set for a block with ``with flag(True):``
(as JAX's config states). Interpret mode already fills unwritten buffers with
NaN or the smallest integer, so ``enable_poison_buffers`` changes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = [
    "debug_check",
    "enable_debug_checks",
    "enable_poison_buffers",
    "pallas_export_experimental",
]


class _Flag:
    """A boolean setting with a value and a context manager that sets it for a block."""

    def __init__(self, name: str, default: bool = False):
        self.name = name
        self.value = default

    @contextlib.contextmanager
    def __call__(self, new_val: Any = True) -> Iterator[None]:
        old, self.value = self.value, bool(new_val)
        try:
            yield
        finally:
            self.value = old

    def __repr__(self) -> str:
        return f"<pallas flag {self.name}={self.value}>"


enable_debug_checks = _Flag("enable_debug_checks")
enable_poison_buffers = _Flag("enable_poison_buffers")


def debug_check(condition: Any, message: str) -> None:
    """Check ``condition`` inside a kernel when debug checks are on (no-op when off)."""
    if enable_debug_checks.value:
        raise NotImplementedError(
            "jax.experimental.pallas.debug_check with debug checks enabled is not implemented "
            "in modjax yet"
        )


@contextlib.contextmanager
def pallas_export_experimental(dynamic_shapes: bool) -> Iterator[None]:
    """Allow dynamically shaped blocks in exported kernels (only ``False`` is supported)."""
    if dynamic_shapes:
        raise NotImplementedError(
            "jax.experimental.pallas.pallas_export_experimental(dynamic_shapes=True) is not "
            "implemented in modjax yet"
        )
    yield
