"""Contractions: the ``dot_general`` primitive and ``dot`` built on it."""

from __future__ import annotations

import contextlib
import operator
import threading
from functools import partial

import numpy as np

from modjax.autodiff import defbilinear, dot_primitives
from modjax.batching import batching_rules, shift_axes
from modjax.batching.batch_trace import BatchTracer
from modjax.lowering import hlo, ir, ir_type, register_lowering, sharding_constraint
from modjax.runtime import apply_primitive
from modjax.runtime.sharding import typed_aval
from modjax.sharding import reshard, with_sharding_constraint
from modjax.sharding.constraint import _as_sharding, operation_out_sharding
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray, sharding_entries, unreduced_axes
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer
from modjax.tracecore.sharding_types import ShardingTypeError

from ._common import aval_of, convert, kind
from .elementwise import _convert_element_type
from .precision import (
    CPU_PRESETS,
    DotAlgorithm,
    DotAlgorithmPreset,
    DotDimensionNumbers,
    Precision,
    PrecisionLike,
    algorithm_compute_types,
    canonicalize_precision,
    format_precision,
    is_algorithm,
    parse_precision,
    precision_pair,
)
from .structural import transpose, typed_as

__all__ = [
    "DotAlgorithm",
    "DotAlgorithmPreset",
    "DotDimensionNumbers",
    "Precision",
    "PrecisionLike",
    "dot",
    "dot_general",
]


def check_dot_general_shapes(lhs_shape, rhs_shape, dimension_numbers) -> tuple[int, ...]:
    """Check ``dot_general``'s dimension numbers against the operand shapes (TypeError).

    ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))`` of ints. Returns the result's shape: batch, lhs free, rhs free.
    Sparse products (``bcoo_dot_general``) check their operands with this too.
    """
    (lc, rc), (lb, rb) = dimension_numbers
    for side, shape, batch, contract in (
        ("lhs", lhs_shape, lb, lc),
        ("rhs", rhs_shape, rb, rc),
    ):
        ndim = len(shape)
        if any(not 0 <= d < ndim for d in (*batch, *contract)):
            raise TypeError(
                f"dot_general requires {side} dimension numbers to be nonnegative and less than "
                f"the number of axes of the {side} value, got {side}_batch of {batch} and "
                f"{side}_contracting of {contract} for {side} of rank {ndim}"
            )
        if len(set(batch)) != len(batch) or len(set(contract)) != len(contract):
            raise TypeError(
                f"dot_general requires {side} batch and contracting dimensions to be distinct, "
                f"got {side}_batch {batch} and {side}_contracting {contract}."
            )
        if set(batch) & set(contract):
            raise TypeError(
                f"dot_general requires {side} batch dimensions to be disjoint from "
                f"contracting dimensions, got {side}_batch {batch} and {side}_contracting "
                f"{contract}."
            )
    if len(lb) != len(rb):
        raise TypeError(
            "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got "
            f"lhs_batch {lb} and rhs_batch {rb}."
        )
    if len(lc) != len(rc):
        raise TypeError(
            "dot_general requires equal numbers of lhs_contracting and rhs_contracting "
            f"dimensions, got lhs_contracting {lc} and rhs_contracting {rc}."
        )
    lb_shape = tuple(lhs_shape[d] for d in lb)
    rb_shape = tuple(rhs_shape[d] for d in rb)
    if lb_shape != rb_shape:
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
            f"same shape, got {lb_shape} and {rb_shape}."
        )
    lc_shape = tuple(lhs_shape[d] for d in lc)
    rc_shape = tuple(rhs_shape[d] for d in rc)
    if lc_shape != rc_shape:
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{lc_shape} and {rc_shape}."
        )
    lhs_free = tuple(d for i, d in enumerate(lhs_shape) if i not in lb and i not in lc)
    rhs_free = tuple(d for i, d in enumerate(rhs_shape) if i not in rb and i not in rc)
    return lb_shape + lhs_free + rhs_free


def _dot_general_abstract_eval(
    lhs, rhs, *, dimension_numbers, precision, preferred_element_type, out_sharding=None
):
    shape = check_dot_general_shapes(lhs.shape, rhs.shape, dimension_numbers)
    for side, aval in (("lhs", lhs), ("rhs", rhs)):
        if kind(aval.dtype) == "?":
            raise TypeError(f"dot_general does not accept {side} dtype {aval.dtype}")
    if preferred_element_type is not None:
        return ShapedArray(shape, preferred_element_type)
    dtype = lhs.dtype if lhs.dtype == rhs.dtype else dtypes.promote_types(lhs.dtype, rhs.dtype)
    return ShapedArray(shape, dtypes.canonicalize_dtype(dtype), lhs.weak_type and rhs.weak_type)


def _dot_general_lowering(
    ctx,
    lhs,
    rhs,
    *,
    dimension_numbers,
    precision,
    preferred_element_type,
    out_sharding=None,
    platform=None,
):
    (lc, rc), (lb, rb) = dimension_numbers
    a_lhs, a_rhs = ctx.avals_in
    out = ctx.avals_out[0]
    acc = out
    algorithm = {}
    if is_algorithm(precision):
        lhs, rhs, acc, algorithm = _algorithm_operands(ctx, lhs, rhs, precision, platform)
    elif a_lhs.dtype != a_rhs.dtype:  # mixed inputs meet at their promoted type
        common = (
            out.dtype
            if preferred_element_type is None
            else dtypes.promote_types(a_lhs.dtype, a_rhs.dtype)
        )
        lhs = convert(lhs, a_lhs, a_lhs.update(dtype=common))
        rhs = convert(rhs, a_rhs, a_rhs.update(dtype=common))
    numbers = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb),
        rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc),
        rhs_contracting_dimensions=list(rc),
    )
    config = ir.ArrayAttr.get([hlo.PrecisionAttr.get(p.name) for p in precision_pair(precision)])
    result = hlo.dot_general(ir_type(acc), lhs, rhs, numbers, precision_config=config, **algorithm)
    result = result if acc.dtype == out.dtype else convert(result, acc, out)
    if out_sharding is not None:  # partial sums: JAX pins them so, for Shardy
        name = ctx.module_ctx.sdy_mesh_name(out_sharding._sdy_mesh)
        text = out_sharding._to_sdy_sharding(len(out.shape), name)
        result = sharding_constraint(result, text.removeprefix("#sdy.sharding"))
    return result


def _algorithm_operands(ctx, lhs, rhs, algorithm, platform):
    """Round the operands to ``algorithm``'s types; the accumulator's aval and the attribute.

    XLA's CPU backend ignores the algorithm attribute, so there the conversions are
    what gives the algorithm's arithmetic, and an algorithm they cannot express is
    refused (ValueError, as in JAX).
    """
    if platform == "cpu" and algorithm not in CPU_PRESETS:
        raise ValueError(f"The precision '{algorithm}' is not supported by dot_general on CPU")
    a_lhs, a_rhs = ctx.avals_in[:2]
    out = ctx.avals_out[0]
    lhs_t, rhs_t, acc_t = algorithm_compute_types(algorithm, a_lhs.dtype, a_rhs.dtype, out.dtype)
    if lhs_t is not None and lhs_t != a_lhs.dtype:
        lhs = convert(lhs, a_lhs, a_lhs.update(dtype=lhs_t))
    if rhs_t is not None and rhs_t != a_rhs.dtype:
        rhs = convert(rhs, a_rhs, a_rhs.update(dtype=rhs_t))
    acc = out if acc_t is None else out.update(dtype=acc_t)
    if algorithm == DotAlgorithmPreset.DEFAULT:
        return lhs, rhs, acc, {}
    return lhs, rhs, acc, {"algorithm": _algorithm_attr(algorithm, lhs_t, rhs_t)}


def _algorithm_attr(algorithm, lhs_t, rhs_t):
    """StableHLO's ``#stablehlo.dot_algorithm`` for a ``DotAlgorithm`` or preset."""
    if isinstance(algorithm, DotAlgorithmPreset):
        name = algorithm.name
        if name.startswith("ANY_F8"):
            fields = (lhs_t, rhs_t, np.dtype(np.float32), 1, 1, 1, name.endswith("F32_FAST_ACCUM"))
        else:
            lhs_name, _, acc_name, *rest = name.split("_")
            passes = int(rest[0][1:]) if rest else 1
            fields = (lhs_name, lhs_name, acc_name, 1, 1, passes, False)
    else:
        fields = tuple(algorithm)
    lhs, rhs, acc, *counts, imprecise = fields
    return hlo.DotAlgorithm.get(
        _algorithm_type(lhs), _algorithm_type(rhs), _algorithm_type(acc), *counts, imprecise
    )


def _algorithm_type(t):
    """The MLIR element type of an algorithm field (a dtype, or a preset's ``TF32``-style name)."""
    if isinstance(t, str):
        if t == "TF32":
            return ir.FloatTF32Type.get()
        t = {"F16": np.float16, "BF16": dtypes.bfloat16, "F32": np.float32, "F64": np.float64}[t]
    return ir_type(ShapedArray((), np.dtype(t))).element_type


def _free(ndim: int, contract, batch) -> list[int]:
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _no_unreduced(out_sharding, what: str) -> None:
    if out_sharding is not None:
        raise NotImplementedError(f"{what} of a dot_general whose result is unreduced")


def _dot_general_transpose_lhs(
    ct,
    x,
    y,
    *,
    dimension_numbers,
    precision,
    preferred_element_type,
    out_sharding=None,
    swap_ans=False,
):
    """The cotangent of ``x`` in ``dot_general(x, y)``: ``ct`` contracted with ``y``.

    ``ct``'s axes are (batch, x's free, y's free), or (batch, y's free, x's free) with
    ``swap_ans`` (the rhs rule's view); contracting its y-free axes with y's free axes
    leaves (batch, x's free, y's contracting axes in y's order), which a transpose puts
    back in x's order. Precision and preferred type pass through unchanged, as in JAX,
    so the program (and its rounding) is JAX's.
    """
    _no_unreduced(out_sharding, "the transpose")
    x_aval = x.aval
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_free = _free(x_aval.ndim, x_contract, x_batch)
    y_free = _free(to_aval(y).ndim, y_contract, y_batch)
    first_y_free = len(x_batch) + (0 if swap_ans else len(x_free))
    ct_y_free = tuple(range(first_y_free, first_y_free + len(y_free)))
    numbers = ((ct_y_free, tuple(y_free)), (tuple(range(len(x_batch))), tuple(y_batch)))
    typed = x_aval.type_sharding is not None
    if typed or aval_of(ct).type_sharding is not None or aval_of(y).type_sharding is not None:
        # As JAX, whose transpose passes out_sharding=x's: an unambiguous contraction,
        # then x's type for the cotangent.
        ct, y = _unambiguous_operands(ct, y, numbers)
    out = dot_general_p.bind(
        ct,
        y,
        dimension_numbers=numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    x_axes = [*x_batch, *x_free, *(x_contract[y_contract.index(j)] for j in sorted(y_contract))]
    out = transpose(out, tuple(int(i) for i in np.argsort(x_axes)))
    if aval_of(out).dtype != x_aval.dtype:  # weak types follow the operands, as in JAX
        out = _convert_element_type(out, x_aval.dtype, x_aval.weak_type)
    return typed_as(out, x_aval.type_sharding) if typed else out


def _dot_general_transpose_rhs(
    ct, x, y, *, dimension_numbers, precision, preferred_element_type, out_sharding=None
):
    """The cotangent of ``y``: the lhs rule applied to ``dot_general(y, x)``."""
    _no_unreduced(out_sharding, "the transpose")
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    return _dot_general_transpose_lhs(
        ct,
        y,
        x,
        dimension_numbers=((y_contract, x_contract), (y_batch, x_batch)),
        precision=precision,
        preferred_element_type=preferred_element_type,
        swap_ans=True,
    )


def _dot_general_batching_rule(args, dims, *, dimension_numbers, **params):
    """Fold the batch axes into dot_general's own batch (or free) dimensions: one dot_general."""
    _no_unreduced(params.get("out_sharding"), "vmap")
    lhs, rhs = args
    lhs_dim, rhs_dim = dims
    (lc, rc), (lb, rb) = dimension_numbers
    if lhs_dim is not None:
        lc, lb = shift_axes(lc, lhs_dim), shift_axes(lb, lhs_dim)
    if rhs_dim is not None:
        rc, rb = shift_axes(rc, rhs_dim), shift_axes(rb, rhs_dim)
    if lhs_dim is not None and rhs_dim is not None:  # a new leading batch dimension
        numbers, out_dim = ((lc, rc), ((lhs_dim, *lb), (rhs_dim, *rb))), 0
    elif lhs_dim is not None:  # a free dimension of lhs, among lhs's other free dimensions
        numbers = ((lc, rc), (lb, rb))
        out_dim = len(lb) + _free(to_aval(lhs).ndim, lc, lb).index(lhs_dim)
    else:
        numbers = ((lc, rc), (lb, rb))
        n_lhs_free = to_aval(lhs).ndim - len(lc) - len(lb)
        out_dim = len(rb) + n_lhs_free + _free(to_aval(rhs).ndim, rc, rb).index(rhs_dim)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=numbers, **params), out_dim


dot_general_p = Primitive("dot_general")
dot_general_p.def_abstract_eval(_dot_general_abstract_eval)
dot_general_p.def_impl(partial(apply_primitive, dot_general_p))
register_lowering(dot_general_p, _dot_general_lowering)
register_lowering(dot_general_p, partial(_dot_general_lowering, platform="cpu"), platform="cpu")
defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)
batching_rules[dot_general_p] = _dot_general_batching_rule
dot_primitives.add(dot_general_p)  # what checkpoint's dots_saveable policies save
register_param_printer(dot_general_p, "precision", format_precision)
# As JAX: the result's type (``{U:y}``) says it; the param is not printed.
register_param_printer(dot_general_p, "out_sharding", lambda value: None)
register_param_parser(dot_general_p, "precision", parse_precision)


def _dims(values) -> tuple[int, ...]:
    return tuple(operator.index(v) for v in values)


def canonical_dimension_numbers(dimension_numbers):
    """``dot_general``'s dimension numbers as tuples of ints (TypeError if malformed)."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return ((_dims(lc), _dims(rc)), (_dims(lb), _dims(rb)))
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}"
        ) from None


class _OutSharding(threading.local):
    given = False  # inside a jnp contraction called with out_sharding=
    unreduced = None  # ... whose out_sharding has unreduced axes: that sharding


_out_sharding = _OutSharding()


@contextlib.contextmanager
def output_sharding_given():
    """Make the contractions traced inside unambiguous (their caller reshards the result).

    What ``jnp.dot``/``matmul``/``einsum``/``tensordot`` with ``out_sharding=`` use:
    each ``dot_general`` inside first takes the mesh axes off contracting dimensions.
    """
    before = _out_sharding.given
    _out_sharding.given = True
    try:
        yield
    finally:
        _out_sharding.given = before


def contract_with_out_sharding(fn, out_sharding, *args, **kwargs):
    """Return ``fn(*args, **kwargs)`` (a jnp contraction) resharded to ``out_sharding``.

    With unreduced axes in ``out_sharding``, its contractions leave their results
    unreduced (partial sums over the contracting dimensions' mesh axes), as JAX's.
    ``out_sharding`` is read as JAX 0.10.2 reads it (``operation_out_sharding``:
    its errors, and ignored for operands with no mesh outside a mesh context);
    JAX's errors name ``einsum`` for it and ``dot_general`` for the others.
    """
    name = "einsum" if getattr(fn, "__name__", "") == "einsum" else "dot_general"
    operands = [a for a in args if not isinstance(a, str | list)]
    out_sharding = _read_out_sharding(out_sharding, name, operands)
    if out_sharding is None:
        return fn(*args, **kwargs)
    if _spec_unreduced(out_sharding):
        before = _out_sharding.unreduced
        _out_sharding.unreduced = _as_sharding(out_sharding, "out_sharding")
        try:
            out = fn(*args, **kwargs)
        finally:
            _out_sharding.unreduced = before
        if aval_of(out).type_sharding == _typed(out, out_sharding):
            return out
        return reshard(out, out_sharding)
    with output_sharding_given():
        out = fn(*args, **kwargs)
    return reshard(out, out_sharding)


def _read_out_sharding(out_sharding, name: str, operands):
    avals = []
    for x in operands:
        try:
            avals.append(to_aval(x))
        except TypeError:  # not an array (numpy's interleaved einsum form): no mesh
            continue
    return operation_out_sharding(out_sharding, name, avals)


def _spec_unreduced(sharding) -> bool:
    return bool(getattr(getattr(sharding, "spec", sharding), "unreduced", None))


def _typed(x, sharding):
    """The type sharding ``x`` would have once resharded to ``sharding``."""
    target = _as_sharding(sharding, "out_sharding")
    return typed_aval(aval_of(x), target).type_sharding


def _unreduced_result(lhs, rhs, numbers, out_sharding):
    """The result's type sharding of a contraction left unreduced over ``out_sharding``'s
    unreduced axes: JAX's checks (both sides' contracting dimensions split alike, over
    exactly those axes), then the batch and free dimensions' entries.
    """
    if isinstance(lhs, BatchTracer) or isinstance(rhs, BatchTracer):
        # vmap's per-example types carry no shardings, so the checks cannot be made.
        raise NotImplementedError("vmap of a dot_general whose out_sharding is unreduced")
    la, ra = aval_of(lhs), aval_of(rhs)
    (lc, rc), (lb, rb) = numbers
    if unreduced_axes(la) or unreduced_axes(ra):
        raise ShardingTypeError(
            f"lhs or rhs passed to dot_general cannot be unreduced. Got lhs={la!r} and rhs={ra!r}"
        )
    le, re = sharding_entries(la), sharding_entries(ra)
    lcs, rcs = tuple(le[d] for d in lc), tuple(re[d] for d in rc)
    if lcs != rcs:
        raise ShardingTypeError(
            "lhs and rhs contracting dims should be sharded identically when out_sharding "
            f"provided to dot_general mentions unreduced_axes. Got lhs_contracting_spec={lcs}, "
            f"rhs_contracting_spec={rcs}"
        )
    unreduced = out_sharding.spec.unreduced
    if unreduced != frozenset(a for e in lcs for a in _axes(e)):
        raise ShardingTypeError(
            "out_sharding's unreduced axes should be equal to the contracting specs. Got "
            f"unreduced axes={unreduced} and contracting spec={lcs}"
        )
    entries = (
        [le[d] for d in lb]
        + [le[i] for i in _free(la.ndim, lc, lb)]
        + [re[i] for i in _free(ra.ndim, rc, rb)]
    )
    spec = out_sharding.spec.update(partitions=entries, reduced=frozenset())
    return out_sharding.update(spec=spec)


def _axes(entry) -> tuple:
    return () if entry is None else ((entry,) if isinstance(entry, str) else tuple(entry))


def _retyped(x, aval, entries):
    """``x`` resharded so that its type has ``entries`` (itself when it already has them)."""
    if aval.type_sharding is None or tuple(entries) == sharding_entries(aval):
        return x
    return with_sharding_constraint(x, aval.type_sharding.update(spec=tuple(entries)))


def _unambiguous_operands(lhs, rhs, numbers):
    """Reshard operands typed over explicit axes so that their contraction is unambiguous.

    Contracting dimensions lose their mesh axes, rhs's batch dimensions take
    lhs's, and rhs gives up axes lhs already uses: the result's type is then
    well defined, and the caller reshards it to the requested ``out_sharding``.
    """
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.type_sharding is None and ra.type_sharding is None:
        return lhs, rhs
    (lc, rc), (lb, rb) = numbers
    le, re = list(sharding_entries(la)), list(sharding_entries(ra))
    for d in lc:
        le[d] = None
    for d in rc:
        re[d] = None
    for i, j in zip(lb, rb, strict=True):
        if le[i] is not None:
            re[j] = le[i]
    used = {a for e in le for a in _axes(e)}
    for k, e in enumerate(re):
        if k not in rb:
            kept = tuple(a for a in _axes(e) if a not in used)
            re[k] = kept[0] if len(kept) == 1 else (kept or None)
    return _retyped(lhs, la, le), _retyped(rhs, ra, re)


def dot_general(
    lhs,
    rhs,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
    *,
    out_sharding=None,
):
    """Contract ``lhs`` and ``rhs`` over some axes, batching over others (jax.lax.dot_general).

    ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))``. The result's dimensions are the batch dimensions, then the
    free dimensions of ``lhs``, then those of ``rhs``. ``preferred_element_type``
    sets the result dtype (e.g. float32 accumulation of bfloat16 inputs).
    ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current mesh)
    sets the result's sharding, also where operands sharded over explicit mesh
    axes make it ambiguous.
    """
    numbers = canonical_dimension_numbers(dimension_numbers)
    preferred = (
        None
        if preferred_element_type is None
        else dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "dot_general")
    )
    out_sharding = _read_out_sharding(out_sharding, "dot_general", (lhs, rhs))
    partial_sums = _out_sharding.unreduced
    if out_sharding is not None and _spec_unreduced(out_sharding):
        partial_sums = _as_sharding(out_sharding, "out_sharding")
    if partial_sums is not None:
        # The result is left unreduced over the contracting dimensions' mesh axes.
        out = dot_general_p.bind(
            lhs,
            rhs,
            dimension_numbers=numbers,
            precision=canonicalize_precision(precision),
            preferred_element_type=preferred,
            out_sharding=_unreduced_result(lhs, rhs, numbers, partial_sums),
        )
    else:
        if out_sharding is not None or _out_sharding.given:
            lhs, rhs = _unambiguous_operands(lhs, rhs, numbers)
        out = dot_general_p.bind(
            lhs,
            rhs,
            dimension_numbers=numbers,
            precision=canonicalize_precision(precision),
            preferred_element_type=preferred,
        )
    if out_sharding is None or aval_of(out).type_sharding == _typed(out, out_sharding):
        return out
    return reshard(out, out_sharding)


def dot(
    lhs,
    rhs,
    precision=None,
    preferred_element_type=None,
    *,
    dimension_numbers=None,
    out_sharding=None,
):
    """Compute a vector/matrix product of operands of rank 1 or 2 (jax.lax.dot).

    With ``dimension_numbers`` it is ``dot_general``; ``out_sharding`` as there.
    """
    if dimension_numbers is not None:
        return dot_general(
            lhs,
            rhs,
            dimension_numbers,
            precision,
            preferred_element_type,
            out_sharding=out_sharding,
        )
    nl, nr = aval_of(lhs).ndim, aval_of(rhs).ndim
    # A contraction of unequal sizes is this same ValueError in JAX (not dot_general's
    # TypeError): lax.dot only accepts the simple products whose sizes agree.
    if nl not in (1, 2) or nr not in (1, 2) or aval_of(lhs).shape[-1] != aval_of(rhs).shape[0]:
        raise ValueError(
            "lax.dot: dimension_numbers must be specified when not performing simple "
            "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
            f"lhs_shape={aval_of(lhs).shape} rhs_shape={aval_of(rhs).shape}"
        )
    numbers = (((nl - 1,), (0,)), ((), ()))
    return dot_general(
        lhs, rhs, numbers, precision, preferred_element_type, out_sharding=out_sharding
    )
