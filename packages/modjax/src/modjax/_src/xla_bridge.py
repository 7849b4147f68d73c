"""``jax._src.xla_bridge``'s ``_backends``: the backends started so far, by platform (chex)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "_backends":
        from modjax.runtime import backends  # noqa: PLC0415 - read when asked: it is refilled

        return backends._backends
    raise AttributeError(f"module 'jax._src.xla_bridge' has no attribute {name!r}")
