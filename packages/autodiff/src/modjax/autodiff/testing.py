"""Numerical checks of derivatives, for authors of primitives and rules (jax.test_util).

``check_grads`` compares forward-mode JVPs with central finite differences and
reverse-mode VJPs with finite-difference JVPs by the dot-product test
``<v, J t> == <J^T v, t>``, each in one random direction, and recursively the
derivatives of the derivatives up to ``order``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore.tree_util import tree_flatten, tree_map

from . import api

__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp", "EPS"]

EPS = 1e-4

# Tolerances per dtype name for derivative checks (absolute and relative), as JAX's.
# Keyed by name so that the table does not load the narrow dtypes (bfloat16).
_default_tolerance: dict[str, float] = {
    "float16": 1e-2,
    "bfloat16": 1e-1,
    "float32": 2e-3,
    "float64": 1e-5,
    "complex64": 1e-3,
    "complex128": 1e-5,
}


def _dtype(x) -> np.dtype:
    """The dtype the checks perturb ``x`` in, as JAX's: its own, uncanonicalized (a Python
    float's is float64: the perturbed value reaches the function as a Python float)."""
    if _is_python_scalar(x):
        return np.dtype(type(x))
    return np.dtype(dtypes.dtype(x))


def _tolerance(dtype: np.dtype, tol) -> float:
    if tol is not None and not isinstance(tol, dict):
        return tol
    table = dict(_default_tolerance)
    if tol:
        table.update({dtypes.np_dtype(k).name: v for k, v in tol.items()})
    default = 0.0 if not dtypes.issubdtype(dtype, np.inexact) else 1e-5
    return table.get(dtypes.np_dtype(dtype).name, default)


def _assert_close(x, y, atol, rtol, err_msg: str) -> None:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
        assert x.shape == y.shape, err_msg
        return
    if x.shape != y.shape:
        raise AssertionError(f"{err_msg}: shapes differ, {x.shape} vs {y.shape}")
    a = max(_tolerance(x.dtype, atol), _tolerance(y.dtype, atol))
    r = max(_tolerance(x.dtype, rtol), _tolerance(y.dtype, rtol))
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(
            x, y, atol=a * max(x.size, 1), rtol=r * max(y.size, 1), err_msg=err_msg
        )


def _check_close(xs, ys, atol, rtol, err_msg: str) -> None:
    xs_flat, xt = tree_flatten(xs)
    ys_flat, yt = tree_flatten(ys)
    if xt != yt:
        raise AssertionError(f"{err_msg}: structures differ, {xt} vs {yt}")
    for x, y in zip(xs_flat, ys_flat, strict=True):
        _assert_close(x, y, atol, rtol, err_msg)


def _is_python_scalar(x) -> bool:
    return isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic)


def _perturbable(x) -> bool:
    return dtypes.issubdtype(_dtype(x), np.inexact)


def _rand_like(rng: np.random.RandomState, x):
    """A random tangent like ``x`` (``float0`` zeros for integer and boolean values)."""
    dt = _dtype(x)
    if not dtypes.issubdtype(dt, np.inexact):
        return np.zeros(np.shape(x), dtypes.float0)
    out = np.asarray(rng.randn(*np.shape(x)), dtype=dt)
    if dtypes.issubdtype(dt, np.complexfloating):
        out = out + dt.type(1j) * np.asarray(rng.randn(*np.shape(x)), dtype=dt)
    return out.item() if _is_python_scalar(x) else out


def _axpy(a: float, t, x):
    """``x + a * t`` leaf by leaf, as JAX's: ``a * t`` in ``t``'s dtype, the sum in
    ``x``'s; integer leaves are left alone, Python scalars stay Python scalars."""

    def leaf(xi, ti):
        if not _perturbable(xi):
            return xi
        step_dtype = _dtype(ti)
        step = np.multiply(ti, np.asarray(a, step_dtype), dtype=step_dtype)
        if _is_python_scalar(ti):
            step = step.item()
        out = np.asarray(np.add(xi, step), _dtype(xi))
        return out.item() if _is_python_scalar(xi) and _is_python_scalar(step) else out

    return tree_map(leaf, x, t)


def numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float = EPS):
    """Return the central difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)`` (numerical_jvp)."""
    f_pos = f(*_axpy(eps, tangents, tuple(primals)))
    f_neg = f(*_axpy(-eps, tangents, tuple(primals)))

    def diff(p, n):
        dt = _dtype(p)
        if not dtypes.issubdtype(dt, np.inexact):
            return np.zeros(np.shape(p), dtypes.float0)
        with np.errstate(invalid="ignore"):
            d = np.where(np.equal(p, n), np.zeros((), dt), np.subtract(p, n, dtype=dt))
        return np.asarray(d * np.asarray(0.5 / eps, dt), dt)

    return tree_map(diff, f_pos, f_neg)


def _inner_prod(xs, ys) -> np.ndarray:
    # As JAX's: each leaf's dot product in the leaves' dtype, summed leaf after leaf (so
    # the dot-product test rounds as JAX's does); float0 leaves contribute nothing.
    total = None
    for x, y in zip(tree_flatten(xs)[0], tree_flatten(ys)[0], strict=True):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
            continue
        term = np.real(np.dot(np.conj(x).reshape(-1), y.reshape(-1)))
        total = term if total is None else np.add(total, term)
    return np.asarray(0.0 if total is None else total)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg: str = "") -> None:
    """Check ``f_jvp`` (like ``partial(jvp, f)``) against finite differences (check_jvp)."""
    rng = np.random.RandomState(0)
    tangent = tree_map(functools.partial(_rand_like, rng), tuple(args))
    v_out, t_out = f_jvp(tuple(args), tangent)
    v_expected = f(*args)
    t_expected = numerical_jvp(f, args, tangent, eps=eps)
    _check_close(v_out, v_expected, atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    _check_close(t_out, t_expected, atol, rtol, f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg: str = "") -> None:
    """Check ``f_vjp`` (like ``partial(vjp, f)``) by the dot-product test (check_vjp).

    For random ``t`` and ``v``: ``<J^T v, t>`` must equal ``<v, J t>``, with ``J t`` by
    central finite differences.
    """
    rng = np.random.RandomState(0)
    v_out, vjp_fun = f_vjp(*args)
    _check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_map(functools.partial(_rand_like, rng), tuple(args))
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_map(functools.partial(_rand_like, rng), v_out)
    conj = functools.partial(
        tree_map, lambda x: x if np.asarray(x).dtype == dtypes.float0 else np.conj(x)
    )
    cotangent_out = conj(vjp_fun(conj(tree_map(np.asarray, cotangent))))
    ip = _inner_prod(tangent, cotangent_out)
    ip_expected = _inner_prod(tangent_out, cotangent)
    msg = f"{err_msg} cotangent projection" if err_msg else "cotangent projection"
    _check_close(ip, ip_expected, atol, rtol, msg)


def check_grads(
    f: Callable,
    args: Sequence[Any],
    order: int = 2,
    modes: Sequence[str] = ("fwd", "rev"),
    atol=None,
    rtol=None,
    eps: float | None = None,
) -> None:
    """Check the derivatives of ``f`` at ``args`` up to ``order`` (jax.test_util.check_grads).

    ``modes`` picks forward mode (``"fwd"``: JVP vs central finite differences) and/or
    reverse mode (``"rev"``: VJP vs JVP by the dot-product test). For ``order > 1`` the
    JVP, and the VJP applied to the output, are checked in turn as functions. ``atol``
    and ``rtol`` are numbers or dicts by dtype; ``eps`` is the finite-difference step.
    Raise AssertionError when a derivative is wrong.
    """
    args = tuple(args)
    eps = eps or EPS
    _check_jvp = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    _check_vjp = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def check(f, args, order, err_msg=""):
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            _check_jvp(f, functools.partial(api.jvp, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(api.jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            _check_vjp(f, functools.partial(api.vjp, f), args, err_msg=msg)
            if order > 1:

                def f_vjp(*primals):
                    out, vjp_fun = api.vjp(f, *primals)
                    return vjp_fun(out)

                check(f_vjp, args, order - 1, msg)

    check(f, args, order)
