"""modjax.interpreters: JAX's names for writing primitives, on modjax's rule tables.

The counterpart of ``jax.interpreters``: ``ad`` (JVP and transpose rules),
``batching`` (vmap rules), ``partial_eval`` (DCE rules, tracing to a jaxpr),
``mlir`` (lowering rules and the MLIR helpers), ``xla`` and ``pxla``. Each name is
bound to modjax's own table or function where one exists, so a primitive declared
with ``modjax.tracecore.Primitive`` (``jax.extend.core.Primitive`` in JAX) and
registered through these names works under ``jit``, ``grad`` and ``vmap``. Names of
JAX's internals with no meaning here raise NotImplementedError when used.
"""

from . import ad, batching, mlir, partial_eval, pxla, xla

__all__ = ["ad", "batching", "mlir", "partial_eval", "pxla", "xla"]
