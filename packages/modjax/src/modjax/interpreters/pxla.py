"""jax.interpreters.pxla's one public name, JAX-internal in modjax."""

from __future__ import annotations

from .._unsupported import Unsupported

__all__ = ["create_compile_options"]

create_compile_options = Unsupported(
    "jax.interpreters.pxla.create_compile_options",
    "JAX's builder of XLA compile options for its executables; modjax.runtime builds its own "
    "(jit(f).lower(...).compile(compiler_options=...) takes options)",
)
