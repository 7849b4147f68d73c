"""The multivariate normal distribution (jax.scipy.stats.multivariate_normal)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.lax import linalg as lax_linalg
from modjax.numpy._util import promote_dtypes_inexact


def logpdf(x, mean, cov, allow_singular=None):
    """Compute the multivariate normal log density (jax.scipy.stats.multivariate_normal.logpdf).

    A scalar ``mean`` is the univariate case; a scalar ``cov`` an isotropic
    one; otherwise ``cov`` (batched ``(..., n, n)``) is factored by Cholesky.
    ``allow_singular`` is not implemented, as in JAX.
    """
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = (jnp.asarray(a) for a in promote_dtypes_inexact(x, mean, cov))
    log_2pi = jnp.log(2 * math.pi)  # in the working precision, by XLA, as JAX's
    if not mean.shape:
        return -0.5 * jnp.square(x - mean) / cov - 0.5 * (log_2pi + jnp.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return -0.5 * jnp.einsum("...i,...i->...", y, y) / cov - n / 2 * (log_2pi + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax_linalg.cholesky(cov)
    y = x - mean
    batch = jnp.broadcast_shapes(chol.shape[:-2], y.shape[:-1])
    chol = jnp.broadcast_to(chol, batch + (n, n))
    # solve L w = y for w: |w|^2 is the Mahalanobis distance
    # as a row: w L^T = y, JAX's orientation (the derivatives round otherwise)
    w = lax_linalg.triangular_solve(
        chol, jnp.broadcast_to(y, batch + (n,))[..., None, :], lower=True, transpose_a=True
    )[..., 0, :]
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    # |w|^2 by einsum (a dot product), as JAX's: a sum of squares rounds otherwise
    return -0.5 * jnp.einsum("...i,...i->...", w, w) - n / 2 * log_2pi - log_det


def pdf(x, mean, cov):
    """Compute the multivariate normal density (jax.scipy.stats.multivariate_normal.pdf)."""
    return jnp.exp(logpdf(x, mean, cov))
