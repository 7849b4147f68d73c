"""The stages of a jitted function (``jax.stages``): traced, lowered, compiled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from modjax.runtime import Compiled, Lowered, Traced

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


@dataclass(frozen=True, slots=True)
class ArgInfo:
    """An argument of a lowered or compiled function: its abstract value and whether
    it is donated (jax.stages.ArgInfo)."""

    _aval: Any
    donated: bool

    @property
    def shape(self) -> tuple[int, ...]:
        """The argument's shape."""
        if not hasattr(self._aval, "shape"):
            raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
        return self._aval.shape

    @property
    def dtype(self):
        """The argument's dtype."""
        if not hasattr(self._aval, "dtype"):
            raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
        return self._aval.dtype
