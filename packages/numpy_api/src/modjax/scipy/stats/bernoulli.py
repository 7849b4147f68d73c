"""The Bernoulli distribution (jax.scipy.stats.bernoulli)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import NEG_INF, bad_probability, const, promote


def logpmf(k, p, loc=0):
    """Compute the Bernoulli log PMF; -inf outside {0, 1} (jax.scipy.stats.bernoulli.logpmf)."""
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    x = k - loc
    out = special.xlogy(x, p) + special.xlog1py(const(k, 1) - x, -p)
    return jnp.where((x < 0) | (x > 1), NEG_INF, out)


def pmf(k, p, loc=0):
    """Compute the Bernoulli PMF (jax.scipy.stats.bernoulli.pmf)."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """Compute the Bernoulli CDF; NaN for NaN arguments or ``p`` outside [0, 1].

    (jax.scipy.stats.bernoulli.cdf)
    """
    k, p = promote("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    out = jnp.where(k < 0, zero, jnp.where(k < 1, one - p, one))
    return jnp.where(jnp.isnan(k) | bad_probability(p), math.nan, out)


def ppf(q, p):
    """Compute the Bernoulli quantile function (jax.scipy.stats.bernoulli.ppf)."""
    q, p = promote("bernoulli.ppf", q, p)
    bad = bad_probability(q) | bad_probability(p)
    zero, one = const(q, 0), const(q, 1)
    return jnp.where(bad, math.nan, jnp.where(q <= one - p, zero, one))
