"""The generalized normal distribution (jax.scipy.stats.gennorm)."""

from __future__ import annotations

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import promote


def logpdf(x, beta):
    """Compute the log of the generalized normal density (jax.scipy.stats.gennorm.logpdf)."""
    x, beta = promote("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - special.gammaln(1 / beta) - jnp.power(jnp.abs(x), beta)


def pdf(x, beta):
    """Compute the generalized normal density (jax.scipy.stats.gennorm.pdf)."""
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """Compute the generalized normal CDF (jax.scipy.stats.gennorm.cdf)."""
    x, beta = promote("gennorm.cdf", x, beta)
    return 0.5 * (1 + jnp.sign(x) * special.gammainc(1 / beta, jnp.power(jnp.abs(x), beta)))
