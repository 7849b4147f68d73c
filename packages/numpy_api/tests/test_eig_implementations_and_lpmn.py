"""EigImplementation/EighImplementation on CPU, and the deprecated scipy.special.lpmn names.

The behaviour checked was observed with JAX 0.10.2 on CPU: eig accepts None,
falsy values and ``EigImplementation.LAPACK`` and refuses anything else (the
string ``"lapack"`` too) with a ValueError when compiled, not when traced; eigh
refuses ``EighImplementation.JACOBI`` and ``QDWH`` with NotImplementedError
when compiled and ignores any other value (strings included).
``lpmn``/``lpmn_values`` values were recorded from JAX 0.10.2 (float32, no x64)
into ``qdwh_lpmn_jax_reference.json`` by calling ``jax.scipy.special.lpmn(3, 3, z)``
and ``lpmn_values(4, 4, z, is_normalized)`` on the stored ``z`` and writing the
results with ``ndarray.tolist()``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import modjax.scipy.special as special
from modjax import lax
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

L = lax.linalg
RECORDED = json.loads((Path(__file__).parent / "qdwh_lpmn_jax_reference.json").read_text())
X = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)


def test_enum_members_and_values():
    assert [(m.name, m.value) for m in L.EigImplementation] == [
        ("CUSOLVER", "cusolver"),
        ("MAGMA", "magma"),
        ("LAPACK", "lapack"),
    ]
    assert [(m.name, m.value) for m in L.EighImplementation] == [
        ("QR", "qr"),
        ("JACOBI", "jacobi"),
        ("QDWH", "qdwh"),
    ]
    assert repr(L.EigImplementation.LAPACK) == "<EigImplementation.LAPACK: 'lapack'>"


@pytest.mark.parametrize("implementation", [None, 0, False, L.EigImplementation.LAPACK])
def test_eig_accepts(implementation):
    w, vl, vr = L.eig(X, implementation=implementation)
    np.testing.assert_allclose(np.sort(np.asarray(w).real), np.linalg.eigvalsh(X), rtol=1e-5)


@pytest.mark.parametrize(
    "implementation",
    [L.EigImplementation.CUSOLVER, L.EigImplementation.MAGMA, "lapack", "magma"],
)
def test_eig_refuses_when_compiled(implementation):
    make_jaxpr(lambda a: L.eig(a, implementation=implementation))(X)  # tracing is fine
    with pytest.raises(ValueError, match="Only the lapack implementation is supported on CPU."):
        L.eig(X, implementation=implementation)
    with pytest.raises(ValueError, match="Only the lapack implementation is supported on CPU."):
        jit(lambda a: L.eig(a, implementation=implementation))(X)


def test_eig_use_magma_is_deprecated():
    with pytest.warns(DeprecationWarning, match="use_magma is deprecated"):
        L.eig(X, use_magma=False)
    with (
        pytest.warns(DeprecationWarning),
        pytest.raises(ValueError, match="Only the lapack implementation"),
    ):
        L.eig(X, use_magma=True)


@pytest.mark.parametrize("implementation", [None, L.EighImplementation.QR, "qr", "jacobi", "qdwh"])
def test_eigh_accepts(implementation):
    v, w = L.eigh(X, implementation=implementation)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(X), rtol=1e-5)


@pytest.mark.parametrize(
    ("implementation", "message"),
    [
        (L.EighImplementation.JACOBI, "Jacobi implementation is not supported on CPU"),
        (L.EighImplementation.QDWH, "QDWH implementation is only supported on TPU"),
    ],
)
def test_eigh_refuses_when_compiled(implementation, message):
    make_jaxpr(lambda a: L.eigh(a, implementation=implementation))(X)
    with pytest.raises(NotImplementedError, match=message):
        L.eigh(X, implementation=implementation)


def _array(entry):
    return np.asarray(entry["v"], entry["dtype"])


def _deprecated(name):
    with pytest.warns(DeprecationWarning, match=f"jax.scipy.special.{name} is deprecated"):
        return getattr(special, name)


def test_lpmn_names_warn_on_access_and_stay_out_of_the_namespace():
    assert _deprecated("lpmn") is _deprecated("lpmn")
    _deprecated("lpmn_values")
    assert "lpmn" not in special.__all__
    with pytest.raises(AttributeError):
        special.lpmn_nonexistent  # noqa: B018


def test_lpmn_matches_jax():
    case = RECORDED["lpmn"]
    z = _array(case["z"])
    p, d = _deprecated("lpmn")(3, 3, z)
    assert (p.shape, d.shape, p.dtype, d.dtype) == ((4, 4, 7), (4, 4, 7), np.float32, np.float32)
    np.testing.assert_allclose(p, _array(case["p"]), rtol=1e-5, atol=1e-6)
    # The slopes at z = +-1: finite limits, or infinities (order 1) of JAX's signs.
    np.testing.assert_allclose(d, _array(case["d"]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("normalized", [True, False])
def test_lpmn_values_matches_jax(normalized):
    case = RECORDED["lpmn_values"]
    values = _deprecated("lpmn_values")(4, 4, _array(case["z"]), normalized)
    expected = _array(case["normalized" if normalized else "unnormalized"])
    assert values.shape == (5, 5, 7) and values.dtype == np.float32
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)


def test_lpmn_under_jit_and_small_degrees():
    lpmn = _deprecated("lpmn")
    z = np.array([-0.5, 0.25], np.float32)
    p, d = jit(lambda zz: lpmn(2, 2, zz))(z)
    np.testing.assert_allclose(p[2, 2], 3 * (1 - z * z), rtol=1e-6)  # P_2^2 = 3 (1 - z^2)
    np.testing.assert_allclose(d[2, 2], -6 * z, rtol=1e-6)
    p, d = lpmn(0, 0, z)
    assert p.shape == d.shape == (1, 1, 2)
    np.testing.assert_array_equal(p, np.ones((1, 1, 2)))


def test_lpmn_errors_as_jax():
    lpmn_values = _deprecated("lpmn_values")
    with pytest.raises(TypeError, match="z.dtype=int32 is not supported"):
        lpmn_values(2, 2, np.arange(3, dtype=np.int32), False)
    with pytest.raises(TypeError, match="z.dtype=float16 is not supported"):
        lpmn_values(2, 2, np.zeros(3, np.float16), False)
    with pytest.raises(ValueError, match="z must be a 1D array."):
        lpmn_values(2, 2, np.zeros((3, 1), np.float32), False)
    with pytest.raises(NotImplementedError, match="m!=n are not yet supported"):
        lpmn_values(2, 3, np.zeros(3, np.float32), False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(NotImplementedError, match="m!=n are not yet supported"):
            special.lpmn(2, 3, np.zeros(3, np.float32))
