"""``jax.experimental.pjit``: the deprecated ``pjit`` spelling of ``jit``.

As in JAX 0.10, reading ``pjit`` from this module warns (DeprecationWarning) and
gives a function whose calls are ``jit``'s with shardings as its first parameters.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from modjax.runtime.jit import jit

__all__: list[str] = []


def _pjit(
    fun: Callable,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    device: Any = None,
    backend: str | None = None,
    inline: bool = False,
    compiler_options: dict[str, Any] | None = None,
) -> Callable:
    """Return ``jit(fun, ...)`` with the same options (JAX's deprecated ``pjit``)."""
    return jit(
        fun,
        in_shardings=in_shardings,
        out_shardings=out_shardings,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        donate_argnums=donate_argnums,
        donate_argnames=donate_argnames,
        keep_unused=keep_unused,
        device=device,
        backend=backend,
        inline=inline,
        compiler_options=compiler_options,
    )


_pjit.__name__ = _pjit.__qualname__ = "pjit"


def __getattr__(name: str):
    if name == "pjit":
        warnings.warn(
            "jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return _pjit
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
