"""The stages of a jitted function (``jax.stages``): traced, lowered, compiled."""

from __future__ import annotations

from typing import Any, Protocol

from modjax.runtime.stages import ArgInfo, Compiled, Lowered, Traced

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

#: Options passed to the compiler (``lower(...).compile(compiler_options=...)``).
CompilerOptions = dict[str, str | bool]


class Wrapped(Protocol):
    """A function transformed by ``jit`` (jax.stages.Wrapped): callable, and traceable
    and lowerable ahead of time."""

    def __call__(self, *args, **kwargs) -> Any:
        """Run the compiled function (compiling on a cache miss)."""

    def trace(self, *args, **kwargs) -> Traced:
        """Trace for these arguments without lowering."""

    def lower(self, *args, **kwargs) -> Lowered:
        """Trace and lower for these arguments."""
