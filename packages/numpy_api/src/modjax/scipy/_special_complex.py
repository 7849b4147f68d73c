"""The gamma function and its logarithm for complex arguments (jax.scipy.special.gamma/loggamma).

Lanczos' approximation (g = 7, nine terms) in the right half-plane and the reflection
formula ``Gamma(z) Gamma(1 - z) = pi / sin(pi z)`` left of ``Re z = 1/2``, evaluated
step for step as JAX 0.10.2 does so that the results round alike.
"""

from __future__ import annotations

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.scipy import _special_coefficients as C


def _lanczos_loggamma(z):
    """log Gamma(z) from Lanczos' series, reflected for ``Re z < 1/2``."""
    reflect = jnp.real(z) < 0.5
    w = jnp.where(reflect, 1.0 - z, z) - 1.0
    coeffs = jnp.asarray(np.array(C.LANCZOS), dtype=z.dtype)
    lead = tuple(range(w.ndim))
    k = lax.expand_dims(jnp.arange(1, 9, dtype=z.dtype), lead)
    terms = lax.expand_dims(coeffs[1:], lead) / (lax.expand_dims(w, (w.ndim,)) + k)
    series = coeffs[0] + jnp.sum(terms, axis=-1)
    t = w + C.LANCZOS_G + 0.5
    half_log_2pi = jnp.asarray(0.5 * np.log(2.0 * np.pi), dtype=z.dtype)
    right = half_log_2pi + (w + 0.5) * jnp.log(t) - t + jnp.log(series)
    # the reflected branch sees a harmless z where it is not taken (no NaN in its gradient)
    z_left = jnp.where(reflect, z, jnp.full_like(z, 0.5))
    left = jnp.log(jnp.asarray(np.pi, dtype=z.dtype)) - jnp.log(jnp.sin(np.pi * z_left)) - right
    return jnp.where(reflect, left, right)


def _poles_and_nans(z):
    """Where ``z`` is NaN or a pole (a non-positive real integer), and ``z`` with 1 there."""
    re = jnp.real(z)
    pole = (jnp.imag(z) == 0) & (re == jnp.floor(re)) & (re <= 0)
    bad = pole | jnp.isnan(z)
    return bad, jnp.where(bad, jnp.ones_like(z), z)


def complex_gamma(z):
    """Gamma(z) for complex ``z``: NaN+NaNj at the poles and for NaN input."""
    bad, safe = _poles_and_nans(z)
    nan = jnp.array(complex(np.nan, np.nan), dtype=z.dtype)
    return jnp.where(bad, nan, jnp.exp(_lanczos_loggamma(safe)))


def _principal(z):
    bad, safe = _poles_and_nans(z)
    # shift into Re z >= 1/2 by loggamma(z) = loggamma(z + n) - sum_k log(z + k), which puts
    # the branch cut on the negative real axis, as SciPy's
    n = jnp.maximum(0, jnp.ceil(0.5 - jnp.real(safe)).astype(int))

    def more(state):
        k, _ = state
        return jnp.any(k < n)

    def step(state):
        k, total = state
        active = k < n
        zk = jnp.where(active, safe + k, jnp.ones_like(safe))
        return k + 1, total + jnp.where(active, jnp.log(zk), jnp.zeros_like(total))

    _, logs = lax.while_loop(more, step, (0, jnp.zeros_like(safe)))
    value = _lanczos_loggamma(safe + n) - logs
    return jnp.where(bad, jnp.array(complex(np.nan, np.nan), dtype=z.dtype), value)


def complex_loggamma(z):
    """The principal branch of log Gamma(z) for complex ``z`` (SciPy's ``loggamma``)."""
    from modjax.runtime import jit  # one program, as JAX's jitted helper

    return jit(_principal)(z)
