"""Iterative solvers in scipy.sparse.linalg's names (the counterpart of jax.scipy.sparse.linalg).

``cg``, ``bicgstab`` and ``gmres`` solve ``A x = b`` where ``A`` is a square
matrix, an object with ``@``, or a function computing ``A(x)``, and ``b`` any
pytree of arrays (treated as one vector). Each solve is one
``lax.while_loop``, so it runs under ``jit`` and ``vmap``, and is wrapped in
``lax.custom_linear_solve``: derivatives come from the equation (another solve
with the same method), not from the iterations, and are accurate only when
both solves converge. As in JAX, ``cg`` and ``bicgstab`` return ``info=None``
and ``gmres`` returns ``info`` -1 when its solution has a NaN, else 0.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.numpy._util import ARRAY_TYPES
from modjax.runtime import device_put
from modjax.tracecore.tree_util import tree_leaves, tree_map, tree_structure

from . import _tree_vectors as tv
from ._cg import bicgstab_solve, cg_solve
from ._gmres import CYCLES, gmres_solve

__all__ = ["bicgstab", "cg", "gmres"]


def _as_operator(A) -> Callable:
    """Return ``A`` (or a preconditioner) as a function ``x -> A x`` (JAX's checks and messages)."""
    if callable(A):
        return A
    if isinstance(A, (np.ndarray, *ARRAY_TYPES)):
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {A.shape}")
        return functools.partial(tv.dot, A)
    if hasattr(A, "__matmul__"):
        shape = getattr(A, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")
        return functools.partial(operator.matmul, A)
    raise TypeError(f"linear operator must be either a function or ndarray: {A}")


def _shapes(tree) -> list[tuple[int, ...]]:
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _prepare(A, b, x0, M):
    """Return ``(A, b, x0, M)``: operators as functions, vectors as arrays, ``M`` None if absent."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b, x0 = device_put((b, x0))
    A = _as_operator(A)
    M = None if M is None else _as_operator(M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            "x0 and b must have matching tree structure: "
            f"{tree_structure(x0)} vs {tree_structure(b)}"
        )
    return A, b, x0, M


def _krylov(method: Callable, A, b, x0, *, tol, atol, maxiter, M, symmetric_if_real: bool):
    A, b, x0, M = _prepare(A, b, x0, M)
    if _shapes(x0) != _shapes(b):
        raise ValueError(
            f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}"
        )
    if maxiter is None:
        maxiter = 10 * tv.size(b)  # scipy's default
    solve = functools.partial(method, x0=x0, maxiter=maxiter, tol=tol, atol=atol, M=M)
    # A Hermitian operator is its own transpose only when real; a complex one's
    # transpose is its conjugate, so the transposed solve needs A's transpose.
    symmetric = symmetric_if_real and not any(jnp.iscomplexobj(leaf) for leaf in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` by (preconditioned) conjugate gradients (jax.scipy.sparse.linalg.cg).

    ``A`` (a square matrix, an object with ``@``, or a function of ``x``) must be
    Hermitian positive definite; ``b`` and ``x0`` (default zeros) are pytrees of
    the same structure and shapes, and ``M`` (same forms as ``A``) approximates
    ``A``'s inverse. Iteration stops when ``|b - A x| <= max(tol |b|, atol)`` or
    after ``maxiter`` steps (default ten times the size of ``b``). Return
    ``(x, None)``; derivatives solve again with ``cg``.
    """
    return _krylov(
        cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, symmetric_if_real=True
    )


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` by stabilized biconjugate gradients (jax.scipy.sparse.linalg.bicgstab).

    Arguments as :func:`cg`, but ``A`` may be any nonsingular operator. The
    iteration also stops early on a breakdown (a vanishing ``rho``, ``alpha`` or
    ``omega``). Return ``(x, None)``; derivatives solve again with ``bicgstab``.
    """
    return _krylov(
        bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, symmetric_if_real=False
    )


def gmres(
    A,
    b,
    x0=None,
    *,
    tol=1e-5,
    atol=0.0,
    restart=20,
    maxiter=None,
    M=None,
    solve_method="batched",
):
    """Solve ``A x = b`` by restarted GMRES (jax.scipy.sparse.linalg.gmres).

    ``A``, ``b``, ``x0`` and ``M`` as in :func:`cg`, ``A`` any nonsingular operator
    (``M`` is applied on the left). Each cycle builds a Krylov space of dimension
    ``restart`` (at most the size of ``b``); at most ``maxiter`` cycles run
    (default ten times the size of ``b``), until the preconditioned residual
    ``|M (b - A x)|`` is at most ``max(tol |b|, atol)``. ``solve_method`` is
    ``"batched"`` (solve each cycle's least-squares problem at its end) or
    ``"incremental"`` (Givens QR as it goes, ending a cycle early once
    converged). Return ``(x, info)``, ``info`` -1 if ``x`` has a NaN, else 0.
    """
    A, b, x0, M = _prepare(A, b, x0, M)
    if M is None:
        M = _identity
    n = tv.size(b)
    if maxiter is None:
        maxiter = 10 * n  # scipy's default
    restart = min(restart, n)
    b_norm = tv.norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    # The tolerance inside a cycle applies to M r, so it is scaled by |M b| / |b|.
    ptol = tv.norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
    if solve_method not in CYCLES:
        raise ValueError(
            f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'"
        )
    solve = functools.partial(
        gmres_solve,
        x0=x0,
        atol=atol,
        ptol=ptol,
        restart=restart,
        maxiter=maxiter,
        M=M,
        cycle=CYCLES[solve_method],
    )
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = jnp.where(jnp.isnan(tv.norm(x)), -1, 0)
    return x, info


def _identity(x):
    return x
