"""The chi-squared distribution (jax.scipy.stats.chi2)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax import lax
from modjax.scipy import special

from ._common import NEG_INF, const, promote, standardize


def logpdf(x, df, loc=0, scale=1):
    """Compute the log of the chi-squared density (jax.scipy.stats.chi2.logpdf)."""
    x, df, loc, scale = promote("chi2.logpdf", x, df, loc, scale)
    y = standardize(x, loc, scale)
    half_df = df / const(x, 2)
    kernel = (half_df - 1) * jnp.log(y) - y / 2
    norm_const = -(special.gammaln(half_df) + df * (math.log(2) / 2))
    return jnp.where(x < loc, NEG_INF, norm_const - jnp.log(scale) + kernel)


def pdf(x, df, loc=0, scale=1):
    """Compute the chi-squared density (jax.scipy.stats.chi2.pdf)."""
    return jnp.exp(logpdf(x, df, loc, scale))


def _half_y(x, loc, scale):
    # lax.clamp, as JAX's (see beta); strong bounds and factor 2 make the CDF and SF strong
    return lax.clamp(const(x, 0), jnp.divide(x - loc, scale * const(scale, 2)), const(x, math.inf))


def cdf(x, df, loc=0, scale=1):
    """Compute the chi-squared CDF (jax.scipy.stats.chi2.cdf)."""
    x, df, loc, scale = promote("chi2.cdf", x, df, loc, scale)
    return special.gammainc(df / const(scale, 2), _half_y(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    """Compute the log of the chi-squared CDF (jax.scipy.stats.chi2.logcdf)."""
    return jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """Compute the chi-squared survival function (jax.scipy.stats.chi2.sf)."""
    x, df, loc, scale = promote("chi2.sf", x, df, loc, scale)
    return special.gammaincc(df / const(scale, 2), _half_y(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
    """Compute the log of the chi-squared survival function (jax.scipy.stats.chi2.logsf)."""
    return jnp.log(sf(x, df, loc, scale))
