"""``jax.extend.mlir.dialects.arith``: jaxlib's ``jaxlib.mlir.dialects.arith``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.arith")).items() if not k.startswith("__")}
)
