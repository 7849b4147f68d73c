"""``pvary``: the cast that lets a value inside shard_map vary over more manual axes.

JAX's ``pvary_p``. It is here, not in modjax.sharding, because tracing inserts it
(``JaxprTrace``) where an operation's operands vary over different manual axes,
as JAX's ``auto_insert_reshard`` does. Its lowering, derivative and batching
rules are modjax.sharding's (``pcast.py``).

So are the casts between manual types that ``lax.pcast(..., to='unreduced')`` and
``to='reduced'`` bind, and the sum of partial sums (``psum`` of an unreduced value
binds it): ``vary_unreduced_cast_p`` (varying to unreduced), ``unreduced_psum``
(unreduced to invariant, an all-reduce), ``preduced`` (invariant to reduced) and
``reduced_vary_cast_p`` (reduced to varying; tracing inserts it as it inserts
``pvary``), with JAX's names. Each result's type is its abstract evaluation's.
"""

from __future__ import annotations

from .core import Primitive
from .sharding_types import unreduced_rules, vma_rules

__all__ = [
    "pvary_p",
    "vary_unreduced_cast_p",
    "unreduced_psum_p",
    "preduced_p",
    "reduced_vary_cast_p",
]

pvary_p = Primitive("pvary")
pvary_p.def_abstract_eval(lambda x, *, axes: x)
pvary_p.def_impl(lambda x, *, axes: x)
vma_rules[pvary_p] = lambda vma_in, params: vma_in[0] | frozenset(params["axes"])


def _manual_cast(name: str, vary_out, unreduced_out, reduced_out) -> Primitive:
    """A primitive that is the identity on values and moves ``axes`` between manual sets."""
    prim = Primitive(name)

    def abstract_eval(x, *, axes):
        axes = frozenset(axes)
        return x.update(
            vma=vary_out(x.vma, axes),
            manual_unreduced=unreduced_out(x.manual_unreduced, axes),
            manual_reduced=reduced_out(x.manual_reduced, axes),
        )

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(lambda x, *, axes: x)
    vma_rules[prim] = lambda vma_in, params: vary_out(vma_in[0], frozenset(params["axes"]))
    return prim


def _keep(current, axes):
    return current


def _add(current, axes):
    return current | axes


def _drop(current, axes):
    return current - axes


vary_unreduced_cast_p = _manual_cast("vary_unreduced_cast_p", _drop, _add, _keep)
unreduced_psum_p = _manual_cast("unreduced_psum", _keep, _drop, _keep)


def _no_devices(x, *, axes):
    raise NotImplementedError("unreduced_psum outside shard_map: a sum between devices")


unreduced_psum_p.def_impl(_no_devices)
preduced_p = _manual_cast("preduced", _keep, _keep, _add)
reduced_vary_cast_p = _manual_cast("reduced_vary_cast_p", _add, _keep, _drop)
for _p in (vary_unreduced_cast_p, unreduced_psum_p, preduced_p, reduced_vary_cast_p):
    unreduced_rules[_p] = lambda avals, **_: None  # the abstract evaluation types the result
