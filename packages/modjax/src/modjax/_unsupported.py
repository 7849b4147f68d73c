"""Stand-ins for JAX-internal names that have no meaning in modjax.

``jax.interpreters.*`` and ``jax.api_util`` export some of JAX's own machinery
(its tracing internals, partial evaluation with ``PartialVal``, sharding
contexts of its lowering). modjax keeps those names so that ``hasattr`` and
imports succeed, but using one (calling it, reading or writing it as a table,
reading an attribute) raises NotImplementedError naming it and saying why.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Unsupported"]


class Unsupported:
    """A JAX-internal name without a modjax counterpart; any use raises NotImplementedError."""

    __slots__ = ("_name", "_why")

    def __init__(self, name: str, why: str):
        self._name = name
        self._why = why

    def _refuse(self) -> NotImplementedError:
        return NotImplementedError(f"{self._name} is not supported by modjax: {self._why}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._refuse()

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise self._refuse()

    def __getitem__(self, key: Any) -> Any:
        raise self._refuse()

    def __setitem__(self, key: Any, value: Any) -> None:
        raise self._refuse()

    def __contains__(self, key: Any) -> bool:
        raise self._refuse()

    def __iter__(self):
        raise self._refuse()

    def __repr__(self) -> str:
        return f"<unsupported {self._name}>"
