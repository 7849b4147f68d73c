"""The truncated normal distribution on ``[a, b]`` in standard units (jax.scipy.stats.truncnorm).

Masses of the normal between two points are computed in log space: in a
tail (both bounds on one side of 0) as the log of a difference of
``log_ndtr``s, mirrored into the lower tail; across 0 as ``log1p`` of the
two tails' complement. ``a >= b`` gives NaN.
"""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.scipy import special

from . import norm
from ._common import NEG_INF, promote, standardize


def _log_sub_exp(x, y):
    # log(exp(x) - exp(y)) for x >= y
    return special.logsumexp(
        jnp.stack([x, y]), b=jnp.stack([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0
    )


def _log_mass(a, b):
    """Return log(ndtr(b) - ndtr(a)) for a <= b, stable in either tail."""
    a, b = jnp.broadcast_arrays(a, b)
    right = a > 0
    central = ~((b <= 0) | right)
    lo, hi = jnp.where(right, -b, a), jnp.where(right, -a, b)
    tail = _log_sub_exp(special.log_ndtr(hi), special.log_ndtr(lo))
    middle = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return jnp.where(central, middle, tail)


@jit  # one program, eager too, as JAX's
def logpdf(x, a, b, loc=0, scale=1):
    """Compute the log of the truncated normal density (jax.scipy.stats.truncnorm.logpdf)."""
    x, a, b, loc, scale = promote("truncnorm.logpdf", x, a, b, loc, scale)
    out = norm.logpdf(x, loc, scale) - _log_mass(a, b)
    z = standardize(x, loc, scale)
    out = jnp.where((z < a) | (z > b), NEG_INF, out)
    return jnp.where(a >= b, math.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    """Compute the truncated normal density (jax.scipy.stats.truncnorm.pdf)."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


@jit  # one program, eager too, as JAX's
def logcdf(x, a, b, loc=0, scale=1):
    """Compute the log of the truncated normal CDF (jax.scipy.stats.truncnorm.logcdf)."""
    x, a, b, loc, scale = promote("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = standardize(x, loc, scale)
    total = _log_mass(a, b)
    below = _log_mass(a, z) - total
    above = _log_mass(z, b) - total
    # near the top, log1p(-sf) is the accurate form
    out = jnp.where(below > -0.1, jnp.log1p(-jnp.exp(above)), below)
    out = jnp.where(z > a, out, NEG_INF)
    out = jnp.where(z <= a, NEG_INF, out)
    out = jnp.where(z >= b, 0, out)
    return jnp.where(a >= b, math.nan, out)


@jit  # one program, eager too, as JAX's
def cdf(x, a, b, loc=0, scale=1):
    """Compute the truncated normal CDF (jax.scipy.stats.truncnorm.cdf)."""
    return jnp.exp(logcdf(x, a, b, loc, scale))


@jit  # one program, eager too, as JAX's
def logsf(x, a, b, loc=0, scale=1):
    """Compute the log of the truncated normal SF (jax.scipy.stats.truncnorm.logsf)."""
    x, a, b, loc, scale = promote("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


@jit  # one program, eager too, as JAX's
def sf(x, a, b, loc=0, scale=1):
    """Compute the truncated normal survival function (jax.scipy.stats.truncnorm.sf)."""
    return jnp.exp(logsf(x, a, b, loc, scale))
