"""``qdwh``: the polar decomposition ``x = u h`` by the QR-based dynamically weighted Halley method.

The iteration (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31(5), 2010)
scales ``x`` so that its singular values lie in ``(0, 1]`` and maps them towards 1
with rational steps ``u <- u (a I + b u^H u) (I + c u^H u)^-1`` whose weights
``(a, b, c)`` follow a lower bound ``l`` of the smallest singular value. The
bound starts at ``eps`` and evolves without looking at the data, so the weights
of every step until ``l`` reaches 1 are computed on the host. Steps with a
large ``c`` are taken through a QR factorization (``I + c u^H u`` would square
the condition number), the others through a Cholesky factorization; once the
weights are spent, plain Halley steps (``a, b, c = 3, 1, 3``) run in a
``while_loop`` until the iterate stops moving. A Newton-Schulz step then
polishes ``u`` and ``h = u^H x`` is symmetrized.

The schedule is JAX's, so ``num_iters`` and ``is_converged`` agree with
jax.lax.linalg.qdwh on the same input: weights switch from QR to Cholesky
steps below ``c = 100``, the host loop stops when ``l + 5 eps >= 1``, and the
iteration counts as converged once ``||u_k - u_(k-1)||_F <= cbrt(5 eps)``.
Only the Cholesky and Halley steps test convergence.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from modjax.runtime import jit
from modjax.tracecore import dtypes
from modjax.tracecore.core import to_aval

from .._common import real_dtype
from ..bits import conj, real
from ..control_flow import scan, while_loop
from ..elementwise import abs as abs_
from ..elementwise import (
    add,
    bitwise_and,
    bitwise_not,
    convert_element_type,
    eq,
    gt,
    lt,
    mul,
    rsqrt,
    select_n,
    sqrt,
    sub,
)
from ..indexing.dynamic_slice import dynamic_slice, dynamic_update_slice
from ..reductions import reduce_max, reduce_sum
from ..structural import broadcasted_iota, concatenate, pad, slice, squeeze
from ._matrix import H, astype, eye_like, matmul, zeros_of
from .cholesky import cholesky, triangular_solve
from .qr import qr

__all__ = ["qdwh"]

# Above this ``c`` a step goes through QR: Cholesky of ``I + c u^H u`` would lose accuracy.
_CHOLESKY_CUTOFF = 100.0


def _step_weights(eps: float, max_iterations: int) -> list[tuple[float, float, float]]:
    """Return the weights ``(a, b, c)`` of the steps that bring the bound ``l`` to 1."""
    bound, tol = eps, 5.0 * eps
    weights = []
    while bound + tol < 1 and len(weights) < max_iterations:
        l2 = bound * bound
        d = (4.0 * (1.0 - l2) / (l2 * l2)) ** (1.0 / 3.0)
        root = math.sqrt(1.0 + d)
        a = root + 0.5 * math.sqrt(8.0 - 4.0 * d + 8.0 * (2.0 - l2) / (l2 * root))
        b = (a - 1.0) ** 2 / 4.0
        c = a + b - 1.0
        bound = bound * (a + b * l2) / (1.0 + c * l2)
        weights.append((a, b, c))
    return weights


def _keep(x, rows, cols, fill=None):
    """Return ``x`` in its leading ``rows x cols`` block, ``fill`` (zeros) elsewhere.

    ``rows`` None means no padding: ``x`` itself.
    """
    if rows is None:
        return x
    shape = to_aval(x).shape
    if fill is None:
        fill = zeros_of(shape, to_aval(x).dtype)
    inside = bitwise_and(
        lt(broadcasted_iota(np.int32, shape, 0), convert_element_type(rows, np.int32)),
        lt(broadcasted_iota(np.int32, shape, 1), convert_element_type(cols, np.int32)),
    )
    return select_n(inside, fill, x)


def _frobenius(x):
    return sqrt(
        reduce_sum(real(mul(x, conj(x))) if to_aval(x).dtype.kind == "c" else mul(x, x), (0, 1))
    )


def _scalar(row, i):
    return squeeze(slice(row, (i,), (i + 1,)), (0,))


def _qr_step(u, weights, m, n):
    """One step through ``[sqrt(c) u; I] = [q1; q2] r``: ``u <- e u + (a - e)/sqrt(c) q1 q2^H``."""
    scale, sqrt_c, e = (_scalar(weights, i) for i in range(3))
    rows, cols = to_aval(u).shape
    eye = eye_like((cols, cols), to_aval(u).dtype)
    top = mul(sqrt_c, u)
    if m is None:
        stacked = concatenate([top, eye], 0)
    else:  # the identity goes right below the true rows, over the padding
        stacked = dynamic_update_slice(
            pad(top, np.zeros((), top.dtype), [(0, cols, 0), (0, 0, 0)]),
            eye,
            (convert_element_type(m, np.int32), np.int32(0)),
        )
    q, _ = qr(stacked, full_matrices=False)
    q1 = _keep(slice(q, (0, 0), (rows, cols)), m, n)
    q2 = (
        slice(q, (rows, 0), (rows + cols, cols))
        if m is None
        else dynamic_slice(q, (convert_element_type(m, np.int32), np.int32(0)), (cols, cols))
    )
    q2 = _keep(q2, n, n)
    return add(mul(e, u), mul(scale, matmul(q1, H(q2))))


def _cholesky_step(u, weights, n):
    """One step through ``z = I + c u^H u = w w^H``: ``u <- e u + (a - e) u z^-1``."""
    a_minus_e, c, e = (_scalar(weights, i) for i in range(3))
    cols = to_aval(u).shape[1]
    eye = eye_like((cols, cols), to_aval(u).dtype)
    z = add(mul(c, matmul(H(u), u)), eye)
    # The padding gets the identity, so that z stays positive definite.
    z = _keep(z, n, n, eye)
    w = cholesky(z, symmetrize_input=False)
    v = triangular_solve(w, H(u), left_side=True, lower=True)  # w^-1 u^H
    v = triangular_solve(w, v, left_side=True, lower=True, transpose_a=True, conjugate_a=True)
    return add(mul(e, u), mul(a_minus_e, H(v)))  # v = z^-1 u^H


def _polar(x, m, n, max_iterations: int, eps: float):
    dtype = to_aval(x).dtype
    magnitude = abs_(x)
    one_norm = reduce_max(reduce_sum(magnitude, (0,)), (0,))
    inf_norm = reduce_max(reduce_sum(magnitude, (1,)), (0,))
    # 1/sqrt(|x|_1 |x|_inf) <= 1/|x|_2: every singular value of u lies in (0, 1].
    scale = mul(rsqrt(one_norm), rsqrt(inf_norm))
    scale = select_n(eq(one_norm, np.zeros((), one_norm.dtype)), scale, np.ones((), scale.dtype))
    u = mul(x, astype(scale, dtype))
    tol = np.asarray(np.cbrt(5.0 * eps), real_dtype(dtype))

    def moved(new, old):
        return gt(_frobenius(sub(new, old)), tol)

    weights = _step_weights(eps, max_iterations)
    by_qr = [
        ((a - b / c) / math.sqrt(c), math.sqrt(c), b / c)
        for a, b, c in weights
        if c > _CHOLESKY_CUTOFF
    ]
    by_cholesky = [(a - b / c, c, b / c) for a, b, c in weights if c <= _CHOLESKY_CUTOFF]
    if by_qr:
        u, _ = scan(lambda u, w: (_qr_step(u, w, m, n), None), u, np.asarray(by_qr, dtype))
    # QR steps do not test convergence: without Cholesky steps the loop below runs at least once.
    not_converged = np.bool_(True)
    if by_cholesky:

        def cholesky_body(state, w):
            u, _ = state
            new = _cholesky_step(u, w, n)
            return (new, moved(new, u)), None

        (u, not_converged), _ = scan(
            cholesky_body, (u, not_converged), np.asarray(by_cholesky, dtype)
        )
    halley = np.asarray([3.0 - 1.0 / 3.0, 3.0, 1.0 / 3.0], dtype)

    def keep_going(state):
        k, _, not_converged = state
        return bitwise_and(not_converged, lt(k, max_iterations))

    def halley_step(state):
        k, u, _ = state
        new = _cholesky_step(u, halley, n)
        return add(k, 1), new, moved(new, u)

    num_iters, u, not_converged = while_loop(
        keep_going, halley_step, (len(by_qr) + len(by_cholesky), u, not_converged)
    )
    # One Newton-Schulz step, u <- u (3 I - u^H u) / 2, for the last digits.
    u = sub(mul(np.asarray(1.5, dtype), u), matmul(mul(np.asarray(0.5, dtype), u), matmul(H(u), u)))
    h = matmul(H(u), x)
    h = mul(add(h, H(h)), np.asarray(0.5, dtype))
    return u, h, num_iters, bitwise_not(not_converged)


@partial(jit, static_argnames=("is_hermitian", "max_iterations", "eps"))
def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """Return ``(u, h, num_iters, is_converged)``, the polar decomposition ``x = u h`` by QDWH.

    The counterpart of jax.lax.linalg.qdwh, for one ``M x N`` matrix with
    ``M >= N`` (use ``vmap`` for a batch): ``u`` has orthonormal columns, ``h``
    is Hermitian positive semi-definite, ``num_iters`` (int32) counts the steps
    and ``is_converged`` says whether the iterate stopped moving within
    ``max_iterations`` (default 10) steps. ``eps`` (default: the machine
    epsilon of ``x``'s dtype) sets the tolerance ``cbrt(5 eps)`` on the change
    of the iterate. ``dynamic_shape=(m, n)`` (possibly traced) treats ``x`` as
    an ``m x n`` matrix padded with zeros; ``u`` and ``h`` are then padded
    with zeros too. ``is_hermitian`` is accepted and unused, as in JAX.
    """
    del is_hermitian  # JAX ignores it too
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    rows, cols = to_aval(x).shape
    if rows < cols:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if eps is None:
        eps = float(dtypes.finfo(to_aval(x).dtype).eps)
    m = n = None
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _keep(x, m, n)
    return _polar(x, m, n, max_iterations, eps)
