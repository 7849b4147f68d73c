"""Collectives built from others, and those whose rules need array ops (``jax.lax``'s parallel ops).

``pbroadcast`` is a masked ``psum``. ``psend``/``precv`` are XLA's send and
receive along a permutation, ordered by a token; as in JAX 0.10.2 they trace
(``Tok`` results, ``precv``'s result invariant) but lower only on GPU, so on
CPU lowering them raises JAX's NotImplementedError. ``ragged_all_to_all`` is a primitive:
each member sends slices of its ``operand``'s leading axis to the others and
writes the slices it receives into a copy of ``output``. Its rules follow
JAX 0.10's: linear in ``operand`` and ``output`` (JVP and transpose), batched
over another vmap axis by folding the batch into the leading axis, and lowered
inside shard_map to ``stablehlo.custom_call @ragged_all_to_all`` with the
mesh's replica groups (XLA:CPU has no kernel for it, as for JAX: such a
program compiles and fails to run on CPU).
"""

from __future__ import annotations

import re

import numpy as np

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import (
    AxisData,
    all_to_all,
    axis_index,
    axis_names,
    axis_primitive_batchers,
    bdim_at_front,
    broadcast,
    moveaxis,
    psum,
)
from modjax.lowering import custom_call, dense_int_elements, ir, ir_type, register_lowering
from modjax.sharding.collective_lowering import mesh_replica_groups
from modjax.tracecore import dtypes, tree_util
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, Tracer
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer
from modjax.tracecore.sharding_types import vma_rules
from modjax.tracecore.tokens import abstract_token

from ._common import aval_of
from ._rules import instantiate, zeros
from .elementwise import add, bitwise_and, ge, lt, mul, select_n
from .reductions import reduce_or
from .structural import broadcast_in_dim, broadcasted_iota, iota, reshape

__all__ = [
    "pbroadcast",
    "precv",
    "precv_p",
    "psend",
    "psend_p",
    "ragged_all_to_all",
    "ragged_all_to_all_p",
]


def pbroadcast(x, axis_name, source):
    """Give every member of ``axis_name`` the value of member ``source`` (``jax.lax.pbroadcast``).

    ``x`` is a pytree; the value is the sum over the axis of ``x`` masked to
    the source member, as JAX documents it.
    """
    import modjax.numpy as jnp  # noqa: PLC0415 - modjax.numpy imports modjax.lax

    is_source = axis_index(axis_name) == source
    return tree_util.tree_map(
        lambda leaf: psum(jnp.where(is_source, leaf, jnp.zeros_like(leaf)), axis_name), x
    )


# --- ragged_all_to_all ---------------------------------------------------------------------

ragged_all_to_all_p = Primitive("ragged_all_to_all")
_INDEX_NAMES = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")


@ragged_all_to_all_p.def_abstract_eval
def _abstract_eval(operand, output, *indices, axis_name, axis_index_groups):
    for what, aval in zip(_INDEX_NAMES, indices, strict=True):
        if not dtypes.issubdtype(aval.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {what} must be integer type.")
    for what, aval in zip(_INDEX_NAMES, indices, strict=True):
        if len(aval.shape) != 1 or aval.shape[0] < 1:
            raise ValueError(
                f"ragged_all_to_all {what} must be rank 1 with positive dimension size, but "
                f"got shape {aval.shape}"
            )
    return ShapedArray(output.shape, output.dtype, weak_type=False)


@ragged_all_to_all_p.def_impl
def _impl(*args, **params):
    raise RuntimeError(
        "ragged_all_to_all must be used within a mapped context like vmap or shard_map."
    )


def ragged_all_to_all(
    operand,
    output,
    input_offsets,
    send_sizes,
    output_offsets,
    recv_sizes,
    *,
    axis_name,
    axis_index_groups=None,
):
    """Exchange slices of ``operand``'s leading axis over ``axis_name`` (lax.ragged_all_to_all).

    Slice ``i`` (``operand[input_offsets[i]:][:send_sizes[i]]``) goes to member
    ``i // (len(send_sizes) // axis_size)``, which writes it at
    ``output_offsets[i]`` of its copy of ``output``; ``recv_sizes`` are the
    sizes this member receives (``all_to_all(send_sizes)``). The four index
    arrays are 1-d integers of one length, a multiple of the axis size.
    """
    names = tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)
    args = (operand, output, input_offsets, send_sizes, output_offsets, recv_sizes)
    if any(isinstance(x, Tracer) for x in args):  # eagerly the impl raises JAX's RuntimeError
        bound = axis_names()
        for name in names:
            if name not in bound:
                raise NameError(
                    f"Found an unbound axis name: {name}. To fix this, please call "
                    "ragged_all_to_all under `jax.shard_map`."
                )
    groups = (
        None
        if axis_index_groups is None
        else tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    )
    return ragged_all_to_all_p.bind(*args, axis_name=names, axis_index_groups=groups)


def _jvp(primals, tangents, **params):
    operand, output, *indices = primals
    d_operand, d_output, *_ = tangents
    out = ragged_all_to_all_p.bind(operand, output, *indices, **params)
    if type(d_operand) is Zero and type(d_output) is Zero:
        return out, Zero(d_output.aval)
    tangent = ragged_all_to_all_p.bind(
        instantiate(d_operand), instantiate(d_output), *indices, **params
    )
    return out, tangent


def _transpose(
    ct, operand, output, input_offsets, send_sizes, output_offsets, recv_sizes, **params
):
    """Send the cotangent's received slices back, and zero them in ``output``'s cotangent."""
    if type(ct) is Zero:
        return [
            Zero(operand.aval) if is_undefined_primal(operand) else None,
            Zero(output.aval) if is_undefined_primal(output) else None,
            *[None] * 4,
        ]
    names = params["axis_name"]
    # Where this member's received slices sit, and where its own sent slices came from.
    received_at = all_to_all(output_offsets, names, 0, 0, tiled=True)
    ct_operand = None
    if is_undefined_primal(operand):
        sent_from = all_to_all(input_offsets, names, 0, 0, tiled=True)
        aval = ShapedArray(operand.aval.shape, operand.aval.dtype)
        ct_operand = ragged_all_to_all_p.bind(
            ct, zeros(aval), received_at, recv_sizes, sent_from, send_sizes, **params
        )
    ct_output = None
    if is_undefined_primal(output):
        shape = aval_of(ct).shape
        rows = broadcasted_iota(aval_of(received_at).dtype, (shape[0], 1), 0)
        starts = broadcast_in_dim(received_at, (1, aval_of(received_at).shape[0]), (1,))
        ends = broadcast_in_dim(
            add(received_at, _as(recv_sizes, aval_of(received_at).dtype)),
            (1, aval_of(received_at).shape[0]),
            (1,),
        )
        inside = reduce_or(bitwise_and(ge(rows, starts), lt(rows, ends)), (1,))
        inside = broadcast_in_dim(inside, shape, (0,))
        ct_output = select_n(inside, ct, zeros(ShapedArray(shape, aval_of(ct).dtype)))
    return [ct_operand, ct_output, None, None, None, None]


def _as(x, dtype):
    from .elementwise import convert_element_type  # noqa: PLC0415

    return x if aval_of(x).dtype == dtype else convert_element_type(x, dtype)


def _batcher(axis_data: AxisData, args, dims, *, axis_name, axis_index_groups):
    """vmap over another axis: fold the batch into the leading axis (JAX's rule).

    Each batch member's slices keep their destinations: the index arrays
    interleave the members (``[k, b]`` flattened) and the offsets shift by the
    member's block of the merged operand and output.
    """
    params = {"axis_name": axis_name, "axis_index_groups": axis_index_groups}
    if all(d is None for d in dims) and axis_data.name not in axis_name:
        return ragged_all_to_all_p.bind(*args, **params), None
    if axis_data.name in axis_name:
        raise NotImplementedError(
            f"ragged_all_to_all over the vmapped axis {axis_data.name!r} (JAX 0.10 has no rule)"
        )
    if axis_index_groups is not None:
        raise NotImplementedError("ragged_all_to_all with axis_index_groups under vmap")
    size = axis_data.size
    operand, output = (bdim_at_front(x, d, size) for x, d in zip(args[:2], dims[:2], strict=True))
    n, m = aval_of(operand).shape[1], aval_of(output).shape[1]

    def second(x, d):  # [k] indices with the batch second: [k, size]
        return broadcast(x, size, 1) if d is None else moveaxis(x, d, 1)

    input_offsets, send_sizes, output_offsets, recv_sizes = (
        second(x, d) for x, d in zip(args[2:], dims[2:], strict=True)
    )

    def shifted(offsets, block):
        dtype = aval_of(offsets).dtype
        steps = mul(iota(dtype, size), np.asarray(block, dtype))
        return add(offsets, broadcast_in_dim(steps, aval_of(offsets).shape, (1,)))

    input_offsets = shifted(input_offsets, n)
    output_offsets = shifted(output_offsets, m)

    def merge(x):
        shape = aval_of(x).shape
        return reshape(x, (shape[0] * shape[1], *shape[2:]))

    out = ragged_all_to_all_p.bind(
        merge(operand), merge(output), merge(input_offsets), merge(send_sizes),
        merge(output_offsets), merge(recv_sizes), **params,
    )  # fmt: skip
    return reshape(out, (size, m, *aval_of(out).shape[1:])), 0


def _lowering(ctx, *operands, axis_name, axis_index_groups):
    groups = mesh_replica_groups(ctx, axis_name, axis_index_groups)
    attributes = {
        "replica_groups": dense_int_elements(np.asarray(groups, np.int64)),
        "channel_id": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1),
    }
    (out,) = custom_call(
        "ragged_all_to_all", [ir_type(ctx.avals_out[0])], operands, attributes=attributes
    )
    return out


jvp_rules[ragged_all_to_all_p] = _jvp
transpose_rules[ragged_all_to_all_p] = _transpose
axis_primitive_batchers[ragged_all_to_all_p] = _batcher
register_lowering(ragged_all_to_all_p, _lowering)


# --- psend / precv -------------------------------------------------------------------------


def _names_of(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def _check_names(op: str, names) -> None:
    """Raise JAX's NameError for an axis no shard_map (or vmap) binds."""
    bound = axis_names()
    for name in names:
        if name not in bound:
            raise NameError(
                f"Found an unbound axis name: {name}. To fix this, please call {op} under "
                "`jax.shard_map`."
            )


def _perm(perm) -> tuple:
    return tuple((int(src), int(dst)) for src, dst in perm)


def _gpu_only(name: str):
    def rule(ctx, *args, **params):
        raise NotImplementedError(f"{name} is currently only implemented on GPU")

    return rule


psend_p = Primitive("psend")
psend_p.def_abstract_eval(lambda x, *, axis_name, perm: abstract_token)


@psend_p.def_impl
def _psend_impl(x, *, axis_name, perm):
    raise NotImplementedError("Evaluation rule for 'psend' not implemented")


def psend(x, axis_name, perm):
    """Send ``x`` along ``perm``'s (source, destination) pairs over ``axis_name`` (lax.psend).

    Return a token (one per leaf of a pytree ``x``) for a matching ``precv``;
    XLA's send, which JAX 0.10.2 lowers on GPU only (NotImplementedError here).
    """
    names = _names_of(axis_name)
    pairs = _perm(perm)

    _check_names("psend", names)
    return tree_util.tree_map(lambda leaf: psend_p.bind(leaf, axis_name=names, perm=pairs), x)


precv_p = Primitive("precv")
precv_p.def_abstract_eval(lambda token, *, out_shape, axis_name, perm: out_shape)


@precv_p.def_impl
def _precv_impl(token, **params):
    raise NotImplementedError("Evaluation rule for 'precv' not implemented")


def precv(token, out_shape, axis_name, perm):
    """Receive a value of ``out_shape``'s shape and dtype along ``perm`` (lax.precv).

    ``token`` orders it after a ``psend`` (or comes from ``create_token``);
    XLA's recv, which JAX 0.10.2 lowers on GPU only (NotImplementedError here).
    """
    # As in JAX, the names are not checked: eagerly the impl raises, traced the lowering.
    names = _names_of(axis_name)
    aval = ShapedArray(tuple(out_shape.shape), np.dtype(out_shape.dtype))
    return precv_p.bind(token, out_shape=aval, axis_name=names, perm=_perm(perm))


register_lowering(psend_p, _gpu_only("psend"))
register_lowering(precv_p, _gpu_only("precv"))
# The received value does not vary in the body's types (as in JAX: a pvary follows it).
vma_rules[precv_p] = lambda vma_in, params: frozenset()


def _format_shape(aval: ShapedArray) -> str:
    """``float32[4,8]``: precv's ``out_shape`` as JAX prints it."""
    return f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"


def _parse_shape(text: str) -> ShapedArray:
    match = re.fullmatch(r"\s*(\w+)\[([\d,\s]*)\]\s*", text)
    if match is None:
        raise ValueError(f"precv out_shape: expected dtype[dims], got {text!r}")
    dims = tuple(int(d) for d in match.group(2).split(",") if d.strip())
    return ShapedArray(dims, dtypes.canonicalize_dtype(np.dtype(match.group(1))))


register_param_printer(precv_p, "out_shape", _format_shape)
register_param_parser(precv_p, "out_shape", _parse_shape)
