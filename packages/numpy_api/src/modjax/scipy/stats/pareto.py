"""The Pareto distribution (jax.scipy.stats.pareto)."""

from __future__ import annotations

import math

import modjax.numpy as jnp

from ._common import NEG_INF, bad_probability, const, promote, standardize


def logpdf(x, b, loc=0, scale=1):
    """Compute the log of the Pareto density (jax.scipy.stats.pareto.logpdf)."""
    x, b, loc, scale = promote("pareto.logpdf", x, b, loc, scale)
    z = standardize(x, loc, scale)
    out = -(jnp.log(scale / b) + (b + const(x, 1)) * jnp.log(z))
    return jnp.where(x < loc + scale, NEG_INF, out)


def pdf(x, b, loc=0, scale=1):
    """Compute the Pareto density (jax.scipy.stats.pareto.pdf)."""
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """Compute the Pareto CDF ``1 - z^-b`` (jax.scipy.stats.pareto.cdf)."""
    x, b, loc, scale = promote("pareto.cdf", x, b, loc, scale)
    out = const(x, 1) - jnp.power(standardize(x, loc, scale), -b)
    return jnp.where(x < loc + scale, const(x, 0), out)


def logcdf(x, b, loc=0, scale=1):
    """Compute the log of the Pareto CDF (jax.scipy.stats.pareto.logcdf)."""
    x, b, loc, scale = promote("pareto.logcdf", x, b, loc, scale)
    out = jnp.log1p(-jnp.power(standardize(x, loc, scale), -b))
    return jnp.where(x < loc + scale, NEG_INF, out)


def logsf(x, b, loc=0, scale=1):
    """Compute the log of the Pareto survival function (jax.scipy.stats.pareto.logsf)."""
    x, b, loc, scale = promote("pareto.logsf", x, b, loc, scale)
    out = -b * jnp.log(standardize(x, loc, scale))
    return jnp.where(x < loc + scale, const(x, 0), out)


def sf(x, b, loc=0, scale=1):
    """Compute the Pareto survival function (jax.scipy.stats.pareto.sf)."""
    return jnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """Compute the Pareto quantile function; NaN outside [0, 1] (jax.scipy.stats.pareto.ppf)."""
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    out = loc + scale * jnp.power(one - q, -(one / b))
    return jnp.where(bad_probability(q), math.nan, out)
