"""The beta distribution on ``[loc, loc + scale]`` (jax.scipy.stats.beta)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax import lax
from modjax.scipy import special

from ._common import NEG_INF, const, promote, standardize


def logpdf(x, a, b, loc=0, scale=1):
    """Compute the log of the beta density (jax.scipy.stats.beta.logpdf).

    -inf outside the support, NaN for non-positive ``a``, ``b`` or ``scale``.
    """
    x, a, b, loc, scale = promote("beta.logpdf", x, a, b, loc, scale)
    y = standardize(x, loc, scale)
    one = const(x, 1)
    linear = special.xlogy(a - one, y) + special.xlog1py(b - one, -y)
    out = linear - special.betaln(a, b) - jnp.log(scale)
    out = jnp.where((x > loc + scale) | (x < loc), NEG_INF, out)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), math.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    """Compute the beta density (jax.scipy.stats.beta.pdf)."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _unit_y(x, loc, scale):
    # lax.clamp, as JAX's (its derivative is 0 outside, where clip's min/max leave NaN from
    # log(0)); strong bounds make the CDF and SF strong as in JAX
    return lax.clamp(const(x, 0), standardize(x, loc, scale), const(x, 1))


def cdf(x, a, b, loc=0, scale=1):
    """Compute the beta CDF, the regularized incomplete beta (jax.scipy.stats.beta.cdf)."""
    x, a, b, loc, scale = promote("beta.cdf", x, a, b, loc, scale)
    return special.betainc(a, b, _unit_y(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """Compute the log of the beta CDF (jax.scipy.stats.beta.logcdf)."""
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """Compute the beta survival function ``I_{1-y}(b, a)`` (jax.scipy.stats.beta.sf)."""
    x, a, b, loc, scale = promote("beta.sf", x, a, b, loc, scale)
    return special.betainc(b, a, 1 - _unit_y(x, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """Compute the log of the beta survival function (jax.scipy.stats.beta.logsf)."""
    return jnp.log(sf(x, a, b, loc, scale))
