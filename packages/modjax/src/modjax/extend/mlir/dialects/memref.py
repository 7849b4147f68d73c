"""``jax.extend.mlir.dialects.memref``: jaxlib's ``jaxlib.mlir.dialects.memref``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.memref")).items() if not k.startswith("__")}
)
