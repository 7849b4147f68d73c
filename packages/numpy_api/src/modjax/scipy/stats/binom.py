"""The binomial distribution (jax.scipy.stats.binom)."""

from __future__ import annotations

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import NEG_INF, promote


def logpmf(k, n, p, loc=0):
    """Compute the binomial log PMF; -inf outside ``loc <= k < loc + n + 1``.

    (jax.scipy.stats.binom.logpmf)
    """
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = special.gammaln(n + 1) - (special.gammaln(y + 1) + special.gammaln(n - y + 1))
    linear = special.xlogy(y, p) + special.xlog1py(n - y, -p)
    # a certain outcome (n = 0, or p at 0 or 1) has probability exactly 1
    out = jnp.where(((y == 0) & (n == 0)) | (linear == 0), 0, comb + linear)
    return jnp.where((k >= loc) & (k < loc + n + 1), out, NEG_INF)


def pmf(k, n, p, loc=0):
    """Compute the binomial PMF (jax.scipy.stats.binom.pmf)."""
    return jnp.exp(logpmf(k, n, p, loc))
