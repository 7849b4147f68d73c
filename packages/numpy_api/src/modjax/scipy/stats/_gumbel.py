"""The two Gumbel distributions, as one family: ``gumbel_r`` of ``z`` is ``gumbel_l`` of ``-z``.

Each function takes ``side`` (+1 for the right-skewed ``gumbel_r``, -1 for
``gumbel_l``); the public modules ``gumbel_r`` and ``gumbel_l`` fix it. A
non-positive ``scale`` gives NaN, and the quantile functions give NaN outside
the open interval (0, 1), as in JAX.
"""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.scipy import special

from ._common import promote, standardize


def _z(name, x, loc, scale, side):
    x, loc, scale = promote(name, x, loc, scale)
    return standardize(x, loc, scale) * side, scale


def logpdf(side, name, x, loc, scale):
    """Compute the log density ``-log(scale) - w - exp(-w)`` with ``w = side * z``."""
    w, scale = _z(name, x, loc, scale, -side)  # w = -z for gumbel_r, z for gumbel_l
    out = jnp.subtract(w, jnp.exp(w)) - jnp.log(scale)
    return jnp.where(scale > 0, out, math.nan)


def log_lower(side, name, x, loc, scale):
    """Compute ``-exp(w)``: the log CDF of gumbel_r and the log SF of gumbel_l."""
    w, scale = _z(name, x, loc, scale, -side)
    return jnp.where(scale > 0, -jnp.exp(w), math.nan)


def log_upper(side, name, x, loc, scale):
    """Compute ``log(1 - exp(-exp(w)))``: the log SF of gumbel_r and the log CDF of gumbel_l."""
    w, scale = _z(name, x, loc, scale, -side)
    return jnp.where(scale > 0, jnp.log(-jnp.expm1(-jnp.exp(w))), math.nan)


def ppf(side, name, p, loc, scale):
    """Compute the quantile function; NaN outside (0, 1)."""
    p, loc, scale = promote(name, p, loc, scale)
    ok = (p > 0) & (p < 1)
    t = -jnp.log(-jnp.log(p)) if side > 0 else jnp.log(special.xlog1py(-1, -p))
    return jnp.where(ok, loc + scale * t, math.nan)
