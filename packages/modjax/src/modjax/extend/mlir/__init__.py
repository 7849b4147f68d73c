"""``jax.extend.mlir``: jaxlib's MLIR bindings and StableHLO helpers, as JAX exposes them.

``ir``, ``passmanager`` and ``dialects.*`` are jaxlib's own modules (reached through
modjax-lowering's ``_mlir``, the one place that imports jaxlib's MLIR bindings);
``serialize_portable_artifact``, ``deserialize_portable_artifact``,
``refine_polymorphic_shapes`` and ``hlo_to_stablehlo`` are jaxlib's functions.
"""

from modjax.lowering._mlir import jaxlib_mlir_functions as _functions

from .lowering import lower_with_sharding_in_types

__all__ = [
    "deserialize_portable_artifact",
    "hlo_to_stablehlo",
    "lower_with_sharding_in_types",
    "refine_polymorphic_shapes",
    "serialize_portable_artifact",
]

deserialize_portable_artifact = _functions().deserialize_portable_artifact
serialize_portable_artifact = _functions().serialize_portable_artifact
refine_polymorphic_shapes = _functions().refine_polymorphic_shapes
hlo_to_stablehlo = _functions().hlo_to_stablehlo
