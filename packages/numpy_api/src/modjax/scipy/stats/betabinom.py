"""The beta-binomial distribution (jax.scipy.stats.betabinom)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.scipy import special

from ._common import NEG_INF, const, promote


@jit  # one program, eager too, as JAX's jitted logpmf
def logpmf(k, n, a, b, loc=0):
    """Compute the beta-binomial log PMF (jax.scipy.stats.betabinom.logpmf).

    ``k`` is floored; -inf outside the support, NaN for ``n < 0`` or
    non-positive ``a``, ``b``.
    """
    k, n, a, b, loc = promote("betabinom.logpmf", k, n, a, b, loc)
    y = jnp.floor(k) - loc
    # log C(n, y) = -log(n + 1) - betaln(n - y + 1, y + 1)
    one = const(y, 1)
    log_comb = -(jnp.log1p(n) + special.betaln(n - y + one, y + one))
    # log C + (betaln(y + a, n - y + b) - betaln(a, b)), JAX's grouping (other bits otherwise)
    out = log_comb + (special.betaln(y + a, n - y + b) - special.betaln(a, b))
    out = jnp.where((y == 0) & (n == 0), 0, out)
    out = jnp.where((y < -loc) | (y > n) | (y + a <= 0), NEG_INF, out)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), math.nan, out)


def pmf(k, n, a, b, loc=0):
    """Compute the beta-binomial PMF (jax.scipy.stats.betabinom.pmf)."""
    return jnp.exp(logpmf(k, n, a, b, loc))
