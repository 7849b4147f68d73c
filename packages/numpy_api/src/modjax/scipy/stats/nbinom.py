"""The negative binomial distribution (jax.scipy.stats.nbinom)."""

from __future__ import annotations

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import NEG_INF, const, promote


def logpmf(k, n, p, loc=0):
    """Compute the negative binomial log PMF; -inf below ``loc`` (jax.scipy.stats.nbinom.logpmf)."""
    k, n, p, loc = promote("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    one = const(k, 1)
    comb = special.gammaln(y + n) - special.gammaln(n) - special.gammaln(y + one)
    # comb + (xlogy(n, p) + xlogy(y, 1 - p)), JAX's grouping (other bits otherwise)
    out = comb + (special.xlogy(n, p) + special.xlogy(y, one - p))
    return jnp.where(k < loc, NEG_INF, out)


def pmf(k, n, p, loc=0):
    """Compute the negative binomial PMF (jax.scipy.stats.nbinom.pmf)."""
    return jnp.exp(logpmf(k, n, p, loc))
