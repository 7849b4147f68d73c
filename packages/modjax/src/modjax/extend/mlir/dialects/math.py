"""``jax.extend.mlir.dialects.math``: jaxlib's ``jaxlib.mlir.dialects.math``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.math")).items() if not k.startswith("__")}
)
