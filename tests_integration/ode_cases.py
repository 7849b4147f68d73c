"""ODEs solved by ``jax.experimental.ode.odeint``, whose answers modjax gives as JAX 0.10.2 does.

Each case is a function of the ``jax`` module returning a JSON-able answer: solutions
and gradients as ``[dtype, values]`` pairs (complex values as ``[real, imag]``), or
the class name and message of the exception raised. ``data/ode_jax.json`` holds JAX
0.10.2's answers, recorded by running this file with a Python that has JAX::

    /work/jaxref/bin/python tests_integration/ode_cases.py tests_integration/data/ode_jax.json

``test_ode.py`` runs the same cases on modjax and compares within a tolerance: another
fusion of the same arithmetic may change last bits, and an adaptive solver may then
take a slightly different step. The cases in ``X64_CASES`` run under
``jax.enable_x64(True)``. This file imports neither library by name: the caller
passes the module in.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
from recorded_answers import raised, write_record


def _ode(jax):
    return importlib.import_module(jax.__name__ + ".experimental.ode")


def _listed(tree, jax):
    """Each leaf of ``tree`` as ``[dtype, values]``; complex values split in two."""

    def one(x):
        x = np.asarray(x)
        values = np.stack([x.real, x.imag]) if np.iscomplexobj(x) else x
        return [str(x.dtype), values.tolist()]

    return [one(x) for x in jax.tree_util.tree_leaves(tree)]


def _decay(jax):
    """dy/dt = -k y, solved by y0 exp(-k t), for two states and two rates."""
    jnp, ode = jax.numpy, _ode(jax)
    y0, k = jnp.array([1.0, 2.0]), jnp.array([0.5, 1.5])
    ts = jnp.linspace(0.0, 3.0, 7)
    ys = ode.odeint(lambda y, t, k: -k * y, y0, ts, k)
    exact = y0 * jnp.exp(-k * ts[:, None])
    return [_listed(ys, jax), float(jnp.max(jnp.abs(ys - exact)))]


def _oscillate(y, t, omega, jnp):
    """A harmonic oscillator, y = [position, velocity]."""
    return jnp.stack([y[1], -(omega**2) * y[0]])


def _oscillator(jax):
    jnp, ode = jax.numpy, _ode(jax)
    omega = jnp.float32(2.0)
    ts = jnp.linspace(0.0, 2 * math.pi, 9)
    ys = ode.odeint(lambda y, t, w: _oscillate(y, t, w, jnp), jnp.array([1.0, 0.0]), ts, omega)
    exact = jnp.stack([jnp.cos(omega * ts), -omega * jnp.sin(omega * ts)], axis=1)
    return [_listed(ys, jax), float(jnp.max(jnp.abs(ys - exact)))]


def _pytree_state(jax):
    """A dict and tuple state with float16 and float32 leaves keeps its structure and dtypes."""
    jnp, ode = jax.numpy, _ode(jax)

    def f(state, t):
        x, (v, w) = state["x"], state["vw"]
        return {"x": v, "vw": (-x, -0.5 * w)}

    y0 = {"x": jnp.array([1.0, 0.5]), "vw": (jnp.array([0.0, 1.0]), jnp.ones(3, jnp.float16))}
    ys = ode.odeint(f, y0, jnp.array([0.0, 0.5, 1.5]))
    return [_listed(ys, jax), str(jax.tree_util.tree_structure(ys))]


def _lotka_volterra(jax):
    jnp = jax.numpy

    def f(y, t, params, scale):
        prey, pred = y
        a, b = params["birth"], params["predation"]
        return jnp.stack([a * prey - b * prey * pred, scale[0] * (prey * pred - scale[1] * pred)])

    params = {"birth": jnp.float32(1.1), "predation": jnp.float32(0.4)}
    return f, jnp.array([2.0, 1.0]), jnp.linspace(0.0, 4.0, 5), params, (0.4, jnp.float32(1.0))


def _pytree_args(jax):
    """Extra arguments may be pytrees of arrays and Python scalars."""
    f, y0, ts, params, scale = _lotka_volterra(jax)
    return _listed(_ode(jax).odeint(f, y0, ts, params, scale), jax)


def _complex_state(jax):
    jnp, ode = jax.numpy, _ode(jax)
    ts = jnp.linspace(0.0, 2.0, 5)
    return _listed(ode.odeint(lambda y, t: (1j - 0.5) * y, jnp.complex64(1.0 + 0.5j), ts), jax)


def _solver_options(jax):
    """Loose tolerances, a small hmax, and mxstep running out (the last step extrapolated)."""
    jnp, ode = jax.numpy, _ode(jax)
    f, y0, ts, params, scale = _lotka_volterra(jax)
    runs = [
        ode.odeint(f, y0, ts, params, scale, rtol=1e-3, atol=1e-4),
        ode.odeint(f, y0, ts, params, scale, hmax=0.05),
        ode.odeint(f, y0, ts, params, scale, mxstep=4),
        ode.odeint(lambda y, t: -y, jnp.float32(1.0), jnp.linspace(0.0, 2.0, 5), mxstep=1),
    ]
    return [_listed(ys, jax) for ys in runs]


def _times(jax):
    """One time, a repeated time (0 / 0 in the interpolation) and float16 states."""
    jnp, ode = jax.numpy, _ode(jax)
    f = lambda y, t: -y  # noqa: E731
    g = lambda y, t: jnp.sin(t) * y  # noqa: E731
    return [
        _listed(ode.odeint(f, jnp.float32(2.0), jnp.array([0.5])), jax),
        _listed(ode.odeint(f, jnp.float32(2.0), jnp.array([0.0, 0.0, 1.0])), jax),
        _listed(ode.odeint(f, jnp.array([1.0, 3.0], jnp.float16), jnp.array([0.0, 1.0])), jax),
        _listed(ode.odeint(g, jnp.float32(1.0), jnp.array([-1.0, 2.0])), jax),
    ]


def _jit_and_vmap(jax):
    jnp, ode = jax.numpy, _ode(jax)
    ts = jnp.linspace(0.0, 2.0, 4)

    def solve(y0, omega):
        return ode.odeint(lambda y, t, w: _oscillate(y, t, w, jnp), y0, ts, omega)

    y0s = jnp.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.5]])
    omegas = jnp.array([0.5, 1.0, 3.0])
    return [
        _listed(jax.jit(solve)(y0s[0], omegas[2]), jax),
        _listed(jax.vmap(solve, (0, None))(y0s, omegas[1]), jax),
        _listed(jax.jit(jax.vmap(solve))(y0s, omegas), jax),
    ]


def _oscillator_loss(jax):
    """A loss of the oscillator's whole path, weighting later times more."""
    jnp, ode = jax.numpy, _ode(jax)

    def loss(y0, ts, omega):
        ys = ode.odeint(lambda y, t, w: _oscillate(y, t, w, jnp), y0, ts, omega)
        return jnp.sum(ys**2 * jnp.arange(1.0, 1.0 + ts.shape[0])[:, None])

    return loss, jnp.array([1.0, 0.5]), jnp.linspace(0.0, 2.0, 5), jnp.float32(2.0)


def _gradients(jax):
    """grad with respect to y0, the times and the argument, eagerly, jitted and vmapped."""
    jnp = jax.numpy
    loss, y0, ts, omega = _oscillator_loss(jax)
    grad = jax.grad(loss, argnums=(0, 1, 2))
    batch = jnp.stack([y0, y0[::-1]])
    return [
        _listed(grad(y0, ts, omega), jax),
        _listed(jax.jit(grad)(y0, ts, omega), jax),
        _listed(jax.vmap(grad, (0, None, None))(batch, ts, omega), jax),
    ]


def _gradients_of_pytrees(jax):
    """Cotangents of pytree states and pytree arguments have their structure."""
    jnp, ode = jax.numpy, _ode(jax)
    f, y0, ts, params, scale = _lotka_volterra(jax)

    def loss(state, params, scale):
        ys = ode.odeint(lambda s, t, p, c: {"y": f(s["y"], t, p, c)}, state, ts, params, scale)
        return jnp.sum(ys["y"][-1] ** 2)

    grads = jax.grad(loss, argnums=(0, 1, 2))({"y": y0}, params, scale)
    return [_listed(grads, jax), str(jax.tree_util.tree_structure(grads))]


def _gradient_of_closed_over_value(jax):
    """A traced value the dynamics close over gets its gradient through the adjoint too."""
    jnp, ode = jax.numpy, _ode(jax)
    ts = jnp.linspace(0.0, 2.0, 3)

    def final(k):
        return ode.odeint(lambda y, t: -k * y * jnp.cos(t), jnp.float32(1.0), ts)[-1]

    return [_listed(jax.grad(final)(jnp.float32(0.7)), jax),
            _listed(jax.jit(jax.grad(final))(jnp.float32(0.7)), jax)]  # fmt: skip


def _complex_gradient(jax):
    jnp, ode = jax.numpy, _ode(jax)
    ts = jnp.linspace(0.0, 1.0, 3)

    def loss(y0):
        return jnp.abs(ode.odeint(lambda y, t: (1j - 0.5) * y, y0, ts)[-1]) ** 2

    return _listed(jax.grad(loss)(jnp.complex64(1.0 + 1.0j)), jax)


def _errors(jax):
    """Arguments that are not arrays, and integer times, are refused."""
    jnp, ode = jax.numpy, _ode(jax)
    f = lambda y, t, *args: -y  # noqa: E731
    ts = jnp.linspace(0.0, 1.0, 3)
    return [
        raised(lambda: ode.odeint(f, 1.0, ts, lambda x: x)),
        raised(lambda: ode.odeint(f, 1.0, ts, "abc")),
        raised(lambda: ode.odeint(f, 1.0, ts, {"a": [1.0, object]})),
        raised(lambda: ode.odeint(f, 1.0, jnp.arange(3))),
        raised(lambda: ode.odeint(f, 1.0, ts, None, (), 2, jnp.ones(2))),
    ]


def _x64_decay(jax):
    """float64 states and times: tolerances below float32's resolution are met."""
    jnp, ode = jax.numpy, _ode(jax)
    ts = jnp.linspace(0.0, 3.0, 7)
    ys = ode.odeint(lambda y, t, k: -k * y, jnp.array([1.0, 2.0]), ts, 0.5, rtol=1e-12, atol=1e-12)
    exact = jnp.array([1.0, 2.0]) * jnp.exp(-0.5 * ts[:, None])
    return [_listed(ys, jax), float(jnp.max(jnp.abs(ys - exact))) < 1e-10]


def _x64_gradients(jax):
    jnp = jax.numpy
    loss, y0, ts, omega = _oscillator_loss(jax)
    grads = jax.grad(loss, argnums=(0, 1, 2))(y0, ts, jnp.float64(omega))
    return _listed(grads, jax)


def _x64_mixed(jax):
    """A float32 state over float64 times stays float32; dynamics promoting it to float64
    are refused (by JAX's while_loop, with a TypeError whose text is its own)."""
    jnp, ode = jax.numpy, _ode(jax)
    y0, ts = jnp.ones(2, jnp.float32), jnp.linspace(0.0, 1.0, 3)
    ys = ode.odeint(lambda y, t: -y * t.astype(y.dtype), y0, ts)
    promoted = raised(lambda: ode.odeint(lambda y, t: -y * t, y0, ts))
    return [_listed(ys, jax), promoted[0]]


CASES = {
    "decay": _decay,
    "oscillator": _oscillator,
    "pytree_state": _pytree_state,
    "pytree_args": _pytree_args,
    "complex_state": _complex_state,
    "solver_options": _solver_options,
    "times": _times,
    "jit_and_vmap": _jit_and_vmap,
    "gradients": _gradients,
    "gradients_of_pytrees": _gradients_of_pytrees,
    "gradient_of_closed_over_value": _gradient_of_closed_over_value,
    "complex_gradient": _complex_gradient,
    "errors": _errors,
}

X64_CASES = {
    "x64_decay": _x64_decay,
    "x64_gradients": _x64_gradients,
    "x64_mixed": _x64_mixed,
}


def run_x64(jax, case):
    """Run ``case`` with 64-bit types enabled."""
    with jax.enable_x64(True):
        return case(jax)


def record(jax) -> dict:
    """Every case's answer (what the data file holds)."""
    out = {name: case(jax) for name, case in CASES.items()}
    out.update({name: run_x64(jax, case) for name, case in X64_CASES.items()})
    return out


if __name__ == "__main__":
    write_record(record)
