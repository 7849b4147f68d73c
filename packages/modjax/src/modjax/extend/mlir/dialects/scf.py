"""``jax.extend.mlir.dialects.scf``: jaxlib's ``jaxlib.mlir.dialects.scf``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update({k: v for k, v in vars(_module("dialects.scf")).items() if not k.startswith("__")})
