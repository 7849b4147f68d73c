"""lax.custom_linear_solve and lax.custom_root: values, transformations, implicit derivatives.

Linear solves use a dense matvec and a Gauss-Jordan elimination written with
modjax.numpy (no linalg), compared with numpy.linalg.solve; derivatives are
checked with check_grads (forward against finite differences, reverse against
forward) and against the closed forms ``d(A^-1 b) = -A^-1 dA A^-1 b + A^-1 db``.
Roots are found by Newton's method and by bisection written as fixed Python
loops; the derivative of ``sqrt`` found as a root must be ``1 / (2 sqrt(a))``.
Messages and error kinds follow JAX 0.10.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff.testing import check_grads
from modjax.lax.control_flow.solves import linear_solve_p
from modjax.tracecore.jaxpr import jaxpr_equal
from modjax.tracecore.parse import parse_jaxpr

TOL = {"rtol": 2e-5, "atol": 2e-5}


def gauss_jordan(a, b):
    """Solve ``a x = b`` by Gauss-Jordan elimination without pivoting (a diagonally dominant)."""
    n = a.shape[0]
    rows = [jnp.concatenate([a[i], b[i : i + 1]]) for i in range(n)]
    for k in range(n):
        rows[k] = rows[k] / rows[k][k]
        for i in range(n):
            if i != k:
                rows[i] = rows[i] - rows[i][k] * rows[k]
    return jnp.stack([r[n] for r in rows])


def dense_system(seed: int, n: int, symmetric: bool = False):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)).astype(np.float32)
    if symmetric:
        a = a @ a.T
    a = a + n * 2 * np.eye(n, dtype=np.float32)  # well conditioned, no pivoting needed
    b = rng.normal(size=(n,)).astype(np.float32)
    return a, b


def solve_dense(a, b, transpose=True, symmetric=False, **kw):
    """``a^-1 b`` through custom_linear_solve, with a transpose_solve unless told not to."""
    return lax.custom_linear_solve(
        lambda x: jnp.dot(a, x),
        b,
        lambda matvec, x: gauss_jordan(a, x),
        (lambda vecmat, x: gauss_jordan(a.T, x)) if transpose and not symmetric else None,
        symmetric=symmetric,
        **kw,
    )


# --- custom_linear_solve: values --------------------------------------------------------------


@given(st.integers(0, 2**16), st.integers(1, 4))
def test_dense_solve_matches_numpy(seed, n):
    a, b = dense_system(seed, n)
    want = np.linalg.solve(a.astype(np.float64), b)
    np.testing.assert_allclose(solve_dense(jnp.asarray(a), jnp.asarray(b)), want, **TOL)
    got = jax.jit(solve_dense)(a, b)
    np.testing.assert_allclose(got, want, **TOL)


def test_solve_runs_the_solver_not_the_matvec():
    # The result is whatever solve returns: here a deliberately wrong "solver".
    out = lax.custom_linear_solve(lambda x: 2.0 * x, jnp.ones(3), lambda mv, x: 3.0 * x)
    np.testing.assert_allclose(out, np.full(3, 3.0))


def test_pytree_b_and_scalars():
    d = {"u": jnp.array([2.0, 4.0]), "v": jnp.float32(5.0)}
    b = {"u": jnp.array([1.0, 2.0]), "v": jnp.float32(10.0)}

    def matvec(x):
        return {"u": d["u"] * x["u"], "v": d["v"] * x["v"]}

    def solve(mv, y):
        return {"u": y["u"] / d["u"], "v": y["v"] / d["v"]}

    out = lax.custom_linear_solve(matvec, b, solve, symmetric=True)
    np.testing.assert_allclose(out["u"], [0.5, 0.5])
    np.testing.assert_allclose(out["v"], 2.0)
    # A Python scalar b, as in JAX.
    assert float(lax.custom_linear_solve(lambda x: 2.0 * x, 3.0, lambda m, x: x / 2)) == 1.5


def test_jaxpr_is_one_equation_with_all_programs():
    d = jnp.array([2.0, 3.0])
    mv, sol = (lambda x: d * x), (lambda m, x: x / d)
    jaxpr = jax.make_jaxpr(lambda b: lax.custom_linear_solve(mv, b, sol, sol))(d)
    (eqn,) = jaxpr.jaxpr.eqns
    assert eqn.primitive is linear_solve_p and linear_solve_p.name == "custom_linear_solve"
    assert eqn.params["const_lengths"] == (1, 1, 1, 1)
    assert all(eqn.params[k] is not None for k in ("matvec", "vecmat", "solve"))
    # symmetric: vecmat is matvec; no transpose_solve: neither exists.
    sym = jax.make_jaxpr(lambda b: lax.custom_linear_solve(mv, b, sol, symmetric=True))(d)
    assert sym.jaxpr.eqns[0].params["vecmat"] is sym.jaxpr.eqns[0].params["matvec"]
    plain = jax.make_jaxpr(lambda b: lax.custom_linear_solve(mv, b, sol))(d).jaxpr.eqns[0]
    assert plain.params["vecmat"] is None and plain.params["transpose_solve"] is None
    assert plain.params["const_lengths"] == (1, 0, 1, 0)
    assert "custom_linear_solve[" in str(jaxpr)
    # The text reads back (None programs and the const counts included).
    for closed in (jaxpr, sym, jax.make_jaxpr(lambda b: lax.custom_linear_solve(mv, b, sol))(d)):
        back = parse_jaxpr(str(closed), consts=closed.consts)
        assert jaxpr_equal(back, closed)


# --- custom_linear_solve: derivatives ---------------------------------------------------------


@given(st.integers(0, 2**16), st.integers(1, 3))
def test_grads_against_closed_form(seed, n):
    a, b = dense_system(seed, n)
    a64 = a.astype(np.float64)
    x = np.linalg.solve(a64, b)
    ainv = np.linalg.inv(a64)
    # d/db sum(A^-1 b) = A^-T 1 ; d/dA sum(A^-1 b) = -(A^-T 1) x^T
    g_b = ainv.T @ np.ones(n)
    g_a = -np.outer(g_b, x)
    got_a, got_b = jax.grad(lambda a, b: solve_dense(a, b).sum(), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(got_b, g_b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_a, g_a, rtol=1e-4, atol=1e-4)
    # Forward mode needs no transpose_solve.
    jac = jax.jacfwd(lambda b: solve_dense(a, b, transpose=False))(b)
    np.testing.assert_allclose(jac, ainv, rtol=1e-4, atol=1e-4)


def test_check_grads_dense():
    a, b = dense_system(1, 3)
    check_grads(solve_dense, (a, b), order=2, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)
    check_grads(lambda a, b: solve_dense(a, b, transpose=False), (a, b), order=1, modes=("fwd",))


def test_symmetric():
    a, b = dense_system(2, 3, symmetric=True)
    f = lambda a, b: solve_dense(a, b, symmetric=True)  # noqa: E731
    np.testing.assert_allclose(f(a, b), np.linalg.solve(a, b), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        jax.jacrev(f, argnums=1)(a, b), np.linalg.inv(a.astype(np.float64)), rtol=1e-4, atol=1e-4
    )
    check_grads(lambda b: f(a, b), (b,), order=2, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)
    # Under jit the forward and tangent solves are split by partial evaluation.
    g = jax.jit(jax.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1)))(a, b)
    want = jax.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(a, b)
    for got, ref in zip(g, want, strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_derivative_goes_through_matvec_not_through_solve():
    # The solve is exact but "non-differentiable" (stop_gradient): the derivative must
    # still be the implicit one, from matvec.
    d = jnp.array([2.0, 4.0])
    b = jnp.array([1.0, 3.0])

    def f(d):
        return lax.custom_linear_solve(
            lambda x: d * x, b, lambda m, x: x / lax.stop_gradient(d), symmetric=True
        ).sum()

    np.testing.assert_allclose(jax.grad(f)(d), -b / d**2, rtol=1e-6)


def test_reverse_mode_needs_transpose_solve():
    a, b = dense_system(3, 2)
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
        jax.grad(lambda b: solve_dense(a, b, transpose=False).sum())(b)


def test_has_aux():
    d = jnp.array([2.0, 4.0])
    b = jnp.array([1.0, 3.0])

    def solve(mv, x):
        return x / d, {"residual": jnp.sum(mv(x / d) - x), "iters": jnp.int32(7)}

    def f(b):
        return lax.custom_linear_solve(lambda x: d * x, b, solve, solve, has_aux=True)

    x, aux = f(b)
    np.testing.assert_allclose(x, b / d)
    assert int(aux["iters"]) == 7 and float(aux["residual"]) == 0.0
    x, aux = jax.jit(f)(b)
    np.testing.assert_allclose(x, b / d)
    np.testing.assert_allclose(jax.jacfwd(lambda b: f(b)[0])(b), np.diag(1 / d))
    np.testing.assert_allclose(jax.grad(lambda b: f(b)[0].sum())(b), 1 / d)
    xs, auxs = jax.vmap(f)(jnp.stack([b, 2 * b]))
    np.testing.assert_allclose(xs, np.stack([b / d, 2 * b / d]))
    assert auxs["iters"].shape == (2,)


# --- custom_linear_solve: batching ------------------------------------------------------------


def test_vmap_batched_b_and_matrix():
    systems = [dense_system(s, 3) for s in range(4)]
    a = np.stack([s[0] for s in systems])
    b = np.stack([s[1] for s in systems])
    want = np.stack([np.linalg.solve(ai, bi) for ai, bi in zip(a, b, strict=True)])
    np.testing.assert_allclose(
        jax.vmap(solve_dense, in_axes=(None, 0))(a[0], b),
        np.stack([np.linalg.solve(a[0], bi) for bi in b]),
        **TOL,
    )
    np.testing.assert_allclose(
        jax.vmap(solve_dense, in_axes=(0, None))(a, b[0]),
        np.stack([np.linalg.solve(ai, b[0]) for ai in a]),
        **TOL,
    )
    np.testing.assert_allclose(jax.vmap(solve_dense)(a, b), want, **TOL)
    # Batch axes other than 0, under jit.
    got = jax.jit(jax.vmap(solve_dense, in_axes=(2, 1)))(np.moveaxis(a, 0, 2), b.T)
    np.testing.assert_allclose(got, want, **TOL)


def test_vmap_of_grad_and_grad_of_vmap():
    systems = [dense_system(s, 2) for s in range(3)]
    a = np.stack([s[0] for s in systems])
    b = np.stack([s[1] for s in systems])
    g = jax.grad(lambda a, b: solve_dense(a, b).sum(), argnums=(0, 1))
    ga, gb = jax.vmap(g)(a, b)
    for i in range(3):
        la, lb = g(a[i], b[i])
        np.testing.assert_allclose(ga[i], la, **TOL)
        np.testing.assert_allclose(gb[i], lb, **TOL)
    total = jax.grad(lambda b: jax.vmap(solve_dense)(a, b).sum())(b)
    np.testing.assert_allclose(total, gb, **TOL)


def test_vmap_only_the_solver_closure_batched():
    # Only solve's closed-over value is batched: x gets batched, so b is broadcast to match.
    d = jnp.array([2.0, 4.0])
    scales = jnp.array([1.0, 2.0, 3.0])

    def f(s):
        return lax.custom_linear_solve(lambda x: d * x, jnp.ones(2), lambda m, x: s * x / d)

    np.testing.assert_allclose(jax.vmap(f)(scales), np.outer(scales, 1 / d), rtol=1e-6)


# --- custom_linear_solve: errors --------------------------------------------------------------


def test_linear_solve_errors():
    b = jnp.array([1.0, 2.0])
    sol = lambda m, x: x  # noqa: E731
    with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b, got \[\(1,\)\]"):
        lax.custom_linear_solve(lambda x: x[:1], b, sol)
    with pytest.raises(TypeError, match=r"matvec\(\) output pytree structure must match b"):
        lax.custom_linear_solve(lambda x: (x,), b, sol)
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: x, b, lambda m, x: x[:1])
    with pytest.raises(ValueError, match=r"transpose_solve\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda x: x, b, sol, lambda m, x: x.sum())
    # has_aux with a solve that returns no aux: unpacked as in JAX.
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b, got \[\(\)\]"):
        lax.custom_linear_solve(lambda x: x, b, sol, has_aux=True)
    with pytest.raises(ValueError, match="too many values to unpack"):
        lax.custom_linear_solve(lambda x: x, b, lambda m, x: (x, 1, 2), has_aux=True)


# --- custom_root ------------------------------------------------------------------------------


def newton(f, x):
    for _ in range(12):
        x = x - f(x) / jax.grad(f)(x)
    return x


def bisection(f, x0):
    # Bracket [0, 2 x0 + 2] for sqrt-like roots of increasing f; fixed iterations.
    lo, hi = jnp.zeros_like(x0), 2 * x0 + 2.0
    for _ in range(40):
        mid = (lo + hi) / 2
        above = f(mid) > 0
        lo, hi = jnp.where(above, lo, mid), jnp.where(above, mid, hi)
    return (lo + hi) / 2


def scalar_tangent_solve(g, y):
    return y / g(1.0)


def root_sqrt(a, solve=newton):
    return lax.custom_root(lambda x: x**2 - a, 1.0, solve, scalar_tangent_solve)


@given(st.floats(0.25, 20.0))
def test_root_sqrt_and_its_derivative(a):
    a = np.float32(a)
    np.testing.assert_allclose(root_sqrt(a), np.sqrt(a), rtol=1e-5)
    np.testing.assert_allclose(jax.grad(root_sqrt)(a), 0.5 / np.sqrt(a), rtol=1e-4)
    np.testing.assert_allclose(jax.jacfwd(root_sqrt)(a), 0.5 / np.sqrt(a), rtol=1e-4)
    np.testing.assert_allclose(jax.grad(jax.grad(root_sqrt))(a), -0.25 * a**-1.5, rtol=1e-3)


def test_root_bisection_jit_vmap():
    a = jnp.array([2.0, 9.0, 0.5])
    f = lambda a: root_sqrt(a, bisection)  # noqa: E731
    np.testing.assert_allclose(jax.vmap(f)(a), np.sqrt(a), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(f)))(a), 0.5 / np.sqrt(a), rtol=1e-4)
    check_grads(f, (jnp.float32(3.0),), order=2, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)


def test_root_vector_and_no_derivative_through_guess():
    a = jnp.array([4.0, 9.0])

    def f(a, guess):
        return lax.custom_root(
            lambda x: x**2 - a,
            guess,
            newton_vector,
            lambda g, y: y / g(jnp.ones_like(y)),  # g is diagonal
        )

    def newton_vector(f, x):
        # f acts elementwise, so its Jacobian is the diagonal that a JVP with ones gives.
        for _ in range(12):
            x = x - f(x) / jax.jvp(f, (x,), (jnp.ones_like(x),))[1]
        return x

    guess = jnp.ones(2)
    np.testing.assert_allclose(f(a, guess), [2.0, 3.0], rtol=1e-5)
    jac_a, jac_g = jax.jacrev(f, argnums=(0, 1))(a, guess)
    np.testing.assert_allclose(jac_a, np.diag([0.25, 1 / 6]), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(jac_g, np.zeros((2, 2)))


def test_root_has_aux():
    def solve(f, x):
        return newton(f, x), {"f_at_root": f(newton(f, x)), "iters": jnp.int32(12)}

    def f(a):
        return lax.custom_root(lambda x: x**2 - a, 1.0, solve, scalar_tangent_solve, has_aux=True)

    x, aux = f(2.0)
    np.testing.assert_allclose(x, np.sqrt(2.0), rtol=1e-6)
    assert int(aux["iters"]) == 12 and abs(float(aux["f_at_root"])) < 1e-5
    np.testing.assert_allclose(jax.grad(lambda a: f(a)[0])(2.0), 0.5 / np.sqrt(2), rtol=1e-5)
    # Integer aux under differentiation gets a float0 zero tangent (JAX fails here).
    x_dot = jax.jvp(lambda a: f(a)[0], (2.0,), (1.0,))[1]
    np.testing.assert_allclose(x_dot, 0.5 / np.sqrt(2), rtol=1e-5)


def test_root_errors():
    ts = scalar_tangent_solve
    with pytest.raises(TypeError, match=r"f\(\) output pytree structure must match initial_guess"):
        lax.custom_root(lambda x: (x,), 1.0, newton, ts)
    with pytest.raises(
        TypeError, match=r"solve\(\) output pytree structure must match initial_guess"
    ):
        lax.custom_root(lambda x: x**2 - 2, 1.0, lambda f, x: (x,), ts)
    with pytest.raises(ValueError, match="a pytree tuple with auxiliary output was expected"):
        lax.custom_root(lambda x: x**2 - 2, 1.0, newton, ts, has_aux=True)
    with pytest.raises(TypeError, match=r"tangent_solve\(\) output pytree structure must match x"):
        lax.custom_root(lambda x: x**2 - 2, 1.0, newton, lambda g, y: (y,))
