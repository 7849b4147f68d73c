"""The left-skewed (minimum) Gumbel distribution (jax.scipy.stats.gumbel_l).

Each function is JAX's formula in ``z = (x - loc) / scale``, operation for
operation (so that results round as JAX's): a non-positive ``scale`` gives NaN,
and ``ppf`` gives NaN outside the open interval (0, 1).
"""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax import lax
from modjax.scipy.special import xlog1py, xlogy

from ._common import const, promote, standardized_lax


def logpdf(x, loc=0, scale=1):
    """Compute the log of the Gumbel density (jax.scipy.stats.gumbel_l.logpdf)."""
    x, loc, scale = promote("gumbel_l.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    # -log(scale) + z - exp(z)
    out = lax.add(xlogy(-1, scale), lax.sub(z, lax.exp(z)))
    return jnp.where(scale > const(scale, 0), out, math.nan)


def pdf(x, loc=0, scale=1):
    """Compute the Gumbel density (jax.scipy.stats.gumbel_l.pdf)."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Compute the log of the Gumbel CDF, ``log(-expm1(-exp(z)))``.

    (jax.scipy.stats.gumbel_l.logcdf)
    """
    z, ok = standardized_lax("gumbel_l.logcdf", x, loc, scale)
    return jnp.where(ok, lax.log(-lax.expm1(lax.neg(lax.exp(z)))), math.nan)


def cdf(x, loc=0, scale=1):
    """Compute the Gumbel CDF (jax.scipy.stats.gumbel_l.cdf)."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """Compute the Gumbel quantile ``loc + scale log(-log(1 - p))`` (jax.scipy.stats.gumbel_l.ppf).

    NaN outside (0, 1).
    """
    p, loc, scale = promote("gumbel_l.ppf", p, loc, scale)
    ok = (p > const(p, 0)) & (p < const(p, 1))
    quantile = lax.add(loc, lax.mul(scale, lax.log(xlog1py(-1, lax.neg(p)))))
    return jnp.where(ok, quantile, math.nan)


def sf(x, loc=0, scale=1):
    """Compute the Gumbel survival function (jax.scipy.stats.gumbel_l.sf)."""
    return jnp.exp(logsf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """Compute the log of the Gumbel survival, ``-exp(z)`` (jax.scipy.stats.gumbel_l.logsf)."""
    z, ok = standardized_lax("gumbel_l.logsf", x, loc, scale)
    return jnp.where(ok, lax.neg(lax.exp(z)), math.nan)
