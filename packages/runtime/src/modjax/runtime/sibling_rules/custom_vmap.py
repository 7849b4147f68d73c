"""The JVP and lowering of batching's ``custom_vmap_call`` (jax.custom_batching).

The JVP needs autodiff's ``jvp`` and batching's subtraces together, so it lives here,
in the lowest package that sees both (where-rules-live.md). As in JAX, the JVP is
itself a ``custom_vmap_call``: its program is the JVP of the original program, and its
rule differentiates the user's rule, vmapping over the axes that only the primals or
only the tangents have.
"""

from __future__ import annotations

import operator

from modjax.autodiff import instantiate_zeros, jvp, jvp_jaxpr, jvp_rules
from modjax.batching import AxisData, batch_subtrace
from modjax.batching.custom_batching import (
    call_rule,
    check_vmap_rule_trees,
    custom_vmap_p,
    maybe_bdim_at_front,
)
from modjax.lowering import lower_jaxpr_inline, register_lowering
from modjax.tracecore.tree_util import (
    tree_flatten,
    tree_map,
    tree_structure,
    tree_unflatten,
    treedef_tuple,
)

__all__: list[str] = []


class _JVPOfRule:
    """The vmap rule of a custom_vmap function's JVP, made from the user's rule."""

    def __init__(self, rule, out_tree):
        self.rule, self.out_tree = rule, out_tree
        self.__name__ = f"jvp_of_rule({getattr(rule, '__name__', 'rule')})"

    def __repr__(self) -> str:
        return f"jvp({self.rule!r})"

    def __call__(self, axis_size, in_batched, primals, tangents):
        ps_batched, ts_batched = in_batched
        both = tree_map(operator.and_, ps_batched, ts_batched)
        extra_ps = tree_map(lambda p, t: 0 if p and not t else None, ps_batched, ts_batched)
        extra_ts = tree_map(lambda p, t: 0 if t and not p else None, ps_batched, ts_batched)
        box: list = []

        def to_jvp(*primals):
            out, out_batched = call_rule(self.rule, axis_size, both, primals)
            check_vmap_rule_trees(
                self.rule, self.out_tree, tree_structure(out), tree_structure(out_batched)
            )
            box[:] = [out_batched]
            return out

        flat, tree = tree_flatten((primals, tangents))
        flat_dims, _ = tree_flatten((extra_ps, extra_ts), is_leaf=lambda x: x is None)
        out_box: list = []

        def flat_fun(*xs):
            ps, ts = tree_unflatten(tree, list(xs))
            out = jvp(to_jvp, ps, ts)
            leaves, out_tree = tree_flatten(out)
            out_box[:] = [out_tree]
            return leaves

        vals, dims = batch_subtrace(flat_fun, AxisData(None, axis_size), flat_dims, flat)
        n = len(vals) // 2
        vals = [maybe_bdim_at_front(v, d) for v, d in zip(vals, dims, strict=True)]
        extra = [d is not None for d in dims]
        out_ps, out_ts = tree_unflatten(out_box[0], vals)
        extra_out_ps, extra_out_ts = tree_unflatten(out_box[0], extra)
        del n
        out_batched = box[0]
        return (out_ps, out_ts), (
            tree_map(operator.or_, out_batched, extra_out_ps),
            tree_map(operator.or_, out_batched, extra_out_ts),
        )


def _custom_vmap_jvp(primals, tangents, *, call, rule, in_tree, out_tree):
    tangents = [instantiate_zeros(t) for t in tangents]
    jvp_call, _ = jvp_jaxpr(call, [True] * len(primals), True)
    outs = custom_vmap_p.bind(
        *primals,
        *tangents,
        call=jvp_call,
        rule=_JVPOfRule(rule, out_tree),
        in_tree=treedef_tuple((in_tree, in_tree)),
        out_tree=treedef_tuple((out_tree, out_tree)),
    )
    n = len(outs) // 2
    return outs[:n], outs[n:]


def _custom_vmap_lowering(ctx, *operands, call, **_):
    return lower_jaxpr_inline(ctx, call, operands)


jvp_rules[custom_vmap_p] = _custom_vmap_jvp
register_lowering(custom_vmap_p, _custom_vmap_lowering)
