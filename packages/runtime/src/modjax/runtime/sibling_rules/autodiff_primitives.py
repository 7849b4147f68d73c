"""Rules of autodiff's primitives that need batching's or lowering's tables.

autodiff declares ``add_any_p``, ``zeros_like_p``, ``stop_gradient_p``,
``name_p``, ``remat_p``, ``custom_jvp_call_p``, ``custom_vjp_call_p``,
``custom_lin_p`` and ``linear_call_p``; batching and lowering are its siblings in
layer 1, so their batching rules and XLA lowerings, and the eager impls on the
device, live here (design.md). Lowerings: ``stop_gradient`` and ``name`` are
identities, ``remat`` is inlined behind an optimization barrier when
``prevent_cse``, ``custom_jvp_call`` and ``custom_vjp_call`` inline their
``call_jaxpr``, ``linear_call`` its ``callee``. Under vmap a custom rule
runs on the batched program with every batched operand and result at axis 0.
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import (
    Zero,
    add_any_p,
    custom_jvp_call_p,
    custom_lin_p,
    custom_vjp_call_p,
    linear_call_p,
    name_p,
    remat_p,
    stop_gradient_p,
    tangent_aval,
    zeros_like_p,
)
from modjax.batching import (
    AxisData,
    axis_primitive_batchers,
    batch_jaxpr_axis,
    batch_subtrace,
    batching_rules,
    broadcast,
    defvectorized,
    matchaxis,
    moveaxis,
    register_call_batching,
    uses_axis_primitives,
)
from modjax.lowering import (
    dense_int_array,
    hlo,
    ir_constant,
    ir_type,
    lower_jaxpr_inline,
    register_lowering,
)
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.tracing import convert_constvars_jaxpr

from ..dispatch import apply_primitive
from ._device import device_impl
from .sum_batch import sum_batch_p

__all__: list[str] = []


add_any_p.def_impl(device_impl(add_any_p, add_any_p._impl))


def _zeros_like_impl(*, aval: ShapedArray):
    if type(aval) is not AbstractToken and aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return apply_primitive(zeros_like_p, aval=aval)


zeros_like_p.def_impl(_zeros_like_impl)


# --- lowerings ---------------------------------------------------------------------------------


def _identity_lowering(ctx, x, **_):
    return x


def _add_any_lowering(ctx, x, y):
    if ctx.avals_out[0].dtype == np.bool_:
        return hlo.or_(x, y)
    return hlo.add(x, y)


def _zeros_lowering(ctx, *, aval):
    if type(aval) is AbstractToken:  # the tangent of a token output: a token
        return hlo.create_token()
    zero = ir_constant(np.zeros((), aval.dtype if aval.dtype != dtypes.float0 else np.bool_))
    return hlo.broadcast_in_dim(ir_type(ctx.avals_out[0]), zero, dense_int_array([]))


def _remat_lowering(ctx, *operands, jaxpr, prevent_cse, policy):
    # As JAX does, an optimization barrier on the operands keeps XLA from merging the
    # recomputation of the backward pass with the forward pass (common subexpressions).
    if prevent_cse and operands:
        operands = list(hlo.OptimizationBarrierOp(list(operands)).results)
    return lower_jaxpr_inline(ctx, jaxpr, operands)


def _custom_call_lowering(ctx, *operands, call_jaxpr, **_):
    return lower_jaxpr_inline(ctx, call_jaxpr, operands)


def _linear_call_lowering(ctx, *operands, callee, **_):
    return lower_jaxpr_inline(ctx, callee, operands)


def _custom_lin_not_transposed(*_, **__):
    # custom_lin is only ever transposed: lowering or batching it means forward mode
    # (jvp, jacfwd), which JAX refuses with this error.
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


register_lowering(add_any_p, _add_any_lowering)
register_lowering(zeros_like_p, _zeros_lowering)
register_lowering(stop_gradient_p, _identity_lowering)
register_lowering(name_p, _identity_lowering)
register_lowering(remat_p, _remat_lowering)
register_lowering(custom_jvp_call_p, _custom_call_lowering)
register_lowering(custom_vjp_call_p, _custom_call_lowering)
register_lowering(custom_lin_p, _custom_lin_not_transposed)
register_lowering(linear_call_p, _linear_call_lowering)


# --- batching of autodiff's primitives -------------------------------------------------------


def _add_any_batching_rule(args, dims):
    (x, y), (dx, dy) = args, dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    if dx is None:
        return add_any_p.bind(broadcast(x, to_aval(y).shape[dy], dy), y), dy
    if dy is None:
        return add_any_p.bind(x, broadcast(y, to_aval(x).shape[dx], dx)), dx
    return add_any_p.bind(x, moveaxis(y, dy, dx)), dx


batching_rules[add_any_p] = _add_any_batching_rule
defvectorized(stop_gradient_p)
defvectorized(name_p)
register_call_batching(remat_p)


def _unbatched_aval(aval: ShapedArray, dim: int | None) -> ShapedArray:
    if dim is None:
        return aval
    return ShapedArray(aval.shape[:dim] + aval.shape[dim + 1 :], aval.dtype, aval.weak_type)


def _at_front(axis_data: AxisData, vals, dims):
    """Force each result batched at axis 0 (broadcasting unbatched ones)."""
    return [matchaxis(axis_data.size, d, 0, v) for v, d in zip(vals, dims, strict=True)]


def _batched_custom_call(axis_data: AxisData, args, dims, call: ClosedJaxpr, num_consts: int):
    """Batch a custom call's program with every batched operand and every result at axis 0.

    Return ``(operands, arg_dims, new_call_jaxpr, num_consts)``; ``arg_dims`` are the
    batch dims (0 or None) of the non-const operands, which the wrapped rules see.
    """
    args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, dims, strict=True)]
    in_dims = tuple(None if d is None else 0 for d in dims)
    batched, _ = batch_jaxpr_axis(call, axis_data, in_dims, True)
    consts = list(batched.consts)
    if consts:
        batched = ClosedJaxpr(convert_constvars_jaxpr(batched.jaxpr), ())
    return [*consts, *args], in_dims[num_consts:], batched, num_consts + len(consts)


class _BatchedJVP:
    """A custom_jvp rule (flat lists) run under vmap: the batched call's ``jvp`` param.

    Primals and tangents are batched at axis 0 where the operand is, and so are all
    the outputs. Symbolic zero tangents stay symbolic.
    """

    def __init__(self, jvp, axis_data: AxisData, arg_dims):
        self.jvp, self.axis_data, self.arg_dims = jvp, axis_data, tuple(arg_dims)
        self.primal_name = getattr(jvp, "primal_name", "function")
        self.name = getattr(jvp, "name", "jvp")

    def __repr__(self) -> str:
        return f"vmap({self.name})"

    def __call__(self, primals, tangents):
        dims = self.arg_dims
        nonzero = [type(t) is not Zero for t in tangents]
        zero_avals = [
            None if nz else _unbatched_aval(t.aval, d)
            for t, d, nz in zip(tangents, dims, nonzero, strict=True)
        ]
        n = len(primals)
        n_out: list[int] = []
        zero_out: list = []

        def one(*flat):
            ps, ts = list(flat[:n]), iter(flat[n:])
            full = [next(ts) if nz else Zero(a) for nz, a in zip(nonzero, zero_avals, strict=True)]
            p_out, t_out = self.jvp(ps, full)
            n_out.append(len(p_out))
            zero_out[:] = [t.aval if type(t) is Zero else None for t in t_out]
            return list(p_out) + [t for t in t_out if type(t) is not Zero]

        nz_t = [t for t, nz in zip(tangents, nonzero, strict=True) if nz]
        nz_dims = [d for d, nz in zip(dims, nonzero, strict=True) if nz]
        vals, out_dims = batch_subtrace(
            one, self.axis_data, list(dims) + nz_dims, list(primals) + nz_t
        )
        vals = _at_front(self.axis_data, vals, out_dims)
        k = n_out[0]
        p_out, nz_out = vals[:k], iter(vals[k:])
        size = self.axis_data.size
        t_out = [next(nz_out) if a is None else Zero(_batched_aval(a, size)) for a in zero_out]
        return p_out, t_out


def _batched_aval(aval: ShapedArray, size: int) -> ShapedArray:
    return ShapedArray((size, *aval.shape), aval.dtype, aval.weak_type)


def _custom_jvp_call_batcher(axis_data, args, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    if all(d is None for d in dims) and not uses_axis_primitives(call_jaxpr.jaxpr):
        outs = custom_jvp_call_p.bind(
            *args,
            call_jaxpr=call_jaxpr,
            jvp=jvp,
            num_consts=num_consts,
            symbolic_zeros=symbolic_zeros,
        )
        return outs, [None] * len(outs)
    args, arg_dims, batched, num_consts = _batched_custom_call(
        axis_data, args, dims, call_jaxpr, num_consts
    )
    outs = custom_jvp_call_p.bind(
        *args,
        call_jaxpr=batched,
        jvp=_BatchedJVP(jvp, axis_data, arg_dims),
        num_consts=num_consts,
        symbolic_zeros=symbolic_zeros,
    )
    return outs, [0] * len(outs)


class _BatchedFwd:
    """A custom_vjp fwd rule (flat lists) under vmap: outputs and residuals at axis 0."""

    def __init__(self, fwd, axis_data: AxisData, arg_dims):
        self.fwd, self.axis_data, self.arg_dims = fwd, axis_data, tuple(arg_dims)
        self.name = getattr(fwd, "name", "fwd")

    def __repr__(self) -> str:
        return f"vmap({self.name})"

    def __call__(self, args, perturbed):
        box: list = []

        def one(*xs):
            p_out, res, res_tree = self.fwd(list(xs), perturbed)
            box[:] = [len(p_out), res_tree]
            return list(p_out) + list(res)

        vals, dims = batch_subtrace(one, self.axis_data, list(self.arg_dims), list(args))
        vals = _at_front(self.axis_data, vals, dims)
        k, res_tree = box
        return vals[:k], vals[k:], res_tree


class _BatchedBwd:
    """A custom_vjp bwd rule (flat lists) under vmap.

    Residuals and output cotangents come batched at axis 0; cotangents of operands
    that were not batched are summed over the batch. ``in_avals`` are the tangent
    types of the batched call's (non-const) operands, for symbolic zeros.
    """

    def __init__(self, bwd, axis_data: AxisData, arg_dims, in_avals):
        self.bwd, self.axis_data, self.arg_dims = bwd, axis_data, tuple(arg_dims)
        self.in_avals = tuple(in_avals)
        self.name = getattr(bwd, "name", "bwd")

    def __repr__(self) -> str:
        return f"vmap({self.name})"

    def __call__(self, res_tree, res, cts_out):
        nonzero = [type(c) is not Zero for c in cts_out]
        zero_avals = [
            None if nz else _unbatched_aval(c.aval, 0)
            for c, nz in zip(cts_out, nonzero, strict=True)
        ]
        n_res = len(res)
        zero_in: list = []

        def one(*flat):
            rs, cs = list(flat[:n_res]), iter(flat[n_res:])
            full = [next(cs) if nz else Zero(a) for nz, a in zip(nonzero, zero_avals, strict=True)]
            cts_in = self.bwd(res_tree, rs, full)
            zero_in[:] = [c is None or type(c) is Zero for c in cts_in]
            return [c for c, z in zip(cts_in, zero_in, strict=True) if not z]

        nz_cts = [c for c, nz in zip(cts_out, nonzero, strict=True) if nz]
        vals, dims = batch_subtrace(
            one, self.axis_data, [0] * (n_res + len(nz_cts)), list(res) + nz_cts
        )
        vals = iter(_at_front(self.axis_data, vals, dims))
        results = []
        for zero, d, aval in zip(zero_in, self.arg_dims, self.in_avals, strict=True):
            if zero:
                results.append(Zero(aval))
            elif d is None:
                results.append(sum_batch_p.bind(next(vals), axis=0))
            else:
                results.append(next(vals))
        return results


def _custom_vjp_call_batcher(
    axis_data, args, dims, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros
):
    if all(d is None for d in dims) and not uses_axis_primitives(call_jaxpr.jaxpr):
        outs = custom_vjp_call_p.bind(
            *args,
            call_jaxpr=call_jaxpr,
            fwd=fwd,
            bwd=bwd,
            num_consts=num_consts,
            symbolic_zeros=symbolic_zeros,
        )
        return outs, [None] * len(outs)
    args, arg_dims, batched, num_consts = _batched_custom_call(
        axis_data, args, dims, call_jaxpr, num_consts
    )
    outs = custom_vjp_call_p.bind(
        *args,
        call_jaxpr=batched,
        fwd=_BatchedFwd(fwd, axis_data, arg_dims),
        bwd=_BatchedBwd(
            bwd, axis_data, arg_dims, [tangent_aval(to_aval(a)) for a in args[num_consts:]]
        ),
        num_consts=num_consts,
        symbolic_zeros=symbolic_zeros,
    )
    return outs, [0] * len(outs)


axis_primitive_batchers[custom_jvp_call_p] = _custom_jvp_call_batcher
axis_primitive_batchers[custom_vjp_call_p] = _custom_vjp_call_batcher
axis_primitive_batchers[custom_lin_p] = _custom_lin_not_transposed
