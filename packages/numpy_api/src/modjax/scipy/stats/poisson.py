"""The Poisson distribution (jax.scipy.stats.poisson)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.numpy._util import check_arraylike, promote_dtypes_inexact
from modjax.runtime import jit
from modjax.scipy import special

from ._common import NEG_INF, const, promote


def logpmf(k, mu, loc=0):
    """Compute the Poisson log PMF; -inf below ``loc`` or at non-integer ``k``.

    (jax.scipy.stats.poisson.logpmf)
    """
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    x = k - loc
    out = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), NEG_INF, out)


def pmf(k, mu, loc=0):
    """Compute the Poisson PMF (jax.scipy.stats.poisson.pmf)."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """Compute the Poisson CDF ``Q(floor(k - loc) + 1, mu)`` (jax.scipy.stats.poisson.cdf)."""
    k, mu, loc = promote("poisson.cdf", k, mu, loc)
    x = k - loc
    return jnp.where(x < 0, const(k, 0), special.gammaincc(jnp.floor(x + 1), mu))


def _entropy_by_sum(mu, terms, upper):
    # sum of -p log p over k < upper(mu), the probabilities beyond being negligible
    k = jnp.arange(terms, dtype=mu.dtype)[:, None]
    probs = jnp.where(k < jnp.ceil(upper)[None, :], pmf(k, mu, 0), 0)
    return jnp.sum(special.entr(probs), axis=0)


@jit  # one program, eager too, as JAX's
def entropy(mu, loc=0):
    """Compute the entropy of the Poisson distribution (jax.scipy.stats.poisson.entropy).

    By direct summation for ``mu < 100`` and by the asymptotic expansion
    ``log(2 pi e mu) / 2 - 1 / (12 mu)`` above; ``loc`` only broadcasts.
    """
    check_arraylike("poisson.entropy", mu, loc)
    mu, loc = (jnp.asarray(a) for a in promote_dtypes_inexact(mu, loc))
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    flat = jnp.ravel(mu)
    small = _entropy_by_sum(flat, 35, flat + 20)
    medium = _entropy_by_sum(flat, 250, flat + 10 * jnp.sqrt(flat) + 20)
    large = 0.5 * jnp.log(2 * math.pi * math.e * flat) - 1 / (12 * flat)
    out = jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large))
    out = jnp.where(flat == 0, 0, out)
    return jnp.broadcast_to(jnp.reshape(out, mu.shape), shape)
