"""Stand-ins for JAX's sparse primitives (``bcoo_todense_p``, ...), which modjax does not declare.

Each exists (so imports and ``hasattr`` succeed) and raises NotImplementedError naming
itself when it is bound. packages/modjax/README.md lists them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UnimplementedPrimitive"]


def _error(name: str) -> NotImplementedError:
    return NotImplementedError(f"jax.experimental.sparse.{name} is not implemented in modjax yet")


class UnimplementedPrimitive:
    """A primitive of JAX's sparse library (``bcoo_todense_p``, ...) that modjax does not declare.

    modjax's sparse operations are compositions of lax primitives, so these have a
    name and nothing else: ``bind`` (or any other use) raises NotImplementedError.
    """

    def __init__(self, name: str):
        self.name = name

    def bind(self, *args: Any, **params: Any) -> Any:
        raise _error(f"{self.name}_p")

    impl = abstract_eval = bind

    def __repr__(self) -> str:
        return self.name
