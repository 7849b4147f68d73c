"""The logistic distribution (jax.scipy.stats.logistic)."""

from __future__ import annotations

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import promote, standardize


def logpdf(x, loc=0, scale=1):
    """Compute the log of the logistic density (jax.scipy.stats.logistic.logpdf)."""
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    half = standardize(x, loc, scale) / 2
    # -2 log(e^{z/2} + e^{-z/2}) is symmetric and overflow-free through logaddexp
    return -2 * jnp.logaddexp(half, -half) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    """Compute the logistic density (jax.scipy.stats.logistic.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Compute the logistic CDF, the sigmoid of ``z`` (jax.scipy.stats.logistic.cdf)."""
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return special.expit(standardize(x, loc, scale))


def sf(x, loc=0, scale=1):
    """Compute the logistic survival function (jax.scipy.stats.logistic.sf)."""
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return special.expit(-standardize(x, loc, scale))


def ppf(x, loc=0, scale=1):
    """Compute the logistic quantile function ``logit(q)`` (jax.scipy.stats.logistic.ppf)."""
    x, loc, scale = promote("logistic.ppf", x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """Compute the inverse logistic survival function (jax.scipy.stats.logistic.isf)."""
    x, loc, scale = promote("logistic.isf", x, loc, scale)
    return -special.logit(x) * scale + loc
