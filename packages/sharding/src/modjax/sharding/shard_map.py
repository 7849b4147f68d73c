"""``shard_map``: per-device programs over a mesh, with explicit collectives.

``shard_map(f, mesh=, in_specs=, out_specs=)`` traces ``f`` once on the
*local* shape of each argument (its global shape divided along the mesh axes
its spec names) with the mesh axes bound as named axes, so ``psum(x, 'x')``
and the other collectives of ``modjax.batching`` work inside. The result is
one ``shard_map`` equation holding the per-device jaxpr. Lowered, it is
Shardy's ``sdy.manual_computation`` (as JAX 0.10 emits it): the operands'
shardings in, the body on local values, the results' shardings out; the
collectives inside lower to XLA collectives whose replica groups are the
devices along the named mesh axes (``collective_lowering.py``).

Rules: the equation's JVP and transpose are shard_maps of the body's JVP and
transpose; partial evaluation splits it into a known and an unknown
shard_map, passing residuals with a leading axis split over every mesh axis.
Eagerly it runs as a jit of itself.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from modjax import runtime
from modjax.autodiff import jvp_jaxpr, jvp_rules, transpose_jaxpr, transpose_rules
from modjax.autodiff.tangents import Zero, is_undefined_primal, tangent_aval
from modjax.batching import (
    AxisData,
    axis_primitive_batchers,
    batch_jaxpr_axis,
    extend_axis_env,
    moveaxis,
    psum,
    reshape,
)
from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray, sharding_entries, with_type_sharding
from modjax.tracecore.call import check_call_operands
from modjax.tracecore.dce import dce_jaxpr, dce_rules
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from modjax.tracecore.options import remove_size_one_mesh_axis_from_type
from modjax.tracecore.partial_eval import partial_eval_jaxpr, partial_eval_rules
from modjax.tracecore.pvary import pvary_p
from modjax.tracecore.sharding_types import varying_types
from modjax.tracecore.tracing import convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import (
    leaf_stand_ins,
    prefix_errors,
    tree_flatten,
    tree_leaves,
    tree_structure,
    tree_unflatten,
)
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun, wrap_init

from .mesh import Mesh, current_mesh
from .named_sharding import NamedSharding
from .partition_spec import PartitionSpec
from .vma import check_replication, spec_axes

__all__ = ["shard_map", "shard_map_p"]

shard_map_p = core.Primitive("shard_map")
shard_map_p.multiple_results = True


# --- shapes --------------------------------------------------------------------------------


def _local_shape(shape, spec: PartitionSpec, mesh: Mesh) -> tuple[int, ...]:
    return tuple(
        n // math.prod(mesh.axis_size(a) for a in spec.axes_of(i)) for i, n in enumerate(shape)
    )


def _global_shape(shape, spec: PartitionSpec, mesh: Mesh) -> tuple[int, ...]:
    return tuple(
        n * math.prod(mesh.axis_size(a) for a in spec.axes_of(i)) for i, n in enumerate(shape)
    )


def _aval_with(aval, shape) -> ShapedArray:
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


# --- the primitive -------------------------------------------------------------------------


def _params(mesh, in_specs, out_specs, jaxpr, check_vma, name, manual_axes):
    return {
        "jaxpr": jaxpr,
        "mesh": mesh,
        "in_specs": tuple(in_specs),
        "out_specs": tuple(out_specs),
        # The runtime finds a program's devices among its equations' shardings.
        "in_shardings": tuple(NamedSharding(mesh, s) for s in in_specs),
        "check_vma": check_vma,
        "name": name,
        # The mesh axes the body is manual over, in mesh order (the others stay automatic).
        "manual_axes": tuple(manual_axes),
    }


def _local_aval(aval, spec: PartitionSpec, mesh: Mesh) -> ShapedArray:
    """The body's view of an operand: its shard's shape; explicit non-manual axes stay typed."""
    local = _aval_with(aval, _local_shape(aval.shape, spec, mesh))
    if aval.type_sharding is None:
        return local
    manual = {a for i in range(len(spec)) for a in spec.axes_of(i)}
    entries = [_without(e, manual) for e in sharding_entries(aval)]
    if all(e is None for e in entries):
        return local
    return with_type_sharding(local, aval.type_sharding.update(spec=tuple(entries)))


def _without(entry, axes) -> object:
    kept = tuple(
        a for a in ((entry,) if isinstance(entry, str) else (entry or ())) if a not in axes
    )
    return kept[0] if len(kept) == 1 else (kept or None)


def _global_aval(aval, spec: PartitionSpec, mesh: Mesh) -> ShapedArray:
    """A result's global aval: typed with the spec's explicit axes when the mesh has some."""
    out = _aval_with(aval, _global_shape(aval.shape, spec, mesh))
    typed = NamedSharding(mesh, spec)._type_sharding
    if typed is None:
        return out
    entries = list(sharding_entries(with_type_sharding(out, typed)))
    for i, e in enumerate(sharding_entries(aval)):  # explicit axes left automatic inside
        if e is not None and entries[i] is None:
            entries[i] = e
    return with_type_sharding(out, typed.update(spec=typed.spec.update(partitions=entries)))


def _abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, **_):
    local = [_local_aval(a, s, mesh) for a, s in zip(avals, in_specs, strict=True)]
    check_call_operands(shard_map_p, local, jaxpr)
    return [_global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs, strict=True)]


_eager_cache: dict[tuple, Callable] = {}


def _impl(*args, **params):
    key = tuple((k, id(v) if k == "jaxpr" else v) for k, v in params.items())
    fn = _eager_cache.get(key)
    if fn is None:
        if len(_eager_cache) > 256:
            _eager_cache.clear()
        jaxpr = params["jaxpr"]
        # Results are placed by their out_specs as given (JAX's eager shard_map keeps
        # ``P(None)``, where XLA's own choice for one device would read ``P()``); with
        # explicit axes, the types say where they are.
        outs = [NamedSharding(params["mesh"], spec) for spec in params["out_specs"]]
        if any(s._type_sharding is not None for s in outs):
            outs = None
        fn = runtime.jit(lambda *xs: shard_map_p.bind(*xs, **params), out_shardings=outs)
        fn._jaxpr_ref = jaxpr  # keeps the id in the key alive
        _eager_cache[key] = fn
    # The body is traced already; it runs only as a compiled program, so under
    # disable_jit too (a jit that called its function would bind shard_map again).
    with runtime.disable_jit(False):
        return fn(*args)


shard_map_p.def_abstract_eval(_abstract_eval)
shard_map_p.def_impl(_impl)


def _bind(args, *, mesh, in_specs, out_specs, closed: ClosedJaxpr, check_vma, name, manual_axes):
    """Bind shard_map with the consts of ``closed`` as leading replicated operands."""
    consts = list(closed.consts)
    jaxpr = closed if not consts else ClosedJaxpr(convert_constvars_jaxpr(closed.jaxpr), ())
    specs = (PartitionSpec(),) * len(consts) + tuple(in_specs)
    return shard_map_p.bind(
        *consts, *args, **_params(mesh, specs, out_specs, jaxpr, check_vma, name, manual_axes)
    )


def _bind_traced(fun, args, local_avals, mesh, in_specs, out_specs, check_vma, name, manual_axes):
    with _mesh_axes(mesh, manual_axes, check_vma):
        jaxpr, consts = trace_to_jaxpr(wrap_init(fun, None), local_avals)
    return _bind(
        args,
        mesh=mesh,
        in_specs=in_specs,
        out_specs=out_specs,
        closed=ClosedJaxpr(jaxpr, consts),
        check_vma=check_vma,
        name=name,
        manual_axes=manual_axes,
    )


class _mesh_axes:  # noqa: N801 - a context manager binding the manual mesh axes as named axes
    """Bind the manual mesh axes as named axes; with ``check_vma``, type varying axes too.

    Every (re)trace of a body, by ``shard_map`` itself or by a rule (JVP, partial
    evaluation, transpose, vmap), runs in it, so the body's equations keep the varying
    manual axes of their types (a ``cond`` on varying operands takes varying branches).
    """

    def __init__(self, mesh: Mesh, manual_axes, check_vma: bool = False):
        self._envs = [
            extend_axis_env(AxisData(n, s)) for n, s in mesh.shape_tuple if n in manual_axes
        ]
        self._envs.append(varying_types(check_vma, mesh.axis_names))

    def __enter__(self):
        for env in self._envs:
            env.__enter__()

    def __exit__(self, *exc):
        for env in reversed(self._envs):
            env.__exit__(*exc)


# --- autodiff ------------------------------------------------------------------------------


def _refuse_unreduced(in_specs, out_specs, what: str) -> None:
    """The rules below do not yet know partial sums or reduced values at the boundary."""
    if any(s.unreduced or s.reduced for s in (*in_specs, *out_specs)):
        raise NotImplementedError(
            f"{what} of a shard_map whose in_specs/out_specs have unreduced or reduced axes"
        )


def _jvp_rule(
    primals, tangents, *, jaxpr, mesh, in_specs, out_specs, check_vma, name, manual_axes, **_
):
    _refuse_unreduced(in_specs, out_specs, "the JVP")
    nonzeros = [type(t) is not Zero for t in tangents]
    with _mesh_axes(mesh, manual_axes, check_vma):
        jvp_closed, out_nz = jvp_jaxpr(jaxpr, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    specs = list(in_specs) + [s for s, nz in zip(in_specs, nonzeros, strict=True) if nz]
    n_out = len(out_specs)
    o_specs = list(out_specs) + [s for s, nz in zip(out_specs, out_nz, strict=True) if nz]
    outs = _bind(
        [*primals, *nz_tangents],
        mesh=mesh,
        in_specs=specs,
        out_specs=o_specs,
        closed=jvp_closed,
        check_vma=check_vma,
        name=name,
        manual_axes=manual_axes,
    )
    it = iter(outs[n_out:])
    tangents_out = [
        next(it) if nz else Zero(tangent_aval(core.to_aval(p)))
        for p, nz in zip(outs[:n_out], out_nz, strict=True)
    ]
    return outs[:n_out], tangents_out


def _unmapped_axes(mesh: Mesh, spec: PartitionSpec, manual_axes) -> tuple[str, ...]:
    used = {a for i in range(len(spec)) for a in spec.axes_of(i)}
    return tuple(n for n in mesh.axis_names if n not in used and n in manual_axes)


def _unmapped_size(mesh: Mesh, spec: PartitionSpec, manual_axes) -> int:
    return math.prod(mesh.axis_size(n) for n in _unmapped_axes(mesh, spec, manual_axes))


def _transpose_rule(
    cts, *args, jaxpr, mesh, in_specs, out_specs, check_vma, name, manual_axes, **_
):
    _refuse_unreduced(in_specs, out_specs, "the transpose")
    # With check_vma (JAX's rule), the body's types say where values are replicated: the
    # body's transpose, traced with those types, transposes psum to pvary and pvary to psum,
    # so each cotangent comes out typed like its primal and needs no fix-up. Without it,
    # the classic transpose: a cotangent of a result replicated over some axes is divided
    # by their size (each device holds a copy), and a cotangent of an operand replicated
    # over some axes is summed over them (each device used the same value); psum's and
    # pvary's transposes take their classic forms there (varying types off).
    linear = tuple(is_undefined_primal(a) for a in args)
    out_zeros = tuple(type(ct) is Zero for ct in cts)
    with _mesh_axes(mesh, manual_axes, check_vma):
        t_closed, in_zeros = transpose_jaxpr(jaxpr, linear, out_zeros)
    nonlinear = [a for a, lin in zip(args, linear, strict=True) if not lin]
    nl_specs = [s for s, lin in zip(in_specs, linear, strict=True) if not lin]
    nz_cts = [ct for ct in cts if type(ct) is not Zero]
    ct_specs = [s for s, z in zip(out_specs, out_zeros, strict=True) if not z]
    lin_specs = [s for s, lin in zip(in_specs, linear, strict=True) if lin]
    res_specs = [s for s, z in zip(lin_specs, in_zeros, strict=True) if not z]
    n_nl = len(nonlinear)

    def body(*xs):
        if check_vma:
            return eval_jaxpr(t_closed.jaxpr, t_closed.consts, *xs)
        scaled = [
            ct / _unmapped_size(mesh, s, manual_axes)
            if _unmapped_size(mesh, s, manual_axes) > 1
            else ct
            for ct, s in zip(xs[n_nl:], ct_specs, strict=True)
        ]
        outs = eval_jaxpr(t_closed.jaxpr, t_closed.consts, *xs[:n_nl], *scaled)
        return [
            psum(o, _unmapped_axes(mesh, s, manual_axes))
            if _unmapped_axes(mesh, s, manual_axes)
            else o
            for o, s in zip(outs, res_specs, strict=True)
        ]

    if not res_specs:
        return [None] * len(args)
    local = (
        list(t_closed.in_avals)  # typed with the body's varying axes
        if check_vma
        else [
            _local_aval(core.to_aval(x), s, mesh)
            for x, s in zip([*nonlinear, *nz_cts], [*nl_specs, *ct_specs], strict=True)
        ]
    )
    outs = iter(
        _bind_traced(
            body,
            [*nonlinear, *nz_cts],
            local,
            mesh,
            [*nl_specs, *ct_specs],
            res_specs,
            check_vma,
            f"transpose({name})",
            manual_axes,
        )  # fmt: skip
    )
    results = []
    zeros = iter(in_zeros)
    for lin in linear:
        if not lin or next(zeros):
            results.append(None)
        else:
            results.append(next(outs))
    return results


jvp_rules[shard_map_p] = _jvp_rule
transpose_rules[shard_map_p] = _transpose_rule


def _residual_spec(aval, mesh: Mesh, manual_axes, check_vma) -> PartitionSpec:
    """A residual's spec: its leading axis split over the axes it varies over.

    With ``check_vma`` those are the axes of its type (as JAX's ``nospec``: a residual
    invariant along an axis is not copied per device there), else every manual axis.
    """
    vma = getattr(aval, "vma", frozenset()) if check_vma else frozenset(manual_axes)
    axes = tuple(a for a in mesh.axis_names if a in vma)
    return PartitionSpec(axes) if axes else PartitionSpec()


def _partial_eval_rule(eqn, unknowns, saveable):
    _refuse_unreduced(eqn.params["in_specs"], eqn.params["out_specs"], "partial evaluation")
    params = eqn.params
    mesh, jaxpr = params["mesh"], params["jaxpr"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    check_vma, manual_axes = params["check_vma"], params["manual_axes"]
    with _mesh_axes(mesh, manual_axes, check_vma):
        known_cj, staged_cj, out_unks, num_res = partial_eval_jaxpr(
            jaxpr, unknowns, False, saveable
        )
    n_known_out = len(out_unks) - sum(out_unks)
    res_avals = known_cj.out_avals[n_known_out:]
    res_specs = [_residual_spec(a, mesh, manual_axes, check_vma) for a in res_avals]
    # The body's own input types (with their varying axes) for the inputs kept.
    body_avals = [v.aval for v in jaxpr.jaxpr.invars]
    # Residuals leave the known shard_map with a leading axis split over their spec's axes.
    known_in = [v for v, u in zip(eqn.invars, unknowns, strict=True) if not u]
    known_specs = [s for s, u in zip(in_specs, unknowns, strict=True) if not u]

    def known_body(*xs):
        outs = eval_jaxpr(known_cj.jaxpr, known_cj.consts, *xs)
        res = [
            reshape(r, (1, *a.shape)) for r, a in zip(outs[n_known_out:], res_avals, strict=True)
        ]
        return list(outs[:n_known_out]) + res

    local_known = [a for a, u in zip(body_avals, unknowns, strict=True) if not u]
    with _mesh_axes(mesh, manual_axes, check_vma):
        kj, kconsts = trace_to_jaxpr(wrap_init(known_body, None), local_known)
    k_out_specs = [s for s, u in zip(out_specs, out_unks, strict=True) if not u] + res_specs
    # Consts found here are concrete (partial evaluation works on jaxprs): they stay
    # closed over by the inner program.
    res_vars = [
        Var(_aval_with(a, (math.prod(mesh.axis_size(n) for n in spec_axes(s)), *a.shape)))
        for a, s in zip(res_avals, res_specs, strict=True)
    ]
    known_outvars = [v for v, u in zip(eqn.outvars, out_unks, strict=True) if not u] + res_vars
    known_eqn = None
    if known_outvars:
        known_eqn = eqn.replace(
            invars=known_in,
            outvars=known_outvars,
            params=_params(
                mesh,
                known_specs,
                k_out_specs,
                ClosedJaxpr(kj, kconsts),
                check_vma,
                params["name"],
                manual_axes,
            ),  # fmt: skip
        )

    unknown_in = [v for v, u in zip(eqn.invars, unknowns, strict=True) if u]
    unknown_specs = [s for s, u in zip(in_specs, unknowns, strict=True) if u]

    def staged_body(*xs):
        res = [reshape(r, a.shape) for r, a in zip(xs[:num_res], res_avals, strict=True)]
        return eval_jaxpr(staged_cj.jaxpr, staged_cj.consts, *res, *xs[num_res:])

    local_staged = [a.update(shape=(1, *a.shape), sharding=None) for a in res_avals] + [
        a for a, u in zip(body_avals, unknowns, strict=True) if u
    ]
    with _mesh_axes(mesh, manual_axes, check_vma):
        sj, sconsts = trace_to_jaxpr(wrap_init(staged_body, None), local_staged)
    staged_eqn = eqn.replace(
        invars=res_vars + unknown_in,
        outvars=[v for v, u in zip(eqn.outvars, out_unks, strict=True) if u],
        params=_params(
            mesh,
            res_specs + unknown_specs,
            [s for s, u in zip(out_specs, out_unks, strict=True) if u],
            ClosedJaxpr(sj, sconsts),
            check_vma,
            params["name"],
            manual_axes,
        ),  # fmt: skip
    )
    return known_eqn, staged_eqn, list(out_unks)


partial_eval_rules[shard_map_p] = _partial_eval_rule


def _dce_rule(used_outputs, eqn):
    params = eqn.params
    closed = params["jaxpr"]
    pruned, used_inputs = dce_jaxpr(closed.jaxpr, list(used_outputs))
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params=_params(
            params["mesh"],
            [s for s, u in zip(params["in_specs"], used_inputs, strict=True) if u],
            [s for s, u in zip(params["out_specs"], used_outputs, strict=True) if u],
            ClosedJaxpr(pruned, closed.consts),
            params["check_vma"],
            params["name"],
            params["manual_axes"],
        ),
    )
    return used_inputs, new_eqn


dce_rules[shard_map_p] = _dce_rule


def _batching_rule(axis_data, args, dims, *, jaxpr, mesh, in_specs, out_specs, check_vma, name,
                   manual_axes, **_):  # fmt: skip
    _refuse_unreduced(in_specs, out_specs, "vmap")
    # vmap of a shard_map: the batch axis leads every batched operand and result, never
    # split; results that do not depend on a batched operand stay unbatched (as JAX's, so
    # jacfwd's primal output is not batched).
    in_dims = [None if d is None else 0 for d in dims]
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, dims, strict=True)]
    with _mesh_axes(mesh, manual_axes, check_vma):
        _, found = batch_jaxpr_axis(jaxpr, axis_data, in_dims)
        out_dims = [None if d is None else 0 for d in found]
        batched, _ = batch_jaxpr_axis(jaxpr, axis_data, in_dims, out_dims_instantiate=out_dims)
    outs = _bind(
        moved,
        mesh=mesh,
        in_specs=[
            s if d is None else PartitionSpec(None, *s)
            for s, d in zip(in_specs, in_dims, strict=True)
        ],
        out_specs=[
            s if d is None else PartitionSpec(None, *s)
            for s, d in zip(out_specs, out_dims, strict=True)
        ],
        closed=batched,
        check_vma=check_vma,
        name=name,
        manual_axes=manual_axes,
    )
    return outs, out_dims


axis_primitive_batchers[shard_map_p] = _batching_rule


# --- the user-facing function ------------------------------------------------------------------


def _is_spec_leaf(x) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _broadcast_specs(prefix, full, what: str) -> list[PartitionSpec]:
    if _is_spec_leaf(prefix):
        return [prefix if prefix is not None else PartitionSpec()] * len(tree_leaves(full))
    treedef = tree_structure(prefix, is_leaf=_is_spec_leaf)
    try:
        subtrees = treedef.flatten_up_to(full)
    except ValueError as err:
        errors = prefix_errors(prefix, leaf_stand_ins(full), _is_spec_leaf)
        raise (errors[0](f"shard_map {what}") if errors else err) from None
    out = []
    for spec, sub in zip(tree_leaves(prefix, is_leaf=_is_spec_leaf), subtrees, strict=True):
        if not _is_spec_leaf(spec):
            raise TypeError(f"shard_map {what}: expected PartitionSpecs, got {spec!r}")
        out.extend([spec if spec is not None else PartitionSpec()] * len(tree_leaves(sub)))
    return out


def _check_specs(mesh: Mesh, specs, what: str, manual, check_vma: bool = True) -> None:
    for spec in specs:
        if (spec.unreduced or spec.reduced) and (
            not check_vma or not (spec.unreduced | spec.reduced) <= set(manual)
        ):
            raise NotImplementedError(
                f"shard_map {what} with unreduced or reduced axes ({spec}) with check_vma=False "
                "or over axes that are not manual"
            )
        for i in range(len(spec)):
            for axis in spec.axes_of(i):
                if axis not in mesh.axis_names:
                    raise ValueError(
                        f"shard_map {what}: {spec} refers to the axis {axis!r}, which is not "
                        f"in the mesh's axis names {mesh.axis_names}"
                    )
                if axis not in manual:
                    raise ValueError(
                        f"shard_map {what}: {spec} refers to the axis {axis!r}, which is not "
                        f"among axis_names {set(manual)} (the other mesh axes stay automatic)"
                    )


def _spec_of_type(aval, mesh: Mesh, manual) -> PartitionSpec:
    """An argument's in_specs entry when none is given: its type's manual axes, else P()."""
    if aval.type_sharding is None or getattr(aval.type_sharding, "mesh", None) is None:
        return PartitionSpec()
    if aval.type_sharding.mesh.shape_tuple != mesh.shape_tuple:
        raise ValueError(
            f"shard_map: the argument of type {aval.str_short()} is sharded over a mesh "
            f"{aval.type_sharding.mesh.shape_tuple} other than shard_map's {mesh.shape_tuple}"
        )
    entries = [_without(e, set(mesh.axis_names) - set(manual)) for e in sharding_entries(aval)]
    spec = aval.type_sharding.spec  # its unreduced/reduced manual axes too, as JAX infers them
    return PartitionSpec(
        *entries,
        unreduced=frozenset(a for a in spec.unreduced if a in manual),
        reduced=frozenset(a for a in spec.reduced if a in manual),
    ).stripped()


def _check_divisible(name, mesh, avals, specs, arg_names, where) -> None:
    problems = []
    for k, (aval, spec) in enumerate(zip(avals, specs, strict=True)):
        if len(spec) > len(aval.shape):
            problems.append(
                f"* args[{k}] of shape {aval.str_short()} has rank {len(aval.shape)}, but its "
                f"in_specs entry {spec} has {len(spec)} entries"
            )
            continue
        for i in range(len(spec)):
            size = math.prod(mesh.axis_size(a) for a in spec.axes_of(i))
            if aval.shape[i] % size:
                bound = (
                    f", where args[{k}] is bound to {name}'s parameter '{arg_names[k]}'"
                    if (arg_names and k < len(arg_names))
                    else ""
                )
                axes = spec.axes_of(i)
                axis = repr(axes[0]) if len(axes) == 1 else repr(axes)
                problems.append(
                    f"the passed args[{k}] of shape {aval.str_short()}{bound}, corresponds to "
                    f"{where(k)} of value {spec}, which maps array axis {i} (of size "
                    f"{aval.shape[i]}) to mesh axis {axis} (of size {size}), but {size} does "
                    f"not evenly divide {aval.shape[i]}"
                )
    if problems:
        raise ValueError(
            f"shard_map applied to the function '{name}' was given argument arrays with axis "
            "sizes that are not evenly divisible by the corresponding mesh axis sizes:\n\n"
            f"The mesh given has shape {mesh.axis_sizes} with corresponding axis names "
            f"{mesh.axis_names}.\n\n" + "\n\n".join(problems) + "\n\n"
            "Array arguments' axis sizes must be evenly divisible by the mesh axis or axes "
            "indicated by the corresponding elements of the argument's in_specs entry. Consider "
            "checking that in_specs are correct, and if so consider changing the mesh axis sizes "
            f"or else padding the input and adapting '{name}' appropriately."
        )


def _typed_manual(mesh: Mesh, manual) -> tuple[str, ...]:
    """The manual axes that types mention (not those of size 1 under remove_size_one_...)."""
    if not remove_size_one_mesh_axis_from_type.value:
        return tuple(manual)
    return tuple(a for a in manual if mesh.axis_size(a) != 1)


def _vary_outputs(jaxpr: Jaxpr, out_specs, mesh: Mesh, manual) -> Jaxpr:
    """Make each result vary over the manual axes its out_specs entry splits it along.

    As JAX's shard_map does (an implicit ``pvary``), so a body's result types say
    what its out_specs mean.
    """
    eqns, outvars = list(jaxpr.eqns), []
    for v, spec in zip(jaxpr.outvars, out_specs, strict=True):
        vma = getattr(v.aval, "vma", frozenset())
        need = [
            a
            for a in mesh.axis_names
            if a in _typed_manual(mesh, manual) and a in spec_axes(spec) - vma
        ]
        if need and type(v.aval) is ShapedArray:
            partial = v.aval.manual_unreduced & frozenset(need)
            if partial:  # as JAX's pvary of such a result
                raise ValueError(
                    "pvary cannot accept args which are unreduced. Got "
                    f"{v.aval.str_short(True)} and axes={set(partial)}"
                )
            new = Var(v.aval.update(vma=vma | frozenset(need)))
            eqns.append(JaxprEqn(pvary_p, [v], [new], {"axes": tuple(need)}))
            v = new
        outvars.append(v)
    if len(eqns) == len(jaxpr.eqns):
        return jaxpr
    return jaxpr.replace(eqns=eqns, outvars=outvars)


def _where(what: str, specs):
    """Name entry ``k`` of ``specs`` in messages, as JAX does (no index for a single spec)."""
    if _is_spec_leaf(specs):
        return lambda k: what
    return lambda k: f"{what}[{k}]"


def shard_map(
    f: Callable | None = None,
    /,
    *,
    out_specs,
    in_specs=None,
    mesh: Mesh | None = None,
    axis_names=frozenset(),
    check_vma: bool = True,
):
    """Map ``f`` over shards of its arguments, one call per device (``jax.shard_map``).

    ``in_specs`` (a PartitionSpec, or a pytree prefix of the arguments of them)
    says how each argument is split over the ``mesh`` axes; ``f`` sees the local
    pieces and may call collectives (``psum``, ``all_gather``, ``ppermute``, ...)
    over the mesh axes; ``out_specs`` says how the results' pieces form the
    global results (an axis not named means the result is the same on every
    device along it, which ``check_vma`` verifies). ``mesh`` defaults to the
    current mesh. Used as ``shard_map(mesh=..., ...)`` without ``f`` it returns a
    decorator.
    """
    if f is None:
        return functools.partial(
            shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
            axis_names=axis_names, check_vma=check_vma,
        )  # fmt: skip
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, got {f!r}")
    if mesh is None:
        mesh = current_mesh()
        if mesh is None or mesh.empty:
            raise ValueError(
                "shard_map requires a mesh: pass mesh=, or set one with `with mesh:` or "
                "`modjax.sharding.set_mesh(mesh)`"
            )
    if not isinstance(mesh, Mesh):
        raise NotImplementedError(f"shard_map over a {type(mesh).__name__} (only a Mesh)")
    unknown = set(axis_names) - set(mesh.axis_names)
    if unknown:
        raise ValueError(
            f"shard_map axis_names {sorted(unknown)} are not axes of the mesh {mesh.axis_names}"
        )
    manual = tuple(a for a in mesh.axis_names if not axis_names or a in axis_names)
    name = getattr(f, "__name__", None) or type(f).__name__

    @functools.wraps(f)
    def wrapped(*args):
        leaves, _ = tree_flatten(args)
        avals = [core.to_aval(x) for x in leaves]
        if in_specs is None:  # as JAX: each argument's sharding in its type (explicit axes)
            specs = [_spec_of_type(a, mesh, manual) for a in avals]
        else:
            specs = _broadcast_specs(
                tuple(in_specs) if isinstance(in_specs, list) else in_specs, args, "in_specs"
            )
        _check_specs(mesh, specs, "in_specs", manual, check_vma)
        info = debug_info(f, args, {})
        _check_divisible(name, mesh, avals, specs, info.arg_names, _where("in_specs", in_specs))
        local = [_local_aval(a, s, mesh) for a, s in zip(avals, specs, strict=True)]
        if check_vma:  # the body's types say which manual axes each argument varies over
            local = [
                a.update(
                    vma=spec_axes(s) & frozenset(_typed_manual(mesh, manual)),
                    manual_unreduced=s.unreduced,  # partial sums over those axes, as JAX's
                    manual_reduced=s.reduced,
                )
                for a, s in zip(local, specs, strict=True)
            ]
        flat_fun, out_tree = flatten_fun(wrap_init(f, info), tree_structure((args, {})))
        with _mesh_axes(mesh, manual, check_vma):
            jaxpr, consts = trace_to_jaxpr(flat_fun, local)
        out_tree = out_tree.val
        placeholder = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        o_specs = _broadcast_specs(out_specs, placeholder, "out_specs")
        _check_specs(mesh, o_specs, "out_specs", manual, check_vma)
        for aval, spec in zip(jaxpr.out_avals, o_specs, strict=True):
            if len(spec) > len(aval.shape):
                raise ValueError(
                    f"shard_map applied to the function '{name}' was given out_specs entry "
                    f"{spec} of length {len(spec)} for an output of rank {len(aval.shape)}"
                )
        if check_vma:
            check_replication(
                name, mesh, jaxpr, specs, o_specs, _where("out_specs", out_specs), manual
            )
            jaxpr = _vary_outputs(jaxpr, o_specs, mesh, manual)
        outs = _bind(
            leaves,
            mesh=mesh,
            in_specs=specs,
            out_specs=o_specs,
            closed=ClosedJaxpr(jaxpr, consts),
            check_vma=check_vma,
            name=name,
            manual_axes=manual,
        )
        return tree_unflatten(out_tree, outs)

    return wrapped
