"""Test primitives for batching, written as a DSL author would: numpy impls, avals, rules.

* ``sin_p``, ``neg_p``: elementwise unary (``defvectorized``);
* ``add_p``, ``mul_p``: elementwise binary with numpy broadcasting
  (``defbroadcasting(rank_polymorphic=True)``); ``ladd_p``: lax-style (equal ranks);
* ``sumdiff_p``: two results, ``x + y`` and ``x - y`` (broadcasting);
* ``reduce_sum_p[axes]``: sum over axes (``defreducer``); ``cumsum_p[axis]`` keeps rank;
* ``matmul_p``: 2-D matrix product with a hand-written rule;
* ``counted_p``: the identity, whose batching rule counts how often it runs.
"""

from __future__ import annotations

import numpy as np

from modjax.batching import (
    batching_rules,
    defbroadcasting,
    defreducer,
    defvectorized,
    expand_dims,
    moveaxis,
)
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval


def _result_aval(*avals: ShapedArray) -> ShapedArray:
    shape = np.broadcast_shapes(*(a.shape for a in avals))
    strong = [a for a in avals if not a.weak_type]
    dtype = (strong or avals)[0].dtype
    return ShapedArray(shape, dtype, weak_type=not strong)


def _elementwise(name: str, fn, *, lax_style: bool = False) -> Primitive:
    prim = Primitive(name)

    def impl(*args):
        aval = _result_aval(*(to_aval(a) for a in args))
        return np.asarray(fn(*(np.asarray(a, aval.dtype) for a in args)), dtype=aval.dtype)

    def abstract_eval(*avals):
        if lax_style:
            ranks = {len(a.shape) for a in avals if a.shape}
            if len(ranks) > 1:
                raise TypeError(f"{name}: arrays must have the same rank, got {avals}")
        return _result_aval(*avals)

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    return prim


sin_p = _elementwise("bt_sin", np.sin)
neg_p = _elementwise("bt_neg", np.negative)
add_p = _elementwise("bt_add", np.add)
mul_p = _elementwise("bt_mul", np.multiply)
ladd_p = _elementwise("bt_ladd", np.add, lax_style=True)
for _p in (sin_p, neg_p):
    defvectorized(_p)
for _p in (add_p, mul_p):
    defbroadcasting(_p, rank_polymorphic=True)
defbroadcasting(ladd_p)

sumdiff_p = Primitive("bt_sumdiff")
sumdiff_p.multiple_results = True
sumdiff_p.def_impl(lambda x, y: [np.asarray(np.add(x, y)), np.asarray(np.subtract(x, y))])
sumdiff_p.def_abstract_eval(lambda x, y: [_result_aval(x, y), _result_aval(x, y)])
defbroadcasting(sumdiff_p, rank_polymorphic=True)

reduce_sum_p = Primitive("bt_reduce_sum")
reduce_sum_p.def_impl(
    lambda x, *, axes: np.asarray(np.sum(x, axis=tuple(axes)), np.asarray(x).dtype)
)


@reduce_sum_p.def_abstract_eval
def _reduce_sum_abstract_eval(x, *, axes):
    assert all(0 <= a < len(x.shape) for a in axes), (x, axes)
    shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, x.dtype, x.weak_type)


defreducer(reduce_sum_p)

cumsum_p = Primitive("bt_cumsum")
cumsum_p.def_impl(lambda x, *, axis: np.cumsum(x, axis=axis, dtype=np.asarray(x).dtype))
cumsum_p.def_abstract_eval(lambda x, *, axis: x)
defreducer(cumsum_p, "axis", keepdims=True)

matmul_p = Primitive("bt_matmul")
matmul_p.def_impl(lambda a, b: np.asarray(np.matmul(a, b)))


@matmul_p.def_abstract_eval
def _matmul_abstract_eval(a, b):
    # 2-D operands, or a leading batch of them (np.matmul's stacking), as the rule needs.
    if len(a.shape) < 2 or len(b.shape) < 2 or a.shape[-1] != b.shape[-2]:
        raise TypeError(f"bt_matmul: incompatible shapes {a.shape} and {b.shape}")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return ShapedArray((*batch, a.shape[-2], b.shape[-1]), a.dtype)


def _matmul_rule(args, dims):
    # np.matmul stacks over leading axes, broadcasting them numpy style: put the batch
    # axis in front, below size-1 axes that align the operands' own stacking axes.
    ranks = [to_aval(x).ndim - (d is not None) for x, d in zip(args, dims, strict=True)]
    rank = max(ranks)
    a, b = (
        x if d is None else expand_dims(moveaxis(x, d, 0), range(1, 1 + rank - r))
        for x, d, r in zip(args, dims, ranks, strict=True)
    )
    return matmul_p.bind(a, b), 0


batching_rules[matmul_p] = _matmul_rule

counted_p = Primitive("bt_counted")
counted_p.def_impl(lambda x: x)
counted_p.def_abstract_eval(lambda x: x)
rule_calls = {"counted": 0}


def _counted_rule(args, dims):
    rule_calls["counted"] += 1
    return counted_p.bind(args[0]), dims[0]


batching_rules[counted_p] = _counted_rule

# A primitive nobody gave a batching rule.
norule_p = Primitive("bt_norule")
norule_p.def_impl(lambda x: x)
norule_p.def_abstract_eval(lambda x: x)

UNARY = {"sin": (sin_p, np.sin), "neg": (neg_p, np.negative)}
BINARY = {"add": (add_p, np.add), "mul": (mul_p, np.multiply)}


def count_eqns(closed, prim) -> int:
    """Count equations of ``prim`` in a jaxpr, nested jaxprs included."""
    from modjax.tracecore.jaxpr import ClosedJaxpr, subjaxprs

    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    n = 0
    for eqn in jaxpr.eqns:
        n += eqn.primitive is prim
        n += sum(count_eqns(j, prim) for j in subjaxprs(eqn.params))
    return n
