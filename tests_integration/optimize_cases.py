"""Minimizations by ``jax.scipy.optimize.minimize``, whose answers modjax gives as JAX 0.10.2 does.

Each case is a function of the ``jax`` module returning a JSON-able answer: for each
start, every field of the ``OptimizeResults`` as a ``[dtype, values]`` pair (None for
L-BFGS's ``hess_inv``), or the class name and message of the exception raised.
``data/optimize_jax.json`` holds JAX 0.10.2's answers, recorded by running this file
with a Python that has JAX::

    /work/jaxref/bin/python tests_integration/optimize_cases.py \\
        tests_integration/data/optimize_jax.json

(``optimize_jax_avx512.json`` holds the same cases recorded on a processor with
AVX-512: XLA compiles for the host, and float32 answers move with its vector units.)

The problems are Rosenbrock's function of 2 to 6 variables, convex quadratics, a sum
of fourth powers and a regularized logistic-regression loss, from several starts,
with both methods and their options; the cases in ``X64_CASES`` run under
``jax.enable_x64(True)``. Each problem is one function per library (``problems``),
and a case runs every start of one (problem, method, options): each compiles once.
This file imports neither library by name: the caller passes the module in.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np
from recorded_answers import cpu_kind, raised, write_record

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def _optimize(jax):
    return importlib.import_module(jax.__name__ + ".scipy.optimize")


@functools.cache
def problems(jax) -> dict:
    """The objectives, made once per library so that repeated cases reuse programs."""
    jnp = jax.numpy

    def rosen(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def quadratic(x, a, b):
        return 0.5 * jnp.dot(x, jnp.dot(a, x)) - jnp.dot(b, x)

    def quartic(x):
        return jnp.sum(x**4)

    def logistic(w, features, labels):
        margins = labels * jnp.dot(features, w)
        return jnp.mean(jnp.logaddexp(0.0, -margins)) + 0.01 * jnp.sum(w**2)

    def shifted(x, center):
        return jnp.sum((x - center) ** 2 * jnp.arange(1.0, x.shape[0] + 1.0))

    return {
        "rosen": rosen,
        "quadratic": quadratic,
        "quartic": quartic,
        "logistic": logistic,
        "shifted": shifted,
    }


def _data(n: int, dtype) -> dict:
    """Fixed inputs: a symmetric positive definite matrix, a vector, a labelled sample."""
    rng = np.random.default_rng(n)
    m = rng.normal(size=(n, n))
    features = rng.normal(size=(30, n))
    labels = np.sign(features @ rng.normal(size=n) + 0.5 * rng.normal(size=30))
    return {
        "a": (m @ m.T + n * np.eye(n)).astype(dtype),
        "b": rng.normal(size=n).astype(dtype),
        "features": features.astype(dtype),
        "labels": labels.astype(dtype),
        "normal": rng.normal(size=n).astype(dtype),
    }


def _starts(problem: str, n: int, dtype) -> list:
    normal = _data(n, dtype)["normal"]
    if problem == "rosen" and n == 2:
        return [np.array(v, dtype) for v in ([-1.2, 1.0], [0.0, 0.0], [2.0, -1.5], [-0.5, 2.5])]
    if problem == "rosen":
        return [np.zeros(n, dtype), np.linspace(-1.5, 1.5, n).astype(dtype), normal]
    if problem == "quartic":
        return [np.array([1.0, -2.0, 0.5], dtype), np.array([0.1, 0.2, 0.3], dtype)]
    return [np.zeros(n, dtype), normal]


def _args(problem: str, n: int, dtype) -> tuple:
    d = _data(n, dtype)
    if problem == "quadratic":
        return (d["a"], d["b"])
    if problem == "logistic":
        return (d["features"], d["labels"])
    if problem == "shifted":
        return (0.5,)
    return ()


def _listed(x):
    x = np.asarray(x)
    values = np.stack([x.real, x.imag]) if np.iscomplexobj(x) else x
    return [str(x.dtype), values.tolist()]


def answer(result) -> dict:
    """Every field of an ``OptimizeResults`` as ``[dtype, values]`` (None stays None)."""
    return {k: None if v is None else _listed(v) for k, v in result._asdict().items()}


def _solve(jax, problem, n, method, options=None, dtype=np.float32, tol=None):
    """Minimize ``problem`` of ``n`` variables from each of its starts."""
    jnp = jax.numpy
    fun, args = problems(jax)[problem], _args(problem, n, dtype)
    minimize = _optimize(jax).minimize
    return [
        answer(minimize(fun, jnp.asarray(x0), args, method=method, tol=tol, options=options))
        for x0 in _starts(problem, n, dtype)
    ]


def _case(problem, n, method, options=None, dtype=np.float32, tol=None):
    return lambda jax: _solve(jax, problem, n, method, options, dtype, tol)


def _errors(jax):
    """Bad methods, arguments, options and starts fail as JAX's minimize fails."""
    jnp, minimize = jax.numpy, _optimize(jax).minimize
    rosen = problems(jax)["rosen"]
    calls = [
        lambda: minimize(rosen, jnp.zeros(2), method="Nelder-Mead"),
        lambda: minimize(rosen, jnp.zeros(2), method=None),
        lambda: minimize(rosen, jnp.zeros(2), [1.0], method="BFGS"),
        lambda: minimize(rosen, jnp.zeros(2), method="BFGS", options={"ftol": 1.0}),
        lambda: minimize(rosen, jnp.zeros(2), method=LBFGS, options={"line_search_maxiter": 1}),
        lambda: minimize(rosen, jnp.zeros(2), method="bfgs", options=[("maxiter", 2)]),
        lambda: minimize(rosen, jnp.zeros(2), method=LBFGS, options=[("maxiter", 2)]),
        lambda: minimize(rosen, jnp.zeros(2, jnp.int32), method="BFGS"),
        lambda: minimize(lambda x: x**2, jnp.ones(2), method="BFGS"),
    ]
    for method in ("BFGS", LBFGS):
        for x0 in (jnp.float32(1.0), 1.0, [0.0, 0.0], (1.0, 2.0), np.float32(1.0)):
            calls.append(lambda m=method, x0=x0: minimize(rosen, x0, method=m))
        for shape in ((2, 3), (3, 2), (2, 2), (1, 1), (2, 2, 2)):
            calls.append(lambda m=method, s=shape: minimize(rosen, jnp.ones(s), method=m))
    return [raised(call) for call in calls]


def _numpy_start(jax):
    """A NumPy start (float64 without x64, so made float32) and an empty one."""
    rosen, minimize = problems(jax)["rosen"], _optimize(jax).minimize
    out = [answer(minimize(rosen, np.array([-1.2, 1.0]), method=m)) for m in ("BFGS", LBFGS)]
    empty = jax.numpy.zeros(0)
    return out + [answer(minimize(rosen, empty, method=m)) for m in ("BFGS", LBFGS)]


CASES = {
    **{f"bfgs_rosen{n}": _case("rosen", n, "BFGS") for n in range(2, 7)},
    **{f"lbfgs_rosen{n}": _case("rosen", n, LBFGS) for n in range(2, 7)},
    **{f"bfgs_quadratic{n}": _case("quadratic", n, "BFGS") for n in (3, 5)},
    **{f"lbfgs_quadratic{n}": _case("quadratic", n, LBFGS) for n in (3, 5)},
    "bfgs_quartic": _case("quartic", 3, "BFGS"),
    "lbfgs_quartic": _case("quartic", 3, LBFGS),
    "bfgs_logistic": _case("logistic", 4, "BFGS"),
    "lbfgs_logistic": _case("logistic", 4, LBFGS),
    "bfgs_shifted_scalar_arg": _case("shifted", 3, "BFGS"),
    "lbfgs_shifted_scalar_arg": _case("shifted", 3, LBFGS),
    "bfgs_tol_ignored": _case("rosen", 2, "BFGS", tol=1e-2),
    "bfgs_maxiter": _case("rosen", 2, "BFGS", {"maxiter": 5}),
    "bfgs_maxiter0": _case("rosen", 2, "BFGS", {"maxiter": 0}),
    "bfgs_gtol": _case("rosen", 2, "BFGS", {"gtol": 1e-3}),
    "bfgs_norm2": _case("rosen", 2, "BFGS", {"norm": 2}),
    "bfgs_norm1": _case("rosen", 3, "BFGS", {"norm": 1}),
    "bfgs_line_search_maxiter1": _case("rosen", 2, "BFGS", {"line_search_maxiter": 1}),
    "bfgs_line_search_maxiter3": _case("rosen", 3, "BFGS", {"line_search_maxiter": 3}),
    "lbfgs_maxiter": _case("rosen", 2, LBFGS, {"maxiter": 5}),
    "lbfgs_maxcor": _case("rosen", 4, LBFGS, {"maxcor": 3}),
    "lbfgs_ftol": _case("rosen", 2, LBFGS, {"ftol": 1e-4}),
    "lbfgs_gtol": _case("rosen", 2, LBFGS, {"gtol": 1e-3}),
    "lbfgs_maxfun": _case("rosen", 2, LBFGS, {"maxfun": 12}),
    "lbfgs_maxgrad": _case("rosen", 2, LBFGS, {"maxgrad": 12}),
    "lbfgs_maxls": _case("rosen", 2, LBFGS, {"maxls": 2}),
    "lbfgs_norm2": _case("rosen", 2, LBFGS, {"norm": 2}),
    "lbfgs_maxiter_and_maxfun": _case("rosen", 2, LBFGS, {"maxiter": 3, "maxfun": 100}),
    "numpy_and_empty_starts": _numpy_start,
    "errors": _errors,
}

X64_CASES = {
    "x64_bfgs_rosen2": _case("rosen", 2, "BFGS", dtype=np.float64),
    "x64_bfgs_rosen4": _case("rosen", 4, "BFGS", dtype=np.float64),
    "x64_lbfgs_rosen2": _case("rosen", 2, LBFGS, dtype=np.float64),
    "x64_lbfgs_rosen4": _case("rosen", 4, LBFGS, dtype=np.float64),
    "x64_bfgs_quadratic3": _case("quadratic", 3, "BFGS", dtype=np.float64),
    "x64_lbfgs_quadratic3": _case("quadratic", 3, LBFGS, dtype=np.float64),
    "x64_bfgs_logistic": _case("logistic", 4, "BFGS", dtype=np.float64),
    "x64_lbfgs_logistic": _case("logistic", 4, LBFGS, dtype=np.float64),
    "x64_bfgs_gtol": _case("rosen", 2, "BFGS", {"gtol": 1e-9}, dtype=np.float64),
    "x64_lbfgs_options": _case("rosen", 2, LBFGS, {"maxcor": 4, "ftol": 0.0}, dtype=np.float64),
}


def run_x64(jax, case):
    """Run ``case`` with 64-bit types enabled."""
    with jax.enable_x64(True):
        return case(jax)


def record(jax) -> dict:
    """Every case's answer (what the data file holds)."""
    _optimize(jax)
    out = {name: case(jax) for name, case in CASES.items()}
    out.update({name: run_x64(jax, case) for name, case in X64_CASES.items()})
    out["cpu"] = cpu_kind()
    return out


if __name__ == "__main__":
    write_record(record)
