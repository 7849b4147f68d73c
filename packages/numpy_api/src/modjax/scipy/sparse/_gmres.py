"""Restarted GMRES: Arnoldi cycles of ``restart`` steps inside a ``lax.while_loop``.

Each leaf of the Krylov basis is stored as one array with a trailing axis of
``restart + 1`` columns (so a pytree ``b`` needs no flattening), the Hessenberg
matrix as ``H[k, :]``, the k-th *column* of the textbook matrix stored as a row
so that each step writes one row.

Two ways to finish a cycle, as JAX's ``solve_method``:

- ``"batched"`` runs all ``restart`` Arnoldi steps (fewer, larger operations,
  which suits accelerators) and then solves the small least-squares problem by
  its normal equations;
- ``"incremental"`` triangularizes ``H`` with Givens rotations as it goes,
  which gives the residual norm after each step for free and so stops the
  cycle as soon as it falls below the inner tolerance ``ptol``.

Cycles repeat until the (preconditioned) residual norm is at most ``atol`` or
``maxiter`` cycles have run.
"""

from __future__ import annotations

from collections.abc import Callable

import modjax.numpy as jnp
from modjax import lax
from modjax.lax.elementwise import _convert_element_type
from modjax.scipy import linalg as jsp_linalg
from modjax.tracecore import dtypes
from modjax.tracecore.tree_util import tree_leaves, tree_map

from . import _tree_vectors as tv


def _safe_normalize(x, thresh=None):
    """Return ``(x / |x|, |x|)``, or zeros for both when ``|x| <= thresh`` (default eps).

    A norm at rounding level means the vector is numerically zero (an invariant
    subspace was found); dividing by it would fill the basis with noise.
    """
    n = tv.norm(x)
    dtype, weak = dtypes.result_type(*tree_leaves(x), return_weak_type_flag=True)
    if thresh is None:
        thresh = dtypes.finfo(n.dtype).eps
    thresh = jnp.real(jnp.asarray(thresh).astype(dtype))
    keep = n > thresh
    n_cast = _convert_element_type(n, dtype, weak)
    unit = tree_map(lambda leaf: jnp.where(keep, leaf / n_cast, 0.0), x)
    return unit, jnp.where(keep, n, 0.0)


def _column(V, k):
    return tree_map(lambda X: X[..., k], V)


def _coefficients(V, v):
    """Return ``V^H v``, the overlaps of ``v`` with every basis column, summed over leaves."""

    def leaf(X, y):
        # Contract every axis of the leaf, leaving the basis axis.
        return jnp.tensordot(
            jnp.conj(X),
            y,
            axes=(tuple(range(y.ndim)), tuple(range(y.ndim))),
            precision=lax.Precision.HIGHEST,
        )

    return tv.total(map(leaf, tree_leaves(V), tree_leaves(v)))


def _combine(V, y):
    """Return ``V[..., :len(y)] @ y``, a basis combination, leaf by leaf."""
    return tree_map(lambda X: tv.dot(X[..., : y.shape[0]], y), V)


def _arnoldi_step(k, A, M, V, H):
    """Extend the basis ``V`` by ``M(A(V[:, k]))`` orthonormalized; write its overlaps to ``H[k]``.

    Return ``(V, H, breakdown)``: ``breakdown`` when the new vector lies in the
    span of the basis (an exact solution is in the current Krylov space).
    """
    dtype = dtypes.result_type(*tree_leaves(V))
    v = M(A(_column(V, k)))
    _, v_norm = _safe_normalize(v)
    # One pass of classical Gram-Schmidt (JAX's "twice is enough" loop stops
    # after its first pass with two iterations allowed).
    h = _coefficients(V, v)
    v = tv.sub(v, _combine(V, h))
    unit, new_norm = _safe_normalize(v, thresh=dtypes.finfo(dtype).eps * v_norm)
    V = tree_map(lambda X, u: X.at[..., k + 1].set(u), V, unit)
    h = h.at[k + 1].set(new_norm.astype(dtype))
    return V, H.at[k, :].set(h), new_norm == 0


def _initial_basis(unit_residual, restart: int):
    return tree_map(
        lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual
    )


def _rotate(v, i, cs, sn):
    """Apply the Givens rotation ``(cs, sn)`` to entries ``i, i+1`` of ``v``."""
    a, b = v[i], v[i + 1]
    v = v.at[i].set(jnp.conj(cs) * a - jnp.conj(sn) * b)
    return v.at[i + 1].set(sn * a + cs * b)


def _givens(a, b):
    """Return ``(cs, sn)`` whose rotation zeroes ``b`` against ``a``.

    The ratio is taken with the larger magnitude in the denominator so that it
    never overflows.
    """
    b_larger = jnp.abs(a) < jnp.abs(b)
    t = -jnp.where(b_larger, a, b) / jnp.where(b_larger, b, a)
    r = lax.rsqrt(1 + jnp.abs(t) ** 2).astype(t.dtype)
    b_zero = jnp.abs(b) == 0
    cs = jnp.where(b_zero, 1, jnp.where(b_larger, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(b_larger, r, r * t))
    return cs, sn


def _cycle_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart: int, M):
    """Run one GMRES cycle with Givens QR; return ``(x, unit residual, residual norm)``."""
    V = _initial_basis(unit_residual, restart)
    dtype = dtypes.result_type(*tree_leaves(b))
    # Rows not reached before an early stop stay those of the identity, so the
    # triangular solve below stays regular.
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    g = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def not_done(state):
        k, err = state[0], state[1]
        return (k < restart) & (err > ptol)

    def step(state):
        k, _, V, R, g, givens = state
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]), H[k, :])
        cs, sn = _givens(row[k], row[k + 1])
        givens = givens.at[k, :].set(jnp.stack([cs, sn]))
        R = R.at[k, :].set(_rotate(row, k, cs, sn))
        g = _rotate(g, k, cs, sn)
        return k + 1, jnp.abs(g[k + 1]), V, R, g, givens

    state = (0, residual_norm, V, R, g, givens)
    _, _, V, R, g, _ = lax.while_loop(not_done, step, state)
    y = jsp_linalg.solve_triangular(R[:, :-1].T, g[:-1])
    return _finish(A, b, x0, V, y, M)


def _cycle_batched(A, b, x0, unit_residual, residual_norm, ptol, restart: int, M):
    """Run one full GMRES cycle, then least squares; return ``(x, unit residual, norm)``."""
    del ptol  # the residual is not tracked inside the cycle
    V = _initial_basis(unit_residual, restart)
    dtype, weak = dtypes.result_type(*tree_leaves(b), return_weak_type_flag=True)
    # As in the incremental cycle, rows not reached (after a breakdown) keep the
    # identity so that the normal equations stay positive definite.
    H = _convert_element_type(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak)

    def not_done(state):
        _, _, breakdown, k = state
        return (k < restart) & ~breakdown

    def step(state):
        V, H, _, k = state
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(not_done, step, (V, H, False, 0))
    g = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
    # min |H^T y - g|: the normal equations H* H^T y = H* g are small (restart squared) and
    # positive definite, and a Cholesky solve of them is cheap on any device.
    Hc = jnp.conj(H)
    y = jsp_linalg.solve(tv.dot(Hc, H.T), tv.dot(Hc, g), assume_a="pos")
    return _finish(A, b, x0, V, y, M)


def _finish(A, b, x0, V, y, M):
    x = tv.add(x0, _combine(V, y))
    unit, n = _safe_normalize(M(tv.sub(b, A(x))))
    return x, unit, n


CYCLES: dict[str, Callable] = {"incremental": _cycle_incremental, "batched": _cycle_batched}


def gmres_solve(A, b, *, x0, atol, ptol, restart: int, maxiter: int, M, cycle: Callable):
    """Return the GMRES iterate after cycles of ``cycle`` until ``|M r| <= atol``."""
    unit, n = _safe_normalize(M(tv.sub(b, A(x0))))

    def not_done(state):
        _, k, _, n = state
        return (k < maxiter) & (n > atol)

    def step(state):
        x, k, unit, n = state
        x, unit, n = cycle(A, b, x, unit, n, ptol, restart, M)
        return x, k + 1, unit, n

    x, *_ = lax.while_loop(not_done, step, (x0, 0, unit, n))
    return x
