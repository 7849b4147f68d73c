"""``lpmn`` and ``lpmn_values``: tables of associated Legendre functions (deprecated in JAX).

jax.scipy.special serves both through its module ``__getattr__`` with a
DeprecationWarning; ``modjax.scipy.special`` does the same. The values come
from ``_associated_legendre`` (the recurrence ``sph_harm_y`` uses), evaluated
at every order ``m`` and degree ``l`` up to ``n``; the results have shape
``(n + 1, n + 1, len(z))``, indexed by order, then degree, then point.
"""

from __future__ import annotations

import numpy as np

import modjax.numpy as jnp
from modjax.numpy._util import promoting_ranks
from modjax.runtime import jit
from modjax.scipy._special_extra import _associated_legendre
from modjax.tracecore import dtypes
from modjax.tracecore.core import concrete_or_error

__all__ = ["lpmn", "lpmn_values"]


def _check(m, n, z) -> int:
    """Apply JAX's argument checks; return the largest degree."""
    dtype = dtypes.dtype(z, canonicalize=True)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"z.dtype={dtype} is not supported, see docstring for supported types.")
    if np.ndim(z) != 1:
        raise ValueError("z must be a 1D array.")
    m = int(concrete_or_error(m, "Argument m of lpmn."))
    n = int(concrete_or_error(n, "Argument n of lpmn."))
    if m != n:
        raise NotImplementedError("Computations for m!=n are not yet supported.")
    return n


def _table_impl(z, l_max: int, normalized: bool):
    size = l_max + 1
    orders = np.arange(size).reshape(size, 1, 1)
    degrees = np.arange(size).reshape(1, size, 1)
    p = _associated_legendre(degrees, orders, z[None, None, :], l_max, normalized)
    # Off [-1, 1] JAX's whole table of orders m >= 1 is NaN (sqrt(1 - z^2) is), zeros included.
    return jnp.where((jnp.abs(z) > 1) & (orders >= 1), np.nan, p)


_table = jit(promoting_ranks(_table_impl), static_argnums=(1, 2))


def _endpoint_slopes(l_max: int, sign: int) -> np.ndarray:
    """dP_l^m/dx at x = sign (+1 or -1): finite for m = 0, 2 and m >= 3, infinite for m = 1."""
    size = l_max + 1
    slopes = np.zeros((size, size))
    for l in range(size):  # noqa: E741 - the degree's usual name
        slopes[0, l] = l * (l + 1) / 2 * sign ** (l + 1)
        if size > 1 and l >= 1:
            slopes[1, l] = np.inf * sign**l
        if size > 2:
            slopes[2, l] = -(l - 1) * l * (l + 1) * (l + 2) / 4 * sign ** (l + 1)
    return slopes + 0.0  # no negative zeros, as JAX's


def _derivative_impl(p, z):
    size = p.shape[0]
    degrees = jnp.arange(size, dtype=z.dtype)[None, :, None]
    orders = jnp.arange(size, dtype=z.dtype)[:, None, None]
    previous = jnp.concatenate([jnp.zeros_like(p[:, :1]), p[:, :-1]], axis=1)  # P_(l-1)^m
    # (x^2 - 1) dP_l^m/dx = l x P_l^m - (l + m) P_(l-1)^m, singular at x = +-1 where
    # the limits are taken instead (as JAX's values there).
    slope = (degrees * z * p - (degrees + orders) * previous) / (z * z - 1)
    at_one = _endpoint_slopes(size - 1, 1).astype(p.dtype)[:, :, None]
    at_minus_one = _endpoint_slopes(size - 1, -1).astype(p.dtype)[:, :, None]
    slope = jnp.where(z == 1, at_one, jnp.where(z == -1, at_minus_one, slope))
    # Off [-1, 1] JAX's slopes are NaN, but 0 at degree 0.
    return jnp.where(jnp.abs(z) > 1, jnp.where(degrees >= 1, np.nan, 0.0), slope)


_derivative = jit(promoting_ranks(_derivative_impl))


def lpmn(m, n, z):
    """Return ``(p, dp)``: P_l^k(z) and dP_l^k/dz for orders and degrees up to ``n``.

    The counterpart of jax.scipy.special.lpmn (deprecated there, served with a
    DeprecationWarning): unnormalized functions with the Condon-Shortley phase,
    as scipy's lpmn, in arrays of shape ``(n + 1, n + 1, len(z))`` (order,
    degree, point). ``z`` must be a float32 or float64 vector (TypeError,
    ValueError otherwise); ``m != n`` raises NotImplementedError, as in JAX.
    """
    l_max = _check(m, n, z)
    z = jnp.asarray(z)
    p = _table(z, l_max, False)
    return p, _derivative(p, z)


def lpmn_values(m, n, z, is_normalized):
    """Return P_l^k(z) for orders and degrees up to ``n``, shape ``(n + 1, n + 1, len(z))``.

    The counterpart of jax.scipy.special.lpmn_values (deprecated there, served
    with a DeprecationWarning): ``is_normalized`` scales each function as
    ``sph_harm_y`` needs (orthonormal spherical harmonics). Argument checks
    as ``lpmn``.
    """
    l_max = _check(m, n, z)
    return _table(jnp.asarray(z), l_max, bool(is_normalized))
