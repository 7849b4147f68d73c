"""``jax.extend.mlir.dialects``: jaxlib's MLIR dialect modules, one submodule each."""
