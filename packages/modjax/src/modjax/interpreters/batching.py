"""vmap rules in JAX's names (jax.interpreters.batching), on modjax.batching's tables.

``primitive_batchers`` is modjax's ``batching_rules``: a rule
``rule(batched_args, batch_dims, **params) -> (out, out_dims)`` put there is the
rule ``vmap`` uses; a batch dimension of ``not_mapped`` (None) marks an unbatched
operand or result. ``fancy_primitive_batchers`` (modjax.batching's
``axis_primitive_batchers``) holds rules that also get the vmapped axis:
``rule(axis_data, batched_args, batch_dims, **params)``. ``axis_primitive_batchers``
is JAX's older way to set such a rule, with the older signature
``rule(axis_size, axis_name, trace_type, batched_args, batch_dims, **params)``
(equinox's primitives register theirs there): a rule set through it is wrapped into
the new table, as JAX does.
"""

from __future__ import annotations

from modjax.batching import axis_primitive_batchers as _axis_rules
from modjax.batching import (
    batching_rules,
    bdim_at_front,
    defreducer,
    defvectorized,
    not_mapped,
)
from modjax.batching import broadcast as _broadcast

from .._unsupported import Unsupported

__all__ = [
    "axis_primitive_batchers",
    "bdim_at_front",
    "broadcast",
    "defbroadcasting",
    "defreducer",
    "defvectorized",
    "fancy_primitive_batchers",
    "not_mapped",
    "primitive_batchers",
    "register_vmappable",
    "unregister_vmappable",
]

#: Batching rules by primitive (modjax.batching's ``batching_rules``).
primitive_batchers = batching_rules
#: Rules that also receive the vmapped axis (modjax.batching's ``axis_primitive_batchers``).
fancy_primitive_batchers = _axis_rules


class _OldSignatureRules:
    """Where JAX's older axis rules are set: each is stored wrapped in the new table."""

    def __setitem__(self, primitive, rule) -> None:
        def wrapped(axis_data, vals, dims, **params):
            # Tuples, as JAX hands them: rules use them as pytree prefixes (out_axes).
            return rule(axis_data.size, axis_data.name, None, tuple(vals), tuple(dims), **params)

        _axis_rules[primitive] = wrapped

    def __delitem__(self, primitive) -> None:
        del _axis_rules[primitive]

    def __contains__(self, primitive) -> bool:
        return primitive in _axis_rules


#: JAX's older name and signature for the rules of ``fancy_primitive_batchers``.
axis_primitive_batchers = _OldSignatureRules()


def defbroadcasting(prim) -> None:
    """Give an elementwise ``prim`` of equal-shaped operands its vmap rule (``defbroadcasting``).

    Operands batched along the same axis (and of one rank) are bound as they are;
    otherwise every batch axis is moved to the front and unbatched operands are
    broadcast to the batch, so the primitive always sees operands of one shape.
    """

    def rule(args, dims, **params):
        ndims = {len(x.shape) for x, d in zip(args, dims, strict=True) if d is not None}
        batched = {d for d in dims if d is not None}
        if len(batched) == 1 and None not in dims and len(ndims) == 1:
            out = prim.bind(*args, **params)
            (d,) = batched
        else:
            size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
            out = prim.bind(
                *(bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)), **params
            )
            d = 0
        return (out, [d] * len(out)) if prim.multiple_results else (out, d)

    batching_rules[prim] = rule


def broadcast(x, sz: int, axis: int, mesh_axis=None):
    """Insert a new axis of size ``sz`` at ``axis`` of ``x`` (jax's ``batching.broadcast``).

    ``mesh_axis`` (an explicit-sharding mesh axis for the new dimension) must be None.
    """
    if mesh_axis is not None:
        raise NotImplementedError("batching.broadcast(mesh_axis=...): explicit-sharding axes")
    return _broadcast(x, sz, axis)


_VMAPPABLE = (
    "JAX's registry of container types that vmap maps over by a spec (used by its "
    "internal jumble types); register a pytree node instead"
)
register_vmappable = Unsupported("jax.interpreters.batching.register_vmappable", _VMAPPABLE)
unregister_vmappable = Unsupported("jax.interpreters.batching.unregister_vmappable", _VMAPPABLE)
