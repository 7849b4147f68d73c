"""The von Mises distribution on the circle (jax.scipy.stats.vonmises)."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import promote


def logpdf(x, kappa):
    """Compute the log of the von Mises density (jax.scipy.stats.vonmises.logpdf)."""
    x, kappa = promote("vonmises.logpdf", x, kappa)
    # i0e(kappa) = exp(-kappa) I0(kappa): the exp(kappa) factor cancels against kappa cos(x)
    out = kappa * (jnp.cos(x) - 1) - jnp.log(2 * math.pi * special.i0e(kappa))
    return jnp.where(kappa > 0, out, math.nan)


def pdf(x, kappa):
    """Compute the von Mises density (jax.scipy.stats.vonmises.pdf)."""
    return jnp.exp(logpdf(x, kappa))
