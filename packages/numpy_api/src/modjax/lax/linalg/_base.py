"""How a linear-algebra primitive is declared, and how it calls LAPACK.

Every ``lax.linalg`` primitive acts on the trailing one or two dimensions of
its operands (matrices, or vectors such as pivots and diagonals); all leading
dimensions are batch dimensions, native to XLA's ops and to jaxlib's LAPACK
kernels (which loop over the batch in C++). ``linalg_primitive`` declares one
from a rule on the trailing shapes, as JAX's ``linalg_primitive`` does: it
checks ranks, batch dimensions and dtypes with JAX's messages, gives the eager
implementation, and a batching rule that moves the vmapped axis of every
operand to the front (an unbatched operand is broadcast), where it is one more
batch dimension.

The lowering helpers emit jaxlib's typed-FFI LAPACK calls: matrices are
passed column-major (``operand_layouts``/``result_layouts`` make XLA transpose
around the call), every kernel that can fail returns an ``info`` per batch
element, and a failed element becomes NaNs, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax.batching import batching_rules, bdim_at_front
from modjax.lowering import custom_call, hlo, ir_type, lapack_target, u8_attr
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from .._common import FLOAT, INEXACT, Category, check_dtype, check_same_dtypes, compare, full
from .._rules import batch_size

__all__ = [
    "INEXACT",
    "INT32",
    "FLOAT",
    "batch_dims_of",
    "lapack_call",
    "linalg_primitive",
    "nan_unless",
    "info_ok",
    "u8_attr",
]

INT32 = Category("int32", "i")


def _check_ranks(name: str, ranks: Sequence[int], avals, exact: bool) -> tuple[int, ...]:
    batch = None
    for i, (rank, aval) in enumerate(zip(ranks, avals, strict=True)):
        if exact and aval.ndim != rank:
            raise TypeError(
                f"Input {i} to {name} must have a rank of exactly {rank}, but got "
                f"shape={aval.shape}"
            )
        if aval.ndim < rank:
            raise TypeError(
                f"Input {i} to {name} must have rank at least {rank}, but got shape={aval.shape}"
            )
        dims = aval.shape[: aval.ndim - rank]
        if batch is None:
            batch = dims
        elif len(dims) != len(batch):
            counts = [a.ndim - r for a, r in zip(avals, ranks, strict=True)]
            raise TypeError(
                f"All inputs to {name} must have the same number of batch dimensions, "
                f"but got {counts} batch dimensions for the inputs."
            )
    return tuple(batch)


def _check_dtypes(name: str, accepted, avals, require_same: bool) -> None:
    for i, (cats, aval) in enumerate(zip(accepted, avals, strict=True)):
        # JAX's naryop dtype rule names the position even of a single operand.
        position = i
        if cats[0] is INT32:
            if aval.dtype != np.int32:
                raise TypeError(
                    f"{name} does not accept dtype {dtypes.dtype_name(aval.dtype)} at position "
                    f"{i}. Accepted dtypes at position {i} are subtypes of int32."
                )
            continue
        check_dtype(name, aval, cats, position)
    if len(avals) > 1 and require_same:
        check_same_dtypes(name, avals)


def linalg_primitive(
    name: str,
    ranks: Sequence[int],
    shape_rule: Callable,
    dtype_rule: Callable,
    *,
    accepted: Sequence = None,
    multiple_results: bool = False,
    require_same: bool = True,
    batch: bool = True,
) -> Primitive:
    """Declare a linalg primitive; register its abstract eval, impl and batching rule.

    ``shape_rule(*trailing_shapes, **params)`` gives the trailing shape of each
    result (the batch dimensions are prepended) and raises JAX's errors;
    ``dtype_rule(*dtypes, **params)`` gives the result dtypes. ``accepted`` is a
    tuple of dtype categories per operand (default: floating or complex); with
    ``require_same`` (the default) every operand must have the same dtype.
    ``batch=False`` declares a primitive without batch dimensions (exact ranks)
    and without a batching rule, as JAX's ``supports_batching=False``.
    """
    accepted = accepted or [INEXACT] * len(ranks)
    prim = Primitive(name)
    prim.multiple_results = multiple_results

    def abstract_eval(*avals, **params):
        batch_dims = _check_ranks(name, ranks, avals, exact=not batch)
        _check_dtypes(name, accepted, avals, require_same)
        trailing = [a.shape[a.ndim - r :] for a, r in zip(avals, ranks, strict=True)]
        shapes = shape_rule(*trailing, **params)
        out_dtypes = dtype_rule(*(a.dtype for a in avals), **params)
        # JAX's standard weak-type rule: every result (pivots too) is weak iff all operands are.
        weak = all(a.weak_type for a in avals)
        if not multiple_results:
            return ShapedArray(batch_dims + tuple(shapes), np.dtype(out_dtypes), weak)
        return [
            ShapedArray(batch_dims + tuple(s), np.dtype(d), weak)
            for s, d in zip(shapes, out_dtypes, strict=True)
        ]

    def batch_rule(args, dims, **params):
        size = batch_size(args, dims)
        moved = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
        out = prim.bind(*moved, **params)
        return out, ([0] * len(out) if multiple_results else 0)

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(partial(apply_primitive, prim))
    if batch:
        batching_rules[prim] = batch_rule
    return prim


# --- lowering helpers -----------------------------------------------------------------------


def batch_dims_of(aval: ShapedArray, rank: int = 2) -> tuple[int, ...]:
    """Return the batch dimensions of an operand whose trailing ``rank`` dims are its core."""
    return aval.shape[: aval.ndim - rank]


def _column_major(ndim: int) -> tuple[int, ...]:
    # Minor-to-major: rows vary fastest, then columns, then the batch dims in reverse.
    return (ndim - 2, ndim - 1, *range(ndim - 3, -1, -1))


def _row_major(ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim - 1, -1, -1))


def lapack_call(
    ctx,
    routine: str,
    operands: Sequence,
    avals_out: Sequence[ShapedArray],
    *,
    avals_in: Sequence[ShapedArray] | None = None,
    aliases: dict[int, int] | None = None,
    column_major: bool = True,
    **attributes,
) -> list:
    """Emit the typed-FFI call of jaxlib's LAPACK ``routine`` for the first operand's dtype.

    Operands and results of the highest operand rank are laid out column-major
    (LAPACK's order; XLA transposes around the call), the others (pivots,
    eigenvalues, ``info``) row-major. ``attributes`` are the kernel's named
    attributes (``uplo=u8_attr("L")``...). Returns the results.
    """
    avals_in = list(ctx.avals_in if avals_in is None else avals_in)
    top = max(a.ndim for a in avals_in)

    def layout(aval):
        if column_major and aval.ndim == top:
            return _column_major(aval.ndim)
        return _row_major(aval.ndim)

    # jaxlib's own kernels have no LAPACK type letter ("tridiagonal_solve_perturbed").
    dtype = None if routine.startswith("tridiagonal") else avals_in[0].dtype
    return custom_call(
        lapack_target(routine, dtype),
        [ir_type(a) for a in avals_out],
        list(operands),
        attributes=attributes,
        operand_layouts=[layout(a) for a in avals_in],
        result_layouts=[layout(a) for a in avals_out],
        operand_output_aliases=aliases,
    )


def info_ok(info, batch: tuple[int, ...], direction: str = "EQ"):
    """Emit ``info == 0`` (or ``info >= 0`` with ``direction="GE"``) for LAPACK's status codes."""
    return compare(info, full(0, ShapedArray(batch, np.int32)), direction, np.dtype(np.int32))


def nan_unless(ok, x, aval: ShapedArray, batch: tuple[int, ...]):
    """Emit ``x`` with every batch element whose ``ok`` is false replaced by NaNs (JAX's rule)."""
    mask_aval = ShapedArray(aval.shape, np.bool_)
    mask = hlo.broadcast_in_dim(ir_type(mask_aval), ok, list(range(len(batch))))
    nan = np.nan + 1j * np.nan if aval.dtype.kind == "c" else np.nan
    return hlo.select(mask, x, full(nan, aval))
