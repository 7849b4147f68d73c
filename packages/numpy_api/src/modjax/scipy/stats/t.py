"""Student's t distribution (jax.scipy.stats.t)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import const, promote, standardize


def logpdf(x, df, loc=0, scale=1):
    """Compute the log of Student's t density (jax.scipy.stats.t.logpdf)."""
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    z = standardize(x, loc, scale)
    half_df = df / const(x, 2)
    half_df1 = half_df + 0.5
    norm_term = (
        special.gammaln(half_df)
        + jnp.log(scale * scale * math.pi * df) / 2
        - special.gammaln(half_df1)
    )
    return -(norm_term + half_df1 * jnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    """Compute Student's t density (jax.scipy.stats.t.pdf)."""
    return jnp.exp(logpdf(x, df, loc, scale))
