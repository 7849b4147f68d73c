"""``shard_alike(x, y)``: ask the partitioner to give two values the same sharding.

``shard_alike_p`` is the identity on its two operands; in a partitioned program its
lowering puts both in one Shardy sharding group (as JAX 0.10 lowers it), numbered
per module. A one-device program has nothing to group.
"""

from __future__ import annotations

from modjax.autodiff import Zero, deflinear
from modjax.batching import batching_rules
from modjax.batching.primitives import broadcast, moveaxis
from modjax.lowering import register_lowering
from modjax.lowering._mlir import sharding_group
from modjax.runtime.dispatch import apply_primitive
from modjax.tracecore import core
from modjax.tracecore.core import to_aval
from modjax.tracecore.sharding_types import sharding_rules
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten

__all__ = ["shard_alike", "shard_alike_p"]

shard_alike_p = core.Primitive("shard_alike")
shard_alike_p.multiple_results = True
shard_alike_p.def_abstract_eval(lambda x, y: [x, y])
shard_alike_p.def_impl(lambda x, y: apply_primitive(shard_alike_p, x, y))


def _lowering(ctx, x, y):
    partitioning = ctx.module_context.partitioning
    if partitioning is None:
        return [x, y]
    if partitioning != "shardy":
        raise NotImplementedError(
            "shard_alike in a program partitioned without a mesh (GSPMD shardings)"
        )
    group = ctx.module_context.shard_groups
    ctx.module_context.shard_groups += 1
    sharding_group(x, group)
    sharding_group(y, group)
    return [x, y]


def _transpose(cts, x, y):
    x_ct, y_ct = cts
    if type(x_ct) is Zero or type(y_ct) is Zero:
        return [x_ct, y_ct]
    return list(shard_alike_p.bind(x_ct, y_ct))


def _batching(args, dims):
    (x, y), (xd, yd) = args, dims
    if xd is None:
        x, xd = broadcast(x, y.shape[yd], yd), yd
    elif yd is None:
        y = broadcast(y, x.shape[xd], xd)
    elif xd != yd:
        y = moveaxis(y, yd, xd)
    return list(shard_alike_p.bind(x, y)), [xd, xd]


register_lowering(shard_alike_p, _lowering)
deflinear(shard_alike_p, _transpose)
batching_rules[shard_alike_p] = _batching
sharding_rules[shard_alike_p] = lambda avals, out, **_: out  # its abstract eval types it


def shard_alike(x, y):
    """Give ``x`` and ``y`` (pytrees of one structure and leaf shapes) the same sharding.

    JAX's ``jax.experimental.shard_alike.shard_alike``: the values are unchanged; in a
    partitioned program XLA picks one sharding for each pair of leaves.
    """
    x_flat, x_tree = tree_flatten(x)
    y_flat, y_tree = tree_flatten(y)
    if x_tree != y_tree:
        raise ValueError(f"Trees should be equal. Got x_tree: {x_tree}, y_tree: {y_tree}")
    for a, b in zip(x_flat, y_flat, strict=True):
        a_shape, b_shape = to_aval(a).shape, to_aval(b).shape
        if a_shape != b_shape:
            raise ValueError(
                "The leaves shapes of `x` and `y` should match. Got `x` leaf shape: "
                f"{a_shape} and `y` leaf shape: {b_shape}. File an issue at "
                "https://github.com/jax-ml/jax/issues if you want this feature."
            )
    pairs = [shard_alike_p.bind(a, b) for a, b in zip(x_flat, y_flat, strict=True)]
    return (
        tree_unflatten(x_tree, [p[0] for p in pairs]),
        tree_unflatten(y_tree, [p[1] for p in pairs]),
    )
