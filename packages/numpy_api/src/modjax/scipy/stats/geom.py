"""The geometric distribution on {1, 2, ...} (jax.scipy.stats.geom)."""

from __future__ import annotations

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import NEG_INF, const, promote


def logpmf(k, p, loc=0):
    """Compute the geometric log PMF; -inf for ``k - loc <= 0`` (jax.scipy.stats.geom.logpmf)."""
    k, p, loc = promote("geom.logpmf", k, p, loc)
    x = k - loc
    return jnp.where(x <= 0, NEG_INF, special.xlog1py(x - const(k, 1), -p) + jnp.log(p))


def pmf(k, p, loc=0):
    """Compute the geometric PMF (jax.scipy.stats.geom.pmf)."""
    return jnp.exp(logpmf(k, p, loc))
