"""Helpers shared by the distribution modules: argument promotion and out-of-support masks."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax import lax
from modjax.numpy._util import promote_args_inexact, result_type
from modjax.scipy.special import _lax_const as const  # JAX's lax._const

NAN = math.nan
NEG_INF = -math.inf


def promote(name, *args):
    """Promote ``args`` to one inexact dtype and rank, as JAX's stats functions do.

    Every argument gets the weak type of the promotion: next to a float32 array,
    ``loc=0`` becomes a strong float32 array, not a weak one.
    """
    out = promote_args_inexact(name, *args)
    if result_type(*args)[1]:
        return [jnp.asarray(a) for a in out]
    dtype = jnp.result_type(*out)
    return [jnp.asarray(a, dtype) for a in out]


def standardized_lax(name, x, loc, scale):
    """``(x - loc) / scale`` in lax ops on the promoted arguments, as JAX's gumbel
    functions compute it, and whether ``scale`` is positive."""
    x, loc, scale = promote(name, x, loc, scale)
    return lax.div(lax.sub(x, loc), scale), scale > const(scale, 0)


def standardize(x, loc, scale):
    """Return ``(x - loc) / scale``."""
    return jnp.divide(jnp.subtract(x, loc), scale)


def bad_probability(q):
    """Return where ``q`` is NaN or outside [0, 1] (where quantile functions give NaN)."""
    return jnp.isnan(q) | (q < 0) | (q > 1)
