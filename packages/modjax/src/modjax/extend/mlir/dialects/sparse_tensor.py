"""``jax.extend.mlir.dialects.sparse_tensor``: jaxlib's ``jaxlib.mlir.dialects.sparse_tensor``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.sparse_tensor")).items() if not k.startswith("__")}
)
