"""Numerical checks of derivatives (``jax.test_util``)."""

from modjax.autodiff.testing import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
