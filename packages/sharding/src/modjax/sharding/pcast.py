"""``pcast``: mark a value as varying over manual mesh axes (``jax.lax.pcast``, ``to='varying'``).

Inside ``shard_map`` a value computed from replicated operands is the same on
every device along an axis; ``pcast(x, 'i', to='varying')`` lets it vary there
(JAX's ``pvary``), so it may be returned under an ``out_specs`` entry naming
``'i'`` or combined with varying values. It is the identity on values and on
cotangents (the shard_map transpose sums replicated operands' cotangents
over their axes, where JAX's pvary transpose does it); ``check_vma`` counts
the axes as varying (``vma.py``). Lowered, it is nothing.
"""

from __future__ import annotations

from modjax.autodiff import deflinear
from modjax.batching import batching_rules
from modjax.lowering import register_lowering
from modjax.tracecore import tree_util
from modjax.tracecore.pvary import pvary_p
from modjax.tracecore.sharding_types import order_axes

__all__ = ["pcast", "pvary_p"]

register_lowering(pvary_p, lambda ctx, x, *, axes: x)
# Each device's cotangent stays partial: shard_map's transpose sums the cotangents of
# replicated operands over their axes (JAX's transpose of pvary is that psum, and its
# shard_map transpose under check_vma then adds none).
deflinear(pvary_p, lambda ct, x, *, axes: [ct])
batching_rules[pvary_p] = lambda args, dims, *, axes: (pvary_p.bind(args[0], axes=axes), dims[0])

_TO = {"unreduced", "reduced", "varying"}


def pcast(x, axis_name, *, to: str):
    """Change how ``x`` (a pytree) varies over manual mesh axes ``axis_name`` (``jax.lax.pcast``).

    ``to='varying'``: the value may differ between devices along those axes.
    """
    if to not in _TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {_TO}")
    if to != "varying":
        raise NotImplementedError(f"lax.pcast(..., to={to!r}): reduced and unreduced types")
    axes = tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)
    axes = order_axes(axes)  # in the mesh's order, as JAX's pvary names them
    return tree_util.tree_map(lambda leaf: pvary_p.bind(leaf, axes=axes), x)
