"""The left-skewed (minimum) Gumbel distribution (jax.scipy.stats.gumbel_l)."""

from __future__ import annotations

import modjax.numpy as jnp

from . import _gumbel

_SIDE = -1


def logpdf(x, loc=0, scale=1):
    """Compute the log of the Gumbel density (jax.scipy.stats.gumbel_l.logpdf)."""
    return _gumbel.logpdf(_SIDE, "gumbel_l.logpdf", x, loc, scale)


def pdf(x, loc=0, scale=1):
    """Compute the Gumbel density (jax.scipy.stats.gumbel_l.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Compute the log of the Gumbel CDF (jax.scipy.stats.gumbel_l.logcdf)."""
    return _gumbel.log_upper(_SIDE, "gumbel_l.logcdf", x, loc, scale)


def cdf(x, loc=0, scale=1):
    """Compute the Gumbel CDF (jax.scipy.stats.gumbel_l.cdf)."""
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """Compute the log of the Gumbel survival function (jax.scipy.stats.gumbel_l.logsf)."""
    return _gumbel.log_lower(_SIDE, "gumbel_l.logsf", x, loc, scale)


def sf(x, loc=0, scale=1):
    """Compute the Gumbel survival function (jax.scipy.stats.gumbel_l.sf)."""
    return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """Compute the Gumbel quantile function; NaN outside (0, 1) (jax.scipy.stats.gumbel_l.ppf)."""
    return _gumbel.ppf(_SIDE, "gumbel_l.ppf", p, loc, scale)
