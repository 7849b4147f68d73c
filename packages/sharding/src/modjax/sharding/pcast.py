"""``pcast``: mark a value as varying over manual mesh axes (``jax.lax.pcast``, ``to='varying'``).

Inside ``shard_map`` a value computed from replicated operands is the same on
every device along an axis; ``pcast(x, 'i', to='varying')`` lets it vary there
(JAX's ``pvary``), so it may be returned under an ``out_specs`` entry naming
``'i'`` or combined with varying values. It is the identity on values; its
transpose sums the cotangent over its axes inside a body traced with varying
types (a derivative taken in the body), and is the identity when shard_map
transposes its whole body (that transpose sums replicated operands' cotangents
itself); ``check_vma`` counts the axes as varying (``vma.py``). Lowered, it is
nothing.
"""

from __future__ import annotations

from modjax.autodiff import deflinear
from modjax.batching import batching_rules, psum_p
from modjax.lowering import register_lowering
from modjax.tracecore import core, tree_util
from modjax.tracecore.pvary import pvary_p
from modjax.tracecore.sharding_types import order_axes, vma_checked

__all__ = ["pcast", "pvary_p"]

register_lowering(pvary_p, lambda ctx, x, *, axes: x)


def _pvary_transpose(ct, x, *, axes):
    if not vma_checked():
        # Transposing a whole shard_map body: each device's cotangent stays partial, and
        # shard_map's transpose sums the cotangents of replicated operands over their axes
        # (JAX's transpose of pvary is that psum; its shard_map transpose then adds none).
        return [ct]
    # A derivative taken inside a body whose types carry varying axes: sum the varying
    # cotangent over the axes, giving the invariant operand's (JAX's pvary transpose).
    missing = set(axes) - getattr(core.to_aval(ct), "vma", frozenset())
    if missing:
        ct = pvary_p.bind(ct, axes=order_axes(missing))
    return [psum_p.bind(ct, axes=tuple(axes), axis_index_groups=None)]


deflinear(pvary_p, _pvary_transpose)
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
