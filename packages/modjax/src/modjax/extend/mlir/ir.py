"""``jax.extend.mlir.ir``: jaxlib's ``jaxlib.mlir.ir`` (through modjax-lowering's ``_mlir``)."""

from modjax.lowering._mlir import jaxlib_mlir_module as _module

globals().update({k: v for k, v in vars(_module("ir")).items() if not k.startswith("__")})
