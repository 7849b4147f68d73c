"""The multinomial distribution (jax.scipy.stats.multinomial)."""

from __future__ import annotations

import numpy as np

import modjax.numpy as jnp
from modjax.numpy._util import promote_args
from modjax.scipy import special

from ._common import NEG_INF, promote


def logpmf(x, n, p):
    """Compute the multinomial log PMF over the last axis (jax.scipy.stats.multinomial.logpmf).

    ``x`` and ``n`` must be integers; counts not summing to ``n`` give -inf.
    """
    (p,) = promote("multinomial.logpmf", p)
    x, n = (jnp.asarray(a) for a in promote_args("multinomial.logpmf", x, n))
    if not np.issubdtype(x.dtype, np.integer):
        raise ValueError(
            f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}"
        )
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    out = special.gammaln(n + 1) + jnp.sum(special.xlogy(x, p) - special.gammaln(x + 1), axis=-1)
    # JAX compares the total of all counts (not per row) with n
    return jnp.where(jnp.sum(x) == n, out, NEG_INF)


def pmf(x, n, p):
    """Compute the multinomial PMF (jax.scipy.stats.multinomial.pmf)."""
    return jnp.exp(logpmf(x, n, p))
