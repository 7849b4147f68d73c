"""Linear algebra in numpy.linalg's names (the counterpart of ``jax.numpy.linalg``).

The decompositions are thin functions over ``modjax.lax.linalg``'s primitives
(``cholesky``, ``lu``, ``qr``, ``svd``, ``eigh``, ``eig``, ``triangular_solve``),
with modjax.numpy's promotion (integers and bools compute in the default float
type) and leading batch dimensions handled by the primitives themselves. The
derivative rules are JAX's: ``solve`` is a ``custom_linear_solve`` that reuses
one LU factorization for the primal, the JVP and the transpose; ``det`` is a
``custom_jvp`` whose tangent is a cofactor solve (finite at singular
matrices, as JAX returns it); ``slogdet``'s tangent is ``trace(solve(a, da))``;
``pinv`` has the closed-form JVP of the pseudo-inverse (Golub and Pereyra).
``eigh``'s derivative, from the primitive, divides by eigenvalue gaps and is
not defined at degenerate eigenvalues (as in JAX).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from functools import partial
from typing import Any, NamedTuple

import modjax.numpy as jnp
import numpy as np
from modjax import lax
from modjax.autodiff import custom_jvp, stop_gradient
from modjax.batching import vectorize, vmap
from modjax.batching.vectorize import parse_gufunc_signature
from modjax.lax import linalg as lax_linalg
from modjax.lax._common import kind
from modjax.lax.linalg.lu import lu_solve
from modjax.runtime import jit

from ._util import aval, check_arraylike, promote_dtypes_inexact

__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]


class EighResult(NamedTuple):
    """The result of ``eigh``: ``eigenvalues`` (ascending) and ``eigenvectors`` (columns)."""

    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    """The result of ``eig``: complex ``eigenvalues`` and right ``eigenvectors`` (columns)."""

    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """The result of ``qr``: ``Q`` and ``R`` (or, for mode ``"raw"``, ``H`` and ``tau``)."""

    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    """The result of ``slogdet``: ``sign`` (unit modulus or 0) and ``logabsdet``."""

    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    """The result of ``svd``: ``U``, singular values ``S`` (descending) and ``Vh``."""

    U: Any
    S: Any
    Vh: Any


# --- helpers --------------------------------------------------------------------------------


def _inexact(name: str, *args):
    """The arguments as arrays, promoted together to an inexact dtype."""
    check_arraylike(f"jnp.linalg.{name}", *args)
    return _promote_inexact_arrays(*args)


def _promote_inexact_arrays(*args):
    """The arguments as arrays of their common inexact dtype and common weak type.

    Eager promotion may leave a weakly typed array as it is next to a strongly
    typed one; a decomposition of it alone (``lstsq``'s SVD of ``a``) would then
    be weak where JAX's is not, so such arrays are made strong here.
    """
    arrays = [jnp.asarray(a) for a in promote_dtypes_inexact(*args)]
    if len(arrays) > 1 and not all(aval(a).weak_type for a in arrays):
        arrays = [lax.convert_element_type(a, a.dtype) if aval(a).weak_type else a for a in arrays]
    return arrays


def _H(x):
    """The conjugate transpose of the last two axes."""
    return jnp.conj(jnp.matrix_transpose(x))


def _symmetrize(x):
    return (x + _H(x)) / 2


def _is_complex(x) -> bool:
    return kind(aval(x).dtype) == "c"


def _check_core_dims(signature: str, *arrays) -> None:
    """Raise ``jnp.vectorize``'s errors for ``arrays`` that do not fit ``signature``.

    JAX's solves are vectorized functions, so a rank or size mismatch of the
    core (trailing) dimensions is reported by ``vectorize`` with its message.
    """
    context = f"on vectorized function with excluded=frozenset() and signature={signature!r}"
    sizes: dict[str, int] = {}
    for x, core in zip(arrays, parse_gufunc_signature(signature)[0], strict=True):
        shape = tuple(aval(x).shape)
        if len(shape) < len(core):
            raise ValueError(
                f"input with shape {shape!r} does not have enough dimensions for all core "
                f"dimensions {core!r} {context}"
            )
        for dim, size in zip(core, shape[len(shape) - len(core) :], strict=True):
            if sizes.setdefault(dim, size) != size:
                raise ValueError(
                    f"inconsistent size for core dimension {dim!r}: {size!r} vs {sizes[dim]!r} "
                    f"{context}"
                )


def _eye_like(a):
    """The identity, broadcast to ``a``'s (square) shape."""
    shape = aval(a).shape
    return jnp.broadcast_to(jnp.eye(shape[-1], dtype=aval(a).dtype), shape)


# --- products and views (Array API names over modjax.numpy's functions) ----------------------


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Return the matrix product of ``x1`` and ``x2`` (jax.numpy.linalg.matmul)."""
    check_arraylike("jnp.linalg.matmul", x1, x2)
    return jnp.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None, out_sharding=None):
    """Contract ``x1`` and ``x2`` over ``axes`` (jax.numpy.linalg.tensordot).

    ``out_sharding`` types the result as ``jnp.tensordot``'s does.
    """
    check_arraylike("jnp.linalg.tensordot", x1, x2)
    return jnp.tensordot(
        x1,
        x2,
        axes=axes,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Return the conjugated dot product along ``axis`` (jax.numpy.linalg.vecdot)."""
    check_arraylike("jnp.linalg.vecdot", x1, x2)
    return jnp.vecdot(
        x1, x2, axis=axis, precision=precision, preferred_element_type=preferred_element_type
    )


def matrix_transpose(x, /):
    """Swap the last two axes of ``x`` (jax.numpy.linalg.matrix_transpose)."""
    check_arraylike("jnp.linalg.matrix_transpose", x)
    ndim = np.ndim(x) if not hasattr(x, "ndim") else x.ndim
    if ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim}")
    return jnp.matrix_transpose(x)


def outer(x1, x2, /):
    """Return the outer product of two vectors (jax.numpy.linalg.outer)."""
    check_arraylike("jnp.linalg.outer", x1, x2)
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(
            f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} "
            f"x2.ndim={x2.ndim}"
        )
    return x1[:, None] * x2[None, :]


def cross(x1, x2, /, *, axis: int = -1):
    """Return the cross product of 3-vectors along ``axis`` (jax.numpy.linalg.cross)."""
    check_arraylike("jnp.linalg.cross", x1, x2)
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"x1.shape[axis]={x1.shape[axis]} and x2.shape[axis]={x2.shape[axis]}"
        )
    return jnp.cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset: int = 0):
    """Return the ``offset`` diagonal of the last two axes (jax.numpy.linalg.diagonal)."""
    check_arraylike("jnp.linalg.diagonal", x)
    return jnp.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset: int = 0, dtype=None):
    """Sum the ``offset`` diagonal of the last two axes (jax.numpy.linalg.trace)."""
    check_arraylike("jnp.linalg.trace", x)
    _axis(-2, np.ndim(x))  # JAX's axis error for fewer than two dimensions
    return _trace(x, offset=offset, dtype=dtype)


# jnp.trace is a jitted function in JAX: one program on numpy inputs too, where op by
# op the masked sum of a complex matrix rounds otherwise.
@partial(jit, static_argnames=("offset", "dtype"))
def _trace(x, *, offset, dtype):
    return jnp.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def multi_dot(arrays: Sequence, *, precision=None):
    """Multiply a chain of matrices in the cheapest order (jax.numpy.linalg.multi_dot).

    The first and last arrays may be vectors. The order is einsum's optimal
    contraction path, as in JAX.
    """
    check_arraylike("jnp.linalg.multi_dot", *arrays)
    # JAX's ensure_arraylike returns a lone array bare, so its rows become the operands.
    lone = len(arrays) == 1
    arrs = list(jnp.asarray(arrays[0])) if lone else [jnp.asarray(a) for a in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (
        arrs[0].ndim in (1, 2)
        and arrs[-1].ndim in (1, 2)
        and builtins.all(a.ndim == 2 for a in arrs[1:-1])
    ):
        raise ValueError(
            "multi_dot: input arrays must all be two-dimensional, except for the first and last "
            f"array which may be 1 or 2 dimensional. Got array shapes {[a.shape for a in arrs]}"
        )
    if builtins.any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:], strict=True)):
        raise ValueError(
            "multi_dot: last dimension of each array must match first dimension of following "
            f"array. Got array shapes {[a.shape for a in arrs]}"
        )
    axes: list[tuple[int, ...]] = [(i, i + 1) for i in range(len(arrs))]
    if arrs[0].ndim == 1:
        axes[0] = axes[0][1:]
    if arrs[-1].ndim == 1:
        axes[-1] = axes[-1][:1]
    operands = [x for pair in zip(arrs, axes, strict=True) for x in pair]
    return jnp.einsum(*operands, optimize="auto", precision=precision)


@partial(jit, static_argnames=("n",))
def matrix_power(a, n: int):
    """Raise a square matrix to the integer power ``n`` by repeated squaring.

    (jax.numpy.linalg.matrix_power.) ``n = 0`` gives the identity and a negative
    ``n`` a power of the inverse.
    """
    check_arraylike("jnp.linalg.matrix_power", a)
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise TypeError(
            f"{arr.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return _eye_like(arr)
    if n < 0:
        arr = inv(arr)
        n = -n
    # JAX multiplies these out directly; (a @ a) @ a is not repeated squaring's a @ (a @ a).
    if n == 1:
        return arr
    if n == 2:
        return arr @ arr
    if n == 3:
        return (arr @ arr) @ arr
    result = None
    square = None
    while n > 0:
        square = arr if square is None else square @ square
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else result @ square
    return result


# --- norms ----------------------------------------------------------------------------------


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """Return the vector ``ord``-norm over ``axis`` (all axes by default).

    (jax.numpy.linalg.vector_norm.) ``ord`` is any number, ``inf`` or ``-inf``;
    ``ord=0`` counts the nonzero entries.
    """
    check_arraylike("jnp.linalg.vector_norm", x)
    x = jnp.asarray(x)
    if ord is None or ord == 2:
        return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    if ord == np.inf:
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return jnp.min(jnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        # The count has x's (inexact) dtype; integer and bool x raise finfo's error, as in JAX.
        dtype = jnp.finfo(aval(x).dtype).dtype
        return jnp.sum(x != 0, dtype=dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
    abs_x = jnp.abs(x)
    p = np.array(ord, aval(abs_x).dtype)
    total = jnp.sum(abs_x**p, axis=axis, keepdims=keepdims)
    return jnp.power(total, np.array(1.0 / p, aval(abs_x).dtype))


def _spectral_norm(x, ord, axis, keepdims):
    """The norms of the singular values: ``2`` (largest), ``-2`` (smallest), ``nuc`` (sum)."""
    s = svd(jnp.moveaxis(x, axis, (-2, -1)), compute_uv=False)
    if ord == 2:
        y = jnp.max(s, axis=-1, initial=0)
    elif ord == -2:
        y = jnp.min(s, axis=-1)
    else:
        y = jnp.sum(s, axis=-1)
    return jnp.expand_dims(y, axis) if keepdims else y


@partial(jit, static_argnames=("ord", "axis", "keepdims"))
def norm(x, ord=None, axis=None, keepdims: bool = False):
    """Return a vector or matrix norm of ``x`` (jax.numpy.linalg.norm).

    One axis gives a vector norm, two a matrix norm (``fro``, ``nuc``, ``1``,
    ``-1``, ``2``, ``-2``, ``inf``, ``-inf``). Without ``axis`` and ``ord`` it is
    the 2-norm of the flattened array, whatever its rank.
    """
    (x,) = _inexact("norm", x)
    ndim = x.ndim
    if axis is None:
        if ord is None:
            return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), keepdims=keepdims))
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(_axis(a, ndim) for a in axis)
    else:
        axis = (_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(
            f"Improper number of axes for norm: axis={axis!r}. Pass one axis to compute a "
            "vector-norm, or two axes to compute a matrix-norm."
        )
    row, col = axis
    if ord is None or (isinstance(ord, str) and ord in ("f", "fro")):
        return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), axis=axis, keepdims=keepdims))
    if isinstance(ord, str) and ord == "nuc":
        return _spectral_norm(x, ord, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    if ord in (1, -1):
        # Column sums, then the extreme over columns.
        if not keepdims and col > row:
            col -= 1
        sums = jnp.sum(jnp.abs(x), axis=row, keepdims=keepdims)
        if ord == 1:
            return jnp.max(sums, axis=col, keepdims=keepdims, initial=0)
        return jnp.min(sums, axis=col, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        if not keepdims and row > col:
            row -= 1
        sums = jnp.sum(jnp.abs(x), axis=col, keepdims=keepdims)
        if ord == np.inf:
            return jnp.max(sums, axis=row, keepdims=keepdims, initial=0)
        return jnp.min(sums, axis=row, keepdims=keepdims)
    if ord in (2, -2):
        return _spectral_norm(x, ord, axis, keepdims)
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def _axis(axis, ndim: int) -> int:
    from ._util import canonicalize_axis

    return canonicalize_axis(axis, ndim)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """Return the matrix norm over the last two axes (jax.numpy.linalg.matrix_norm)."""
    check_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


# --- decompositions -------------------------------------------------------------------------


@partial(jit, static_argnames=("upper", "symmetrize_input"))
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """Return the Cholesky factor of a Hermitian positive-definite matrix.

    (jax.numpy.linalg.cholesky.) The lower factor ``L`` with ``a = L @ L^H``, or
    with ``upper=True`` the upper factor ``U = L^H``. A matrix that is not
    positive definite gives NaNs, as in JAX.
    """
    (a,) = _inexact("cholesky", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(factor) if upper else factor


@partial(jit, static_argnames=("mode",))
def qr(a, mode: str = "reduced"):
    """Return the QR decomposition of ``a`` (jax.numpy.linalg.qr).

    Modes: ``"reduced"`` (and its alias ``"full"``), ``"complete"`` (square
    ``Q``), ``"r"`` (``R`` only) and ``"raw"`` (LAPACK's Householder form
    ``(H, tau)``, ``H`` transposed as numpy returns it).
    """
    (a,) = _inexact("qr", a)
    if mode == "raw":
        if not hasattr(lax_linalg, "geqrf"):
            raise NotImplementedError("jnp.linalg.qr(mode='raw') needs lax.linalg.geqrf")
        h, taus = lax_linalg.geqrf(a)
        return QRResult(jnp.matrix_transpose(h), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    return r if mode == "r" else QRResult(q, r)


def _svd_hermitian(a, compute_uv: bool, subset_by_index):
    """The SVD of a Hermitian matrix from its eigendecomposition: |eigenvalues|, sorted."""
    v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = jnp.abs(w)
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=-1), (s.ndim - 1,))
    sign = jnp.sign(w)
    idxs = lax.broadcasted_iota(np.int32, s.shape, s.ndim - 1)
    s, idxs, sign = lax.sort((s, idxs, sign), dimension=-1, num_keys=1)
    last = (s.ndim - 1,)
    s, idxs, sign = lax.rev(s, last), lax.rev(idxs, last), lax.rev(sign, last)
    u = jnp.take_along_axis(v, idxs[..., None, :], axis=-1)
    vh = _H(u * sign[..., None, :].astype(u.dtype))
    return SVDResult(u, s, vh)


@partial(jit, static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(
    a,
    full_matrices: bool = True,
    compute_uv: bool = True,
    hermitian: bool = False,
    subset_by_index=None,
):
    """Return the singular value decomposition ``a = U @ diag(S) @ Vh`` (jax.numpy.linalg.svd).

    With ``compute_uv=False`` only ``S`` (descending). ``hermitian=True`` uses
    the eigendecomposition of a Hermitian ``a``.
    """
    (a,) = _inexact("svd", a)
    if hermitian:
        return _svd_hermitian(a, compute_uv, subset_by_index)
    kwargs = {} if subset_by_index is None else {"subset_by_index": subset_by_index}
    if compute_uv:
        u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True, **kwargs)
        return SVDResult(u, s, vh)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False, **kwargs)


def svdvals(x, /):
    """Return the singular values of ``x``, descending (jax.numpy.linalg.svdvals)."""
    check_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


def eig(a):
    """Return the eigenvalues and right eigenvectors of a square matrix (jax.numpy.linalg.eig).

    Both are complex, even for real input; CPU only in JAX as here.
    """
    (a,) = _inexact("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@jit
def eigvals(a):
    """Return the (complex) eigenvalues of a square matrix (jax.numpy.linalg.eigvals)."""
    (a,) = _inexact("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def _uplo_lower(UPLO) -> bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")


@partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigh(a, UPLO=None, symmetrize_input: bool = True):
    """Return the eigenvalues (ascending) and eigenvectors of a Hermitian matrix.

    (jax.numpy.linalg.eigh.) ``UPLO`` picks the triangle read when
    ``symmetrize_input`` is False; by default ``(a + a^H) / 2`` is used, so the
    derivative is that of a symmetric function. Derivatives are undefined at
    repeated eigenvalues (the eigenvector JVP divides by eigenvalue gaps).
    """
    check_arraylike("jnp.linalg.eigh", a)
    lower = _uplo_lower(UPLO)
    (a,) = _inexact("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@partial(jit, static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a, UPLO="L", *, symmetrize_input: bool = True):
    """Return the eigenvalues of a Hermitian matrix, ascending (jax.numpy.linalg.eigvalsh)."""
    (a,) = _inexact("eigvalsh", a)
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


# --- LU-based: solve, inv, det, slogdet -----------------------------------------------------


def _broadcasted_matvec(a, x):
    """``a @ x`` for ``a`` ``[..., n, m]`` and a vector ``x`` ``[..., m]``, batches broadcast."""
    batch = jnp.broadcast_shapes(a.shape[:-2], x.shape[:-1])
    nb = len(batch)
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    x = jnp.broadcast_to(x, batch + x.shape[-1:])
    dims = (((a.ndim - 1,), (x.ndim - 1,)), (tuple(range(nb)), tuple(range(nb))))
    return lax.dot_general(a, x, dims, precision=lax.Precision.HIGHEST)


def _check_solve_shapes(a, b) -> None:
    """Raise JAX's ValueError unless ``a`` is ``[..., m, m]`` and ``b`` ``[..., m(, k)]``."""
    if not (
        a.ndim >= 2
        and b.ndim in (a.ndim, a.ndim - 1)
        and a.shape[-1] == a.shape[-2] == b.shape[a.ndim - 2]
    ):
        raise ValueError(
            "The arguments to solve must have shapes a=[..., m, m] and "
            f"b=[..., m, k] or b=[..., m]; got a={a.shape} and b={b.shape}"
        )


def _solve_core(a, b):
    """``a^{-1} b`` for ``b`` ``[..., m]`` or ``[..., m, k]``: JAX's ``lax.linalg._solve``.

    The LU of ``a`` serves the solve, its JVP and its transpose alike. A matrix
    right-hand side is solved column by column (a ``vmap`` of the vector solve, as
    JAX does): its matrix-vector products then batch as JAX's, which XLA rounds
    otherwise than one matrix product for complex types.
    """
    _check_solve_shapes(a, b)
    # The leading dimensions of b broadcast to a's, as custom_linear_solve needs.
    out_shape = tuple(
        d_a if d_b == 1 else d_b for d_a, d_b in zip(a.shape[:-1] + (1,), b.shape, strict=False)
    )
    b = lax.broadcast_in_dim(b, out_shape, tuple(range(b.ndim)))
    lu, _, permutation = lax_linalg.lu(stop_gradient(a))

    def vector_solve(x, trans):  # x is [..., m]: one column
        return lu_solve(lu, permutation, x[..., None], trans)[..., 0]

    custom_solve = partial(
        lax.custom_linear_solve,
        lambda x: _broadcasted_matvec(a, x),
        solve=lambda _, x: vector_solve(x, 0),
        transpose_solve=lambda _, x: vector_solve(x, 1),
    )
    if a.ndim == b.ndim + 1:
        return custom_solve(b)
    return vmap(custom_solve, b.ndim - 1, builtins.max(a.ndim, b.ndim) - 1)(b)


@jit
def solve(a, b):
    """Solve the linear system ``a @ x == b`` (jax.numpy.linalg.solve).

    ``a`` is ``[..., n, n]``; ``b`` is ``[n]`` (one vector for every matrix) or
    ``[..., n, k]``; batch dimensions broadcast (``jnp.vectorize`` over them, as
    JAX). Implicitly differentiated through one LU factorization.
    """
    a, b = _inexact("solve", a, b)
    if a.ndim < 2:
        raise ValueError(f"left hand array must be at least two dimensional; got a.shape={a.shape}")
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this would "
            "have been treated as a batched 1-dimensional solve. To recover this behavior, use "
            "solve(a, b[..., None]).squeeze(-1)."
        )
    signature = "(m,m),(m)->(m)" if b.ndim == 1 else "(m,m),(m,n)->(m,n)"
    _check_core_dims(signature, a, b)
    # The batch dimensions must broadcast: lax's error text, as JAX's vectorize raises it.
    jnp.broadcast_shapes(a.shape[:-2], b.shape[: b.ndim - (1 if b.ndim == 1 else 2)])
    return vectorize(_solve_core, signature=signature)(a, b)


@jit
def inv(a):
    """Return the inverse of a square matrix (jax.numpy.linalg.inv), as ``solve(a, I)``."""
    check_arraylike("jnp.linalg.inv", a)
    arr = jnp.asarray(a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
    (arr,) = _inexact("inv", arr)
    return solve(arr, _eye_like(arr))


def _parity(pivots):
    """The number of row swaps (mod 2) that LU's pivots record."""
    iota = lax.broadcasted_iota(pivots.dtype, pivots.shape, pivots.ndim - 1)
    return jnp.count_nonzero(pivots != iota, axis=-1)


def _slogdet_small_values(a):
    d = a[..., 0, 0] if a.shape[-1] == 1 else _det_2x2(a)
    return jnp.sign(d), jnp.real(jnp.log(jnp.abs(d)))


@custom_jvp
def _slogdet_small(a):
    return _slogdet_small_values(a)


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign, logdet = _slogdet_small_values(x)
    if x.shape[-1] == 1:
        logdet_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        x00, x01, x10, x11 = x[..., 0, 0], x[..., 0, 1], x[..., 1, 0], x[..., 1, 1]
        det_ = x00 * x11 - x01 * x10
        logdet_dot = (
            g[..., 0, 0] * x11 - g[..., 0, 1] * x10 - g[..., 1, 0] * x01 + g[..., 1, 1] * x00
        ) / det_
    return (sign, logdet), _slogdet_tangents(x, sign, logdet_dot)


def _slogdet_tangents(x, sign, logdet_dot):
    """The tangents of (sign, logabsdet) from d log det: the imaginary part turns the sign."""
    if _is_complex(x):
        # Two real parts, as JAX takes them: one shared would sum their cotangents in
        # another order under transposition.
        sign_dot = (logdet_dot - jnp.real(logdet_dot).astype(logdet_dot.dtype)) * sign
        return sign_dot, jnp.real(logdet_dot)
    return jnp.zeros_like(sign), logdet_dot


def _slogdet_lu_values(a):
    dtype = a.dtype
    lu, pivots, _ = lax_linalg.lu(a)
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    is_zero = jnp.any(diag == 0, axis=-1)
    parity = _parity(pivots)
    if _is_complex(a):
        sign = jnp.prod(diag / jnp.abs(diag).astype(dtype), axis=-1)
    else:
        sign = jnp.ones((), dtype)
        parity = parity + jnp.count_nonzero(diag < 0, axis=-1)
    flip = (1 - 2 * (parity % 2)).astype(dtype)
    sign = jnp.where(is_zero, jnp.zeros((), dtype), sign * flip)
    logdet = jnp.where(
        is_zero,
        jnp.array(-np.inf, jnp.real(diag).dtype),
        jnp.sum(jnp.log(jnp.abs(diag)), axis=-1),
    )
    return sign, logdet


@custom_jvp
def _slogdet_lu(a):
    return _slogdet_lu_values(a)


@_slogdet_lu.defjvp
def _slogdet_lu_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign, logdet = _slogdet_lu_values(x)
    logdet_dot = jnp.trace(solve(x, g), axis1=-1, axis2=-2)
    return (sign, logdet), _slogdet_tangents(x, sign, logdet_dot)


def _slogdet_qr_values(a):
    n = a.shape[-1]
    r, taus = lax_linalg.geqrf(a)
    diag = jnp.diagonal(r, axis1=-2, axis2=-1)
    logdet = jnp.sum(jnp.log(jnp.abs(diag)), axis=-1)
    sign = jnp.prod(jnp.sign(diag), axis=-1)
    # Each Householder reflector actually applied (tau != 0) has determinant -1.
    reflections = jnp.prod(jnp.where(taus[..., : n - 1] != 0, -1, 1), axis=-1)
    return sign * reflections.astype(sign.dtype), logdet


@custom_jvp
def _slogdet_qr(a):
    return _slogdet_qr_values(a)


@_slogdet_qr.defjvp
def _slogdet_qr_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    # JAX's rule recomputes the primal with the default method (LU), not with QR.
    sign, logdet = slogdet(x)
    logdet_dot = jnp.trace(solve(x, g), axis1=-1, axis2=-2)
    return (sign, logdet), _slogdet_tangents(x, sign, logdet_dot)


@partial(jit, static_argnames=("method",))
def slogdet(a, *, method: str | None = None):
    """Return the sign and the log of the absolute value of the determinant.

    (jax.numpy.linalg.slogdet.) ``method`` ``"lu"`` (the default) factors ``a``;
    a singular matrix gives sign 0 and ``-inf``. ``"qr"`` (real matrices only, as
    in JAX) multiplies R's diagonal with the reflections' signs; a singular matrix
    gives ``-inf`` and a sign of 0 only where R has an exact zero on its diagonal.
    """
    (a,) = _inexact("slogdet", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {a.shape}")
    if method is None or method == "lu":
        if a.shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        if _is_complex(a):
            raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(
        f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and 'qr'."
    )


def _cofactor_solve(a, b):
    """Return ``det(a)`` and ``det(a) * a^{-1} b``, finite where ``a`` is singular.

    The LU factorization's last pivot is replaced by ``1 / det`` of the leading
    block, so the solve divides by the leading determinants only; where ``a``
    has rank below ``n - 1`` the cofactor matrix is 0 and so is the answer
    (JAX's construction, so ``grad(det)`` is the adjugate even for singular
    ``a`` of rank ``n - 1``).
    """
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    batch = jnp.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    x = jnp.broadcast_to(b, batch + b.shape[-2:])
    lu = jnp.broadcast_to(lu, batch + lu.shape[-2:])
    permutation = jnp.broadcast_to(permutation, batch + (n,))
    diag = jnp.diagonal(lu, axis1=-2, axis2=-1)
    sign = (1 - 2 * (_parity(pivots) % 2)).astype(dtype)
    sign = jnp.broadcast_to(sign, batch)
    partial_det = jnp.cumprod(diag, axis=-1) * sign[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    # Rows whose leading determinants vanish (rank < n - 1) have a zero cofactor.
    d = lax_linalg.triangular_solve(
        lu, jnp.ones(x.shape[:-1] + (1,), dtype), left_side=True, lower=False
    )
    bad = jnp.any(jnp.isnan(d) | jnp.isinf(d), axis=(-2, -1))[..., None, None]
    x = jnp.where(bad, jnp.zeros_like(x), x)
    x = jnp.take_along_axis(x, permutation[..., :, None], axis=-2, mode="clip")
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = jnp.concatenate(
        [x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]], axis=-2
    )
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    x = jnp.where(bad, jnp.zeros_like(x), x)
    return partial_det[..., -1], x


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    return (
        a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
        + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
        + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
        - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
        - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
        - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2]
    )


@custom_jvp
def _det_lu(a):
    sign, logdet = slogdet(a)
    return sign * jnp.exp(logdet).astype(sign.dtype)


@_det_lu.defjvp
def _det_lu_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, jnp.trace(z, axis1=-1, axis2=-2)


@jit
def det(a):
    """Return the determinant of a square matrix (jax.numpy.linalg.det).

    2x2 and 3x3 matrices use the explicit formulas; larger ones an LU
    factorization, with the adjugate as derivative (finite at singular
    matrices, as JAX returns it).
    """
    (a,) = _inexact("det", a)
    shape = a.shape
    if len(shape) >= 2 and shape[-1] == shape[-2] == 2:
        return _det_2x2(a)
    if len(shape) >= 2 and shape[-1] == shape[-2] == 3:
        return _det_3x3(a)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        return _det_lu(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {shape}")


# --- SVD-based: pinv, lstsq, matrix_rank, cond ----------------------------------------------


def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """Return the Moore-Penrose pseudo-inverse (jax.numpy.linalg.pinv).

    Singular values at or below ``rtol`` times the largest are dropped
    (default ``10 * max(m, n) * eps``); ``rcond`` is the older name of
    ``rtol``. The JVP is the closed form of the pseudo-inverse's derivative.
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    check_arraylike("jnp.linalg.pinv", a)
    return _pinv(a, rtol, hermitian)


def _pinv_values(a, rtol, hermitian):
    (arr,) = _inexact("pinv", a)
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        return jnp.empty(arr.shape[:-2] + (n, m), arr.dtype)
    arr = jnp.conj(arr)
    real = jnp.real(arr).dtype if _is_complex(arr) else arr.dtype
    if rtol is None:
        rtol = 10.0 * builtins.max(m, n) * np.array(jnp.finfo(real).eps, real)
    rtol = jnp.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = lax.expand_dims(rtol[..., None], tuple(range(s.ndim - rtol.ndim - 1)))
    cutoff = rtol * s[..., 0:1]
    s = jnp.where(s > cutoff, s, np.inf).astype(u.dtype)
    res = jnp.matmul(
        jnp.matrix_transpose(vh),
        jnp.divide(jnp.matrix_transpose(u), s[..., None]),
        precision=lax.Precision.HIGHEST,
    )
    return lax.convert_element_type(res, arr.dtype)


# One program, as JAX's jitted _pinv (the JVP's primal included).
_pinv = custom_jvp(jit(_pinv_values, static_argnums=(2,)), nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    (a,), (a_dot,) = primals, tangents
    p = _pinv_values(a, rtol, hermitian)
    if hermitian:
        a, a_dot = _symmetrize(a), _symmetrize(a_dot)
    m, n = a.shape[-2:]
    if m >= n:
        s = p @ _H(p) @ _H(a_dot)
        t = _H(a_dot) @ _H(p) @ p
        p_dot = -(p @ a_dot) @ p + s - s @ a @ p + t - p @ a @ t
    else:
        s = p @ (_H(p) @ _H(a_dot))
        t = _H(a_dot) @ (_H(p) @ p)
        p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
    return p, p_dot


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Return the least-squares solution of ``a @ x == b`` (jax.numpy.linalg.lstsq).

    Returns ``(x, residuals, rank, s)``. Singular values below ``rcond`` times
    the largest (default ``eps * max(m, n)``) count as zero. With
    ``numpy_resid=True`` the residuals are empty where numpy gives none
    (rank-deficient or underdetermined systems); that needs concrete inputs.
    """
    check_arraylike("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq(a, b, rcond, numpy_resid=True)
    return _jit_lstsq(a, b, rcond)


def _lstsq(a, b, rcond, *, numpy_resid: bool):
    a, b = _promote_inexact_arrays(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_ndim = b.ndim
    if b_ndim == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    dtype = a.dtype
    real = jnp.real(a).dtype if _is_complex(a) else dtype
    if a.size == 0:
        s = jnp.empty(0, dtype=dtype)  # a's dtype, complex too, as JAX's
        rank = jnp.array(0, dtype=int)
        x = jnp.zeros((n, *b.shape[1:]), dtype=dtype)
    else:
        if rcond is None:
            rcond = float(jnp.finfo(real).eps) * builtins.max(n, m)
        else:
            rcond = jnp.where(rcond < 0, jnp.finfo(real).eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= jnp.asarray(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = jnp.where(mask, s, 1).astype(dtype)
        s_inv = jnp.where(mask, 1 / safe_s, 0)[:, None]
        utb = jnp.matmul(_H(u), b, precision=lax.Precision.HIGHEST)
        x = jnp.matmul(_H(vt), s_inv * utb, precision=lax.Precision.HIGHEST)
    if numpy_resid and (rank < n or m <= n):
        resid = jnp.asarray([])
    else:
        estimate = jnp.matmul(a, x, precision=lax.Precision.HIGHEST)
        resid = norm(b - estimate, axis=0) ** 2
    if b_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


_jit_lstsq = jit(partial(_lstsq, numpy_resid=False))


@partial(jit, static_argnames=("hermitian",))
def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):
    """Return the rank: the number of singular values above ``rtol`` (jax.numpy.linalg.matrix_rank).

    The default ``rtol`` is ``max(S) * max(m, n) * eps``; ``tol`` is its older
    name. Leading dimensions are a batch.
    """
    check_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = _inexact("matrix_rank", M)
    if M.ndim < 2:
        return jnp.any(M != 0).astype(np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = S.max(-1) * np.array(builtins.max(M.shape[-2:]), S.dtype) * jnp.finfo(S.dtype).eps
    rtol = jnp.asarray(rtol)
    rtol = jnp.expand_dims(rtol, rtol.ndim)
    return jnp.sum(rtol < S, axis=-1)


@partial(jit, static_argnames=("p",))
def cond(x, p=None):
    """Return the condition number of ``x`` in the ``p`` norm (jax.numpy.linalg.cond).

    ``p`` ``None``/``2``/``-2`` use the singular values (any shape); the other
    norms need a square matrix and its inverse. A singular matrix gives inf.
    """
    check_arraylike("cond", x)
    arr = jnp.asarray(x)
    if arr.ndim < 2:
        raise ValueError(
            f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={arr.shape}"
        )
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(
            f"jnp.linalg.cond: input array must not be empty; got arr.shape={arr.shape}"
        )
    if p is None or p == 2:
        s = svdvals(arr)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(arr)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(
                f"jnp.linalg.cond: for p={p!r}, array must be square; got arr.shape={arr.shape}"
            )
        r = norm(arr, ord=p, axis=(-2, -1)) * norm(inv(arr), ord=p, axis=(-2, -1))
    # A NaN from an infinite inverse (a singular matrix) is an infinite condition number.
    return jnp.where(jnp.isnan(r) & ~jnp.isnan(arr).any(axis=(-2, -1)), np.inf, r)


# --- tensor versions ------------------------------------------------------------------------


def tensorinv(a, ind: int = 2):
    """Return the inverse for ``tensordot`` over ``ind`` axes (jax.numpy.linalg.tensorinv)."""
    check_arraylike("tensorinv", a)
    arr = jnp.asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting, rest = arr.shape[:ind], arr.shape[ind:]
    flat = (math.prod(contracting), math.prod(rest))
    if flat[0] != flat[1]:
        raise ValueError(
            "tensorinv is only possible when the product of the first `ind` dimensions equals "
            f"that of the remaining dimensions. got arr.shape={arr.shape} with ind={ind}."
        )
    return inv(arr.reshape(flat)).reshape(*rest, *contracting)


def tensorsolve(a, b, axes=None):
    """Solve ``tensordot(a, x, x.ndim) == b`` for ``x`` (jax.numpy.linalg.tensorsolve).

    ``axes`` are axes of ``a`` moved to the end first.
    """
    check_arraylike("tensorsolve", a, b)
    a_arr, b_arr = jnp.asarray(a), jnp.asarray(b)
    if axes is not None:
        # Each of ``axes`` in turn goes to the end (numpy's order).
        order = list(range(a_arr.ndim))
        for ax in axes:
            order.remove(_axis(ax, a_arr.ndim))
            order.append(_axis(ax, a_arr.ndim))
        a_arr = jnp.transpose(a_arr, order)
    out_shape = a_arr.shape[b_arr.ndim :]
    if a_arr.shape[: b_arr.ndim] != b_arr.shape:
        raise ValueError(
            "After moving axes to end, leading shape of a must match shape of b. got "
            f"a.shape={a_arr.shape}, b.shape={b_arr.shape}"
        )
    if b_arr.size != math.prod(out_shape):
        raise ValueError(
            "Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); got "
            f"a.shape={a_arr.shape}, b.ndim={b_arr.ndim}."
        )
    a_arr = a_arr.reshape(b_arr.size, math.prod(out_shape))
    return solve(a_arr, b_arr.ravel()).reshape(out_shape)
