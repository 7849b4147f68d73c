"""Helpers shared by the distribution modules: argument promotion and out-of-support masks."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.numpy._util import promote_args_inexact

NAN = math.nan
NEG_INF = -math.inf


def promote(name, *args):
    """Promote ``args`` to one inexact dtype and rank, as JAX's stats functions do."""
    return [jnp.asarray(a) for a in promote_args_inexact(name, *args)]


def standardize(x, loc, scale):
    """Return ``(x - loc) / scale``."""
    return jnp.divide(jnp.subtract(x, loc), scale)


def bad_probability(q):
    """Return where ``q`` is NaN or outside [0, 1] (where quantile functions give NaN)."""
    return jnp.isnan(q) | (q < 0) | (q > 1)
