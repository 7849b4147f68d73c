"""lax values, gradients and errors equal JAX 0.10.2's bit for bit (a differential sweep).

The cases (``lax_jax_bits_cases.py``) cover convolutions, window reductions, cumulative
ops, associative_scan, sort/top_k, dynamic slicing, scatter min/max gradients and
structural errors; ``lax_jax_bits_sweep_gen.py`` recorded JAX's answers in
``lax_jax_bits_sweep.json``. Among what they pin down: associative_scan interleaves as
JAX's (zero-padded adds, so XLA compiles its derivatives into JAX's bits), scatter
min/max differentiate by JAX's formula, reduce_window's SAME padding dilates the window,
complex convolutions run as three real ones, and JAX's error types and texts.
"""

import pathlib
import sys

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import vjp
from modjax.runtime import jit
from modjax.runtime.eval_shape import eval_shape

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from cpu_kind import load_reference  # noqa: E402
from lax_jax_bits_cases import CASES, cotangent  # noqa: E402

REFERENCE = load_reference(pathlib.Path(__file__).parent / "lax_jax_bits_sweep.json")["cases"]


def _describe(x):
    if isinstance(x, tuple | list):
        return [_describe(v) for v in x]
    a = np.asarray(x)
    return {
        "dtype": str(a.dtype),
        "shape": list(a.shape),
        "weak": bool(x.aval.weak_type),
        "hex": a.tobytes().hex(),
    }


def _run(kind, fn, args):
    f = lambda *a: fn(lax, jnp, *a)  # noqa: E731
    try:
        if kind == "value":
            return _describe(jit(f)(*args))
        out = eval_shape(f, *args)
        ct = cotangent(out.shape, out.dtype)
        return _describe(jit(lambda ct, *a: vjp(f, *a)[1](ct))(ct, *args))
    except Exception as e:  # noqa: BLE001 - compared with JAX's error
        return {"error": type(e).__name__, "message": str(e).split("\n")[0]}


def _arrays(d):
    return d if isinstance(d, list) else [d]


def _values(d):
    return np.frombuffer(bytes.fromhex(d["hex"]), np.dtype(d["dtype"]))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    kind, fn, args = CASES[name]
    want, got = REFERENCE[name], _run(kind, fn, args)
    if "error" in want or "error" in got:
        assert got == want
        return
    for w, g in zip(_arrays(want), _arrays(got), strict=True):
        assert (g["dtype"], g["shape"], g["weak"]) == (w["dtype"], w["shape"], w["weak"])
        if g["hex"] != w["hex"]:  # show the values, not the bytes
            np.testing.assert_array_equal(_values(g), _values(w))
            pytest.fail("equal values with different bits (signed zeros or NaN payloads)")
