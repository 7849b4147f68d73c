"""Interfaces for libraries that extend JAX (``jax.extend``).

``core`` (jaxpr types, primitives and JAX's helper functions over them, and
``core.primitives``), ``backend``, ``random`` (defining PRNG implementations),
``linear_util``, ``source_info_util``, ``sharding``, ``mlir`` (jaxlib's MLIR bindings
and StableHLO helpers), ``lowering`` (the context types), ``xla`` (compiler passes) and
``ifrt_programs`` (jaxlib's). JAX's ``pallas`` has no modjax counterpart.
"""

from modjax.extend import (
    backend,
    core,
    ifrt_programs,
    linear_util,
    lowering,
    mlir,
    random,
    sharding,
    source_info_util,
    xla,
)

__all__ = [
    "backend",
    "core",
    "ifrt_programs",
    "linear_util",
    "lowering",
    "mlir",
    "random",
    "sharding",
    "source_info_util",
    "xla",
]
