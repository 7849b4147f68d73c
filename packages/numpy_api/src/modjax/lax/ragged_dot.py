"""Ragged contractions: the ``ragged_dot_general`` primitive and ``ragged_dot``.

A ragged dot is a ``dot_general`` whose lhs has one *ragged* dimension cut into
consecutive groups by ``group_sizes``. The ragged dimension's kind picks the mode:

1. non-contracting (``[m, k] x [g, k, n] -> [m, n]``): row ``i`` of group ``j`` meets
   slice ``j`` of the rhs's group dimension;
2. contracting (``[m, k] x [k, n] -> [g, m, n]``): each group sums its own part of ``k``;
3. batch: the groups partition a batch dimension, and the result is ``dot_general``'s.

``group_sizes`` is ``[g]`` or ``[b..., x..., g]`` (the lhs batch dimensions and the
dimensions of the ragged dimension's kind that come before it). On CPU the primitive
lowers, as JAX's does, to a dense ``dot_general`` of a masked ``[g, ...]`` expansion.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence
from functools import partial

import numpy as np

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, linear_transpose, transpose_rules
from modjax.batching import batching_rules, bdim_at_front
from modjax.lowering import lower_fun, register_lowering
from modjax.runtime import apply_primitive
from modjax.sharding import reshard
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer

from ._common import aval_of
from ._rules import zeros
from .cumulative import cumsum
from .dot import _dot_general_abstract_eval, dot_general
from .elementwise import _convert_element_type, add, bitwise_and, ge, lt, select_n, sub
from .precision import canonicalize_precision, format_precision, parse_precision
from .structural import broadcast_in_dim, broadcasted_iota, transpose

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general", "ragged_dot_general_p"]


@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """The dimensions of a ragged dot (jax.lax.RaggedDotDimensionNumbers).

    ``dot_dimension_numbers`` is ``dot_general``'s ``((lhs_contracting,
    rhs_contracting), (lhs_batch, rhs_batch))``; ``lhs_ragged_dimensions`` holds the
    one ragged dimension of the lhs; ``rhs_group_dimensions`` the rhs's group
    dimension (one in the non-contracting mode, none otherwise). Sequences are
    stored as tuples, so the numbers are hashable.
    """

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple[int, ...]
    rhs_group_dimensions: tuple[int, ...]

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        numbers = tuple(
            tuple(tuple(int(d) for d in dims) for dims in t) for t in dot_dimension_numbers
        )
        object.__setattr__(self, "dot_dimension_numbers", numbers)
        object.__setattr__(
            self, "lhs_ragged_dimensions", tuple(int(d) for d in lhs_ragged_dimensions)
        )
        object.__setattr__(
            self, "rhs_group_dimensions", tuple(int(d) for d in rhs_group_dimensions)
        )


# lax.ragged_dot's numbers: [m, k] x [g, k, n], ragged m.
_BASIC = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])

NONCONTRACTING, CONTRACTING, BATCH = "RAGGED_NONCONTRACTING", "RAGGED_CONTRACTING", "RAGGED_BATCH"


def _remaining(n: int, *removed) -> list[int]:
    gone = {d for dims in removed for d in dims}
    return [i for i in range(n) if i not in gone]


def _mode(lhs_ndim: int, numbers: RaggedDotDimensionNumbers) -> tuple[str, int]:
    """The mode (which kind of lhs dimension is ragged) and the ragged dimension."""
    (ragged,) = numbers.lhs_ragged_dimensions
    (lc, _), (lb, _) = numbers.dot_dimension_numbers
    if ragged in lc:
        return CONTRACTING, ragged
    if ragged in lb:
        return BATCH, ragged
    return NONCONTRACTING, ragged


def _prefix_dims(mode: str, ndim: int, ragged: int, batch, contract) -> list[int]:
    """The operand dimensions ``group_sizes``'s leading dimensions stand for."""
    batch, contract = list(batch), list(contract)
    if mode == NONCONTRACTING:
        free = _remaining(ndim, contract, batch)
        return batch + free[: free.index(ragged)]
    if mode == CONTRACTING:
        return batch + contract[: contract.index(ragged)]
    return batch[: batch.index(ragged)]


def _abstract_eval(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, **params):
    numbers = ragged_dot_dimension_numbers
    if len(numbers.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    ragged = numbers.lhs_ragged_dimensions[0]
    _check_in_range(ragged, lhs.ndim, "lhs ragged dimension", "lhs")
    mode, _ = _mode(lhs.ndim, numbers)
    (lc, rc), (lb, rb) = numbers.dot_dimension_numbers
    if group_sizes.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if group_sizes.ndim != 1:
        prefix = _prefix_dims(mode, lhs.ndim, ragged, lb, lc)
        want = (*(lhs.shape[i] for i in prefix), group_sizes.shape[-1])
        if tuple(group_sizes.shape) != want:
            raise TypeError(f"expected group_sizes to have shape {want}, got {group_sizes.shape}.")
    num_groups = group_sizes.shape[-1]
    groups = numbers.rhs_group_dimensions
    if mode in (CONTRACTING, BATCH):
        if groups:
            raise TypeError(
                "ragged_dot_general requires zero group dimensions in the rhs when lhs ragged "
                "dimension is contracting or batch."
            )
    else:
        if len(groups) != 1:
            raise TypeError(
                "ragged_dot_general requires exactly one rhs group dimension when lhs ragged "
                "dimension is noncontracting."
            )
        _check_in_range(groups[0], rhs.ndim, "rhs group dimension", "rhs")
        if groups[0] in rb or groups[0] in rc:
            raise TypeError(
                "ragged_dot_general requires rhs group dimension numbers to be distinct from "
                "contracting and batch dimensions."
            )
        if rhs.shape[groups[0]] != num_groups:
            raise TypeError(
                f"expected rhs group dimension size to be {num_groups}, got {rhs.shape[groups[0]]}."
            )
    if not dtypes.issubdtype(group_sizes.dtype, np.integer):
        raise TypeError(
            "ragged_dot_general requires that group_sizes.dtype is subtype of np.integer."
        )
    # dot_general's type, with the rhs group dimension taken out of the rhs's free ones
    rhs_view = rhs if not groups else ShapedArray(_without(rhs.shape, groups[0]), rhs.dtype)
    rc_view, rb_view = (_shift_past(rc, groups), _shift_past(rb, groups))
    out = _dot_general_abstract_eval(
        lhs, rhs_view, dimension_numbers=((lc, rc_view), (lb, rb_view)), **params
    )
    if mode == CONTRACTING:
        return out.update(shape=(num_groups, *out.shape))
    return out


def _without(shape, dim):
    return tuple(s for i, s in enumerate(shape) if i != dim)


def _shift_past(dims, removed):
    return tuple(d - sum(r < d for r in removed) for d in dims)


def _check_in_range(dim, rank, dim_name, arg_name):
    if not 0 <= dim < rank:
        raise TypeError(
            f"ragged_dot_general requires {dim_name} numbers to be nonnegative and less than "
            f"the number of axes of the {arg_name} value, got {dim} for {arg_name} of rank "
            f"{rank}."
        )


# --- the dense form: the CPU lowering, and the transposes JAX lacks ------------------------


def _expand(x, dim: int, group_sizes, prefix: Sequence[int]):
    """``x`` as ``[g, *x.shape]``: slice ``j`` keeps group ``j``'s part of dimension ``dim``."""
    g = group_sizes.shape[-1]
    shape = (g, *x.shape)
    ends = cumsum(group_sizes, axis=group_sizes.ndim - 1)
    starts = sub(ends, group_sizes)
    # group_sizes's axes are (prefix..., g); put g first and the prefix in x's order
    order = np.argsort(prefix)
    perm = (len(prefix), *(int(i) for i in order))
    bdims = (0, *(1 + int(prefix[i]) for i in order))
    ends, starts = (broadcast_in_dim(transpose(a, perm), shape, bdims) for a in (ends, starts))
    iota = broadcasted_iota(group_sizes.dtype, shape, dim + 1)
    mask = bitwise_and(ge(iota, starts), lt(iota, ends))
    wide = broadcast_in_dim(x, shape, tuple(range(1, len(shape))))
    return select_n(mask, zeros(aval_of(wide)), wide)


def _dense(
    lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, precision, preferred_element_type
):
    """The ragged dot as a masked dense ``dot_general`` (JAX's decomposition on CPU)."""
    numbers = ragged_dot_dimension_numbers
    la, ra = aval_of(lhs), aval_of(rhs)
    mode, ragged = _mode(la.ndim, numbers)
    (lc, rc), (lb, rb) = numbers.dot_dimension_numbers
    prefix = _prefix_dims(mode, la.ndim, ragged, lb, lc)
    if aval_of(group_sizes).ndim == 1 and prefix:
        shape = (*(la.shape[i] for i in prefix), aval_of(group_sizes).shape[0])
        group_sizes = broadcast_in_dim(group_sizes, shape, (len(shape) - 1,))
    dot = partial(dot_general, precision=precision, preferred_element_type=preferred_element_type)
    up = [d + 1 for d in lc], [d + 1 for d in lb]
    if mode == NONCONTRACTING:
        (group,) = numbers.rhs_group_dimensions
        wide = _expand(lhs, ragged, group_sizes, prefix)
        return dot(wide, rhs, (((*up[0], 0), (*rc, group)), (tuple(up[1]), rb)))
    if mode == CONTRACTING:
        r_ragged = rc[list(lc).index(ragged)]
        r_prefix = _prefix_dims(mode, ra.ndim, r_ragged, rb, rc)
        wide_l = _expand(lhs, ragged, group_sizes, prefix)
        wide_r = _expand(rhs, r_ragged, group_sizes, r_prefix)
        r_up = [d + 1 for d in rc], [d + 1 for d in rb]
        return dot(wide_l, wide_r, ((up[0], r_up[0]), ((0, *up[1]), (0, *r_up[1]))))
    return dot(lhs, rhs, ((lc, rc), (lb, rb)))


# --- rules -----------------------------------------------------------------------------


def _jvp(primals, tangents, **params):
    lhs, rhs, group_sizes = primals
    dl, dr, _ = tangents
    out = ragged_dot_general_p.bind(lhs, rhs, group_sizes, **params)
    parts = []
    if type(dl) is not Zero:
        parts.append(ragged_dot_general_p.bind(dl, rhs, group_sizes, **params))
    if type(dr) is not Zero:
        parts.append(ragged_dot_general_p.bind(lhs, dr, group_sizes, **params))
    tangent = parts[0] if len(parts) == 1 else add(*parts)
    return out, tangent


def _ranges_like(*lists):
    start = 0
    for xs in lists:
        yield tuple(range(start, start + len(xs)))
        start += len(xs)


def _transpose(ct, x, y, group_sizes, *, ragged_dot_dimension_numbers, **params):
    """Cotangents of a ragged dot.

    The non-contracting mode transposes to ragged dots (the rhs's to the contracting
    mode), as JAX's; the other modes, which JAX does not transpose, transpose their
    dense form.
    """
    numbers = ragged_dot_dimension_numbers
    x_aval = x.aval if is_undefined_primal(x) else aval_of(x)
    y_aval = y.aval if is_undefined_primal(y) else aval_of(y)
    mode, ragged = _mode(x_aval.ndim, numbers)
    if mode != NONCONTRACTING:
        return _transpose_dense(ct, x, y, group_sizes, numbers=numbers, **params)
    (xc, yc), (xb, yb) = numbers.dot_dimension_numbers
    x_kept = _remaining(x_aval.ndim, xc, xb)
    y_group = numbers.rhs_group_dimensions
    y_kept = _remaining(y_aval.ndim, yc, yb, y_group)
    ans_batch, ans_x, ans_y = _ranges_like(xb, x_kept, y_kept)
    ct_x = ct_y = None
    if is_undefined_primal(x):
        dims = RaggedDotDimensionNumbers(
            ((ans_y, y_kept), (ans_batch, yb)), [len(xb) + x_kept.index(ragged)], y_group
        )
        axes = [*xb, *x_kept, *np.take(xc, np.argsort(yc)).tolist()]
        ct_x = _cotangent(ct, y, group_sizes, dims, axes, x_aval, params)
    if is_undefined_primal(y):
        dims = RaggedDotDimensionNumbers(((x_kept, ans_x), (xb, ans_batch)), [ragged], [])
        axes = [*y_group, *yb, *np.take(yc, np.argsort(xc)).tolist(), *y_kept]
        ct_y = _cotangent(x, ct, group_sizes, dims, axes, y_aval, params)
    return [ct_x, ct_y, None]


def _cotangent(lhs, rhs, group_sizes, dims, axes, aval, params):
    out = ragged_dot_general_p.bind(
        lhs, rhs, group_sizes, ragged_dot_dimension_numbers=dims, **params
    )
    out = transpose(out, tuple(int(i) for i in np.argsort(axes)))
    return (
        _convert_element_type(out, aval.dtype, aval.weak_type) if out.dtype != aval.dtype else out
    )


def _transpose_dense(ct, x, y, group_sizes, *, numbers, **params):
    dense = partial(_dense, ragged_dot_dimension_numbers=numbers, **params)
    ct_x = ct_y = None
    if is_undefined_primal(x):
        aval = ShapedArray(x.aval.shape, x.aval.dtype)
        (ct_x,) = linear_transpose(lambda v: dense(v, y, group_sizes), aval)(ct)
    if is_undefined_primal(y):
        aval = ShapedArray(y.aval.shape, y.aval.dtype)
        (ct_y,) = linear_transpose(lambda v: dense(x, v, group_sizes), aval)(ct)
    return [ct_x, ct_y, None]


def _batching(args, dims, *, ragged_dot_dimension_numbers, **params):
    """vmap: the mapped axis becomes a batch dimension (or a free one, like dot_general's).

    JAX batches only operands all mapped at axis 0; here any axes, and unmapped
    operands, are accepted.
    """
    lhs, rhs, gs = args
    ld, rd, gd = dims
    numbers = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = numbers.dot_dimension_numbers
    (ragged,) = numbers.lhs_ragged_dimensions
    group = numbers.rhs_group_dimensions
    lhs_ndim = aval_of(lhs).ndim - (ld is not None)
    mode, _ = _mode(lhs_ndim, numbers)
    lead = int(mode == CONTRACTING)  # the result's group dimension comes first
    up = lambda ds, b: tuple(d + (d >= b) for d in ds)  # noqa: E731
    if gd is not None or aval_of(gs).ndim != 1 or (ld is not None and rd is not None):
        size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
        lhs, rhs = bdim_at_front(lhs, ld, size), bdim_at_front(rhs, rd, size)
        if gd is None and aval_of(gs).ndim == 1:
            new_gs = gs  # [g] broadcasts over every prefix
        else:
            gs = bdim_at_front(gs, gd, size)
            prefix = _prefix_dims(mode, lhs_ndim, ragged, lb, lc)
            shape = (size, *(aval_of(lhs).shape[i + 1] for i in prefix), aval_of(gs).shape[-1])
            new_gs = broadcast_in_dim(
                gs, shape, (0, *range(len(shape) - aval_of(gs).ndim + 1, len(shape)))
            )
        new = RaggedDotDimensionNumbers(
            ((up(lc, 0), up(rc, 0)), ((0, *up(lb, 0)), (0, *up(rb, 0)))),
            up((ragged,), 0),
            up(group, 0),
        )
        out = ragged_dot_general_p.bind(
            lhs, rhs, new_gs, ragged_dot_dimension_numbers=new, **params
        )
        return out, lead
    if ld is not None:  # a new free lhs dimension
        new = RaggedDotDimensionNumbers(
            ((up(lc, ld), rc), (up(lb, ld), rb)), up((ragged,), ld), group
        )
        free = _remaining(lhs_ndim + 1, up(lc, ld), up(lb, ld))
        out_dim = lead + len(lb) + free.index(ld)
    else:  # a new free rhs dimension
        rhs_ndim = aval_of(rhs).ndim - 1
        new = RaggedDotDimensionNumbers(
            ((lc, up(rc, rd)), (lb, up(rb, rd))), (ragged,), up(group, rd)
        )
        free = _remaining(rhs_ndim + 1, up(rc, rd), up(rb, rd), up(group, rd))
        n_lhs_free = lhs_ndim - len(lc) - len(lb)
        out_dim = lead + len(lb) + n_lhs_free + free.index(rd)
    out = ragged_dot_general_p.bind(lhs, rhs, gs, ragged_dot_dimension_numbers=new, **params)
    return out, out_dim


ragged_dot_general_p = Primitive("ragged_dot_general")
ragged_dot_general_p.def_abstract_eval(_abstract_eval)
ragged_dot_general_p.def_impl(partial(apply_primitive, ragged_dot_general_p))
register_lowering(ragged_dot_general_p, lower_fun(_dense))
jvp_rules[ragged_dot_general_p] = _jvp
transpose_rules[ragged_dot_general_p] = _transpose
batching_rules[ragged_dot_general_p] = _batching
register_param_printer(ragged_dot_general_p, "precision", format_precision)
register_param_parser(ragged_dot_general_p, "precision", parse_precision)


def _format_numbers(n: RaggedDotDimensionNumbers) -> str:
    return (
        f"RaggedDotDimensionNumbers(dot_dimension_numbers={n.dot_dimension_numbers!r}, "
        f"lhs_ragged_dimensions={n.lhs_ragged_dimensions!r}, "
        f"rhs_group_dimensions={n.rhs_group_dimensions!r})"
    )


def _parse_numbers(text: str) -> RaggedDotDimensionNumbers:
    call = ast.parse(text.strip(), mode="eval").body
    if not (
        isinstance(call, ast.Call) and getattr(call.func, "id", "") == "RaggedDotDimensionNumbers"
    ):
        raise ValueError(f"expected RaggedDotDimensionNumbers(...), got {text!r}")
    return RaggedDotDimensionNumbers(**{k.arg: ast.literal_eval(k.value) for k in call.keywords})


register_param_printer(ragged_dot_general_p, "ragged_dot_dimension_numbers", _format_numbers)
register_param_parser(ragged_dot_general_p, "ragged_dot_dimension_numbers", _parse_numbers)


def ragged_dot_general(
    lhs,
    rhs,
    group_sizes,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision=None,
    preferred_element_type=None,
    group_offset=None,
    out_sharding=None,
):
    """Contract ``lhs`` and ``rhs`` with one ragged lhs dimension (jax.lax.ragged_dot_general).

    ``ragged_dot_dimension_numbers`` gives the contraction, the lhs's ragged dimension
    and the rhs's group dimension; ``group_sizes`` (integers, ``[g]`` or
    ``[b..., x..., g]``) cuts the ragged dimension into consecutive groups. The result
    is ``dot_general``'s, with a leading group dimension when the ragged dimension is
    contracting. ``group_offset`` is not supported (NotImplementedError, as in JAX's
    implementation); ``out_sharding`` reshards the result.
    """
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    if not isinstance(ragged_dot_dimension_numbers, RaggedDotDimensionNumbers):
        raise TypeError(
            "ragged_dot_general requires a RaggedDotDimensionNumbers, got "
            f"{ragged_dot_dimension_numbers!r}"
        )
    preferred = (
        None
        if preferred_element_type is None
        else dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "ragged_dot_general")
    )
    out = ragged_dot_general_p.bind(
        lhs,
        rhs,
        group_sizes,
        ragged_dot_dimension_numbers=ragged_dot_dimension_numbers,
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred,
    )
    return out if out_sharding is None else reshard(out, out_sharding)


def ragged_dot(
    lhs,
    rhs,
    group_sizes,
    precision=None,
    preferred_element_type=None,
    group_offset=None,
    out_sharding=None,
):
    """Multiply row groups of ``lhs [m, k]`` by matrices of ``rhs [g, k, n]`` (jax.lax.ragged_dot).

    Rows ``sum(group_sizes[:j])`` up to ``sum(group_sizes[:j+1])`` of ``lhs`` are
    multiplied by ``rhs[j]``; rows past the last group give zeros.
    """
    return ragged_dot_general(
        lhs,
        rhs,
        group_sizes,
        _BASIC,
        precision=precision,
        preferred_element_type=preferred_element_type,
        group_offset=group_offset,
        out_sharding=out_sharding,
    )
