"""Special-function primitives of modjax.lax against scipy's values, eagerly and under jit.

``lax_special_reference.json`` holds float64 references computed with scipy
on a fixed grid, and what JAX 0.10 returns at signed zeros, infinities, NaN
and the edges of each domain (``lax_special_reference_gen.py`` regenerates
the scipy values; the JAX outputs were recorded by the snippet kept in the
file, ``specials_recorded_with``). JVP rules are checked against
central differences of our own float64 results, batching rules against a
loop of single calls.
"""

from __future__ import annotations

import json
import math
import pathlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff import jvp
from modjax.batching import vmap
from modjax.lax import special
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.config import enable_x64

# Compile-bound known-answer tables: the workspace run runs them, the wheel check
# (smoke profile) only imports them.
pytestmark = pytest.mark.slow

REFERENCE = json.loads(pathlib.Path(__file__).with_name("lax_special_reference.json").read_text())
BF16 = np.dtype(ml_dtypes.bfloat16)

UNARY = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "bessel_i0e", "bessel_i1e"]
BINARY = ["igamma", "igammac", "igamma_grad_a", "polygamma", "zeta"]
TERNARY = ["regularized_incomplete_beta"]

# float32 tolerances (rtol, atol) per function: the CHLO expansions are accurate to a few
# ulps; the iterative composites to about 1e-5, and polygamma/zeta lose a little more.
TOL = {
    "erf": (2e-6, 1e-7),
    "erfc": (2e-5, 1e-30),
    "erf_inv": (5e-6, 1e-6),
    "lgamma": (2e-5, 2e-6),
    "digamma": (2e-5, 2e-5),
    "bessel_i0e": (5e-6, 1e-7),
    "bessel_i1e": (5e-6, 1e-7),
    "igamma": (5e-5, 2e-6),
    "igammac": (5e-5, 2e-6),
    "igamma_grad_a": (2e-3, 2e-5),
    "polygamma": (2e-4, 1e-6),
    "zeta": (2e-4, 1e-6),
    "regularized_incomplete_beta": (1e-4, 2e-6),
}


def _fn(name):
    return getattr(lax, name)


def _reference(name, dtype=np.float32):
    entry = REFERENCE["values"][name]
    args = [np.asarray(a, np.float64).astype(dtype) for a in entry["args"]]
    return args, np.asarray(entry["expected"], np.float64)


@pytest.mark.parametrize("name", UNARY + BINARY + TERNARY)
def test_float32_values_match_scipy(name):
    args, expected = _reference(name)
    rtol, atol = TOL[name]
    eager = _fn(name)(*args)
    assert eager.dtype == np.float32 and eager.shape == expected.shape
    np.testing.assert_allclose(np.asarray(eager, np.float64), expected, rtol=rtol, atol=atol)
    jitted = jit(_fn(name))(*args)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("name", ["bessel_i0e", "igamma", "igammac", "regularized_incomplete_beta"])
def test_float64_composites_are_accurate(name):
    # the composites (series, continued fractions) must reach float64 precision with x64 on
    with enable_x64(True):
        args, expected = _reference(name, np.float64)
        out = _fn(name)(*args)
        assert out.dtype == np.float64
        np.testing.assert_allclose(np.asarray(out), expected, rtol=5e-12, atol=1e-300)


@pytest.mark.parametrize("name", UNARY + BINARY + TERNARY)
def test_special_values_match_jax(name):
    entry = REFERENCE["specials"][name]
    args = [np.asarray([float(t) for t in a], np.float32) for a in entry["args"]]
    expected = np.asarray([float(t) for t in entry["expected"]], np.float64)
    out = np.asarray(_fn(name)(*args), np.float64)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected), err_msg=f"{name} NaNs")
    np.testing.assert_array_equal(np.isinf(out), np.isinf(expected), err_msg=f"{name} infs")
    finite = np.isfinite(expected)
    np.testing.assert_allclose(out[finite], expected[finite], rtol=1e-5, atol=1e-6)
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(out[zeros]), np.signbit(expected[zeros]))


@pytest.mark.parametrize("dtype", [np.dtype(np.float16), BF16])
@pytest.mark.parametrize("name", ["erf", "lgamma", "bessel_i0e", "bessel_i1e"])
def test_narrow_floats_keep_their_dtype(name, dtype):
    args, expected = _reference(name)
    ok = np.all([np.abs(a) < 60 for a in args], axis=0) & (np.abs(expected) < 1e4)
    args = [np.where(ok, a, np.float32(0.5)).astype(dtype) for a in args]
    out = _fn(name)(*args)
    assert out.dtype == dtype
    # compare with the float32 result on the rounded inputs, to the narrow type's precision
    wide = _fn(name)(*(a.astype(np.float32) for a in args))
    tol = 1e-2 if dtype == np.float16 else 6e-2
    np.testing.assert_allclose(
        np.asarray(out, np.float32), np.asarray(wide), rtol=tol, atol=tol * 1e-2
    )


@given(st.sampled_from([(), (0,), (2, 3)]), st.sampled_from(UNARY))
def test_unary_shapes_and_weak_types(shape, name):
    x = np.full(shape, 0.25, np.float32)
    out = _fn(name)(x)
    assert out.shape == shape and out.dtype == np.float32 and not out.weak_type
    weak = _fn(name)(0.25)
    assert weak.weak_type and weak.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), np.broadcast_to(np.asarray(weak), shape))


def test_igamma_derivative_in_x_keeps_weak_scalars_weak():
    # Observed from JAX 0.10.2: jvp of igamma/igammac in x at Python floats (2.0, 1.5) is a
    # weakly typed +-0.33469525; at float32 scalars it is strong.
    for fn, sign in ((lax.igamma, 1.0), (lax.igammac, -1.0)):
        _, t = jvp(lambda x, fn=fn: fn(2.0, x), (1.5,), (1.0,))
        assert t.weak_type and t.dtype == np.float32
        np.testing.assert_allclose(float(t), sign * 0.33469525, rtol=1e-5)
    _, t = jvp(lambda x: lax.igamma(np.float32(2.0), x), (np.float32(1.5),), (np.float32(1.0),))
    assert not t.weak_type


def test_betainc_and_polygamma_derivatives_in_x_keep_weak_scalars_weak():
    # Observed from JAX 0.10.2: grad(betainc(2., 3., x))(0.3) = 1.764 and
    # grad(polygamma(1., x))(2.5) = -0.2362, both weakly typed float32.
    _, t = jvp(lambda x: lax.betainc(2.0, 3.0, x), (0.3,), (1.0,))
    assert t.weak_type
    np.testing.assert_allclose(float(t), 1.764, rtol=1e-4)
    _, t = jvp(lambda x: lax.polygamma(1.0, x), (2.5,), (1.0,))
    assert t.weak_type
    np.testing.assert_allclose(float(t), -0.23620434, rtol=1e-4)


def test_binary_ops_broadcast_like_lax():
    a = np.full((2, 3), 2.0, np.float32)
    assert lax.zeta(a, np.float32(1.0)).shape == (2, 3)
    assert lax.polygamma(np.ones((1, 3), np.float32), a).shape == (2, 3)
    assert lax.zeta(a, 1.5).dtype == np.float32  # a Python float is a weak float32
    with pytest.raises(TypeError, match="igamma got incompatible shapes for broadcasting"):
        lax.igamma(np.ones(2, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match="must have the same number of dimensions"):
        lax.zeta(np.ones(2, np.float32), np.ones((1, 2), np.float32))
    out = lax.betainc(1.0, np.ones((2, 1), np.float32), np.full((1, 3), 0.5, np.float32))
    assert out.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(out), 0.5, rtol=1e-5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: lax.erf(np.ones(2, np.int32)), "erf does not accept dtype int32"),
        (lambda: lax.lgamma(np.ones(2, np.complex64)), "lgamma does not accept dtype complex64"),
        (lambda: lax.bessel_i0e(np.ones(2, np.bool_)), "bessel_i0e does not accept dtype bool"),
        (
            lambda: lax.igamma(np.ones(2, np.float16), 1.0),
            "lax.igamma requires arguments to have the same dtypes, got float16, float32",
        ),
        (
            lambda: lax.polygamma(np.ones(2, np.int32), np.ones(2, np.int32)),
            "polygamma does not accept dtype int32 at position 0",
        ),
        (
            lambda: lax.betainc(np.ones(2, np.float16), np.ones(2, np.float32), 0.5),
            "regularized_incomplete_beta requires arguments to have the same dtypes",
        ),
    ],
)
def test_bad_dtypes_raise_type_error(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_jaxprs_show_the_primitives():
    text = str(make_jaxpr(lambda x: lax.igamma(x, lax.erf_inv(x)))(np.float32(0.5)))
    assert "erf_inv" in text and "igamma" in text
    assert "special_while" not in text  # the loops appear only in the lowering


# --- JVP rules ---------------------------------------------------------------------------------

JVP_POINTS = {
    "erf": [[-1.5, 0.0, 0.7]],
    "erfc": [[-1.5, 0.0, 0.7]],
    "erf_inv": [[-0.6, 0.0, 0.9]],
    "lgamma": [[0.3, 2.5, 7.0]],
    "digamma": [[0.3, 2.5, 7.0]],
    "bessel_i0e": [[-3.0, 0.5, 20.0]],
    "bessel_i1e": [[-3.0, 0.5, 20.0]],
    "igamma": [[0.5, 3.0, 10.0], [0.4, 4.0, 8.0]],
    "igammac": [[0.5, 3.0, 10.0], [0.4, 4.0, 8.0]],
    "polygamma": [[1.0, 0.0, 2.0], [0.6, 2.0, 5.0]],
    "zeta": [[2.0, 3.0, 4.5], [0.6, 2.0, 5.0]],
    "regularized_incomplete_beta": [[1.0, 2.5, 0.5], [2.0, 0.7, 3.0], [0.3, 0.5, 0.9]],
}
# operands without a derivative (JAX raises for them too)
NOT_DIFFERENTIABLE = {"polygamma": {0}, "zeta": {0}, "regularized_incomplete_beta": {0, 1}}


@pytest.mark.parametrize("name", sorted(JVP_POINTS))
def test_jvp_matches_central_differences(name):
    with enable_x64(True):
        args = [np.asarray(p, np.float64) for p in JVP_POINTS[name]]
        fn = _fn(name)
        for i in range(len(args)):
            if i in NOT_DIFFERENTIABLE.get(name, ()):
                continue
            tangent = np.linspace(0.5, 1.5, args[i].size)

            def along(x, i=i):
                return fn(*args[:i], x, *args[i + 1 :])

            primal, tan = jvp(along, (args[i],), (tangent,))
            h = 1e-6
            numeric = (
                np.asarray(along(args[i] + h * tangent)) - np.asarray(along(args[i] - h * tangent))
            ) / (2 * h)
            np.testing.assert_allclose(np.asarray(primal), np.asarray(fn(*args)))
            np.testing.assert_allclose(np.asarray(tan), numeric, rtol=2e-6, atol=1e-9)


def test_jvp_at_the_kinks_matches_jax():
    one = np.float32(1.0)
    _, t = jvp(lax.bessel_i1e, (np.float32(0.0),), (one,))
    assert float(t) == 0.5
    _, t = jvp(lax.bessel_i0e, (np.float32(0.0),), (one,))
    assert float(t) == 0.0


@pytest.mark.parametrize(
    ("name", "position", "error"),
    [
        ("polygamma", 0, ValueError),
        ("zeta", 0, ValueError),
        ("regularized_incomplete_beta", 1, ValueError),
        ("igamma_grad_a", 0, NotImplementedError),
    ],
)
def test_unsupported_derivatives_raise(name, position, error):
    args = [np.float32(2.0), np.float32(0.5), np.float32(0.5)][: 3 if "beta" in name else 2]

    def along(x):
        return _fn(name)(*args[:position], x, *args[position + 1 :])

    with pytest.raises(error):
        jvp(along, (args[position],), (np.float32(1.0),))


def test_grad_of_igamma_in_a_uses_igamma_grad_a():
    args, expected = _reference("igamma_grad_a")
    _, t = jvp(lambda a: lax.igamma(a, args[1]), (args[0],), (np.ones_like(args[0]),))
    np.testing.assert_allclose(np.asarray(t, np.float64), expected, *TOL["igamma_grad_a"])


# --- batching rules -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["erf", "bessel_i0e", "zeta", "regularized_incomplete_beta"])
def test_vmap_matches_a_loop(name):
    args, _ = _reference(name)
    n = 6
    batched = [a[: 2 * n].reshape(n, 2) for a in args]
    # map over all operands, then over the first one only (at axis 1)
    fn = _fn(name)
    out = vmap(fn)(*batched)
    loop = np.stack([np.asarray(fn(*(b[i] for b in batched))) for i in range(n)])
    np.testing.assert_allclose(np.asarray(out), loop, rtol=1e-6)
    if len(args) > 1:
        fixed = [b[0] for b in batched[1:]]
        out = vmap(lambda x: fn(x, *fixed), in_axes=1, out_axes=1)(batched[0].T.copy())
        loop = np.stack([np.asarray(fn(batched[0][i], *fixed)) for i in range(n)], axis=1)
        np.testing.assert_allclose(np.asarray(out), loop, rtol=1e-6)


def test_module_exports():
    for name in UNARY + BINARY + TERNARY + ["betainc"]:
        assert getattr(lax, name) is getattr(special, name)
        assert callable(getattr(lax, name))
    assert lax.erf_p is special.erf_p
    assert math.isclose(float(lax.erf(np.float32(0.5))), math.erf(0.5), rel_tol=1e-6)
