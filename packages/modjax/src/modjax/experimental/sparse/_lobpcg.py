"""LOBPCG for the top-k eigenpairs of a symmetric operator (``sparse.linalg.lobpcg_standard``).

Locally Optimal Block Preconditioned Conjugate Gradient (Knyazev), in the robust form
of Duersch, Shao, Yang and Gu (arXiv:1704.07458): each step keeps three orthonormal
blocks, the current eigenvector estimates ``X``, the search directions ``P`` and the
residuals ``R``, and solves the small eigenproblem of the operator restricted to their
span (Rayleigh-Ritz). Orthonormal bases come from SVQB (an eigendecomposition of the
Gram matrix), applied twice; the first ``P`` extends ``X`` with a block Householder
reflector, so the start is deterministic. No preconditioner and no locking: an eigenpair
counts as converged when its residual is within a multiple of the rounding error one
expects from computing it, and the loop stops when all ``k`` are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.runtime.jit import jit
from modjax.tracecore.basearray import Array

__all__ = ["lobpcg_standard"]


def _dot(a, b):
    return lax.dot(a, b, precision=(lax.Precision.HIGHEST, lax.Precision.HIGHEST))


def _column_norms(x):
    return jnp.linalg.norm(x, ord=2, axis=0, keepdims=True)


def _eigh_descending(sym):
    w, v = jnp.linalg.eigh(sym)
    return w[::-1], v[:, ::-1]


def _svqb(x):
    """An orthonormal basis of the columns of ``x``; columns of a rank deficit become 0."""
    norms = _column_norms(x)
    x = x / jnp.where(norms == 0, 1.0, norms)
    gram = _dot(x.T, x)
    w, v = _eigh_descending(gram)
    floor = jnp.finfo(x.dtype).eps * w[0]
    inv_sqrt = jnp.where(floor > 0, jnp.maximum(w, floor), 1.0) ** (-0.5)
    basis = _dot(x, v * inv_sqrt[None, :])
    keep = ((w > floor) * (jnp.diag(gram) > 0.0))[None, :]
    basis = basis * keep.astype(basis.dtype)
    norms = _column_norms(basis)
    keep = keep * (norms > 0.0)
    return basis / jnp.where(keep, norms, 1.0)


def _orthonormalize(x):
    return _svqb(_svqb(x))


def _without(basis, u):
    """The part of ``u`` orthogonal to the orthonormal ``basis``, orthonormalized.

    Subtracting twice and orthonormalizing in between keeps it orthogonal despite
    cancellation; columns that end up small are dropped (zeroed) rather than kept with
    a component along ``basis``.
    """
    for _ in range(2):
        u = u - _dot(basis, _dot(basis.T, u))
        u = _orthonormalize(u)
    for _ in range(2):
        u = u - _dot(basis, _dot(basis.T, u))
    return u * (_column_norms(u) >= 0.99).astype(u.dtype)


def _complement(x, m: int):
    """``m`` orthonormal columns orthogonal to the orthonormal ``(n, k)`` block ``x``.

    With ``x = [x_top; x_rest]`` (``x_top`` is ``k x k``, SVD ``u s vt``), the block
    reflector ``H = I - 2 w w^T`` built from ``y = [x_top + u vt; x_rest]`` maps
    ``[-u vt; 0]`` to ``x``, so ``H`` applied to ``[0; I_m; 0]`` is orthogonal to ``x``.
    """
    n, k = x.shape
    top, rest = x[:k], x[k:]
    u, s, vt = jnp.linalg.svd(top)
    y = jnp.concatenate([top + _dot(u, vt), rest], axis=0)
    w = _dot(y, vt.T * ((2 * (1 + s)) ** -0.5)[None, :])
    unit = jnp.concatenate([jnp.eye(m, dtype=x.dtype), jnp.zeros((n - k - m, m), x.dtype)], 0)
    reflected = -2 * _dot(w, _dot(w[k:].T, unit))
    return reflected.at[k:].add(unit)


def _check(A: Callable, X) -> None:
    n, k = X.shape
    if k == 0:
        raise ValueError(f"must have search dim > 0, got {k}")
    if k * 5 >= n:
        raise ValueError(f"expected search dim * 5 < matrix dim (got {k * 5}, {n})")
    probe = A(jnp.zeros((n, 1), dtype=X.dtype))
    if probe.dtype != X.dtype:
        raise ValueError(f"A, X must have same dtypes (were {probe.dtype}, {X.dtype})")
    if probe.shape != (n, 1):
        raise ValueError(f"A must be ({n}, {n}) matrix A, got output {probe.shape}")


def _run(A: Callable, X, m: int, tol):
    n, k = X.shape
    _check(A, X)
    if tol is None:
        tol = float(jnp.finfo(X.dtype).eps)
    X = _orthonormalize(X)
    P = _complement(X, k)
    AX = A(X)
    theta = jnp.sum(X * AX, axis=0, keepdims=True)
    R = AX - theta * X

    def more(state):
        i, _, _, _, converged, _ = state
        return jnp.logical_and(i < m, converged < k)

    def step(state):
        i, X, P, R, _, _ = state
        R = _without(jnp.concatenate((X, P), axis=1), R)
        S = jnp.concatenate((X, P, R), axis=1)
        theta, Q = _eigh_descending(_dot(S.T, A(S)))
        B = Q[:, :k]
        X = _dot(S, B / _column_norms(B))
        X = X / _column_norms(X)
        # New directions: the part of the Ritz vectors outside the old X, made
        # orthogonal to the new X in the small basis before mapping back through S.
        q, _ = jnp.linalg.qr(Q[:k, k:].T)
        P = _dot(S, _dot(Q[:, k:], q))
        norms = _column_norms(P)
        P = P / jnp.where(norms == 0, 1.0, norms)
        AX = A(X)
        R = AX - theta[None, :k] * X
        scale = 10 * n * (jnp.linalg.norm(AX, ord=2, axis=0) + theta[:k])
        converged = jnp.sum(jnp.linalg.norm(R, ord=2, axis=0) < tol * scale)
        return i + 1, X, P, R, converged, theta[None, :k]

    i, X, _, _, _, theta = lax.while_loop(more, step, (0, X, P, R, 0, theta))
    return theta[0, :], X, i


@functools.partial(jit, static_argnames=("m",))
def _run_matrix(A, X, m: int, tol):
    return _run(functools.partial(_dot, A), X, m, tol)


_run_callable = jit(_run, static_argnames=("A", "m"))


def lobpcg_standard(A, X, m: int = 100, tol=None):
    """The ``k`` largest eigenvalues and eigenvectors of a symmetric ``A`` by LOBPCG
    (jax.experimental.sparse.linalg.lobpcg_standard).

    ``A`` is an ``(n, n)`` symmetric (Hermitian) array or a function computing
    ``A @ V`` for an ``(n, j)`` block ``V``; ``X`` an ``(n, k)`` array of starting
    directions (linearly independent, orthonormalized here), with ``0 < 5k < n``.
    At most ``m`` iterations; a pair ``(lambda, v)`` has converged when
    ``|A v - lambda v| < tol * 10 * n * (lambda + |A v|)`` (``tol`` defaults to the
    dtype's epsilon). Returns ``(theta, U, i)``: the ``(k,)`` eigenvalues in
    descending order, the ``(n, k)`` eigenvectors and the number of iterations run.
    Raises ValueError when ``k == 0``, ``5k >= n``, or ``A``'s dtype or shape does not
    match ``X``.
    """
    if isinstance(A, (Array, np.ndarray)):
        return _run_matrix(A, X, m, tol)
    return _run_callable(A, X, m, tol)
