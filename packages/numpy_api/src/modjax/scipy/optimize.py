"""Unconstrained minimization in scipy.optimize's names (the counterpart of jax.scipy.optimize).

``minimize(method="BFGS")`` as in JAX: the whole iteration is one
``lax.while_loop`` (so it traces once and runs under ``jit``/``vmap``), each
step a strong-Wolfe line search (itself a ``while_loop``: bracket the step by
doubling, then shrink the bracket by safeguarded quadratic interpolation, after
Nocedal & Wright, algorithms 3.5 and 3.6), and the inverse Hessian updated by
the BFGS formula, skipped when the curvature ``y.s`` is not finite. As in JAX,
``tol`` is accepted and ignored (``options={"gtol": ...}`` sets the gradient
tolerance) and the result is not differentiable through the iterations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import value_and_grad
from modjax.numpy._util import ARRAY_TYPES
from modjax.runtime import jit
from modjax.tracecore.tree_util import tree_leaves

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """The result of :func:`minimize` (jax.scipy.optimize.OptimizeResults).

    ``status`` is 0 (converged), 1 (``maxiter`` reached) or ``2 + s`` where the
    line search failed with status ``s`` (1: its bracket collapsed, 3: it ran
    out of iterations).
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def _dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


class _Search(NamedTuple):
    i: Any  # iterations so far
    zooming: Any  # False while bracketing, True once [lo, hi] brackets a Wolfe step
    done: Any
    failed: Any
    a_prev: Any  # bracketing: the previous trial step and its phi, phi'
    f_prev: Any
    d_prev: Any
    a_lo: Any  # zooming: the end with the lower phi, and the other end
    f_lo: Any
    d_lo: Any
    a_hi: Any
    f_hi: Any
    a_star: Any
    f_star: Any
    g_star: Any


def _line_search(fun, x, p, f0, g0, old_old_f, maxiter: int, c1=1e-4, c2=0.9):
    """Return ``(step, f, grad, nfev, failed, status)`` of a strong-Wolfe search along ``p``."""
    d0 = _dot(g0, p)
    dtype = f0.dtype
    # scipy's first trial: the step that would repeat the last decrease, at most 1.
    start = 1.01 * 2 * (f0 - old_old_f) / d0
    start = jnp.where(start > 1, 1.0, start).astype(dtype)

    def phi(a):
        f, g = value_and_grad(fun)(x + a * p)
        return f, _dot(g, p), g

    def sufficient(a, f):
        return f <= f0 + c1 * a * d0

    def curvature(d):
        return jnp.abs(d) <= -c2 * d0

    def body(s: _Search) -> _Search:
        # The trial step: doubling while bracketing, interpolation inside the bracket.
        width = s.a_hi - s.a_lo
        denom = 2 * (s.f_hi - s.f_lo - s.d_lo * width)
        quad = s.a_lo - s.d_lo * width * width / jnp.where(denom == 0, 1, denom)
        lo_end = jnp.minimum(s.a_lo, s.a_hi) + 0.1 * jnp.abs(width)
        hi_end = jnp.maximum(s.a_lo, s.a_hi) - 0.1 * jnp.abs(width)
        inside = (denom > 0) & (quad >= lo_end) & (quad <= hi_end)
        zoom_trial = jnp.where(inside, quad, 0.5 * (s.a_lo + s.a_hi))
        bracket_trial = jnp.where(s.i == 0, start, 2 * s.a_prev)
        a = jnp.where(s.zooming, zoom_trial, bracket_trial)
        f, d, g = phi(a)
        wolfe = sufficient(a, f) & curvature(d)

        # Bracketing: a step too long (or no better) brackets [prev, a]; uphill brackets [a, prev].
        too_long = ~sufficient(a, f) | ((s.i > 0) & (f >= s.f_prev))
        uphill = d >= 0
        b_lo_is_prev = too_long
        b_zoom = too_long | (~wolfe & uphill)
        b_alo = jnp.where(b_lo_is_prev, s.a_prev, a)
        b_flo = jnp.where(b_lo_is_prev, s.f_prev, f)
        b_dlo = jnp.where(b_lo_is_prev, s.d_prev, d)
        b_ahi = jnp.where(b_lo_is_prev, a, s.a_prev)
        b_fhi = jnp.where(b_lo_is_prev, f, s.f_prev)

        # Zooming: a worse step becomes hi; a better one becomes lo (hi flips if it overshoots).
        worse = ~sufficient(a, f) | (f >= s.f_lo)
        flip = d * (s.a_hi - s.a_lo) >= 0
        z_alo = jnp.where(worse, s.a_lo, a)
        z_flo = jnp.where(worse, s.f_lo, f)
        z_dlo = jnp.where(worse, s.d_lo, d)
        z_ahi = jnp.where(worse, a, jnp.where(flip, s.a_lo, s.a_hi))
        z_fhi = jnp.where(worse, f, jnp.where(flip, s.f_lo, s.f_hi))
        z_done = ~worse & curvature(d)

        done = jnp.where(s.zooming, z_done, wolfe & ~too_long)
        zooming = s.zooming | b_zoom
        a_lo = jnp.where(s.zooming, z_alo, b_alo)
        a_hi = jnp.where(s.zooming, z_ahi, b_ahi)
        # A bracket narrower than rounding can resolve will never contain a better step.
        collapsed = zooming & ~done & (jnp.abs(a_hi - a_lo) <= 1e-12 * jnp.abs(a_lo))
        return _Search(
            i=s.i + 1,
            zooming=zooming,
            done=done,
            failed=collapsed,
            a_prev=a,
            f_prev=f,
            d_prev=d,
            a_lo=a_lo,
            f_lo=jnp.where(s.zooming, z_flo, b_flo),
            d_lo=jnp.where(s.zooming, z_dlo, b_dlo),
            a_hi=a_hi,
            f_hi=jnp.where(s.zooming, z_fhi, b_fhi),
            a_star=jnp.where(done, a, s.a_star),
            f_star=jnp.where(done, f, s.f_star),
            g_star=jnp.where(done, g, s.g_star),
        )

    zero = jnp.zeros((), dtype)
    init = _Search(
        i=jnp.asarray(0),
        zooming=jnp.asarray(False),
        done=jnp.asarray(False),
        failed=jnp.asarray(False),
        a_prev=zero,
        f_prev=f0,
        d_prev=d0,
        a_lo=zero,
        f_lo=f0,
        d_lo=d0,
        a_hi=zero,
        f_hi=f0,
        a_star=zero,
        f_star=f0,
        g_star=g0,
    )
    s = lax.while_loop(lambda s: ~s.done & ~s.failed & (s.i < maxiter), body, init)
    status = jnp.where(s.failed, 1, jnp.where(s.done, 0, 3))
    step = s.a_star
    if np.dtype(dtype).itemsize < 8:
        # In 32 bits a vanishing step stalls the iteration; JAX floors it at 1e-8 too.
        step = jnp.where(jnp.abs(step) < 1e-8, jnp.sign(step) * 1e-8, step)
    return step, s.f_star, s.g_star, s.i, s.failed | ~s.done, status


class _BFGS(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    h: Any
    old_f: Any
    search_status: Any


def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    if maxiter is None:
        maxiter = np.size(x0) * 200
    n = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)
    init = _BFGS(
        converged=jnp.linalg.norm(g0, ord=norm) < gtol,
        failed=jnp.asarray(False),
        k=jnp.asarray(0),
        nfev=jnp.asarray(1),
        x=x0,
        f=f0,
        g=g0,
        h=jnp.eye(n, dtype=x0.dtype),
        old_f=f0 + jnp.linalg.norm(g0) / 2,
        search_status=jnp.asarray(0),
    )

    def body(s: _BFGS) -> _BFGS:
        p = -_dot(s.h, s.g)
        step, f, g, nfev, failed, status = _line_search(
            fun, s.x, p, s.f, s.g, s.old_f, line_search_maxiter
        )
        dx = step * p
        dg = g - s.g
        rho = 1 / _dot(dg, dx)
        w = jnp.eye(n, dtype=rho.dtype) - rho * jnp.outer(dx, dg)
        h = _dot(_dot(w, s.h), w.T) + rho * jnp.outer(dx, dx)
        return _BFGS(
            converged=jnp.linalg.norm(g, ord=norm) < gtol,
            failed=failed,
            k=s.k + 1,
            nfev=s.nfev + nfev,
            x=s.x + dx,
            f=f,
            g=g,
            h=jnp.where(jnp.isfinite(rho), h, s.h),
            old_f=s.f,
            search_status=status,
        )

    s = lax.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, init)
    status = jnp.where(
        s.converged, 0, jnp.where(s.k == maxiter, 1, jnp.where(s.failed, 2 + s.search_status, -1))
    )
    return s, status


def _minimize_bfgs(fun, x0, statics, args):
    def objective(x):
        return fun(x, *args)

    return _bfgs(objective, x0, **dict(statics))


# One program per (function, options, shapes), so an eager call compiles once rather
# than dispatching the first gradient op by op.
_minimize_bfgs_compiled = jit(_minimize_bfgs, static_argnums=(0, 2))


def _run(fun, x0, statics, args):
    """Run BFGS compiled when ``fun`` and the options can key a program and ``args`` are arrays."""
    try:
        hash((fun, statics))
    except TypeError:
        return _minimize_bfgs(fun, x0, statics, args)
    dynamic = all(
        isinstance(leaf, (*ARRAY_TYPES, np.ndarray, np.generic, int, float, complex))
        for leaf in tree_leaves(args)
    )
    run = _minimize_bfgs_compiled if dynamic else _minimize_bfgs
    return run(fun, x0, statics, args)


def minimize(
    fun: Callable,
    x0: Any,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimize a scalar function of one 1-D array (jax.scipy.optimize.minimize).

    Only ``method="BFGS"`` (any case); ``options`` may set ``maxiter``,
    ``norm``, ``gtol`` and ``line_search_maxiter``. ``fun(x, *args)`` must be
    differentiable with modjax.
    """
    options = {} if options is None else dict(options)
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")

    statics = tuple(sorted(options.items()))
    s, status = _run(fun, jnp.asarray(x0), statics, args)
    return OptimizeResults(
        x=s.x,
        success=s.converged & ~s.failed,
        status=status,
        fun=s.f,
        jac=s.g,
        hess_inv=s.h,
        nfev=s.nfev,
        njev=s.nfev,
        nit=s.k,
    )
