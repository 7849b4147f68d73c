"""Which mesh axes a shard_map body's values vary over, to check out_specs' replication claims.

An out_specs entry that does not name a mesh axis claims the result is the
same on every device along it. As in JAX 0.10 these facts are in the body's
types ("varying manual axes", ``aval.vma``), set while it is traced with
``check_vma``: inputs vary over the axes their in_specs name;
``psum``/``pmax``/``pmin`` over an axis make a value invariant along it;
``axis_index`` varies along its axes; ``all_gather``, ``psum_scatter``,
``all_to_all`` and ``ppermute`` vary along their axes too (an ``all_gather``
does not make a value invariant, and a ``ppermute`` of an invariant value
varies). As in JAX 0.10.2, a collective's operand that does not vary over its
axes is first cast to (a ``pvary``): ``psum(x, 'i')`` of an invariant ``x`` is
``psum(pvary(x, 'i'), 'i')``; ``pvary``
adds its axes; any other equation's operands are first cast to vary over the
union of theirs (tracecore inserts the ``pvary``), and its results vary there;
``cond`` joins its branches', and loops need their carries' types unchanged.
"""

from __future__ import annotations

from modjax.batching import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
)
from modjax.tracecore.jaxpr import Jaxpr
from modjax.tracecore.options import auto_pcast
from modjax.tracecore.sharding_types import (
    keep_unreduced_rule,
    unreduced_rules,
    vma_operand_rules,
    vma_rules,
)

from .mesh import Mesh
from .partition_spec import PartitionSpec
from .pcast import pvary_p

__all__ = ["check_replication", "spec_axes"]


def _names(entries) -> frozenset:
    entries = entries if isinstance(entries, tuple) else (entries,)
    return frozenset(e for e in entries if isinstance(e, str))


def _reduction(vary_in, params):
    if params.get("axis_index_groups") is not None and vary_in[0]:
        # As JAX 0.10: grouped reductions have no varying-axes rule (check_vma=False works).
        raise NotImplementedError(
            "psum/pmax/pmin with axis_index_groups inside shard_map with check_vma=True; "
            "pass check_vma=False"
        )
    return vary_in[0] - _names(params["axes"])


_RULES = {
    psum_p: _reduction,
    pmax_p: _reduction,
    pmin_p: _reduction,
    axis_index_p: lambda vary_in, params: _names(params["axis_name"]),
    pvary_p: lambda vary_in, params: vary_in[0] | _names(params["axes"]),
}
for _p in (all_gather_p, psum_scatter_p, all_to_all_p, ppermute_p):
    _RULES[_p] = lambda vary_in, params: vary_in[0] | _names(params["axis_name"])


def _invariant_result(name: str, rule):
    """psum/pmax/pmin: without auto_pcast, the operand must vary over the reduced axes."""

    def checked(vary_in, params):
        axes = tuple(a for a in params["axes"] if isinstance(a, str))
        if not auto_pcast.value and not set(axes) <= vary_in[0]:
            raise ValueError(
                f"{name} is a variant->invariant collective. This means that the axis names "
                f"mentioned in `axes` passed to `{name}` must be present in "
                f"`jax.typeof(inp).mat.varying`. Got axes={axes} and "
                f"jax.typeof(inp).mat.varying={vary_in[0]}"
            )
        return rule(vary_in, params)

    return checked


def _varying_operand(name: str, rule):
    """Collectives between devices: without auto_pcast, the operand must vary over their axes."""

    def checked(vary_in, params):
        axes = tuple(_names(params["axis_name"]))
        if not auto_pcast.value and not set(axes) <= vary_in[0]:
            raise ValueError(
                f"Collective {name} must be applied to a device-varying  type, but got "
                f"{vary_in[0]} for collective acting over axis name {params['axis_name']}. "
                "Please open an issue at https://github.com/jax-ml/jax/issues and as a "
                "temporary workaround pass the check_vma=False argument to `jax.shard_map`"
            )
        return rule(vary_in, params)

    return checked


def _psum_operand(avals, params):
    """psum: an operand invariant over every summed axis is cast to vary over them first.

    As JAX 0.10.2 (its ``pvary`` before ``psum_invariant``): the sum of a replicated value
    is ``size * x`` either way, and the cast gives the transpose its sum. Axes some of
    which the operand varies over and some not raise JAX's ValueError.
    """
    axes = _names(params["axes"])
    vary = getattr(avals[0], "vma", frozenset())
    if not axes & vary:
        return [axes]
    if axes <= vary:
        return None
    raise ValueError(
        "jax.lax.psum can only accept axis_name which corresponds to one of varying, "
        "unreduced, reduced or invarying state of the input. Got input type: "
        f"{avals[0].str_short()}, axes: {tuple(params['axes'])} and input state: "
        "{'varying', 'invarying'}"
    )


def _varying_over(key: str):
    """pmax/pmin and collectives between devices: the operand is cast to vary over their axes."""

    def missing(avals, params):
        return [_names(params[key]) - getattr(avals[0], "vma", frozenset())]

    return missing


# What a collective's operand is cast to vary over first (tracecore inserts the pvary).
vma_operand_rules[psum_p] = _psum_operand
vma_operand_rules[pmax_p] = vma_operand_rules[pmin_p] = _varying_over("axes")
for _p in (all_gather_p, psum_scatter_p, all_to_all_p, ppermute_p):
    vma_operand_rules[_p] = _varying_over("axis_name")

# The same facts in the body's types while it is traced (``jax.typeof(x)`` shows them),
# with auto_pcast's checks.
vma_rules.update(_RULES)
for _p in (psum_p, pmax_p, pmin_p):
    vma_rules[_p] = _invariant_result(_p.name, _RULES[_p])
for _p in (all_gather_p, psum_scatter_p, all_to_all_p, ppermute_p):
    vma_rules[_p] = _varying_operand(_p.name, _RULES[_p])


# A psum over other axes keeps a value's unreduced and reduced manual axes.
unreduced_rules[psum_p] = keep_unreduced_rule


def spec_axes(spec: PartitionSpec) -> frozenset:
    """The mesh axes a PartitionSpec names."""
    return frozenset(a for i in range(len(spec)) for a in spec.axes_of(i))


def _set(mesh: Mesh, names) -> str:
    """``{x,y}``: the axes in the mesh's order, as JAX writes them."""
    return "{" + ",".join(a for a in mesh.axis_names if a in names) + "}"


def check_replication(
    name: str, mesh: Mesh, jaxpr: Jaxpr, in_specs, out_specs, where, manual=None
) -> None:
    """Raise JAX's ValueError when out_specs entries claim replication the body lacks.

    ``where(k)`` names out_specs entry ``k`` in the message (``out_specs[1]``, ...);
    only the ``manual`` axes (all by default) are checked. Every failing entry is
    listed, as JAX lists them.
    """
    manual = mesh.axis_names if manual is None else manual
    del in_specs  # the body's inputs were typed by them
    avals = [getattr(v, "aval", None) for v in jaxpr.outvars]
    msgs = []
    for k, (aval, spec) in enumerate(zip(avals, out_specs, strict=True)):
        partial = getattr(aval, "manual_unreduced", frozenset())
        reduced = getattr(aval, "manual_reduced", frozenset())
        vma = getattr(aval, "vma", frozenset())
        # An entry unreduced over axes takes a result unreduced or varying there (JAX casts
        # a varying one, each device's piece then a partial sum); reduced ones must match.
        missing = spec.unreduced - partial - vma
        if missing:
            raise ValueError(
                "vary_unreduced_cast is a Varying->Unreduced collective. This means that the "
                "axis names mentioned in `axes` passed to `vary_unreduced_cast` must be present "
                f"in `jax.typeof(x).mat.varying`. Got axes="
                f"{tuple(a for a in mesh.axis_names if a in spec.unreduced)} and "
                f"jax.typeof(x).mat.varying={vma}"
            )
        if spec.reduced and spec.reduced != reduced:
            raise ValueError(
                "out_specs passed to shard_map should be equal to the reduced present on the "
                f"out_aval. Got out_specs={spec} and out_aval={aval.str_short(True)}"
            )
        # A result unreduced or reduced over an axis its entry does not name so is not
        # replicated there either (JAX's check counts them).
        vary = (vma - spec.unreduced) | (partial - spec.unreduced) | (reduced - spec.reduced)
        named = spec_axes(spec)
        if not any(a in vary and a not in named for a in manual):
            continue
        unmentioned = [a for a in mesh.axis_names if a not in named]
        if len(unmentioned) > 1:
            msgs.append(
                f"* {where(k)} is {spec} which implies that the corresponding output value is "
                f"only varying across mesh axes {_set(mesh, named)} and not "
                f"{_set(mesh, [a for a in unmentioned if a in vary])}, but it was inferred to "
                f"be possibly varying over {_set(mesh, vary)}"
            )
        else:
            msgs.append(
                f"* {where(k)} is {spec} which implies that the corresponding output value is "
                f"replicated across mesh axis '{unmentioned[0]}', but could not infer "
                "replication over any axes"
            )
    if not msgs:
        return
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    raise ValueError(
        f"shard_map applied to the function '{name}' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {mesh.axis_sizes} with corresponding axis names "
        f"{mesh.axis_names}.\n\n" + "\n\n".join(msgs) + "\n\n"
        "Check if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider "
        "disabling the check by passing the check_vma=False argument to `jax.shard_map`."
    )
