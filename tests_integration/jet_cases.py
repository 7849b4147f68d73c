"""Taylor series through ``jet``, whose answers modjax gives as JAX 0.10.2 does.

Each case is a function of the ``jax`` module returning a JSON-able answer (the
primal and series out as nested lists, or the class and message of the error).
``data/jet_jax.json`` holds JAX 0.10.2's answers, recorded by running this file
with a Python that has JAX::

    /work/jaxref/bin/python tests_integration/jet_cases.py tests_integration/data/jet_jax.json

``test_jet.py`` runs the same cases on modjax and compares (to float32 rounding).
"""

from __future__ import annotations

import importlib

import numpy as np
from recorded_answers import raised, write_record

F32 = np.float32


def _jet_module(jax):
    return importlib.import_module(jax.__name__ + ".experimental.jet")


def _listed(tree, jax):
    return jax.tree_util.tree_map(lambda a: np.asarray(a).tolist(), tree)


def _functions(jax):
    jnp, lax = jax.numpy, jax.lax
    return {
        "sin_cube": (lambda x: jnp.sin(x**3), (F32(0.5),), ((1.0, 0.3, -0.2),)),
        "exp_log": (lambda x: jnp.exp(x) * jnp.log(x + 2), (F32(0.7),), ((1.0, 0.5, 0.1),)),
        "tanh_logistic": (
            lambda x: jnp.tanh(x) + jax.nn.sigmoid(2 * x),
            (F32(0.3),),
            ((1.0, 0.0, 0.0, 0.0),),
        ),
        "div_sqrt": (lambda x, y: x / jnp.sqrt(y), (F32(1.5), F32(2.0)), ((1.0, 0.2), (0.5, 0.1))),
        "pow": (lambda x, y: x**y, (F32(1.5), F32(2.5)), ((1.0, 0.2), (0.5, 0.1))),
        "sinh_cosh_exp": (
            lambda x: jnp.exp(-(x**2)) * jnp.cosh(x) + jnp.sinh(x),
            (F32(0.4),),
            ((1.0, 0.0, 0.0),),
        ),
        "erf_abs_integer_pow": (
            lambda x: jax.scipy.special.erf(x) + jnp.abs(x) ** 3 + x**-2,
            (F32(-0.6),),
            ((1.0, 0.2),),
        ),
        "atan2": (lax.atan2, (F32(0.5), F32(-1.5)), ((1.0, 0.3, 0.2), (0.2, -0.1, 0.4))),
        "erf_inv_log1p_expm1": (
            lambda x: jax.scipy.special.erfinv(x) + jnp.log1p(x) * jnp.expm1(x),
            (F32(0.3),),
            ((1.0, 0.5, -0.2),),
        ),
        "rsqrt_square_max_min": (
            lambda x, y: lax.rsqrt(x) + jnp.square(y) + jnp.maximum(x, y) - jnp.minimum(x, 2 * y),
            (F32(2.0), F32(1.0)),
            ((1.0, 0.5), (0.25, 0.0)),
        ),
    }


def _vector_functions(jax):
    jnp = jax.numpy
    x = np.arange(1, 4, dtype=F32) / 2
    w = (np.arange(6, dtype=F32).reshape(2, 3) - 2) / 4
    return {
        "reductions_and_slices": (
            lambda v: jnp.sum(jnp.cos(v) * v[::-1]) + jnp.max(v) + jnp.min(v[1:]),
            (x,),
            ((np.ones(3, F32), np.full(3, 0.5, F32)),),
        ),
        "matmul_where": (
            lambda m, v: jnp.where(m @ v > 0, m @ v, -0.5 * (m @ v)),
            (w, x),
            ((np.ones((2, 3), F32),), (np.full(3, 0.5, F32),)),
        ),
        "jit_and_indexing": (
            jax.jit(lambda v: jnp.exp(v[jnp.array([2, 0])]) * jnp.concatenate([v, v])[1]),
            (x,),
            ((np.ones(3, F32), np.zeros(3, F32)),),
        ),
        "cumulative": (
            lambda v: (
                jnp.cumprod(v) + jax.lax.cummax(jnp.sin(3 * v)) * jax.lax.cummin(v, reverse=True)
            ),
            (x,),
            ((np.ones(3, F32), np.asarray([0.5, -1.0, 0.25], F32)),),
        ),
        "pytree_output": (
            lambda v: (jnp.sin(v), {"c": jnp.cos(v), "k": 3.0 * v, "z": jnp.zeros(2)}),
            (x,),
            ((np.ones(3, F32), np.ones(3, F32)),),
        ),
    }


def _series_answers(jax, functions):
    jet_module = _jet_module(jax)
    out = {}
    for name, (fun, primals, series) in functions.items():
        series = [[np.asarray(t, F32) for t in terms] for terms in series]
        for label, fn in (("derivatives", jet_module.jet), ("coefficients", jet_module.jet2)):
            out[f"{name}/{label}"] = _listed(fn(fun, primals, series), jax)
    return out


def _scalar_series(jax):
    return _series_answers(jax, _functions(jax))


def _vector_series(jax):
    return _series_answers(jax, _vector_functions(jax))


def _errors(jax):
    jet_module, jnp = _jet_module(jax), jax.numpy
    one, ones = F32(1.0), np.ones(3, F32)
    return [
        raised(lambda: jet_module.jet(jnp.sin, (one, one), ((one,), (one, one)))),
        raised(lambda: jet_module.jet(lambda t: t[0], ((one,),), ((one,),))),
        raised(lambda: jet_module.jet(jnp.sin, (one,), (((one,),),))),
        # A primitive without a rule: JAX's KeyError (modjax's also says which rule is missing).
        raised(lambda: jet_module.jet(jnp.sort, (ones,), ((ones,),)), message=False),
        raised(lambda: jet_module.jet(jnp.sort, (ones,), ((0 * ones,),)), message=False),
    ]


CASES = {
    "scalar_series": _scalar_series,
    "vector_series": _vector_series,
    "errors": _errors,
}


def record(jax) -> dict:
    """Every case's answer (what the data file holds)."""
    return {name: case(jax) for name, case in CASES.items()}


if __name__ == "__main__":
    write_record(record)
