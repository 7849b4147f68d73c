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
from modjax.lowering import lowering_rules, register_lowering
from modjax.tracecore import core, tree_util
from modjax.tracecore.pvary import (
    preduced_p,
    pvary_p,
    reduced_vary_cast_p,
    unreduced_psum_p,
    vary_unreduced_cast_p,
)
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

# --- unreduced and reduced manual types --------------------------------------------------
# Inside a body traced with varying types the casts pair up under transposition (JAX's):
# varying->unreduced with reduced->varying, unreduced_psum with preduced. Transposing a
# whole shard_map body (no types) keeps the classic rules, as for pvary: the casts are
# identities and unreduced_psum is a psum (shard_map's transpose fixes replicated values up).


def _typed_transpose(other, whole_body):
    def transpose(ct, x, *, axes):
        if not vma_checked():
            return [whole_body(ct, axes)]
        return [other.bind(ct, axes=axes)]

    return transpose


def _identity(ct, axes):
    return ct


def _psum(ct, axes):
    return psum_p.bind(ct, axes=tuple(axes), axis_index_groups=None)


deflinear(vary_unreduced_cast_p, _typed_transpose(reduced_vary_cast_p, _identity))
deflinear(reduced_vary_cast_p, _typed_transpose(vary_unreduced_cast_p, _identity))
deflinear(unreduced_psum_p, _typed_transpose(preduced_p, _psum))
deflinear(preduced_p, _typed_transpose(unreduced_psum_p, _identity))
for _p in (vary_unreduced_cast_p, reduced_vary_cast_p, preduced_p):
    register_lowering(_p, lambda ctx, x, *, axes: x)
register_lowering(
    unreduced_psum_p,
    lambda ctx, x, *, axes: lowering_rules[psum_p](ctx, x, axes=axes, axis_index_groups=None),
)
for _p in (vary_unreduced_cast_p, reduced_vary_cast_p, preduced_p, unreduced_psum_p):
    batching_rules[_p] = lambda args, dims, *, axes, _p=_p: (_p.bind(args[0], axes=axes), dims[0])

_TO = {"unreduced", "reduced", "varying"}

#: (the operand's state over the axes, ``to``) -> the cast (JAX's ``_pcast_funcs``).
_CASTS = {
    ("invarying", "varying"): pvary_p,
    ("invarying", "reduced"): preduced_p,
    ("varying", "unreduced"): vary_unreduced_cast_p,
    ("reduced", "varying"): reduced_vary_cast_p,
}


def _state(aval, axes) -> str:
    """How ``aval`` stands over ``axes``: all varying, unreduced, reduced or invarying."""
    found = set()
    for a in axes:
        if a in aval.vma:
            found.add("varying")
        elif a in aval.manual_unreduced:
            found.add("unreduced")
        elif a in aval.manual_reduced:
            found.add("reduced")
        else:
            found.add("invarying")
    if len(found) > 1:
        raise ValueError(
            "jax.lax.pcast can only accept axis_name which corresponds to one of varying, "
            f"unreduced, reduced or invarying state of the input. Got input type: {aval}, "
            f"axes: {tuple(axes)} and input state: {found}"
        )
    return found.pop()


def pcast(x, axis_name, *, to: str):
    """Change how ``x`` (a pytree) stands over manual mesh axes ``axis_name`` (``jax.lax.pcast``).

    ``to='varying'``: the value may differ between devices along those axes (from
    invariant or reduced); ``to='unreduced'``: a varying value becomes partial sums
    over them (a later ``psum`` adds them up); ``to='reduced'``: an invariant value
    becomes reduced over them (its cotangent unreduced). Others raise JAX's ValueError.
    """
    if isinstance(axis_name, set | frozenset):
        raise TypeError(f"axis_name={axis_name} must be a tuple or a str. Got {axis_name}")
    if to not in _TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {_TO}")
    if not axis_name:
        return x
    axes = tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)
    axes = order_axes(axes)  # in the mesh's order, as JAX's casts name them
    if to == "varying" and not vma_checked():
        return tree_util.tree_map(lambda leaf: pvary_p.bind(leaf, axes=axes), x)
    if not vma_checked():
        return x  # without varying types (check_vma=False) the casts mean nothing, as in JAX

    def one(leaf):
        state = _state(core.to_aval(leaf), axes)
        cast = _CASTS.get((state, to))
        if cast is None:
            raise ValueError(f"Unsupported pcast from={state}, to={to!r}")
        return cast.bind(leaf, axes=axes)

    return tree_util.tree_map(one, x)
