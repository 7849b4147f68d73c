"""modjax.scipy.sparse.linalg (cg, bicgstab, gmres) against numpy and JAX's recorded answers.

``scipy_sparse_linalg_reference.json`` holds JAX 0.10.2's results on fixed
inputs (``scipy_sparse_linalg_reference_gen.py`` regenerates it where jax is
installed): iterates after 1, 2, 3 steps and at convergence, with and without
a preconditioner and a starting guess, for float32, float64 and complex128;
the stopping rule under several ``tol``/``atol``; a pytree ``b`` with a function
``A``; and gradients through the solution. Matching intermediate iterates checks
the iterations step by step, not only the solution. The properties check the
solutions against ``numpy.linalg.solve`` and the transformations against each
other (``jit`` against eager, ``vmap`` against a loop, gradients against finite
differences).
"""

from __future__ import annotations

import inspect
import json
import pathlib
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax.numpy as jnp
import modjax.scipy.sparse
from modjax.autodiff import grad
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.scipy.sparse import linalg as sl
from modjax.tracecore.config import enable_x64

# Compile-bound: the per-package wheel check imports this module but does not rerun it.
pytestmark = pytest.mark.slow

REF = json.loads(pathlib.Path(__file__).with_name("scipy_sparse_linalg_reference.json").read_text())

# A recorded solver name: (function, its extra keyword arguments).
SOLVERS = {
    "cg": sl.cg,
    "bicgstab": sl.bicgstab,
    "gmres_batched": sl.gmres,
    "gmres_incremental": sl.gmres,
}


def solver(name):
    return partial(SOLVERS[name], **REF["solvers"][name])


def decode(value, dtype=np.float64):
    if isinstance(value, dict) and set(value) == {"re", "im"}:
        return (np.asarray(value["re"]) + 1j * np.asarray(value["im"])).astype(dtype)
    return np.asarray(value, dtype)


def close(actual, expected, dtype):
    # float32 iterates differ from JAX's by the rounding of differently ordered sums.
    tol = 5e-4 if np.dtype(dtype).itemsize <= 4 else 1e-9
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=tol, atol=tol)


# --- JAX's recorded answers ----------------------------------------------------------------


def _iterate_id(group):
    return f"{group['solver']}-{group['dtype']}"


@pytest.mark.parametrize("group", REF["iterates"], ids=_iterate_id)
def test_iterates_match_jax(group):
    dtype = np.dtype(group["dtype"])
    solve = solver(group["solver"])
    with enable_x64(True):
        A, b = decode(group["A"], dtype), decode(group["b"], dtype)
        x0, M = decode(group["x0"], dtype), decode(group["M"], dtype)
        # maxiter is only compared with the step count, so it may be traced: one
        # compilation serves every maxiter (None is the default, 10 * size).
        plain = jit(lambda A, b, x0, maxiter: solve(A, b, x0, maxiter=maxiter)[0])
        preconditioned = jit(lambda A, b, x0, M, maxiter: solve(A, b, x0, M=M, maxiter=maxiter)[0])
        for r in group["results"]:
            start = x0 if r["x0"] else np.zeros_like(b)
            maxiter = 10 * b.size if r["maxiter"] is None else r["maxiter"]
            x = preconditioned(A, b, start, M, maxiter) if r["M"] else plain(A, b, start, maxiter)
            assert x.dtype == dtype
            close(x, decode(r["x"], dtype), dtype)


@pytest.mark.parametrize("case", REF["tolerances"], ids=lambda c: c["solver"])
def test_stopping_rule_matches_jax(case):
    solve = solver(case["solver"])
    with enable_x64(True):
        A, b = decode(case["A"]), decode(case["b"])
        for r in case["results"]:
            x, _ = solve(A, b, tol=r["tol"], atol=r["atol"])
            close(x, decode(r["x"]), np.float64)


def _to_vector(t):
    return jnp.concatenate([t["u"], t["v"].reshape(-1)])


def _to_blocks(v):
    return {"u": v[:3], "v": v[3:].reshape(2, 2)}


@pytest.mark.parametrize("case", REF["trees"], ids=lambda c: f"{c['solver']}-{c['maxiter']}")
def test_pytree_b_and_function_A_match_jax(case):
    solve = solver(case["solver"])
    with enable_x64(True):
        A = decode(case["A"])
        b = {k: decode(v) for k, v in case["b"].items()}
        x, _ = solve(lambda t: _to_blocks(A @ _to_vector(t)), b, maxiter=case["maxiter"])
        assert set(x) == {"u", "v"} and x["v"].shape == (2, 2)
        for k in x:
            close(x[k], decode(case["x"][k]), np.float64)


def _loss(name, w):
    solve = solver(name)

    def loss(A, b):
        x, _ = solve(lambda v: A @ v, b, tol=1e-12)
        return jnp.sum(w * x) + jnp.sum(jnp.sin(x) ** 2)

    return loss


@pytest.mark.parametrize("case", REF["grads"], ids=lambda c: c["solver"])
def test_gradients_match_jax_and_finite_differences(case):
    with enable_x64(True):
        A, b, w = decode(case["A"]), decode(case["b"]), decode(case["w"])
        loss = _loss(case["solver"], w)
        np.testing.assert_allclose(float(loss(A, b)), case["loss"], rtol=1e-10)
        gA, gb = grad(loss, argnums=(0, 1))(A, b)
        close(gA, decode(case["grad_A"]), np.float64)
        close(gb, decode(case["grad_b"]), np.float64)
        check_grads(loss, (A, b), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


# --- properties against numpy --------------------------------------------------------------


def spd(rng, n, dtype):
    z = rng.standard_normal((n, n))
    if np.issubdtype(dtype, np.complexfloating):
        z = z + 1j * rng.standard_normal((n, n))
    return (z @ z.conj().T / n + np.eye(n)).astype(dtype)


def general(rng, n, dtype):
    z = rng.standard_normal((n, n))
    if np.issubdtype(dtype, np.complexfloating):
        z = z + 1j * rng.standard_normal((n, n))
    return (z / np.sqrt(n) + 3 * np.eye(n)).astype(dtype)


def vector(rng, shape, dtype):
    v = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


# One jitted solve per (solver, preconditioned), reused by every example of its shapes.
_SOLVE = {name: jit(lambda A, b, name=name: solver(name)(A, b, tol=1e-7)[0]) for name in SOLVERS}
_SOLVE_M = {
    name: jit(lambda A, b, M, name=name: solver(name)(A, b, tol=1e-7, M=M)[0]) for name in SOLVERS
}


@settings(max_examples=examples(6), deadline=None)
@given(
    st.sampled_from(sorted(SOLVERS)),
    st.sampled_from([3, 6]),
    st.sampled_from([np.float32, np.complex64]),
    st.integers(0, 2**16),
)
def test_solution_matches_numpy(name, n, dtype, seed):
    rng = np.random.default_rng(seed)
    A = (spd if name == "cg" else general)(rng, n, dtype)
    b = vector(rng, n, dtype)
    x = _SOLVE[name](A, b)
    assert x.dtype == dtype and x.shape == (n,)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, b), rtol=2e-4, atol=2e-4)


@settings(max_examples=examples(4), deadline=None)
@given(st.sampled_from(sorted(SOLVERS)), st.integers(0, 2**16))
def test_float64_solution_and_preconditioner(name, seed):
    rng = np.random.default_rng(seed)
    with enable_x64(True):
        A = (spd if name == "cg" else general)(rng, 6, np.float64)
        # A badly scaled system, which a Jacobi preconditioner fixes.
        D = np.diag(np.geomspace(1, 100, 6))
        A = D @ A @ D if name == "cg" else D @ A
        b = vector(rng, 6, np.float64)
        M = np.diag(1 / np.diag(A))
        x = _SOLVE_M[name](A, b, M)
        assert x.dtype == np.float64
        # gmres stops on the preconditioned residual M (b - A x), the others on b - A x.
        residual = (M if name.startswith("gmres") else np.eye(6)) @ (b - A @ np.asarray(x))
        assert np.linalg.norm(residual) <= 1e-7 * np.linalg.norm(b)
        np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, b), rtol=1e-4, atol=1e-8)
        # The preconditioner may be a function too.
        y, _ = solver(name)(A, b, tol=1e-7, M=lambda r: jnp.diag(M) * r)
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_function_matrix_and_matmul_operators_agree(name):
    rng = np.random.default_rng(3)
    A = (spd if name == "cg" else general)(rng, 4, np.float32)
    b = vector(rng, 4, np.float32)
    solve = solver(name)
    x, _ = solve(A, b)
    y, _ = solve(lambda v: jnp.dot(A, v, precision="highest"), b)
    z, _ = solve(_Matmul(A), b)
    np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(z), np.asarray(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(_SOLVE[name](A, b)), np.asarray(x), rtol=1e-4)


class _Matmul:
    """A matmul-compatible operator without being an array (``A @ x`` only)."""

    def __init__(self, a):
        self.a = jnp.asarray(a)
        self.shape = self.a.shape

    def __matmul__(self, x):
        return jnp.dot(self.a, x, precision="highest")


# --- transformations -----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_jit_and_vmap_match_eager(name):
    rng = np.random.default_rng(11)
    make = spd if name == "cg" else general
    A = np.stack([make(rng, 4, np.float32) for _ in range(3)])
    B = vector(rng, (3, 4), np.float32)
    solve = solver(name)
    eager = [np.asarray(solve(A[i], B[i])[0]) for i in range(3)]

    def f(A, b):
        return solve(A, b)[0]

    np.testing.assert_allclose(np.asarray(jit(f)(A[0], B[0])), eager[0], rtol=1e-5, atol=1e-6)
    both = vmap(f)(A, B)
    np.testing.assert_allclose(np.asarray(both), np.stack(eager), rtol=1e-5, atol=1e-6)
    # Batched b only: the operator stays one matrix.
    only_b = vmap(f, in_axes=(None, 0))(A[0], B)
    loop = [np.asarray(solve(A[0], B[i])[0]) for i in range(3)]
    np.testing.assert_allclose(np.asarray(only_b), np.stack(loop), rtol=1e-5, atol=1e-6)


def test_complex_systems():
    rng = np.random.default_rng(5)
    with enable_x64(True):
        H = spd(rng, 5, np.complex128)
        G = general(rng, 5, np.complex128)
        b = vector(rng, 5, np.complex128)
        for name in SOLVERS:
            A = H if name == "cg" else G
            x, _ = solver(name)(A, b, tol=1e-10)
            assert x.dtype == np.complex128
            np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, b), rtol=1e-8)
        # Reverse mode through a complex cg transposes A (it is not its own transpose).
        # grad of |x|^2 for x = H^-1 b, in JAX's convention (grad |z|^2 = 2 conj z).
        g = grad(lambda b: jnp.sum(jnp.abs(sl.cg(H, b, tol=1e-12)[0]) ** 2))(b)
        x = np.linalg.solve(H, b)
        expected = 2 * np.linalg.solve(H.T, x.conj())
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-8)


# --- the interface -------------------------------------------------------------------------


def test_signatures_and_modules_match_jax():
    assert str(inspect.signature(sl.cg)) == (
        "(A, b, x0=None, *, tol=1e-05, atol=0.0, maxiter=None, M=None)"
    )
    assert str(inspect.signature(sl.bicgstab)) == str(inspect.signature(sl.cg))
    assert str(inspect.signature(sl.gmres)) == (
        "(A, b, x0=None, *, tol=1e-05, atol=0.0, restart=20, maxiter=None, M=None, "
        "solve_method='batched')"
    )
    assert sorted(sl.__all__) == ["bicgstab", "cg", "gmres"]
    assert modjax.scipy.sparse.linalg is sl and modjax.scipy.sparse.__all__ == ["linalg"]


def test_info_and_output_structure():
    A = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    b = np.array([1.0, 2.0], np.float32)
    for f in (sl.cg, sl.bicgstab):
        x, info = f(A, b)
        assert info is None and x.dtype == np.float32
    x, info = sl.gmres(A, b)
    assert info.dtype == np.int32 and int(info) == 0
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(A, b), rtol=1e-5)
    # A NaN residual ends the loop at once (NaN > atol is false): x is x0, as in JAX.
    x, info = sl.gmres(np.full((2, 2), np.nan, np.float32), b)
    assert int(info) == 0 and not np.asarray(x).any()
    x, info = sl.gmres(A, b, x0=np.array([np.nan, 0.0], np.float32))
    assert int(info) == -1 and np.isnan(np.asarray(x)[0])
    # b of shape (2, 2) and a scalar b are vectors too.
    x, _ = sl.cg(lambda v: 2 * v, jnp.ones((2, 2)))
    np.testing.assert_allclose(np.asarray(x), np.full((2, 2), 0.5))
    x, _ = sl.bicgstab(lambda v: 4 * v, jnp.float32(2))
    assert x.shape == () and float(x) == 0.5


@pytest.mark.parametrize("f", [sl.cg, sl.bicgstab, sl.gmres], ids=lambda f: f.__name__)
def test_errors_match_jax(f):
    b = np.ones(2, np.float32)
    A = np.eye(2, dtype=np.float32)
    square = "linear operator must be a square matrix, but has shape: "
    with pytest.raises(ValueError, match=square + r"\(2, 3\)"):
        f(np.ones((2, 3), np.float32), b)
    with pytest.raises(ValueError, match=square + r"\(3,\)"):
        f(jnp.ones(3), b)
    with pytest.raises(TypeError, match="linear operator must be either a function or ndarray"):
        f([[1.0, 0.0], [0.0, 1.0]], b)
    with pytest.raises(TypeError, match="linear operator must be either a function or ndarray: 3"):
        f(A, b, M=3)
    with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
        f(A, b, x0=(b,))
    with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b"):
        f(lambda x: x[:1], b)
    with pytest.raises(TypeError, match=r"matvec\(\) output pytree structure must match b"):
        f(lambda x: (x,), b)
    # Integer b: the iterates become floats, which the loop's carry rejects (as in JAX).
    with pytest.raises(TypeError, match="carry"):
        f(A, np.array([1, 2]))
    if f is sl.gmres:
        with pytest.raises(ValueError, match="invalid solve_method foo"):
            f(A, b, solve_method="foo")
    else:
        with pytest.raises(ValueError, match=r"arrays in x0 and b must have matching shapes"):
            f(A, b, x0=np.zeros(3, np.float32))
