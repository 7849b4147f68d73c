"""The uniform distribution on ``[loc, loc + scale]`` (jax.scipy.stats.uniform)."""

from __future__ import annotations

import math

import modjax.numpy as jnp

from ._common import NEG_INF, bad_probability, promote


def logpdf(x, loc=0, scale=1):
    """Compute the log of the uniform density (jax.scipy.stats.uniform.logpdf)."""
    x, loc, scale = promote("uniform.logpdf", x, loc, scale)
    outside = (x > loc + scale) | (x < loc)
    return jnp.where(outside, NEG_INF, -jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """Compute the uniform density (jax.scipy.stats.uniform.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """Compute the uniform CDF, clipped to [0, 1] (jax.scipy.stats.uniform.cdf)."""
    x, loc, scale = promote("uniform.cdf", x, loc, scale)
    upper = loc + scale
    inside = (x >= loc) & (x <= upper)
    # strong bounds even for Python scalar arguments, as in JAX
    zero, one = jnp.asarray(0, x.dtype), jnp.asarray(1, x.dtype)
    # NaN arguments fall through every case to 0, as in JAX's select
    inner = jnp.where(inside, (x - loc) / scale, 0)
    return jnp.where(x < loc, zero, jnp.where(x > upper, one, inner))


def ppf(q, loc=0, scale=1):
    """Compute the uniform quantile function; NaN outside [0, 1] (jax.scipy.stats.uniform.ppf)."""
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return jnp.where(bad_probability(q), math.nan, loc + scale * q)
