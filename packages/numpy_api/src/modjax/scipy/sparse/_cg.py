"""The conjugate-gradient and BiCGSTAB iterations (one ``lax.while_loop`` each).

Both stop when ``|r|^2 <= max(tol^2 |b|^2, atol^2)`` for the true (unpreconditioned)
residual ``r``, scipy's non-legacy rule, or after ``maxiter`` iterations. They
are the ``solve`` of a ``custom_linear_solve``, so they are never differentiated
themselves.
"""

from __future__ import annotations

from collections.abc import Callable

import modjax.numpy as jnp
from modjax import lax
from modjax.lax.elementwise import _convert_element_type
from modjax.tracecore import dtypes
from modjax.tracecore.tree_util import tree_leaves

from . import _tree_vectors as tv

# bicgstab's iteration counter jumps to these when it breaks down, which ends the loop.
_RHO_BREAKDOWN = -10
_ALPHA_OMEGA_BREAKDOWN = -11


def _threshold(b, tol, atol):
    # Squared, so that the loop compares squared norms and takes no square roots.
    return jnp.maximum(jnp.square(tol) * tv.real_vdot(b, b), jnp.square(atol))


def cg_solve(A: Callable, b, *, x0, maxiter: int, tol, atol, M: Callable | None):
    """Return the preconditioned CG iterate for Hermitian positive definite ``A``."""
    precondition = (lambda r: r) if M is None else M
    threshold = _threshold(b, tol, atol)

    r0 = tv.sub(b, A(x0))
    z0 = precondition(r0)
    dtype = dtypes.result_type(*tree_leaves(z0))
    # gamma = <r, M r>; without M it is |r|^2 itself, and the stopping test reuses it.
    gamma0 = tv.real_vdot(r0, z0).astype(dtype)

    def not_done(state):
        _, r, gamma, _, k = state
        rr = gamma.real if M is None else tv.real_vdot(r, r)
        return (rr > threshold) & (k < maxiter)

    def step(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / tv.real_vdot(p, Ap).astype(dtype)
        x = tv.add(x, tv.scale(alpha, p))
        r = tv.sub(r, tv.scale(alpha, Ap))
        z = precondition(r)
        gamma_next = tv.real_vdot(r, z).astype(dtype)
        p = tv.add(z, tv.scale(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    x, *_ = lax.while_loop(not_done, step, (x0, r0, gamma0, z0, 0))
    return x


def bicgstab_solve(A: Callable, b, *, x0, maxiter: int, tol, atol, M: Callable | None):
    """Return the preconditioned BiCGSTAB iterate for a general ``A``."""
    precondition = (lambda r: r) if M is None else M
    threshold = _threshold(b, tol, atol)

    r0 = tv.sub(b, A(x0))
    dtype, weak = dtypes.result_type(*tree_leaves(b), return_weak_type_flag=True)
    one = _convert_element_type(1, dtype, weak)

    def not_done(state):
        r, k = state[1], state[-1]
        # A negative k records a breakdown (a zero rho, alpha or omega).
        return (tv.real_vdot(r, r) > threshold) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, r_hat, alpha, omega, rho, p, v, k = state
        rho_next = tv.vdot(r_hat, r)
        beta = rho_next / rho * alpha / omega
        p = tv.add(r, tv.scale(beta, tv.sub(p, tv.scale(omega, v))))
        p_hat = precondition(p)
        v = A(p_hat)
        alpha = rho_next / tv.vdot(r_hat, v)
        s = tv.sub(r, tv.scale(alpha, v))
        # When s is already small enough the half step is the answer: t would be
        # ~0 and omega = <t, s> / <t, t> could be 0/0.
        half_done = tv.real_vdot(s, s) < threshold
        s_hat = precondition(s)
        t = A(s_hat)
        omega = tv.vdot(t, s) / tv.vdot(t, t)
        x_half = tv.add(x, tv.scale(alpha, p_hat))
        x = tv.select(half_done, x_half, tv.add(x_half, tv.scale(omega, s_hat)))
        r = tv.select(half_done, s, tv.sub(s, tv.scale(omega, t)))
        k = jnp.where((omega == 0) | (alpha == 0), _ALPHA_OMEGA_BREAKDOWN, k + 1)
        k = jnp.where(rho_next == 0, _RHO_BREAKDOWN, k)
        return x, r, r_hat, alpha, omega, rho_next, p, v, k

    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    x, *_ = lax.while_loop(not_done, step, state)
    return x
