"""The Laplace distribution (jax.scipy.stats.laplace)."""

from __future__ import annotations

import modjax.numpy as jnp

from ._common import promote, standardize


def logpdf(x, loc=0, scale=1):
    """Compute the log of the Laplace density (jax.scipy.stats.laplace.logpdf)."""
    x, loc, scale = promote("laplace.logpdf", x, loc, scale)
    return -(jnp.abs(x - loc) / scale + jnp.log(2 * scale))


def pdf(x, loc=0, scale=1):
    """Compute the Laplace density (jax.scipy.stats.laplace.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Compute the Laplace CDF (jax.scipy.stats.laplace.cdf)."""
    x, loc, scale = promote("laplace.cdf", x, loc, scale)
    z = standardize(x, loc, scale)
    return jnp.where(z <= 0, 0.5 * jnp.exp(z), 1 - 0.5 * jnp.exp(-z))
