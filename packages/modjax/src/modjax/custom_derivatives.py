"""User-defined derivative rules (``jax.custom_derivatives``)."""

from modjax.autodiff import (
    CustomVJPException,
    CustomVJPPrimal,
    SymbolicZero,
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_vjp,
)

__all__ = [
    "CustomVJPException",
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_vjp",
]
