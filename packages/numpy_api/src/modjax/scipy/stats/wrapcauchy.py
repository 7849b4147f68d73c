"""The wrapped Cauchy distribution on ``[0, 2 pi]`` (jax.scipy.stats.wrapcauchy)."""

from __future__ import annotations

import math

import modjax.numpy as jnp

from ._common import NEG_INF, promote


def logpdf(x, c):
    """Compute the log of the wrapped Cauchy density (jax.scipy.stats.wrapcauchy.logpdf).

    -inf outside ``[0, 2 pi]``, NaN unless ``0 < c < 1``.
    """
    x, c = promote("wrapcauchy.logpdf", x, c)
    out = jnp.log(1 - c * c) - math.log(2 * math.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    out = jnp.where((x >= 0) & (x <= 2 * math.pi), out, NEG_INF)
    return jnp.where((c > 0) & (c < 1), out, math.nan)


def pdf(x, c):
    """Compute the wrapped Cauchy density (jax.scipy.stats.wrapcauchy.pdf)."""
    return jnp.exp(logpdf(x, c))
