"""Helpers shared by the distribution modules: argument promotion and out-of-support masks."""

from __future__ import annotations

import math

import modjax.numpy as jnp
from modjax.numpy._util import promote_args_inexact, result_type
from modjax.tracecore import dtypes

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


def const(x, value):
    """Return ``value`` as a constant of ``x``'s dtype, as JAX's ``lax._const`` does.

    A strong 0-d array, which makes a result strong where every argument is weak (an
    int32 ``x`` with Python float parameters), as JAX's is; but a weak Python scalar
    where ``x`` is a weak 0-d value (every argument a Python scalar).
    """
    dtype = jnp.result_type(x)
    if dtypes.is_weakly_typed(x) and jnp.ndim(x) == 0:
        scalar = dtypes.scalar_type_of(x)(value)
        if jnp.result_type(scalar) == dtype:
            return scalar
    return jnp.asarray(value, dtype)


def standardize(x, loc, scale):
    """Return ``(x - loc) / scale``."""
    return jnp.divide(jnp.subtract(x, loc), scale)


def bad_probability(q):
    """Return where ``q`` is NaN or outside [0, 1] (where quantile functions give NaN)."""
    return jnp.isnan(q) | (q < 0) | (q > 1)
