"""The Cauchy distribution (jax.scipy.stats.cauchy)."""

from __future__ import annotations

import math

import modjax.numpy as jnp

from ._common import promote, standardize


def logpdf(x, loc=0, scale=1):
    """Compute the log of the Cauchy density (jax.scipy.stats.cauchy.logpdf)."""
    x, loc, scale = promote("cauchy.logpdf", x, loc, scale)
    z = standardize(x, loc, scale)
    return -(jnp.log(math.pi * scale) + jnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    """Compute the Cauchy density (jax.scipy.stats.cauchy.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Compute the Cauchy CDF ``1/2 + atan(z) / pi`` (jax.scipy.stats.cauchy.cdf)."""
    x, loc, scale = promote("cauchy.cdf", x, loc, scale)
    return 0.5 + jnp.arctan(standardize(x, loc, scale)) / math.pi


def logcdf(x, loc=0, scale=1):
    """Compute the log of the Cauchy CDF (jax.scipy.stats.cauchy.logcdf)."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """Compute the Cauchy survival function (jax.scipy.stats.cauchy.sf)."""
    x, loc, scale = promote("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """Compute the log of the Cauchy survival function (jax.scipy.stats.cauchy.logsf)."""
    x, loc, scale = promote("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """Compute the Cauchy quantile function ``tan(pi (q - 1/2))`` (jax.scipy.stats.cauchy.ppf)."""
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    return jnp.tan(math.pi * q - math.pi / 2) * scale + loc


def isf(q, loc=0, scale=1):
    """Compute the inverse Cauchy survival function (jax.scipy.stats.cauchy.isf)."""
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return jnp.tan(math.pi / 2 - math.pi * q) * scale + loc
