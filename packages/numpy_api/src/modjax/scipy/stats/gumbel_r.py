"""The right-skewed (maximum) Gumbel distribution (jax.scipy.stats.gumbel_r)."""

from __future__ import annotations

import modjax.numpy as jnp

from . import _gumbel

_SIDE = 1


def logpdf(x, loc=0, scale=1):
    """Compute the log of the Gumbel density (jax.scipy.stats.gumbel_r.logpdf)."""
    return _gumbel.logpdf(_SIDE, "gumbel_r.logpdf", x, loc, scale)


def pdf(x, loc=0, scale=1):
    """Compute the Gumbel density (jax.scipy.stats.gumbel_r.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Compute the log of the Gumbel CDF (jax.scipy.stats.gumbel_r.logcdf)."""
    return _gumbel.log_lower(_SIDE, "gumbel_r.logcdf", x, loc, scale)


def cdf(x, loc=0, scale=1):
    """Compute the Gumbel CDF (jax.scipy.stats.gumbel_r.cdf)."""
    return jnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """Compute the log of the Gumbel survival function (jax.scipy.stats.gumbel_r.logsf)."""
    return _gumbel.log_upper(_SIDE, "gumbel_r.logsf", x, loc, scale)


def sf(x, loc=0, scale=1):
    """Compute the Gumbel survival function (jax.scipy.stats.gumbel_r.sf)."""
    return jnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """Compute the Gumbel quantile function; NaN outside (0, 1) (jax.scipy.stats.gumbel_r.ppf)."""
    return _gumbel.ppf(_SIDE, "gumbel_r.ppf", p, loc, scale)
