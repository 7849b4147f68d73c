"""``jax.extend.mlir.dialects.chlo``: jaxlib's ``jaxlib.mlir.dialects.chlo``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.chlo")).items() if not k.startswith("__")}
)
