"""modjax.lib: the counterpart of ``jax.lib``, which has no public names in JAX 0.10.

JAX 0.10 keeps jaxlib's modules private; modjax reaches jaxlib only through
modjax-runtime's ``_xla.py`` and modjax-lowering's ``_mlir.py``. This module exists
so that ``import jax.lib`` works under the jax alias.
"""

__all__: list[str] = []
