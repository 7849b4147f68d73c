"""The normal distribution (jax.scipy.stats.norm)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import const, promote, standardize


def logpdf(x, loc=0, scale=1):
    """Compute the log of the normal density (jax.scipy.stats.norm.logpdf)."""
    x, loc, scale = promote("norm.logpdf", x, loc, scale)
    var = jnp.square(scale)
    # x's dtype and weak type already (the constants are weak): JAX's is weak for weak x
    return jnp.divide(jnp.log(jnp.multiply(2 * math.pi, var)) + jnp.square(x - loc) / var, -2)


def pdf(x, loc=0, scale=1):
    """Compute the normal density (jax.scipy.stats.norm.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Compute the normal CDF (jax.scipy.stats.norm.cdf)."""
    x, loc, scale = promote("norm.cdf", x, loc, scale)
    return special.ndtr(standardize(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Compute the log of the normal CDF, accurate in the tails (jax.scipy.stats.norm.logcdf)."""
    x, loc, scale = promote("norm.logcdf", x, loc, scale)
    return special.log_ndtr(standardize(x, loc, scale))


def sf(x, loc=0, scale=1):
    """Compute the normal survival function ``1 - cdf`` (jax.scipy.stats.norm.sf)."""
    x, loc, scale = promote("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """Compute the log of the normal survival function (jax.scipy.stats.norm.logsf)."""
    x, loc, scale = promote("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """Compute the normal quantile function (jax.scipy.stats.norm.ppf).

    ``q`` is not promoted and must be float32 or float64 (TypeError otherwise); the
    result is strong, of the default float dtype or wider.
    """
    # ndtri refuses q that is not float32 or float64 with JAX's TypeError
    return jnp.asarray(special.ndtri(q) * scale + loc, float)


def isf(q, loc=0, scale=1):
    """Compute the inverse of the normal survival function (jax.scipy.stats.norm.isf).

    ``1 - q`` is taken in ``q``'s dtype, so integer ``q`` is a TypeError, as in ``ppf``.
    """
    return ppf(const(q, 1) - q, loc, scale)
