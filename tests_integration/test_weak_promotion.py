"""Promotion of traced operands with scalars and constants matches JAX 0.10.2 (issue #14).

``data/weak_promotion_jax.json`` holds, for a traced ``x`` (weakly or strongly typed)
combined with Python scalars, numpy scalars, 0-d and 1-d numpy arrays and concrete
``jnp`` arrays, what JAX records: the equations of the jaxpr (with each
``convert_element_type``'s dtype and weak type), the result's dtype and weak type, the
gradient's and the eager result's. The conversions matter beyond the printout: the
transpose of the one that makes a weak input strong is what makes its gradient weak
(``grad(lambda x: x + np.float32(2))(1.0)``). A ``jnp`` array the program closes over
(0-d too) is a constvar in both libraries, a numpy scalar a literal in both.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp

DATA = json.loads((Path(__file__).parent / "data" / "weak_promotion_jax.json").read_text())
CASES, JAX = DATA["cases"], DATA["jax"]


def _arg(kind):
    return {
        "weak_f32": 1.0,
        "f32": np.float32(1.0),
        "weak_i32": 1,
        "i32": np.int32(1),
        "weak_f32_vec": jnp.full(3, 1.0),
    }[kind]


def _eqn(e):
    if e.primitive.name != "convert_element_type":
        return e.primitive.name
    p = e.params
    return f"convert_element_type[{np.dtype(p['new_dtype']).name},weak={p['weak_type']}]"


def _type(a):
    return [np.dtype(a.dtype).name, bool(a.weak_type)]


def _record(kind, text):
    f = eval("lambda x: " + text, {"jnp": jnp, "np": np})
    closed = jax.make_jaxpr(f)(_arg(kind))
    rec = {"eqns": [_eqn(e) for e in closed.jaxpr.eqns], "out": _type(closed.out_avals[0])}
    if "f32" in kind:
        g = jax.make_jaxpr(jax.grad(lambda x: jnp.sum(jnp.real(f(x)))))(_arg(kind))
        rec["grad"] = _type(g.out_avals[0])
    rec["eager"] = _type(jax.typeof(f(jnp.asarray(_arg(kind)))))
    return rec


@pytest.mark.parametrize("kind", sorted({k for k, _ in CASES.values()}))
def test_promotion_records_what_jax_records(kind):
    # One test per kind of x (the 240 cases trace in about a second together).
    wrong = {}
    for name, (k, text) in CASES.items():
        if k == kind:
            got = _record(k, text)
            if got != JAX[name]:
                wrong[name] = (text, got, JAX[name])
    assert not wrong, wrong


def test_the_gradient_of_a_promoted_weak_input_is_weak():
    g = jax.grad(lambda x: x + np.float32(2.0))(1.0)
    assert (g.dtype, g.weak_type) == (np.float32, True)
    jaxpr = jax.make_jaxpr(lambda x: x + np.float32(2.0))(1.0)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["convert_element_type", "add"]


def test_eager_results_have_jax_s_types():
    # Eagerly no conversion of the weak operand is dispatched: the result type is the
    # same without it.
    x, w = jnp.ones(3, jnp.float32), jnp.full(3, 2.0)
    r = x + w
    assert (r.dtype, r.weak_type) == (np.float32, False)
    assert (np.int32(1) + jnp.asarray(1.0)).weak_type  # a numpy int and a weak float: weak


# jnp functions of weakly typed operands: (dtype, weak type) of JAX 0.10.2's result. JAX's
# implementations multiply by constants that are weak next to a 0-d operand and strong
# arrays next to larger ones (deg2rad, sinc, hypot, heaviside, logaddexp2, round), and
# build cross products and Vandermonde matrices strongly
# typed; w, wi and w2 are weak float32[3], int32[3] and float32[2], s a weak float32[].
WEAK_OPERAND_RESULTS = {
    "jnp.deg2rad(2.0)": ("float32", True),
    "jnp.degrees(s)": ("float32", True),
    "jnp.rad2deg(w)": ("float32", False),
    "jnp.radians(w)": ("float32", False),
    "jnp.deg2rad(wi)": ("float32", False),
    "jnp.sinc(w)": ("float32", False),
    "jnp.sinc(0.5)": ("float32", True),
    "jnp.sinc(wi)": ("float32", False),
    "jnp.vander(w)": ("float32", False),
    "jnp.vander(wi)": ("int32", False),
    "jnp.vander(w, 0)": ("float32", False),
    "jnp.cross(w, w)": ("float32", False),
    "jnp.cross(wi, wi)": ("int32", False),
    "jnp.cross(w2, w2)": ("float32", True),
    "jnp.cross(w2, w)": ("float32", False),
    "jnp.hypot(2.0, 3.0)": ("float32", True),
    "jnp.logaddexp(w, 1.0)": ("float32", True),
    "jnp.multiply(w, 2)": ("float32", True),
    "jnp.hypot(w, w)": ("float32", False),
    "jnp.hypot(w > 0, 1)": ("float32", False),
    "jnp.hypot(s, s)": ("float32", True),
    "jnp.heaviside(w, 0.5)": ("float32", False),
    "jnp.heaviside(wi, 1)": ("float32", False),
    "jnp.heaviside(s, 0.5)": ("float32", True),
    "jnp.logaddexp2(w, 1.0)": ("float32", False),
    "jnp.logaddexp2(s, 1.0)": ("float32", True),
    "jnp.round(w, 1)": ("float32", False),
    "jnp.round(s, 1)": ("float32", True),
    "jnp.round(wi, 1)": ("int32", True),
    "jnp.round(w)": ("float32", True),
    "jnp.round(w + 1j, 2)": ("complex64", False),
}

# More of JAX 0.10.2's answers, recorded: power of an inexact base and an integer array
# (lax.pow unpromoted: weak only if both are), angle, diagonals (the square 2-d diagonal
# goes through a strongly typed branch in JAX), polyadd/polysub, pad and place (keep the
# array's weak type), argpartition (weak indices), interp and gradient (arithmetic on the
# operands), vectorize/frompyfunc (the function's own result); strong: sort_complex,
# jnp.array of a sequence, piecewise, compress with a size, diagflat, and the reductions
# and running results that JAX computes by loops (ufunc reduce/accumulate), copysign of a
# weak and a strong operand. m is a weak float32[3, 3], wc a weak complex64[3], f a
# strong float32[3], mask a bool[3].
WEAK_OPERAND_RESULTS |= {
    "jnp.power(w, jnp.array([1, 2, 3]))": ("float32", False),
    "jnp.power(2.0, jnp.array([1, 2, 3]))": ("float32", False),
    "jnp.power(w, wi)": ("float32", True),
    "jnp.power(w, jnp.array(2))": ("float32", True),
    "jnp.power(wc, jnp.array([1, 2, 3]))": ("complex64", False),
    "jnp.power(jnp.ones(3, jnp.float16), wi)": ("float16", False),
    "jnp.sort_complex(w)": ("complex64", False),
    "jnp.sort_complex(wc)": ("complex64", False),
    "jnp.angle(w)": ("float32", True),
    "jnp.angle(s)": ("float32", False),
    "jnp.angle(wi)": ("float32", False),
    "jnp.angle(wc)": ("float32", True),
    "jnp.angle(w, deg=True)": ("float32", False),
    "jnp.angle(jnp.asarray(1 + 1j), deg=True)": ("float32", True),
    "jnp.angle(jnp.float16(1))": ("float32", False),
    "jnp.diag(w, 1)": ("float32", True),
    "jnp.diag(wi, -1)": ("int32", True),
    "jnp.diag(m)": ("float32", False),
    "jnp.diag(m, 1)": ("float32", True),
    "jnp.diagonal(m)": ("float32", False),
    "jnp.diagonal(jnp.full((2, 3, 3), 0.5))": ("float32", True),
    "jnp.diagflat(w)": ("float32", False),
    "jnp.diagflat(w, 1)": ("float32", False),
    "jnp.polyadd(w, w2)": ("float32", True),
    "jnp.polysub(w2, w)": ("float32", True),
    "jnp.polyadd(f, w2)": ("float32", False),
    "jnp.array([w, w])": ("float32", False),
    "jnp.array([s, 1.0])": ("float32", False),
    "jnp.array(w)": ("float32", True),
    "jnp.asarray([w])": ("float32", False),
    "jnp.piecewise(w, [w < 0.2], [lambda v: v, 1.0])": ("float32", False),
    "jnp.pad(w, 1)": ("float32", True),
    "jnp.pad(w, 0)": ("float32", True),
    'jnp.pad(w, 1, mode="mean")': ("float32", True),
    'jnp.pad(wi, 1, mode="edge")': ("int32", True),
    "jnp.pad(f, 1, constant_values=s)": ("float32", False),
    "jnp.place(w, mask, jnp.array([1.0, 2.0]), inplace=False)": ("float32", True),
    "jnp.place(f, mask, s, inplace=False)": ("float32", False),
    "jnp.compress(mask, w, size=2)": ("float32", False),
    "jnp.compress(mask, w)": ("float32", True),
    "jnp.argpartition(w, 1)": ("int32", True),
    "jnp.argpartition(f, 1)": ("int32", False),
    "jnp.interp(w, w, w)": ("float32", True),
    "jnp.interp(2.0, w, w)": ("float32", True),
    "jnp.interp(w, w, w, left=jnp.float32(0))": ("float32", False),
    "jnp.interp(jnp.full(3, 0.5, jnp.float16), jnp.full(3, 0.5, jnp.float16), w)": (
        "float16",
        False,
    ),
    "jnp.gradient(w)": ("float32", True),
    "jnp.gradient(m)[1]": ("float32", True),
    "jnp.gradient(wi)": ("float32", True),
    "jnp.gradient(w, f)": ("float32", False),
    "jnp.vectorize(lambda x: x)(w)": ("float32", True),
    "jnp.vectorize(lambda x: x * 2)(w)": ("float32", True),
    "jnp.vectorize(lambda x, y: x + y)(w, f)": ("float32", False),
    "jnp.frompyfunc(lambda x, y: x * y, 2, 1)(w, w)": ("float32", True),
    "jnp.frompyfunc(lambda x, y: x * y, 2, 1).reduce(w)": ("float32", False),
    "jnp.frompyfunc(lambda x, y: x * y, 2, 1).accumulate(w)": ("float32", False),
    "jnp.frompyfunc(lambda x, y: x * y, 2, 1).outer(w, w)": ("float32", True),
    "jnp.subtract.reduce(w)": ("float32", False),
    "jnp.add.reduce(w)": ("float32", False),
    "jnp.add.accumulate(w)": ("float32", False),
    "jnp.bitwise_and.reduce(wi)": ("int32", False),
    "jnp.copysign(w, f)": ("float32", False),
    "jnp.copysign(2.0, f)": ("float32", False),
    "jnp.copysign(w, 1.0)": ("float32", True),
}

# Comparisons (and is_finite) of weakly typed operands give a weak bool in JAX 0.10.2;
# two weak bools promote to a strong one, and isinf/isin compare with strong constants.
WEAK_OPERAND_RESULTS |= {
    "w > 0": ("bool", True),
    "s > 0": ("bool", True),
    "w > f": ("bool", False),
    "jnp.equal(w, True)": ("bool", True),
    "jnp.less(wc, wc)": ("bool", True),
    "jnp.isnan(w)": ("bool", True),
    "jnp.isnan(wi)": ("bool", True),
    "jnp.isfinite(w)": ("bool", True),
    "jnp.isfinite(wi)": ("bool", False),
    "jnp.isfinite(wc)": ("bool", True),
    "jnp.isinf(w)": ("bool", False),
    "(w > 0) & (w > 0)": ("bool", False),
    "(w > 0) + 1": ("int32", True),
    "jnp.logical_not(w > 0)": ("bool", True),
    "jnp.logical_and(w > 0, w > 0)": ("bool", False),
    "jnp.concatenate([w > 0, w > 0])": ("bool", False),
    "jnp.isin(w, w)": ("bool", False),
    "jnp.sum(w > 0)": ("int32", False),
}


@pytest.mark.parametrize("text", list(WEAK_OPERAND_RESULTS))
def test_weak_operands_give_jax_s_result_type(text):
    env = {
        "jnp": jnp,
        "w": jnp.full(3, 0.5),
        "wi": jnp.full(3, 2),
        "w2": jnp.full(2, 0.5),
        "s": jnp.asarray(0.5),
        "m": jnp.full((3, 3), 0.5),
        "wc": jnp.full(3, 0.5 + 1j),
        "f": jnp.ones(3, jnp.float32),
        "mask": jnp.array([True, False, True]),
    }
    r = eval(text, env)
    assert (str(r.dtype), r.weak_type) == WEAK_OPERAND_RESULTS[text]


# Gradients and tangents at a weakly typed x (the Python float 2.0 unless the text
# applies grad itself), recorded from JAX 0.10.2. lax.pow's derivative in the base is a
# strongly typed factor (JAX converts both operands to the result dtype first), and a
# lax op that takes a weak operand directly leaves its cotangent strong: the gradient of
# x ** int_array is strong, as is x ** 1.5's; where jnp promotes (a float exponent
# array) the recorded conversion makes it weak again. The special functions' rules
# multiply by JAX's constants, weak next to a rank-0 weak operand only.
GRAD_RESULTS = {
    "grad(lambda x: (x ** jnp.arange(3)).sum())(2.0)": ("float32", False),
    "grad(lambda x: (x ** jnp.arange(3.0)).sum())(2.0)": ("float32", True),
    "grad(lambda x: x ** jnp.asarray(2))(2.0)": ("float32", True),
    "grad(lambda x: (x ** jnp.full(3, 2)).sum())(2.0)": ("float32", False),
    "grad(lambda x: (x ** jnp.full(3, 2)).sum())(jnp.full(3, 2.0))": ("float32", False),
    "grad(lambda x: x ** 1.5)(3.0)": ("float32", False),
    "grad(lambda y: 2.0 ** y)(3.0)": ("float32", True),
    "grad(lambda x, y: x ** y, argnums=(0, 1))(3.0, 2.0)[0]": ("float32", False),
    "grad(lambda x, y: x ** y, argnums=(0, 1))(3.0, 2.0)[1]": ("float32", True),
    "grad(lambda x: lax.pow(x, jnp.arange(3)).sum())(2.0)": ("float32", False),
    "jvp(lambda x: x ** jnp.arange(3), (2.0,), (1.0,))[1]": ("float32", False),
    "jvp(lambda x: lax.pow(x, 1.5), (2.0,), (1.0,))[0]": ("float32", True),
    "jvp(lambda x: lax.pow(x, 1.5), (2.0,), (1.0,))[1]": ("float32", False),
    "vjp(lambda x: x ** jnp.arange(3), 2.0)[1](jnp.ones(3))[0]": ("float32", False),
    "grad(lambda x: lax.mul(x, jnp.ones((), jnp.float32)))(2.0)": ("float32", False),
    "grad(lambda x: lax.div(x, jnp.float32(2)))(2.0)": ("float32", False),
    "grad(lambda x: lax.rem(jnp.float32(0.3), x))(0.5)": ("float32", False),
    "grad(lambda x: (x * jnp.arange(3)).sum())(2.0)": ("float32", True),
    "grad(lambda x: (x + jnp.ones(3)).sum())(2.0)": ("float32", True),
    "grad(lax.erf)(0.5)": ("float32", True),
    "grad(lambda x: lax.erf(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.erfc)(0.5)": ("float32", True),
    "grad(lax.erf_inv)(0.5)": ("float32", True),
    "grad(lambda x: lax.erf_inv(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.digamma)(0.5)": ("float32", True),
    "grad(lambda x: lax.digamma(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.bessel_i1e)(0.5)": ("float32", True),
    "grad(lambda x: lax.bessel_i1e(x).sum())(jnp.full(3, 0.5))": ("float32", True),
    "grad(jax.scipy.special.i1)(0.5)": ("float32", True),
    "grad(jnp.log2)(0.5)": ("float32", False),
    # JAX's _const: a factor of x's dtype, weak next to a weak 0-d x only, so these
    # gradients are strong at a weak array (tanh's and atanh's 1 is _one: weak).
    "grad(lax.sqrt)(0.5)": ("float32", True),
    "grad(lambda x: lax.sqrt(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.rsqrt)(0.5)": ("float32", True),
    "grad(lambda x: lax.rsqrt(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.cbrt)(0.5)": ("float32", True),
    "grad(lambda x: lax.cbrt(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.square)(0.5)": ("float32", True),
    "grad(lambda x: lax.square(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.reciprocal)(0.5)": ("float32", True),
    "grad(lambda x: lax.reciprocal(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.tan)(0.5)": ("float32", True),
    "grad(lambda x: lax.tan(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.asin)(0.5)": ("float32", True),
    "grad(lambda x: lax.asin(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.acos)(0.5)": ("float32", True),
    "grad(lambda x: lax.acos(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.atan)(0.5)": ("float32", True),
    "grad(lambda x: lax.atan(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lax.exp2)(0.5)": ("float32", True),
    "grad(lambda x: lax.exp2(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: lax.integer_pow(x, 3))(0.5)": ("float32", True),
    "grad(lambda x: lax.integer_pow(x, -2).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: lax.atanh(x).sum())(jnp.full(3, 0.5))": ("float32", True),
    "grad(lambda x: lax.tanh(x).sum())(jnp.full(3, 0.5))": ("float32", True),
    # real/imag transpose with a strong zero imaginary (real) part, as JAX's np.zeros.
    "grad(lambda x: jnp.real(lax.conj(x)))(0.5)": ("float32", False),
    "grad(lambda x: jnp.real(lax.conj(x)).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: jnp.imag(lax.complex(x, x)).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: jnp.real(lax.complex(x, 1.0)))(0.5)": ("float32", False),
    # A slice's transpose pads with JAX's _const 0: strong next to a weak array.
    "grad(lambda x: jnp.ediff1d(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: lax.slice(x, (1,), (3,)).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: x[1:].sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: x[::2].sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: jnp.diff(x).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: jnp.split(x, 3)[0].sum())(jnp.full(3, 0.5))": ("float32", True),
    "grad(lambda x: (x[1:] * x[:-1]).sum())(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: jnp.roll(x, 1)[0])(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: jnp.trapezoid(x))(jnp.full(3, 0.5))": ("float32", False),
    "grad(lambda x: jnp.convolve(x, x).sum())(jnp.full(3, 0.5))": ("float32", True),
}


@pytest.mark.parametrize("text", list(GRAD_RESULTS))
def test_derivatives_at_weak_values_have_jax_s_type(text):
    env = {"jnp": jnp, "lax": jax.lax, "jax": jax, "grad": jax.grad, "jvp": jax.jvp}
    r = eval(text, env | {"vjp": jax.vjp})
    assert (str(r.dtype), r.weak_type) == GRAD_RESULTS[text]


# jnp.vectorize converts each argument that is neither excluded nor None with
# jnp.asarray, so the function and its result see Arrays: (dtype, weak type) of each
# result, recorded from JAX 0.10.2; "float" is a Python float that the function
# returned itself (JAX does not convert results).
VECTORIZE_RESULTS = {
    "vectorize(lambda x: x)(2.0)": [("float32", True)],
    "vectorize(lambda x: x)(2)": [("int32", True)],
    "vectorize(lambda x: x)(True)": [("bool", False)],
    "vectorize(lambda x: x)(1j)": [("complex64", True)],
    "vectorize(lambda x: x)(np.float32(2))": [("float32", False)],
    "vectorize(lambda x: x)(np.float64(2))": [("float32", False)],
    "vectorize(lambda x: x)(np.ones(2))": [("float32", False)],
    "vectorize(lambda x: x)([1.0, 2.0])": [("float32", False)],
    "vectorize(lambda x: x * 2)(2.0)": [("float32", True)],
    "vectorize(lambda x: (x, x + 1))(2.0)": [("float32", True), ("float32", True)],
    "vectorize(lambda x, y: x, excluded={1})(2.0, 3.0)": [("float32", True)],
    "vectorize(lambda x, y: y, excluded={1})(2.0, 3.0)": ["float"],
    "vectorize(lambda x: 3.0)(2.0)": ["float"],
    "vectorize(lambda x: x, signature='()->()')(2.0)": [("float32", True)],
    "vectorize(lambda x: x.sum(), signature='(n)->()')([1.0, 2.0])": [("float32", False)],
    "vectorize(lambda x: x, signature='(n)->(n)')([1.0, 2.0])": [("float32", False)],
    "vectorize(lambda x, y: x + y)(2.0, 3)": [("float32", True)],
    "vectorize(lambda x, y: x + y)(2.0, jnp.ones(2))": [("float32", False)],
}


@pytest.mark.parametrize("text", list(VECTORIZE_RESULTS))
def test_vectorize_converts_arguments_as_jax(text):
    r = eval(text, {"jnp": jnp, "np": np, "vectorize": jnp.vectorize})
    got = [
        "float" if type(v) is float else (str(v.dtype), v.weak_type)
        for v in (r if isinstance(r, tuple) else (r,))
    ]
    assert got == VECTORIZE_RESULTS[text]
    if got != ["float"]:
        assert all(isinstance(v, jax.Array) for v in (r if isinstance(r, tuple) else (r,)))
