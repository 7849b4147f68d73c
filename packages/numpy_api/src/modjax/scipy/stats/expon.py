"""The exponential distribution (jax.scipy.stats.expon)."""

from __future__ import annotations

import math

import modjax.numpy as jnp

from ._common import NEG_INF, bad_probability, promote, standardize


def logpdf(x, loc=0, scale=1):
    """Compute the log of the exponential density (jax.scipy.stats.expon.logpdf)."""
    x, loc, scale = promote("expon.logpdf", x, loc, scale)
    out = -(standardize(x, loc, scale) + jnp.log(scale))
    return jnp.where(x < loc, NEG_INF, out)


def pdf(x, loc=0, scale=1):
    """Compute the exponential density (jax.scipy.stats.expon.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """Compute the log of the exponential survival function (jax.scipy.stats.expon.logsf)."""
    x, loc, scale = promote("expon.logsf", x, loc, scale)
    return jnp.where(x < loc, 0, -standardize(x, loc, scale))


def sf(x, loc=0, scale=1):
    """Compute the exponential survival function (jax.scipy.stats.expon.sf)."""
    return jnp.exp(logsf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Compute the exponential CDF ``-expm1(-z)`` (jax.scipy.stats.expon.cdf)."""
    x, loc, scale = promote("expon.cdf", x, loc, scale)
    return jnp.where(x < loc, 0, -jnp.expm1(-standardize(x, loc, scale)))


def logcdf(x, loc=0, scale=1):
    """Compute the log of the exponential CDF (jax.scipy.stats.expon.logcdf)."""
    return jnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """Compute the exponential quantile function; NaN outside [0, 1] (jax.scipy.stats.expon.ppf)."""
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return jnp.where(bad_probability(q), math.nan, loc - scale * jnp.log1p(-q))
