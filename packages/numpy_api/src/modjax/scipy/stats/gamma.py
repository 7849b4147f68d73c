"""The gamma distribution (jax.scipy.stats.gamma)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax import lax
from modjax.scipy import special

from ._common import NEG_INF, const, promote, standardize


def logpdf(x, a, loc=0, scale=1):
    """Compute the log of the gamma density; -inf below ``loc`` (jax.scipy.stats.gamma.logpdf)."""
    x, a, loc, scale = promote("gamma.logpdf", x, a, loc, scale)
    ok = x >= loc
    one = const(x, 1)
    y = jnp.where(ok, standardize(x, loc, scale), one)  # a safe point where masked, for gradients
    out = special.xlogy(a - one, y) - y - (special.gammaln(a) + jnp.log(scale))
    return jnp.where(ok, out, NEG_INF)


def pdf(x, a, loc=0, scale=1):
    """Compute the gamma density (jax.scipy.stats.gamma.pdf)."""
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """Compute the gamma CDF, the regularized lower incomplete gamma (jax.scipy.stats.gamma.cdf)."""
    x, a, loc, scale = promote("gamma.cdf", x, a, loc, scale)
    y = lax.clamp(const(x, 0), standardize(x, loc, scale), const(x, math.inf))
    return special.gammainc(a, y)


def logcdf(x, a, loc=0, scale=1):
    """Compute the log of the gamma CDF (jax.scipy.stats.gamma.logcdf)."""
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """Compute the gamma survival function (jax.scipy.stats.gamma.sf)."""
    x, a, loc, scale = promote("gamma.sf", x, a, loc, scale)
    y = standardize(x, loc, scale)
    return jnp.where(y < 0, 1, special.gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    """Compute the log of the gamma survival function (jax.scipy.stats.gamma.logsf)."""
    return jnp.log(sf(x, a, loc, scale))
