"""Unconstrained minimization in scipy.optimize's names (the counterpart of jax.scipy.optimize).

``minimize`` has JAX 0.10.2's two methods, with its iterations and its numbers:

- ``"BFGS"``: Nocedal & Wright's algorithm 6.1, one ``lax.while_loop`` whose
  steps come from the strong-Wolfe line search below, and whose inverse
  Hessian is updated by the BFGS formula unless the curvature ``y.s`` is not
  finite.
- ``"l-bfgs-experimental-do-not-rely-on-this"``: the limited-memory variant
  (algorithm 7.5): the two-loop recursion over the last ``maxcor`` steps,
  each line search starting at the unit step.

The line search is Nocedal & Wright's algorithm 3.5 (double the step until it
brackets a Wolfe point) with the zoom of algorithm 3.6 (cubic, quadratic or
bisection trials). It follows JAX's choices step for step, quirks included,
so that ``x``, ``fun``, ``nit``, ``nfev`` and ``status`` are JAX's: the first
trial is scipy's ``2.02 (f - f_prev) / phi'(0)`` capped at 1; a zoom whose
bracket has its low end on the right, or is narrower than 1e-5 (1e-10 in 64
bits), or has taken 30 trials fails; a failed zoom reports the unit step with
the value at its bracket's low end and the gradient at the start, and BFGS then
stops (status 3); in fewer than 64 bits steps shorter than 1e-8 are lengthened
to 1e-8. The rounding is JAX's too: the same operations in the same order, the
first evaluation op by op and the iterations compiled, as JAX runs them.

As in JAX, ``tol`` is accepted and ignored, and the result is not
differentiable through the iterations. Everything is loops of arrays, so
``minimize`` runs under ``jit`` and ``vmap``; an eager call compiles one
program per (function, method, options, shapes).
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

_LBFGS_METHOD = "l-bfgs-experimental-do-not-rely-on-this"


class OptimizeResults(NamedTuple):
    """The result of :func:`minimize` (jax.scipy.optimize.OptimizeResults).

    BFGS's ``status`` is 0 (converged), 1 (``maxiter`` reached), 3 (a zoom of
    the line search failed), 5 (the line search ran out of iterations) or -1;
    L-BFGS's is 0 (converged), 1 (``maxiter``), 2 (``maxfun``), 3
    (``maxgrad``), 4 (the decrease fell below ``ftol``) or 5 (the line search
    failed), and its ``hess_inv`` is None.
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


# JAX's norm is one compiled program even when called eagerly; its fused sum of
# squares rounds differently from one computed op by op.
_norm = jit(jnp.linalg.norm, static_argnames=("ord",))


def _low_precision(dtype) -> bool:
    return np.finfo(dtype).bits < 64


# --- the line search --------------------------------------------------------------------


class _Phi(NamedTuple):
    """``phi(t) = fun(x + t p)`` and the strong Wolfe conditions at ``t``."""

    fun: Callable
    x: Any
    p: Any
    f0: Any  # phi(0)
    d0: Any  # phi'(0)
    c1: float
    c2: float

    def __call__(self, t):
        """``phi(t)``, ``phi'(t)`` and the gradient at ``x + t p``."""
        f, g = value_and_grad(self.fun)(self.x + t.astype(self.p.dtype) * self.p)
        return f.astype(self.f0.dtype), jnp.real(_dot(g, self.p)).astype(self.d0.dtype), g

    def too_high(self, t, f):
        """Sufficient decrease fails: ``t`` is past a point of a Wolfe step."""
        return f > self.f0 + self.c1 * t * self.d0

    def flat(self, d):
        """The curvature condition holds: ``phi`` is flat enough at ``t``."""
        return jnp.abs(d) <= -self.c2 * self.d0


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any  # trials so far
    a_lo: Any  # the end with the lower phi (the slope there points into the bracket)
    f_lo: Any
    d_lo: Any
    a_hi: Any
    f_hi: Any
    a_rec: Any  # the previous a_hi (or a_lo), the cubic's third point
    f_rec: Any
    a_star: Any
    f_star: Any
    g_star: Any
    nfev: Any


def _cubic_min(a, fa, da, b, fb, c, fc):
    """The minimizer of the cubic through ``(a, fa)`` (slope ``da``), ``(b, fb)``, ``(c, fc)``."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    m = jnp.stack([jnp.stack([dc**2, -(db**2)]), jnp.stack([-(dc**3), db**3])])
    r = jnp.stack([fb - fa - da * db, fc - fa - da * dc])
    k3, k2 = _dot(m, r) / denom
    return a + (-k2 + jnp.sqrt(k2 * k2 - 3.0 * k3 * da)) / (3.0 * k3)


def _quad_min(a, fa, da, b, fb):
    """The minimizer of the parabola through ``(a, fa)`` with slope ``da`` and ``(b, fb)``."""
    db = b - a
    k2 = (fb - fa - da * db) / (db**2)
    return a - da / (2.0 * k2)


def _zoom_trial(z: _Zoom):
    """The next trial step: the cubic's minimizer if well inside the bracket, else the
    parabola's, else the midpoint. The margins are signed by ``a_hi - a_lo`` as in
    JAX, so a bracket whose low end lies right of its high end takes the midpoint."""
    width = z.a_hi - z.a_lo
    left, right = jnp.minimum(z.a_hi, z.a_lo), jnp.maximum(z.a_hi, z.a_lo)
    # A NaN cubic (no real minimizer) fails both comparisons.
    cubic = _cubic_min(z.a_lo, z.f_lo, z.d_lo, z.a_hi, z.f_hi, z.a_rec, z.f_rec)
    use_cubic = (z.j > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
    quad = _quad_min(z.a_lo, z.f_lo, z.d_lo, z.a_hi, z.f_hi)
    use_quad = ~use_cubic & (quad > left + 0.1 * width) & (quad < right - 0.1 * width)
    middle = (z.a_lo + z.a_hi) / 2.0
    return jnp.where(use_cubic, cubic, jnp.where(use_quad, quad, middle))


def _zoom_step(phi: _Phi, z: _Zoom) -> _Zoom:
    width = z.a_hi - z.a_lo
    smallest = 1e-5 if _low_precision(width.dtype) else 1e-10
    # The failure is noticed here but the trial below still runs (and may succeed). The
    # width is signed: a bracket with its low end on the right fails at once.
    failed = z.failed | (width <= smallest)
    a = _zoom_trial(z)
    f, d, g = phi(a)
    to_hi = phi.too_high(a, f) | (f >= z.f_lo)
    star = phi.flat(d) & ~to_hi
    to_lo = ~to_hi & ~star
    # Moving lo to a past the slope's zero: the old lo becomes hi.
    flip = to_lo & (d * (z.a_hi - z.a_lo) >= 0)
    new_hi = to_hi | flip
    return _Zoom(
        done=z.done | star,
        failed=failed | (z.j + 1 >= 30),
        j=z.j + 1,
        a_lo=jnp.where(to_lo, a, z.a_lo),
        f_lo=jnp.where(to_lo, f, z.f_lo),
        d_lo=jnp.where(to_lo, d, z.d_lo),
        a_hi=jnp.where(to_hi, a, jnp.where(flip, z.a_lo, z.a_hi)),
        f_hi=jnp.where(to_hi, f, jnp.where(flip, z.f_lo, z.f_hi)),
        a_rec=jnp.where(new_hi, z.a_hi, jnp.where(to_lo, z.a_lo, z.a_rec)),
        f_rec=jnp.where(new_hi, z.f_hi, jnp.where(to_lo, z.f_lo, z.f_rec)),
        a_star=jnp.where(star, a, z.a_star),
        f_star=jnp.where(star, f, z.f_star),
        g_star=jnp.where(star, g, z.g_star),
        nfev=z.nfev + 1,
    )


def _unsettled(state_type, **fields):
    """A loop state of ``state_type`` that has decided nothing and evaluated nothing yet."""
    return state_type(
        done=jnp.asarray(False), failed=jnp.asarray(False), nfev=jnp.asarray(0), **fields
    )


def _zoom(phi: _Phi, lo, hi, g0, skip) -> _Zoom:
    """Shrink the bracket ``[lo, hi]`` (each ``(a, phi(a), phi'(a))``) to a strong-Wolfe step.

    Until one is found the answer is the unit step with ``lo``'s value and the
    gradient ``g0`` at ``t = 0`` (what a failed zoom reports). ``skip`` runs no trial.
    """
    (a_lo, f_lo, d_lo), (a_hi, f_hi, _) = lo, hi
    init = _unsettled(
        _Zoom,
        j=jnp.asarray(0),
        a_lo=a_lo,
        f_lo=f_lo,
        d_lo=d_lo,
        a_hi=a_hi,
        f_hi=f_hi,
        a_rec=(a_lo + a_hi) / 2.0,
        f_rec=(f_lo + f_hi) / 2.0,
        a_star=jnp.ones((), a_lo.dtype),
        f_star=f_lo,
        g_star=g0,
    )
    return lax.while_loop(lambda z: ~z.done & ~skip & ~z.failed, lambda z: _zoom_step(phi, z), init)


class _Search(NamedTuple):
    done: Any
    failed: Any
    i: Any  # the trial number, from 1
    a_prev: Any  # the previous trial and its phi, phi'
    f_prev: Any
    d_prev: Any
    a_star: Any
    f_star: Any
    g_star: Any
    nfev: Any


class _SearchResult(NamedTuple):
    failed: Any
    status: Any  # 0: found, 1: its zoom failed, 3: out of iterations
    a: Any
    f: Any
    g: Any
    nfev: Any  # gradients too: each evaluation is both


def _search_step(phi: _Phi, start, g0, s: _Search) -> _Search:
    # Scipy's doubling, with no largest step.
    a = jnp.where(s.i == 1, start, s.a_prev * 2.0)
    f, d, g = phi(a)
    here = (a, f, d)
    prev = (s.a_prev, s.f_prev, s.d_prev)
    # Too long (or no better than the previous trial): a Wolfe step lies in [prev, a].
    past = phi.too_high(a, f) | ((f >= s.f_prev) & (s.i > 1))
    accept = phi.flat(d) & ~past
    # Uphill at a: one lies in [a, prev] (a being the lower end).
    uphill = (d >= 0) & ~past & ~accept
    lo = tuple(jnp.where(past, p, h) for p, h in zip(prev, here, strict=True))
    hi = tuple(jnp.where(past, h, p) for p, h in zip(prev, here, strict=True))
    zoomed = past | uphill
    z = _zoom(phi, lo, hi, g0, ~zoomed)
    return _Search(
        done=s.done | zoomed | accept,
        failed=s.failed | (zoomed & z.failed),
        i=s.i + 1,
        a_prev=a,
        f_prev=f,
        d_prev=d,
        a_star=jnp.where(accept, a, jnp.where(zoomed, z.a_star, s.a_star)),
        f_star=jnp.where(accept, f, jnp.where(zoomed, z.f_star, s.f_star)),
        g_star=jnp.where(accept, g, jnp.where(zoomed, z.g_star, s.g_star)),
        nfev=s.nfev + 1 + z.nfev,
    )


def _line_search(fun, x, p, f0, g0, old_f=None, maxiter=20, c1=1e-4, c2=0.9) -> _SearchResult:
    """A step along ``p`` from ``x`` meeting the strong Wolfe conditions, JAX's way.

    ``f0``, ``g0`` are ``fun`` and its gradient at ``x``; ``old_f``, the value
    before the previous step, sets the first trial (else it is 1).
    """
    d0 = jnp.real(_dot(g0, p))
    phi = _Phi(fun, x, p, f0, d0, c1, c2)
    step_dtype = d0.dtype
    if old_f is None:
        start = jnp.ones((), step_dtype)
    else:
        start = (1.01 * 2) * (f0 - old_f) / d0
        start = jnp.where(start > 1, 1.0, start).astype(step_dtype)
    zero = jnp.zeros((), step_dtype)
    init = _unsettled(
        _Search,
        i=jnp.asarray(1),
        a_prev=zero,
        f_prev=f0,
        d_prev=d0,
        a_star=zero,
        f_star=f0,
        g_star=g0,
    )
    s = lax.while_loop(
        lambda s: ~s.done & (s.i <= maxiter) & ~s.failed,
        lambda s: _search_step(phi, start, g0, s),
        init,
    )
    status = jnp.where(s.failed, 1, jnp.where(s.i > maxiter, 3, 0))
    a = s.a_star
    if _low_precision(step_dtype):
        # A vanishing step would stall the iteration in 32 bits: floor it at 1e-8.
        a = jnp.where(jnp.abs(a) < 1e-8, jnp.sign(a) * 1e-8, a)
    return _SearchResult(s.failed | ~s.done, status, a, s.f_star, s.g_star, s.nfev)


# --- BFGS --------------------------------------------------------------------------------


class _BFGS(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    h: Any  # the inverse Hessian estimate
    old_f: Any  # f before the last step (the line search's first trial uses it)
    search_status: Any


def _bfgs_update(h, s, y):
    """The BFGS update of the inverse Hessian ``h`` by the step ``s`` and gradient change ``y``
    (kept when ``1 / y.s`` is not finite)."""
    rho = jnp.reciprocal(_dot(y, s))
    w = jnp.eye(s.shape[0], dtype=rho.dtype) - rho * (s[:, None] * y[None, :])
    # w h w^T as JAX's einsum contracts it, (w h)^T first, whose rounding the later
    # iterations inherit.
    contract = (((0,), (1,)), ((), ()))
    wh_t = lax.dot_general(h, w, contract, precision=lax.Precision.HIGHEST)
    whw = lax.dot_general(wh_t, w, contract, precision=lax.Precision.HIGHEST)
    new = whw + rho * s[:, None] * s[None, :]
    return jnp.where(jnp.isfinite(rho), new, h)


def _bfgs_step(fun, norm, gtol, line_search_maxiter, s: _BFGS) -> _BFGS:
    p = -_dot(s.h, s.g)
    ls = _line_search(fun, s.x, p, s.f, s.g, s.old_f, line_search_maxiter)
    dx = ls.a * p
    return _BFGS(
        converged=_norm(ls.g, ord=norm) < gtol,
        failed=ls.failed,
        k=s.k + 1,
        nfev=s.nfev + ls.nfev,
        x=s.x + dx,
        f=ls.f,
        g=ls.g,
        h=_bfgs_update(s.h, dx, ls.g - s.g),
        old_f=s.f,
        search_status=ls.status,
    )


def _bfgs_start(fun, x0, maxiter, norm, gtol, line_search_maxiter) -> _BFGS:
    f0, g0 = value_and_grad(fun)(x0)
    return _BFGS(
        converged=_norm(g0, ord=norm) < gtol,
        failed=jnp.asarray(False),
        k=jnp.asarray(0),
        nfev=jnp.asarray(1),
        x=x0,
        f=f0,
        g=g0,
        h=jnp.eye(x0.shape[0], dtype=x0.dtype),
        # scipy's guess of a previous value, making the first trial step 1.01 |g| / |p|.
        old_f=f0 + _norm(g0) / 2,
        search_status=jnp.asarray(0),
    )


def _bfgs_loop(fun, init: _BFGS, maxiter, norm, gtol, line_search_maxiter) -> OptimizeResults:
    s = lax.while_loop(
        lambda s: ~s.converged & ~s.failed & (s.k < maxiter),
        lambda s: _bfgs_step(fun, norm, gtol, line_search_maxiter, s),
        init,
    )
    status = jnp.where(
        s.converged,
        0,
        jnp.where(s.k == maxiter, 1, jnp.where(s.failed, 2 + s.search_status, -1)),
    )
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


# --- L-BFGS ------------------------------------------------------------------------------


class _LBFGS(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    s_history: Any  # the last maxcor steps, oldest first (zeros before they exist)
    y_history: Any  # and their gradient changes
    rho_history: Any  # 1 / Re(y.s)
    gamma: Any  # the initial inverse Hessian's scale, Re(y.s) / |y|^2
    status: Any


def _two_loop(s: _LBFGS):
    """The L-BFGS direction ``-H g`` from the stored steps (the two-loop recursion)."""
    size = s.rho_history.shape[0]
    used = jnp.minimum(s.k, size)
    dtype = s.rho_history.dtype

    def newest_first(j, carry):
        q, alphas = carry
        i = size - 1 - j
        alpha = s.rho_history[i] * jnp.real(_dot(jnp.conj(s.s_history[i]), q)).astype(dtype)
        return q - alpha * jnp.conj(s.y_history[i]), alphas.at[i].set(alpha)

    q, alphas = lax.fori_loop(
        0, used, newest_first, (-jnp.conj(s.g), jnp.zeros_like(s.rho_history))
    )

    def oldest_first(j, q):
        i = size - used + j
        beta = s.rho_history[i] * jnp.real(_dot(s.y_history[i], q)).astype(dtype)
        return q + (alphas[i] - beta) * s.s_history[i]

    return lax.fori_loop(0, used, oldest_first, s.gamma * q)


def _remember(history, new):
    """Drop the oldest entry of ``history`` and append ``new``."""
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


def _lbfgs_status(s: _LBFGS, f_new, ls_failed, limits):
    """Why L-BFGS stops after this step (0: it goes on), the later reasons winning."""
    maxiter, maxfun, maxgrad, ftol = limits
    status = jnp.where(s.f - f_new < ftol, 4, 0)
    # The counts before this step's line search, as in JAX.
    if maxgrad is not None:
        status = jnp.where(s.nfev >= maxgrad, 3, status)
    if maxfun is not None:
        status = jnp.where(s.nfev >= maxfun, 2, status)
    if maxiter is not None:
        status = jnp.where(s.k >= maxiter, 1, status)
    return jnp.where(ls_failed, 5, status)


def _lbfgs_step(fun, norm, gtol, maxls, limits, s: _LBFGS) -> _LBFGS:
    p = _two_loop(s)
    ls = _line_search(fun, s.x, p, s.f, s.g, maxiter=maxls)
    dx = ls.a.astype(p.dtype) * p
    dg = ls.g - s.g
    curvature = jnp.real(_dot(dg, dx))
    status = _lbfgs_status(s, ls.f, ls.failed, limits)
    converged = _norm(ls.g, ord=norm) < gtol
    return _LBFGS(
        converged=converged,
        failed=(status > 0) & ~converged,
        k=s.k + 1,
        nfev=s.nfev + ls.nfev,
        x=(s.x + dx).astype(s.x.dtype),
        f=ls.f.astype(s.f.dtype),
        g=ls.g.astype(s.g.dtype),
        s_history=_remember(s.s_history, dx),
        y_history=_remember(s.y_history, dg),
        rho_history=_remember(s.rho_history, jnp.reciprocal(curvature).astype(dg.dtype)),
        gamma=(curvature / jnp.real(_dot(jnp.conj(dg), dg))).astype(s.g.dtype),
        status=jnp.where(converged, 0, status),
    )


def _lbfgs_start(fun, x0, maxiter, norm, maxcor, ftol, gtol, maxfun, maxgrad, maxls) -> _LBFGS:
    n = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)
    return _LBFGS(
        # Not tested at x0: the first step is always taken.
        converged=jnp.asarray(False),
        failed=jnp.asarray(False),
        k=jnp.asarray(0),
        nfev=jnp.asarray(1),
        x=x0,
        f=f0,
        g=g0,
        s_history=jnp.zeros((maxcor, n), x0.dtype),
        y_history=jnp.zeros((maxcor, n), x0.dtype),
        rho_history=jnp.zeros((maxcor,), x0.dtype),
        gamma=jnp.ones((), g0.dtype),
        status=jnp.asarray(0),
    )


def _lbfgs_loop(
    fun, init: _LBFGS, maxiter, norm, maxcor, ftol, gtol, maxfun, maxgrad, maxls
) -> OptimizeResults:
    limits = (maxiter, maxfun, maxgrad, ftol)
    s = lax.while_loop(
        lambda s: ~s.converged & ~s.failed,
        lambda s: _lbfgs_step(fun, norm, gtol, maxls, limits, s),
        init,
    )
    return OptimizeResults(
        x=s.x,
        success=s.converged & ~s.failed,
        status=s.status,
        fun=s.f,
        jac=s.g,
        hess_inv=None,
        nfev=s.nfev,
        njev=s.nfev,
        nit=s.k,
    )


# --- minimize ----------------------------------------------------------------------------


class _Method(NamedTuple):
    start: Callable  # (fun, x0, **settings) -> the first state
    loop: Callable  # (fun, state, **settings) -> OptimizeResults
    defaults: dict[str, Any]  # the options' defaults (maxiter None: 200 per variable)
    jax_function: str  # JAX's solver, as its errors name it


_METHODS = {
    "bfgs": _Method(
        _bfgs_start,
        _bfgs_loop,
        {"maxiter": None, "norm": np.inf, "gtol": 1e-5, "line_search_maxiter": 10},
        "jax._src.scipy.optimize.bfgs.minimize_bfgs",
    ),
    _LBFGS_METHOD: _Method(
        _lbfgs_start,
        _lbfgs_loop,
        {
            "maxiter": None,
            "norm": np.inf,
            "maxcor": 10,
            "ftol": 2.220446049250313e-09,
            "gtol": 1e-05,
            "maxfun": None,
            "maxgrad": None,
            "maxls": 20,
        },
        "jax._src.scipy.optimize._lbfgs._minimize_lbfgs",
    ),
}


def _check_options(method: str, options) -> None:
    """Refuse what JAX's ``solver(fun, x0, **options)`` call refuses, with Python's words."""
    qualified = _METHODS[method].jax_function
    name = qualified.rsplit(".", 1)[1]
    if not isinstance(options, Mapping):
        raise TypeError(
            f"{qualified}() argument after ** must be a mapping, not {type(options).__name__}"
        )
    for key in options:
        if key in ("fun", "x0"):
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        if key not in _METHODS[method].defaults:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")


def _settings(method: str, options, n: int) -> tuple:
    """Every option's value, sorted by name: a key of the compiled programs. (Passing
    the numbers in instead would spare compiles but changes XLA's fusion of the loop,
    and so its rounding, away from JAX's, whose options are constants.)"""
    settings = {**_METHODS[method].defaults, **options}
    # L-BFGS counts iterations only when no other limit is set.
    unlimited = settings.get("maxfun") is None and settings.get("maxgrad") is None
    if settings["maxiter"] is None and (method == "bfgs" or unlimited):
        settings["maxiter"] = n * 200
    return tuple(sorted(settings.items()))


def _check_x0(method: str, x0) -> None:
    """Refuse an ``x0`` that is not a 1-D array with the error JAX's solver meets first."""
    if method == _LBFGS_METHOD:
        len(x0)  # noqa: B018 - a scalar's TypeError ("... has no len()")
        if not hasattr(x0, "dtype"):
            raise TypeError(f"Cannot determine dtype of {x0}")
        if np.ndim(x0) > 1:
            raise ValueError(
                "Cannot broadcast to shape with fewer dimensions: "
                f"arr_shape={tuple(x0.shape[1:])} shape=()"
            )
        return
    if not hasattr(x0, "shape"):
        raise AttributeError(f"'{type(x0).__name__}' object has no attribute 'shape'")
    shape = tuple(x0.shape)
    if not shape:
        raise IndexError("tuple index out of range")
    if len(shape) > 2:
        raise ValueError(
            f"Improper number of axes for norm: axis={tuple(range(len(shape)))}. Pass one "
            "axis to compute a vector-norm, or two axes to compute a matrix-norm."
        )
    if len(shape) == 2 and shape[0] != shape[1]:
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, "
            f"got ({shape[1]},) and ({shape[0]},)."
        )
    if len(shape) == 2:
        raise TypeError(
            "cond_fun must return a boolean scalar, but got output type(s) "
            f"[ShapedArray(bool[{shape[0]},{shape[1]}])]."
        )


def _loop(fun, method, statics, init, args):
    def objective(x):
        return fun(x, *args)

    return _METHODS[method].loop(objective, init, **dict(statics))


# One program per (function, method, options, shapes). The first evaluation stays
# outside it, run op by op when minimize is: so does JAX, and a fused one may round
# differently (contracted multiply-adds), which the iterations can amplify.
_loop_compiled = jit(_loop, static_argnums=(0, 1, 2))


def _run(fun, x0, method, statics, args):
    """Start, then iterate compiled when ``fun`` and the options can key a program and
    ``args`` are arrays."""

    def objective(x):
        return fun(x, *args)

    init = _METHODS[method].start(objective, x0, **dict(statics))
    try:
        hash((fun, statics))
    except TypeError:
        return _loop(fun, method, statics, init, args)
    dynamic = all(
        isinstance(leaf, (*ARRAY_TYPES, np.ndarray, np.generic, int, float, complex))
        for leaf in tree_leaves(args)
    )
    run = _loop_compiled if dynamic else _loop
    return run(fun, method, statics, init, args)


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

    ``fun(x, *args)`` must be differentiable with modjax. ``method`` (any
    case) is ``"BFGS"``, whose ``options`` are ``maxiter`` (default 200 per
    variable), ``norm`` (of the gradient for the convergence test, default
    inf), ``gtol`` (1e-5) and ``line_search_maxiter`` (10); or
    ``"l-bfgs-experimental-do-not-rely-on-this"``, whose options are
    ``maxiter``, ``norm``, ``maxcor`` (10), ``ftol`` (2.2e-9), ``gtol``,
    ``maxfun``, ``maxgrad`` and ``maxls`` (20). ``tol`` is ignored, as in
    JAX. The iterations, counts and statuses are JAX 0.10.2's.
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    key = method.lower()
    if key not in _METHODS:
        raise ValueError(f"Method {method} not recognized")
    _check_options(key, options)
    _check_x0(key, x0)
    x0 = jnp.asarray(x0)
    return _run(fun, x0, key, _settings(key, options, x0.shape[0]), args)
