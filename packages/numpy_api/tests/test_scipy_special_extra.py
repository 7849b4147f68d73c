"""The jax.scipy.special functions of ``_special_extra`` against JAX 0.10.2's own values.

``scipy_special_extra_reference.json`` holds what JAX returns (values,
dtypes and elementwise derivatives) in float32 and, with x64, float64; the
script that recorded it is stored in the file under ``recorded_with``
(modjax never imports jax). Closed forms and rational approximations match to
a few ulps; the series summed in loops (E_n, 1F1, 2F1) to a few tens, since
JAX's own batched and scalar loops differ by that much (exp1(1) in float32:
0.21938396 batched, 0.21938422 scalar).
"""

from __future__ import annotations

import functools
import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.autodiff import grad, jvp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.scipy import special as sp
from modjax.tracecore.config import enable_x64

# Compile-bound: the per-package wheel check imports this module but does not rerun it.
pytestmark = pytest.mark.slow

REFERENCE = json.loads(
    pathlib.Path(__file__).with_name("scipy_special_extra_reference.json").read_text()
)
DTYPES = ["float32", "float64"]

# case: (function, ulps allowed on the values)
CASES = {
    "comb": (sp.comb, 8),
    "comb_repetition": (lambda n, k: sp.comb(n, k, repetition=True), 8),
    "boxcox": (sp.boxcox, 4),
    "boxcox1p": (sp.boxcox1p, 4),
    "erfcx": (sp.erfcx, 4),
    "dawsn": (sp.dawsn, 4),
    "exp1": (sp.exp1, 16),
    "expi": (sp.expi, 16),
    "expn": (sp.expn, 16),
    "sici": (sp.sici, 4),
    "fresnel": (sp.fresnel, 4),
    "spence": (sp.spence, 4),
    "poch": (sp.poch, 8),
    "hyp1f1": (sp.hyp1f1, 32),
    "hyp2f1": (sp.hyp2f1, 32),
    "hyp2f1_grad": (sp.hyp2f1, 32),
    "owens_t": (sp.owens_t, 4),
}


def _close(actual, expected, dtype, ulps, scale=0.0):
    """Assert agreement to ``ulps`` relative ulps plus ``scale`` ulps absolute (a number or
    one per element); NaN == NaN and infinities must match."""
    eps = np.finfo(dtype).eps
    actual = np.asarray(actual, np.float64)
    expected = np.broadcast_to(np.asarray(expected, np.float64), actual.shape)
    allowed = ulps * eps * np.abs(expected) + np.asarray(scale) * eps + np.finfo(dtype).tiny
    with np.errstate(invalid="ignore"):
        ok = (np.abs(actual - expected) <= allowed) | (actual == expected)
    ok |= np.isnan(actual) & np.isnan(expected)
    assert ok.all(), f"{dtype}, {ulps} ulps:\nactual   {actual[~ok]}\nexpected {expected[~ok]}"


# every case is padded (repeating its last point) to one length, so that eager mode
# compiles each operation once for all functions instead of once per table size
LENGTH = 18


def _pad(values):
    values = np.asarray(values, np.float64)
    return np.concatenate([values, np.repeat(values[-1:], LENGTH - values.size)])


def _args(entry, dtype):
    return [_pad(a).astype(dtype) for a in entry["args"]]


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def _derivative(fn, entry, key):
    """The elementwise derivative of output j in argument i (``key`` is ``"j:i"``)."""
    j, i = map(int, key.split(":"))
    scalar = fn if len(entry["values"]) == 1 else (lambda *a: fn(*a)[j])
    return vmap(grad(scalar, argnums=i))


@functools.cache
def _computed(name, dtype):
    """A case's values and, in float64, its derivatives: one jitted program per case and dtype.

    Compiling the whole case once costs far less than compiling it op by op in
    eager mode; the values and derivative tests share the result.
    """
    fn, _ = CASES[name]
    entry = REFERENCE[dtype][name]
    # float64 only: the float32 derivatives are the same code, and in float32 the ones
    # formed by cancellation (d comb / d N at large N) are rounding noise in JAX as here
    keys = list(entry["grads"]) if dtype == "float64" else []

    def program(*args):
        return _outputs(fn(*args)), {key: _derivative(fn, entry, key)(*args) for key in keys}

    with enable_x64(dtype == "float64"):
        return jit(program)(*_args(entry, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(set(CASES) - {"hyp2f1_grad"}))
def test_values_match_jax(name, dtype):
    _, ulps = CASES[name]
    entry = REFERENCE[dtype][name]
    outs, _ = _computed(name, dtype)
    for out, expected in zip(outs, entry["values"], strict=True):
        assert str(out.dtype) == entry["dtype"]
        _close(out, _pad(expected), dtype, ulps)


# d boxcox / d lmbda at lmbda = 0.001 is the difference of terms ~1/lmbda larger than it:
# JAX's recorded (op-by-op) and the jitted derivative round those terms apart by an ulp.
CANCELLING = {"boxcox": 1e3, "boxcox1p": 1e3}


@pytest.mark.parametrize("name", sorted(n for n in CASES if REFERENCE["float64"][n]["grads"]))
def test_derivatives_match_jax(name):
    entry = REFERENCE["float64"][name]
    _, derivatives = _computed(name, "float64")
    assert set(derivatives) == set(entry["grads"])
    for key, expected in entry["grads"].items():
        # derivatives formed by cancellation (1 - 2x dawsn(x), d comb / d k = comb times a
        # difference of digammas) lose absolute, not relative, accuracy: allow a few ulps
        # of the larger of 1 and the function's value besides
        value = np.abs(_pad(entry["values"][int(key.split(":")[0])]))
        scale = 32 * np.maximum(1, np.nan_to_num(value, posinf=0)) * CANCELLING.get(name, 1)
        _close(derivatives[key], _pad(expected), "float64", 32, scale=scale)


def _close_complex(actual, expected, dtype):
    """Assert agreement to 8 ulps of the largest magnitude expected."""
    expected = np.asarray(expected[0]) + 1j * np.asarray(expected[1])
    scale = 8 * np.abs(expected).max()
    _close(np.abs(np.asarray(actual) - expected), 0, dtype, 0, scale=scale)


@pytest.mark.parametrize("dtype", DTYPES)
def test_wofz_and_complex_erfcx(dtype):
    ref = REFERENCE[dtype]
    cdtype = np.complex64 if dtype == "float32" else np.complex128
    re, im = ref["wofz"]["args"][0]
    z = (np.asarray(re) + 1j * np.asarray(im)).astype(cdtype)
    real = np.asarray(ref["wofz_real"]["args"][0], dtype)

    def program(z, real):
        w, dw = jvp(sp.wofz, (z,), (jnp.ones_like(z),))
        return w, dw, sp.erfcx(z), sp.wofz(real)

    with enable_x64(dtype == "float64"):
        w, dw, ec, w_real = jit(program)(z, real)
    assert str(w.dtype) == ref["wofz"]["dtype"]
    assert str(w_real.dtype) == ref["wofz_real"]["dtype"]
    _close_complex(w, ref["wofz"]["values"][0], dtype)
    _close_complex(dw, ref["wofz"]["jvp"], dtype)
    _close_complex(ec, ref["erfcx_complex"]["values"][0], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli_bessel_jn_sph_harm_y(dtype):
    ref = REFERENCE[dtype]
    # n = 1: the first numbers only; 10 and 31: from zeta, 31 the longest table
    with enable_x64(dtype == "float64"):
        for n in ("1", "10", "31"):
            out = sp.bernoulli(int(n))
            assert out.dtype == np.dtype(dtype) and out.shape == (int(n) + 1,)
            _close(out, ref["bernoulli"][n], dtype, 8)
        z = np.asarray(ref["bessel_jn"]["args"][0], dtype)
        n, m, theta, phi = ref["sph_harm_y"]["args"]

        def program(z, theta, phi):
            bessel = sp.bessel_jn(z, v=3)
            slope = vmap(grad(lambda v: sp.bessel_jn(v, v=3)[2]))(z)
            return bessel, slope, sp.sph_harm_y(np.asarray(n), np.asarray(m), theta, phi)

        out, g, y = jit(program)(z, np.asarray(theta, dtype), np.asarray(phi, dtype))
    assert out.shape == (4, z.size) and out.dtype == np.dtype(dtype)
    _close(out, ref["bessel_jn"]["values"], dtype, 16, scale=4)
    # JAX's derivative, NaN where its float32 recurrence overflows (small |z|). In float32
    # it is -0.819 at z = 5 (exact -0.346): the division JVP, JAX's -g * x * y**-2 here
    # too, squares the normalizer (8.9e29 > sqrt(float32 max)) and so loses its term.
    _close(g, ref["bessel_jn"]["grad"], dtype, 16, scale=4)
    assert str(y.dtype) == ref["sph_harm_y"]["dtype"]
    _close(np.real(y), ref["sph_harm_y"]["values"][0], dtype, 8, scale=4)
    _close(np.imag(y), ref["sph_harm_y"]["values"][1], dtype, 8, scale=4)


# jitted once at import, so the examples share their compiled programs
JIT_CASES = [
    (sp.erfcx, lambda x, a: (x,)),
    (sp.expi, lambda x, a: (x,)),
    (sp.hyp1f1, lambda x, a: (a, a + 1, x / 10)),
]
JITTED = [jit(fn) for fn, _ in JIT_CASES]


@settings(max_examples=2, deadline=None)
@given(st.lists(st.floats(0.05, 30.0), min_size=4, max_size=4))
def test_jit_and_vmap_equal_eager(xs):
    x = np.asarray(xs, np.float32)
    a = np.asarray(xs[::-1], np.float32) / 10
    for (fn, make_args), jitted in zip(JIT_CASES, JITTED, strict=True):
        args = make_args(x, a)
        eager = _outputs(fn(*args))
        for got in (_outputs(jitted(*args)), _outputs(vmap(fn)(*args))):
            for e, g in zip(eager, got, strict=True):
                _close(g, e, "float32", 4)  # XLA may fuse differently under jit


def test_promotion_and_errors():
    assert sp.erfcx(1).dtype == np.float32 and sp.boxcox(2, 1).dtype == np.float32
    assert sp.comb(5, 2).dtype == np.float32
    with pytest.raises(ValueError, match="dawsn does not support complex"):
        sp.dawsn(np.complex64(1))
    with pytest.raises(ValueError, match="expi does not support complex"):
        sp.expi(np.complex64(1))
    with pytest.raises(TypeError, match="is not supported"):
        sp.spence(np.arange(3))
    with pytest.raises(ValueError, match="non-negative"):
        sp.bernoulli(-1)
    with pytest.raises(NotImplementedError, match="diff_n"):
        sp.sph_harm_y(np.array([1]), np.array([0]), 0.3, 0.2, diff_n=1)
    with pytest.raises(NotImplementedError, match="complex-valued"):
        sp.fresnel(np.complex64(1))
