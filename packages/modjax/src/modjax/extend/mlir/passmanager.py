"""``jax.extend.mlir.passmanager``: jaxlib's ``jaxlib.mlir.passmanager``."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update({k: v for k, v in vars(_module("passmanager")).items() if not k.startswith("__")})
