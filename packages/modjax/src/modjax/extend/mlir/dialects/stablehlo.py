"""``jax.extend.mlir.dialects.stablehlo``: jaxlib's ``jaxlib.mlir.dialects.stablehlo``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.stablehlo")).items() if not k.startswith("__")}
)
