"""``jax.extend.mlir.dialects.mpmd``: jaxlib's ``jaxlib.mlir.dialects.mpmd``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.mpmd")).items() if not k.startswith("__")}
)
