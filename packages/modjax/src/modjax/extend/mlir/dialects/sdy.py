"""``jax.extend.mlir.dialects.sdy``: jaxlib's ``jaxlib.mlir.dialects.sdy``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update({k: v for k, v in vars(_module("dialects.sdy")).items() if not k.startswith("__")})
