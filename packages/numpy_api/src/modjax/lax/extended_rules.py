"""Structural primitives on arrays of extended dtypes (PRNG keys), as JAX's rules handle them.

An array of an extended dtype is stored as its physical data: its shape
followed by the element's physical shape (tracecore's ``physical_aval``:
``key<fry>[3]`` is ``uint32[3,2]``). The structural primitives (reshape,
broadcast, slicing, gather, concatenate, select_n, ...) move whole elements,
so on such operands each one lowers as the same primitive on the data, with
its params extended over the trailing element axes. ``physical_rules`` holds,
per primitive, that function of the physical operands; ``_extended_aware``
wraps a primitive's lowering so that equations with extended avals use it and
the others keep their rule untouched.

Abstract evaluation, batching and the eager path need nothing: they see the
logical shapes, and runtime passes the data to the compiled program.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from modjax.lowering import lower_fun, lowering_rules, register_lowering
from modjax.tracecore.abstract import physical_aval
from modjax.tracecore.core import Primitive
from modjax.tracecore.dtypes import ExtendedDType

from . import elementwise as ew
from . import indexing as ix
from . import reductions as rd
from . import structural as st

__all__ = ["physical_rules"]


def _element_shape(aval) -> tuple[int, ...]:
    return physical_aval(aval).shape[aval.ndim :]


def _trailing(aval_out) -> tuple[int, ...]:
    """The physical axes of the elements of ``aval_out``: after its logical ones."""
    n = len(_element_shape(aval_out))
    return tuple(range(aval_out.ndim, aval_out.ndim + n))


def _broadcast_in_dim(avals_in, avals_out, x, *, shape, broadcast_dimensions, **params):
    elem = _element_shape(avals_out[0])
    return st.broadcast_in_dim_p.bind(
        x,
        shape=(*shape, *elem),
        broadcast_dimensions=(*broadcast_dimensions, *_trailing(avals_out[0])),
        **params,
    )


def _reshape(avals_in, avals_out, x, *, new_sizes, dimensions, **params):
    elem = _element_shape(avals_out[0])
    if dimensions is not None:
        dimensions = (*dimensions, *_trailing(avals_in[0]))
    return st.reshape_p.bind(x, new_sizes=(*new_sizes, *elem), dimensions=dimensions, **params)


def _same_params(prim: Primitive):
    def rule(avals_in, avals_out, *xs, **params):
        return prim.bind(*xs, **params)

    return rule


def _transpose(avals_in, avals_out, x, *, permutation):
    return st.transpose_p.bind(x, permutation=(*permutation, *_trailing(avals_in[0])))


def _slice(avals_in, avals_out, x, *, start_indices, limit_indices, strides):
    elem = _element_shape(avals_in[0])
    return st.slice_p.bind(
        x,
        start_indices=(*start_indices, *(0,) * len(elem)),
        limit_indices=(*limit_indices, *elem),
        strides=None if strides is None else (*strides, *(1,) * len(elem)),
    )


def _select_n(avals_in, avals_out, which, *cases):
    which_aval, out = avals_in[0], avals_out[0]
    if which_aval.shape:  # a scalar predicate picks whole arrays already
        shape = physical_aval(out).shape
        which = st.broadcast_in_dim_p.bind(
            which, shape=shape, broadcast_dimensions=tuple(range(which_aval.ndim))
        )
    return ew.select_n_p.bind(which, *cases)


def _gather(avals_in, avals_out, operand, indices, *, dimension_numbers, slice_sizes, **params):
    elem = _element_shape(avals_in[0])
    dnums = dimension_numbers._replace(
        offset_dims=(*dimension_numbers.offset_dims, *_trailing(avals_out[0]))
    )
    return ix.gather_p.bind(
        operand,
        indices,
        dimension_numbers=dnums,
        slice_sizes=(*slice_sizes, *elem),
        **params,
    )


def _zero_starts(starts, count: int):
    dtype = starts[0].aval.dtype if starts and hasattr(starts[0], "aval") else np.int32
    return (*starts, *(np.zeros((), dtype),) * count)


def _dynamic_slice(avals_in, avals_out, operand, *starts, slice_sizes):
    elem = _element_shape(avals_in[0])
    return ix.dynamic_slice_p.bind(
        operand, *_zero_starts(starts, len(elem)), slice_sizes=(*slice_sizes, *elem)
    )


def _dynamic_update_slice(avals_in, avals_out, operand, update, *starts):
    elem = _element_shape(avals_in[0])
    return ix.dynamic_update_slice_p.bind(operand, update, *_zero_starts(starts, len(elem)))


def _scatter(avals_in, avals_out, operand, indices, updates, *, dimension_numbers, **params):
    # The element axes are the last window axes of the updates, never inserted.
    updates_aval = avals_in[2]
    n = len(_element_shape(updates_aval))
    dnums = dimension_numbers._replace(
        update_window_dims=(
            *dimension_numbers.update_window_dims,
            *range(updates_aval.ndim, updates_aval.ndim + n),
        )
    )
    return ix.scatter_p.bind(operand, indices, updates, dimension_numbers=dnums, **params)


def _equality(prim: Primitive, reducer: Primitive):
    """eq/ne of whole elements: compare the data, then all (eq) or any (ne) over an element."""

    def rule(avals_in, avals_out, x, y):
        out, elem = avals_out[0], _element_shape(avals_in[0])
        element_axes = tuple(range(out.ndim, out.ndim + len(elem)))

        def broadcast(v, aval):
            if aval.shape == out.shape:
                return v
            dims = (*range(out.ndim - aval.ndim, out.ndim), *element_axes)
            return st.broadcast_in_dim_p.bind(
                v, shape=(*out.shape, *elem), broadcast_dimensions=dims
            )

        same = prim.bind(broadcast(x, avals_in[0]), broadcast(y, avals_in[1]))
        return reducer.bind(same, axes=element_axes)

    return rule


#: For each structural primitive: its function on physical data, given the logical avals.
physical_rules: dict[Primitive, Callable] = {
    st.broadcast_in_dim_p: _broadcast_in_dim,
    st.reshape_p: _reshape,
    st.squeeze_p: _same_params(st.squeeze_p),
    st.transpose_p: _transpose,
    st.rev_p: _same_params(st.rev_p),
    st.slice_p: _slice,
    st.concatenate_p: _same_params(st.concatenate_p),
    st.copy_p: _same_params(st.copy_p),
    ew.select_n_p: _select_n,
    ix.gather_p: _gather,
    ix.dynamic_slice_p: _dynamic_slice,
    ix.dynamic_update_slice_p: _dynamic_update_slice,
    ix.scatter_p: _scatter,
    ew.eq_p: _equality(ew.eq_p, rd.reduce_and_p),
    ew.ne_p: _equality(ew.ne_p, rd.reduce_or_p),
}


def _is_extended(aval) -> bool:
    return isinstance(aval.dtype, ExtendedDType)


def _extended_aware(prim: Primitive, rule: Callable) -> Callable:
    physical = physical_rules[prim]

    def lowering(ctx, *operands, **params):
        if not any(map(_is_extended, ctx.avals_out)) and not any(map(_is_extended, ctx.avals_in)):
            return rule(ctx, *operands, **params)
        avals_in, avals_out = ctx.avals_in, ctx.avals_out

        def on_data(*xs):
            return physical(avals_in, avals_out, *xs, **params)

        physical_ctx = ctx.replace(avals_in=[physical_aval(a) for a in avals_in])
        return lower_fun(on_data, prim.multiple_results)(physical_ctx, *operands)

    lowering.__name__ = f"extended_aware({getattr(rule, '__name__', prim.name)})"
    return lowering


for _prim in physical_rules:
    register_lowering(_prim, _extended_aware(_prim, lowering_rules[_prim]))
del _prim
