"""``jax.experimental.ode``: ``odeint``, adaptive Dormand–Prince integration of ODEs.

``odeint(func, y0, t, *args)`` integrates ``dy/dt = func(y, t, *args)`` with the
explicit Runge–Kutta pair of Dormand and Prince (order 5, with an embedded order-4
error estimate), choosing its steps adaptively, and reads the solution at the times
``t`` off a quartic fitted to each step (dense output). The state may be any pytree:
it is raveled to one vector, integrated, and unraveled along a leading time axis.

It is differentiable in reverse mode through a ``custom_vjp`` whose backward pass
integrates the adjoint system backwards in time between consecutive output times
(Chen et al. 2018, "Neural Ordinary Differential Equations", appendix C), giving the
cotangents of ``y0``, ``t`` and ``args``; values ``func`` closes over that carry
derivatives are hoisted into ``args`` with ``closure_convert``. Every step follows
JAX 0.10.2's solver (its initial step, error norm, step-size control, interpolation
and ``mxstep``/``hmax`` handling), so results agree with JAX's up to rounding.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, NamedTuple

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.api_util import shaped_abstractify
from modjax.custom_derivatives import closure_convert
from modjax.extend.core import valid_jaxtype
from modjax.extend.linear_util import transformation2
from modjax.flatten_util import ravel_pytree
from modjax.numpy._util import promote_dtypes_inexact
from modjax.tree_util import tree_leaves, tree_map, tree_structure

__all__ = [
    "abs2",
    "fit_4th_order_polynomial",
    "initial_step_size",
    "interp_fit_dopri",
    "mean_error_ratio",
    "odeint",
    "optimal_step_size",
    "promote_dtypes_inexact",
    "ravel_first_arg",
    "ravel_first_arg_",
    "ravel_pytree",
    "runge_kutta_step",
    "tree_leaves",
    "tree_map",
]

# The Dormand–Prince tableau (Dormand & Prince 1980), in float64 and cast to the
# state's dtype where used: the stage times, the stage weights (row i gives stage
# i + 1; the last row is the 5th-order solution, so the 7th stage is f(y1)), the
# 5th-order weights and their difference from the embedded 4th-order weights.
_NODES = np.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0.0])
_ORDER5 = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_ORDER4 = np.array([1951 / 21600, 0, 22642 / 50085, 451 / 720, -12231 / 42400, 649 / 6300, 1 / 60])
_STAGES = np.zeros((6, 7))
_STAGES[0, :1] = [1 / 5]
_STAGES[1, :2] = [3 / 40, 9 / 40]
_STAGES[2, :3] = [44 / 45, -56 / 15, 32 / 9]
_STAGES[3, :4] = [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729]
_STAGES[4, :5] = [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]
_STAGES[5, :] = _ORDER5
_ERROR = _ORDER5 - _ORDER4
# Shampine's weights for the solution at the middle of a step (half of them: the
# step is dt, the midpoint dt / 2), which pin the dense-output quartic.
_MIDPOINT = (
    np.array(
        [
            6025192743 / 30085553152,
            0,
            51252292925 / 65400821598,
            -2691868925 / 45128329728,
            187940372067 / 1594534317056,
            -1776094331 / 19743644256,
            11237099 / 235043384,
        ]
    )
    / 2
)


def abs2(x):
    """Return ``|x|**2`` without a square root (``jax.experimental.ode.abs2``)."""
    if jnp.iscomplexobj(x):
        return x.real**2 + x.imag**2
    return x**2


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    """Fit the quartic through a step's ends, midpoint and end slopes
    (``jax.experimental.ode.fit_4th_order_polynomial``).

    The polynomial is in the step's relative time s in [0, 1]; return its
    coefficients ``(a, b, c, d, e)``, highest power first, as ``jnp.polyval`` takes.
    """
    dt = dt.astype(y0.dtype)
    a = -2.0 * dt * dy0 + 2.0 * dt * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * dt * dy0 - 3.0 * dt * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * dt * dy0 + dt * dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return a, b, c, dt * dy0, y0


def interp_fit_dopri(y0, y1, k, dt):
    """Return the dense-output quartic of a Dormand–Prince step as a ``(5, n)`` array
    (``jax.experimental.ode.interp_fit_dopri``)."""
    y_mid = y0 + dt.astype(y0.dtype) * jnp.dot(jnp.asarray(_MIDPOINT, y0.dtype), k)
    return jnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """Pick the first step size (``jax.experimental.ode.initial_step_size``).

    Hairer, Nørsett & Wanner, "Solving Ordinary Differential Equations I", II.4: a
    step that changes ``y0`` by about 1% in the error norm, refined by one trial
    Euler step that estimates the second derivative.
    """
    y0, f0 = promote_dtypes_inexact(y0, f0)
    scale = (atol + jnp.abs(y0) * rtol).astype(y0.dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where(
        (d1 <= 1e-15) & (d2 <= 1e-15),
        jnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)),
    )
    return jnp.minimum(100.0 * h0, h1)


def runge_kutta_step(func, y0, f0, t0, dt):
    """Take one Dormand–Prince step of ``func(y, t)`` from ``(t0, y0)`` with slope ``f0``
    (``jax.experimental.ode.runge_kutta_step``).

    Return ``(y1, f1, y1_error, k)``: the 5th-order solution, its slope (the last
    stage, reused by the next step), the difference from the embedded 4th-order
    solution, and the seven stage slopes stacked.
    """
    dtype = f0.dtype
    h = dt.astype(dtype)
    nodes = jnp.asarray(_NODES, dt.dtype)
    stages = jnp.asarray(_STAGES, dtype)

    def stage(i, k):
        y_i = y0 + h * jnp.dot(stages[i - 1], k)
        return k.at[i].set(func(y_i, t0 + dt * nodes[i - 1]))

    # A loop traces func once, not six times: smaller programs, faster compiles.
    k = lax.fori_loop(1, 7, stage, jnp.zeros((7, f0.shape[0]), dtype).at[0].set(f0))
    y1 = h * jnp.dot(jnp.asarray(_ORDER5, dtype), k) + y0
    y1_error = h * jnp.dot(jnp.asarray(_ERROR, dtype), k)
    return y1, k[-1], y1_error, k


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    """Return the RMS of the error estimate over its tolerance; a step is kept when
    this is at most 1 (``jax.experimental.ode.mean_error_ratio``)."""
    tolerance = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    ratio = error_estimate / tolerance.astype(error_estimate.dtype)
    return jnp.sqrt(jnp.mean(abs2(ratio)))


def optimal_step_size(
    last_step, mean_error_ratio, safety=0.9, ifactor=10.0, dfactor=0.2, order=5.0
):
    """Scale the last step by the error ratio's ``-1/order`` power, bounded
    (``jax.experimental.ode.optimal_step_size``).

    A kept step (ratio below 1) never shrinks the next one; a rejected step shrinks
    it by at most ``dfactor``; nothing grows it by more than ``ifactor``.
    """
    shrink_bound = jnp.where(mean_error_ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(
        ifactor, jnp.maximum(mean_error_ratio ** (-1.0 / order) * safety, shrink_bound)
    )
    return jnp.where(mean_error_ratio == 0, last_step * ifactor, last_step * factor)


def ravel_first_arg(f, unravel, debug_info=None):
    """Return ``f`` taking and returning its first argument's pytree as one flat vector
    (``jax.experimental.ode.ravel_first_arg``).

    ``debug_info`` (JAX's tracing metadata) is accepted and unused: modjax's traces
    name the function themselves.
    """
    del debug_info

    def flat_f(y_flat, *args):
        out_flat, _ = ravel_pytree(f(unravel(y_flat), *args))
        return out_flat

    return flat_f


def _ravel_first_arg_layer(f, unravel, y_flat, *args):
    out_flat, _ = ravel_pytree(f(unravel(y_flat), *args))
    return out_flat


#: ``ravel_first_arg_(fun, unravel)``: ``ravel_first_arg`` as a layer of the WrappedFun
#: ``fun`` (JAX's ``lu.transformation2`` of the same name).
ravel_first_arg_ = transformation2(_ravel_first_arg_layer)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=jnp.inf, hmax=jnp.inf):
    """Integrate ``dy/dt = func(y, t, *args)`` from ``y0`` (``jax.experimental.ode.odeint``).

    Adaptive Dormand–Prince (RK45) steps with local error tolerances ``rtol`` and
    ``atol``, at most ``mxstep`` steps (kept or rejected) between two output times
    and steps no longer than ``hmax``. ``y0`` is an array or a pytree of arrays and
    ``func`` returns the same structure; ``t`` is a float array of increasing times;
    ``args`` are arrays, scalars or pytrees of them. Return the solution at each time
    of ``t``: ``y0``'s structure with a new leading axis of length ``len(t)``. When
    ``mxstep`` runs out before a time is reached, its value is the last step's
    polynomial extrapolated to it, as in JAX. Reverse-mode derivatives with respect
    to ``y0``, ``t`` and ``args`` solve the adjoint ODE backwards in time.
    """
    for leaf in tree_leaves(args):
        if not valid_jaxtype(leaf):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {leaf}."
            )
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = _closure_convert(func, y0, t[0], *args)
    return _odeint_jitted(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


# Converted functions of closure-free ``func``s by function, argument types and
# trace context: the jitted integrator keys its cache on the function it is given,
# and closure_convert makes a new one on each call.
_conversions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _closure_convert(func, *example_args):
    """closure_convert ``func``, handing back the same function for the same types."""
    converted, consts = closure_convert(func, *example_args)
    if consts:  # it closes over traced values: a conversion of this trace only
        return converted, consts
    key = (
        tree_structure(example_args),
        tuple(shaped_abstractify(x) for x in tree_leaves(example_args)),
        modjax.config.trace_context(),
    )
    try:
        return _conversions.setdefault(func, {}).setdefault(key, converted), consts
    except TypeError:  # a callable that cannot be weakly referenced or hashed
        return converted, consts


@functools.partial(modjax.jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_jitted(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """Integrate the raveled state and unravel each output time's row."""
    y0_flat, unravel = ravel_pytree(y0)
    ys = _odeint(ravel_first_arg(func, unravel), rtol, atol, mxstep, hmax, y0_flat, ts, *args)
    return modjax.vmap(unravel)(ys)


class _Step(NamedTuple):
    """The solver's state between steps: the last kept step and the next step size."""

    y: Any  # the solution at t
    f: Any  # its slope
    t: Any
    dt: Any  # the size of the next step to try
    last_t: Any  # where the last kept step began
    coeffs: Any  # the last kept step's dense-output quartic


def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The solution (flat ``y0``, one row per time of ``ts``) of the raveled problem."""

    def f(y, t):
        return func(y, t, *args)

    def advance(step, target_t):
        """Step until ``target_t`` is passed, then interpolate the solution there."""

        def go_on(state):
            count, step = state
            return (step.t < target_t) & (count < mxstep) & (step.dt > 0)

        def try_step(state):
            count, s = state
            y1, f1, error, k = runge_kutta_step(f, s.y, s.f, s.t, s.dt)
            ratio = mean_error_ratio(error, rtol, atol, s.y, y1)
            # The next size comes from this attempt's error, kept or not.
            dt = jnp.clip(optimal_step_size(s.dt, ratio), min=0.0, max=hmax)
            kept = _Step(y1, f1, s.t + s.dt, dt, s.t, interp_fit_dopri(s.y, y1, k, s.dt))
            refused = s._replace(dt=dt)
            chosen = tree_map(functools.partial(jnp.where, ratio <= 1.0), kept, refused)
            return count + 1, chosen

        _, step = lax.while_loop(go_on, try_step, (0, step))
        s = (target_t - step.last_t) / (step.t - step.last_t)
        return step, jnp.polyval(step.coeffs, s.astype(step.coeffs.dtype))

    f0 = f(y0, ts[0])
    dt = jnp.clip(initial_step_size(f, ts[0], y0, 4, rtol, atol, f0), min=0.0, max=hmax)
    # Before the first kept step the "quartic" is y0 in every coefficient, as in JAX.
    start = _Step(y0, f0, ts[0], dt, ts[0], jnp.array([y0] * 5))
    _, ys = lax.scan(advance, start, ts[1:])
    return jnp.concatenate((y0[None], ys))


@functools.partial(modjax.custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The raveled solve, differentiated by the adjoint method."""
    # The tableau's dots with the stages must not lose bits to a fast matmul mode
    # (TPU's bfloat16 passes): tolerances near float32's resolution depend on them.
    with modjax.default_matmul_precision("highest"):
        return _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """Solve, keeping the solution, times and arguments for the backward pass."""
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, residuals, ys_bar):
    """Cotangents of ``(y0, ts, *args)``: the adjoint ODE solved backwards in time.

    Between consecutive output times the state, its cotangent ``y_bar``, the
    cotangent of ``t[0]`` and those of ``args`` evolve together; the integration
    runs in negated time so that the (increasing-time) solver goes backwards.
    Each output time's own cotangent is its slope dotted with its output's cotangent.
    """
    ys, ts, args = residuals
    with modjax.default_matmul_precision("highest"):
        return _adjoint(func, rtol, atol, mxstep, hmax, ys, ts, args, ys_bar)


def _adjoint(func, rtol, atol, mxstep, hmax, ys, ts, args, ys_bar):
    """The backward pass's body: one adjoint solve per interval, last interval first."""

    def augmented(state, minus_t, *args):
        y, y_bar, *_ = state
        y_dot, pullback = modjax.vjp(func, y, -minus_t, *args)
        return (-y_dot, *pullback(y_bar))

    def back_one_interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        # Time is not complex even when the state is.
        t_bar = jnp.dot(func(ys[i], ts[i], *args), ys_bar[i]).real
        t0_bar = t0_bar - t_bar
        state = (ys[i], y_bar, t0_bar, args_bar)
        interval = jnp.array([-ts[i], -ts[i - 1]])
        opts = {"rtol": rtol, "atol": atol, "mxstep": mxstep, "hmax": hmax}
        _, y_bar, t0_bar, args_bar = tree_map(
            lambda path: path[1], odeint(augmented, state, interval, *args, **opts)
        )
        return (y_bar + ys_bar[i - 1], t0_bar, args_bar), t_bar

    start = (ys_bar[-1], 0.0, tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), ts_bar = lax.scan(
        back_one_interval, start, jnp.arange(len(ts) - 1, 0, -1)
    )
    return (y_bar, jnp.concatenate([jnp.array([t0_bar]), ts_bar[::-1]]), *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
