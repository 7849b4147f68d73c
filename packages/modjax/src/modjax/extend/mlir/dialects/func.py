"""``jax.extend.mlir.dialects.func``: jaxlib's ``jaxlib.mlir.dialects.func``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.func")).items() if not k.startswith("__")}
)
