"""jax.interpreters.xla's names: eager execution of a primitive, the backend type."""

from __future__ import annotations

from modjax.runtime import _xla, apply_primitive

from .._unsupported import Unsupported

__all__ = ["Backend", "apply_primitive", "canonicalize_dtype_handlers"]

#: A jaxlib client (what ``modjax.runtime.get_backend()`` returns).
Backend = _xla.Client

canonicalize_dtype_handlers = Unsupported(
    "jax.interpreters.xla.canonicalize_dtype_handlers",
    "JAX's per-type table of argument canonicalizers; modjax canonicalizes in "
    "modjax.tracecore.dtypes",
)
