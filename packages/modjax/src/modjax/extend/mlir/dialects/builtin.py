"""``jax.extend.mlir.dialects.builtin``: jaxlib's ``jaxlib.mlir.dialects.builtin``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update(
    {k: v for k, v in vars(_module("dialects.builtin")).items() if not k.startswith("__")}
)
