"""Interfaces for libraries that extend JAX (``jax.extend``).

``core`` (jaxpr types, primitives and JAX's helper functions over them, and
``core.primitives``), ``backend``, ``random`` (defining PRNG implementations),
``linear_util``, ``source_info_util``, ``sharding`` and ``mlir`` (jaxlib's MLIR
bindings and StableHLO helpers). JAX's ``pallas``, ``lowering``, ``xla`` and
``ifrt_programs`` submodules have no modjax counterpart yet.
"""

from modjax.extend import backend, core, linear_util, mlir, random, sharding, source_info_util

__all__ = ["backend", "core", "linear_util", "mlir", "random", "sharding", "source_info_util"]
