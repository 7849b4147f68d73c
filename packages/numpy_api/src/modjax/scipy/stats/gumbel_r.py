"""The right-skewed (maximum) Gumbel distribution (jax.scipy.stats.gumbel_r).

Each function is JAX's formula in ``z = (x - loc) / scale``, operation for
operation (so that results round as JAX's): a non-positive ``scale`` gives NaN,
and ``ppf`` gives NaN outside the open interval (0, 1).
"""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax import lax
from modjax.nn import log1mexp
from modjax.scipy.special import xlogy

from ._common import const, promote, standardized_lax


def logpdf(x, loc=0, scale=1):
    """Compute the log of the Gumbel density (jax.scipy.stats.gumbel_r.logpdf)."""
    x, loc, scale = promote("gumbel_r.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    # -log(scale) - (z + exp(-z))
    out = lax.add(xlogy(-1, scale), lax.neg(lax.add(z, lax.exp(lax.neg(z)))))
    return jnp.where(scale > const(scale, 0), out, math.nan)


def pdf(x, loc=0, scale=1):
    """Compute the Gumbel density (jax.scipy.stats.gumbel_r.pdf)."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Compute the log of the Gumbel CDF, ``-exp(-z)`` (jax.scipy.stats.gumbel_r.logcdf)."""
    z, ok = standardized_lax("gumbel_r.logcdf", x, loc, scale)
    return jnp.where(ok, lax.neg(lax.exp(lax.neg(z))), math.nan)


def cdf(x, loc=0, scale=1):
    """Compute the Gumbel CDF (jax.scipy.stats.gumbel_r.cdf)."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """Compute the Gumbel quantile ``loc - scale log(-log p)`` (jax.scipy.stats.gumbel_r.ppf).

    NaN outside (0, 1).
    """
    p, loc, scale = promote("gumbel_r.ppf", p, loc, scale)
    ok = (p > const(p, 0)) & (p < const(p, 1))
    quantile = lax.sub(loc, lax.mul(scale, lax.log(xlogy(-1, p))))
    return jnp.where(ok, quantile, math.nan)


def sf(x, loc=0, scale=1):
    """Compute the Gumbel survival function ``1 - exp(-exp(-z))`` (jax.scipy.stats.gumbel_r.sf)."""
    x, loc, scale = promote("gumbel_r.sf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    out = lax.sub(const(x, 1), lax.exp(lax.neg(lax.exp(neg_z))))
    return jnp.where(scale > const(scale, 0), out, math.nan)


def logsf(x, loc=0, scale=1):
    """Compute the log of the Gumbel survival function (jax.scipy.stats.gumbel_r.logsf)."""
    x, loc, scale = promote("gumbel_r.logsf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return jnp.where(scale > const(scale, 0), log1mexp(lax.exp(neg_z)), math.nan)
