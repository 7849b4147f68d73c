"""``jax.extend.mlir.dialects.vector``: jaxlib's ``jaxlib.mlir.dialects.vector``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.vector")).items() if not k.startswith("__")}
)
