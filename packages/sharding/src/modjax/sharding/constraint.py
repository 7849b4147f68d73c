"""``with_sharding_constraint``: pin an intermediate value's sharding inside jit.

One primitive, ``sharding_constraint``, with its rules: it is the identity on
values; lowered, it is Shardy's ``sdy.sharding_constraint`` on the program's
mesh; eagerly, a ``device_put``; its JVP and transpose constrain tangents and
cotangents the same way; under ``vmap`` the batch dimension is left unsplit.
"""

from __future__ import annotations

import functools
import math

from modjax import runtime
from modjax.autodiff import deflinear
from modjax.batching import batching_rules
from modjax.lowering import register_lowering, sharding_constraint
from modjax.tracecore import core
from modjax.tracecore.abstract import physical_aval, sharding_entries, with_type_sharding
from modjax.tracecore.sharding_types import _with_axis_types, sharding_rules, unreduced_rules
from modjax.tracecore.tree_util import (
    axis_spec_prefix_error,
    leaf_stand_ins,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

from .mesh import AxisType, Mesh, current_mesh, get_abstract_mesh, set_mesh
from .named_sharding import AbstractNamedSharding, NamedSharding, concrete_sharding
from .partition_spec import PartitionSpec

__all__ = [
    "with_sharding_constraint",
    "reshard",
    "auto_axes",
    "explicit_axes",
    "sharding_constraint_p",
]

sharding_constraint_p = core.Primitive("sharding_constraint")


def _abstract_eval(x, *, sharding):
    # The result's type has the sharding's explicit axes (JAX's reshard_p).
    return with_type_sharding(x, getattr(sharding, "_type_sharding", None))


def _impl(x, *, sharding):
    explicit = set(getattr(getattr(sharding, "mesh", None), "explicit_axes", ()))
    if explicit and explicit & set(_spec_axes(sharding.spec)):
        # An eager reshard over explicit axes gives its type's sharding, padded to the
        # rank as JAX's is (``P('x', None)`` for a matrix resharded to ``P('x')``).
        pad = len(core.to_aval(x).shape) - len(sharding.spec)
        if pad > 0:
            spec = sharding.spec.update(partitions=(*sharding.spec.partitions, *(None,) * pad))
            sharding = NamedSharding(sharding.mesh, spec, memory_kind=sharding.memory_kind)
    return runtime.device_put(x, sharding)


def _lowering(ctx, x, *, sharding):
    (aval,) = ctx.avals_in
    name = ctx.module_ctx.sdy_mesh_name(sharding._sdy_mesh)
    text = sharding._to_sdy_sharding(len(physical_aval(aval).shape), name)  # keys: more dims
    return sharding_constraint(x, text.removeprefix("#sdy.sharding"))


def _batching(args, dims, *, sharding):
    (x,), (d,) = args, dims
    spec = list(sharding.spec.partitions) + [None] * (x.ndim - 1 - len(sharding.spec))
    spec.insert(d, None)
    batched = NamedSharding(
        sharding.mesh, sharding.spec.update(partitions=spec), memory_kind=sharding.memory_kind
    )
    return sharding_constraint_p.bind(x, sharding=batched), d


def _spec_on_current_mesh(spec: PartitionSpec, where: str) -> NamedSharding:
    mesh = current_mesh()
    if mesh is not None and not mesh.empty:
        return NamedSharding(mesh, spec)
    if where == "device_put":
        raise ValueError(
            "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put"
        )
    raise RuntimeError(
        f"jit requires a non-empty mesh in context if you are passing `PartitionSpec`s to "
        f"{where}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, "
        f"provide `Sharding`s to {where} and then the mesh context manager is not required."
    )


def _abstract_on_current_mesh(sharding: AbstractNamedSharding, where: str) -> NamedSharding:
    """A NamedSharding on an AbstractMesh given to device_put or jit, as JAX 0.10.2 takes it.

    ``jit``'s ``in_shardings``/``out_shardings`` use it on the current mesh (JAX's
    ValueError without one); ``device_put`` refuses it with JAX's ValueError.
    """
    if where == "device_put":
        raise ValueError("is_fully_addressable is not implemented for `jax.sharding.AbstractMesh`.")
    mesh = current_mesh()
    if mesh is None:
        raise ValueError(
            "Passing lowering_platforms via jax.export or "
            "jit(f).trace(*args).lower(lowering_platforms=...) is required when only "
            "AbstractMesh exists in a jitted computation. Got context mesh: Mesh()"
        )
    return concrete_sharding(sharding, current=mesh)


runtime.register_sharding_spec(PartitionSpec, _spec_on_current_mesh)
runtime.register_sharding_spec(AbstractNamedSharding, _abstract_on_current_mesh)
sharding_constraint_p.def_abstract_eval(_abstract_eval)
sharding_constraint_p.def_impl(_impl)
register_lowering(sharding_constraint_p, _lowering)
deflinear(
    sharding_constraint_p,
    lambda ct, x, *, sharding: [sharding_constraint_p.bind(ct, sharding=sharding)],
)
batching_rules[sharding_constraint_p] = _batching
sharding_rules[sharding_constraint_p] = lambda avals, out, **_: out  # its abstract eval types it
unreduced_rules[sharding_constraint_p] = lambda avals, **_: None  # reshard reduces: the same


def _as_sharding(s, what: str, leaf=None):
    if isinstance(s, AbstractNamedSharding):
        like = None if leaf is None else core.to_aval(leaf).type_sharding
        return concrete_sharding(s, like, current_mesh())
    if isinstance(s, PartitionSpec):
        mesh = current_mesh()
        if mesh is None or mesh.empty:
            raise ValueError(
                f"{what}: a PartitionSpec {s} needs a mesh: use a NamedSharding, or set one with "
                "`with mesh:` or `modjax.sharding.set_mesh(mesh)`"
            )
        return NamedSharding(mesh, s)
    if isinstance(s, NamedSharding):
        return s
    if isinstance(s, runtime.Sharding):
        raise NotImplementedError(f"{what} with a {type(s).__name__} (only NamedSharding)")
    raise TypeError(f"{what}: expected a Sharding or a PartitionSpec, got {s!r}")


def _is_leaf(x) -> bool:
    return x is None or isinstance(x, PartitionSpec | runtime.Sharding | AbstractNamedSharding)


def with_sharding_constraint(x, shardings):
    """Constrain how ``x`` (a pytree) is sharded at this point of the program.

    Counterpart of ``jax.lax.with_sharding_constraint``: ``shardings`` is a
    NamedSharding or PartitionSpec (with the current mesh), or a pytree prefix
    of ``x`` of them. Inside jit the compiler keeps that layout; outside it the
    values are moved there (``device_put``).
    """
    leaves, treedef = tree_flatten(x)
    if _is_leaf(shardings):
        per_leaf = [shardings] * len(leaves)
    else:
        prefix = tree_structure(shardings, is_leaf=_is_leaf)
        try:
            subtrees = prefix.flatten_up_to(x)
        except ValueError:
            raise axis_spec_prefix_error(
                "with_sharding_constraint shardings", shardings, leaf_stand_ins(x), _is_leaf
            ) from None
        per_leaf = []
        for s, sub in zip(tree_leaves(shardings, is_leaf=_is_leaf), subtrees, strict=True):
            per_leaf.extend([s] * len(tree_leaves(sub)))
    out = []
    for leaf, s in zip(leaves, per_leaf, strict=True):
        if s is None:
            out.append(leaf)
            continue
        sharding = _as_sharding(s, "with_sharding_constraint", leaf)
        ndim = len(core.to_aval(leaf).shape)
        if len(sharding.spec) > ndim:
            raise ValueError(
                f"with_sharding_constraint: the spec {sharding.spec} has {len(sharding.spec)} "
                f"entries for a value of rank {ndim}"
            )
        out.append(sharding_constraint_p.bind(leaf, sharding=sharding))
    return tree_unflatten(treedef, out)


def constrain_to_device(x, sharding: NamedSharding):
    """Constrain ``x`` to a concrete ``sharding`` as ``jnp.array(x, device=sharding)`` does.

    JAX 0.10.2 makes ``device=`` of ``jnp.array``/``jnp.asarray`` a
    ``with_sharding_constraint`` (eagerly and under jit), so this follows that
    function's rules: under a mesh context whose axes are all explicit the value
    is resharded (its type carries the sharding); otherwise the spec may name only
    automatic axes (JAX's ValueError pointing at ``reshard``); its rank must fit
    the value's (JAX's ValueError) in both cases.
    """
    ndim = len(core.to_aval(x).shape)
    if len(sharding.spec) > ndim:
        hint = " For scalars the PartitionSpec should be P()" if ndim == 0 else ""
        raise ValueError(
            "One of with_sharding_constraint arguments is incompatible with its sharding "
            f"annotation {sharding}: Sharding {sharding} is only valid for values of rank at "
            f"least {len(sharding.spec)}, but was applied to a value of rank {ndim}.{hint}"
        )
    context = get_abstract_mesh()
    if not context.empty and all(t is AxisType.Explicit for t in context.axis_types):
        return with_sharding_constraint(x, sharding)
    _check_constraint_axes(sharding)
    return sharding_constraint_p.bind(x, sharding=sharding)


def operation_out_sharding(out_sharding, name: str, operand_avals=()):
    """The sharding an operation's ``out_sharding=`` asks for, as JAX 0.10.2 reads it.

    A PartitionSpec takes the current mesh (JAX's ValueError without one); the
    spec may name only explicit mesh axes (JAX's ValueError naming ``name``, the
    operation). None when JAX ignores it: a NamedSharding for operands whose
    types have no mesh (host data, unsharded Arrays) outside a mesh context,
    whose results keep their unsharded type.
    """
    if out_sharding is None or _on_empty_mesh(out_sharding):
        return None
    _check_out_sharding(out_sharding, name)
    if _no_mesh(operand_avals):
        return None
    return out_sharding


def placed_out_sharding(out_sharding, name: str, result, operand_avals=()):
    """The sharding ``out_sharding=`` of an operation that makes a new value asks for.

    Creation functions, ``broadcast_to``, ``repeat`` and the random samplers, as
    JAX 0.10.2 reads it: its ValueErrors as in ``operation_out_sharding``; for
    operands with no mesh outside a mesh context a NamedSharding on a mesh of
    automatic axes only is ignored (JAX's result has no type), and one over
    explicit axes of a mesh of more than one device raises JAX's ValueError
    eagerly (its program has one device; ``result``, the value before
    resharding, names the type). Under a trace it is kept: a jitted program may
    take its mesh from its other arguments, as JAX's does.
    """
    if out_sharding is None or _on_empty_mesh(out_sharding):
        return None
    _check_out_sharding(out_sharding, name)
    if not _no_mesh(operand_avals):
        return out_sharding
    mesh = out_sharding.mesh
    if all(t is AxisType.Auto for t in mesh.axis_types):
        return None
    size = math.prod(mesh.axis_sizes)
    if size == 1 or not isinstance(core.current_trace(), core.EvalTrace):
        return out_sharding
    typed = with_type_sharding(core.to_aval(result), out_sharding)
    raise ValueError(
        f"Length of device assignment 1 is not equal to the size of the mesh {size} of aval "
        f"{_with_axis_types(typed, short_dtypes=True)}. Please enter your `jit` into a mesh "
        "context via `jax.set_mesh`."
    )


def out_named_sharding(out_sharding, name: str, operand_avals=()):
    """The NamedSharding an operation's ``out_sharding=`` names (a PartitionSpec on the
    current mesh), or None where JAX 0.10.2 ignores it (``operation_out_sharding``)."""
    sharding = operation_out_sharding(out_sharding, name, operand_avals)
    return None if sharding is None else _as_sharding(sharding, name)


def resharded_result(out, out_sharding, name: str, operand_avals=(), *, operation=False):
    """``out`` resharded to what ``out_sharding=`` asks for, as JAX 0.10.2 reads it.

    ``out`` is a new value made from operands of types ``operand_avals``
    (``placed_out_sharding``), or with ``operation`` the result of an operation
    on them (``operation_out_sharding``). Unchanged where JAX ignores the sharding.
    """
    if out_sharding is None:
        return out
    if operation:
        sharding = operation_out_sharding(out_sharding, name, operand_avals)
    else:
        sharding = placed_out_sharding(out_sharding, name, out, operand_avals)
    return out if sharding is None else reshard(out, sharding)


def _on_empty_mesh(out_sharding) -> bool:
    """A sharding on the empty mesh (``jax.typeof(x).sharding`` of an unsharded ``x``):
    JAX reads it as no ``out_sharding`` at all."""
    return isinstance(out_sharding, NamedSharding | AbstractNamedSharding) and (
        out_sharding.mesh.empty
    )


def _check_out_sharding(out_sharding, name: str) -> None:
    """Raise JAX's errors for an ``out_sharding=`` (not a sharding on a mesh, a spec
    without a mesh, Auto axes)."""
    if not isinstance(out_sharding, PartitionSpec | NamedSharding | AbstractNamedSharding):
        raise TypeError(
            f"`out_sharding` argument of {name} only supports instances of `NamedSharding` "
            f"or `PartitionSpec`. Got {out_sharding} of type: {type(out_sharding)}"
        )
    context = get_abstract_mesh()
    if isinstance(out_sharding, PartitionSpec):
        if context.empty:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not allowed. "
                "Please pass a NamedSharding instance or enter into a mesh context via "
                f"`jax.set_mesh`. Got {out_sharding}"
            )
        spec, mesh = out_sharding, context
    else:
        spec, mesh = out_sharding.spec, out_sharding.mesh
    check_explicit_spec(spec, mesh, name)


def _no_mesh(operand_avals) -> bool:
    """Outside a mesh context, with operands whose types have no mesh (JAX ignores out_sharding)."""
    return get_abstract_mesh().empty and all(
        getattr(a, "type_sharding", None) is None for a in operand_avals
    )


def check_explicit_spec(spec: PartitionSpec, mesh, name: str) -> None:
    """Raise JAX's ValueError when ``out_sharding``'s spec names an Auto or Manual axis."""
    kinds = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
    for axis in _spec_axes(spec):
        kind = kinds.get(axis)
        if kind is not None and kind is not AxisType.Explicit:
            raise ValueError(
                f"PartitionSpec passed to {name} cannot contain axis names that are of type "
                f"Auto or Manual. Got PartitionSpec: {spec} with axis name: {axis} of type: "
                f"AxisType.{kind.name}."
            )


def _spec_axes(spec: PartitionSpec) -> list[str]:
    """The mesh axis names a spec's entries name, in order."""
    return [
        name
        for entry in spec.partitions
        if entry is not None and entry is not PartitionSpec.UNCONSTRAINED
        for name in ((entry,) if isinstance(entry, str) else entry)
    ]


def _check_constraint_axes(sharding: NamedSharding) -> None:
    """Raise JAX's ValueError when a constraint's spec names a mesh axis that is not Auto."""
    kinds = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_types, strict=True))
    for name in _spec_axes(sharding.spec):
        if kinds.get(name, AxisType.Auto) is not AxisType.Auto:
            raise ValueError(
                "The spec of NamedSharding passed to with_sharding_constraint can only "
                f"refer to Auto axes of the mesh. Got spec={sharding.spec} and "
                f"mesh={sharding.mesh.abstract_mesh}. You probably meant to use `reshard` API?"
            )


def reshard(xs, out_shardings):
    """Move ``xs`` (a pytree) to ``out_shardings`` (``jax.sharding.reshard``).

    The result's type carries the new sharding's explicit axes; inside jit the
    compiler lays the value out so (``sdy.sharding_constraint``), eagerly the
    values are moved (``device_put``). A PartitionSpec needs the current mesh.
    """
    return with_sharding_constraint(xs, out_shardings)


def _mesh_with(axes, axis_type: AxisType, what: str) -> tuple[Mesh, Mesh]:
    mesh = current_mesh()
    if mesh is None or mesh.empty:
        raise ValueError(
            f"Context mesh cannot be empty. Please use `jax.set_mesh` API to enter into a mesh "
            f"context when using `{what}` API."
        )
    names = mesh.axis_names if axes is None else ((axes,) if isinstance(axes, str) else axes)
    return mesh, mesh.update_axis_types(dict.fromkeys(names, axis_type))


def _spec_without(x, mesh: Mesh) -> NamedSharding:
    """The sharding of ``x``'s type on ``mesh``, keeping only ``mesh``'s explicit axes."""
    entries = sharding_entries(core.to_aval(x))
    keep = set(mesh.explicit_axes)
    spec = []
    for e in entries:
        axes = tuple(a for a in ((e,) if isinstance(e, str) else (e or ())) if a in keep)
        spec.append(axes[0] if len(axes) == 1 else (axes or None))
    return NamedSharding(mesh, PartitionSpec(*spec))


def _given_or_keyword(value, kwargs: dict, name: str):
    """The decorator's ``value``, else the call's keyword argument ``name`` (removed from it)."""
    if value is not None:
        return value
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{name}'")
    return kwargs.pop(name)


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """Run ``f`` with mesh ``axes`` (all by default) automatic (``jax.sharding.auto_axes``).

    Inside, the arguments' types drop those axes and the compiler places the
    values along them; the results are resharded to ``out_sharding`` (given
    here or as a keyword argument of the call). Needs a mesh set with ``set_mesh``.
    """
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        out_s = _given_or_keyword(out_sharding, kwargs, "out_sharding")
        mesh, inner = _mesh_with(axes, AxisType.Auto, "auto_axes")
        args = tree_map(lambda x: reshard(x, _spec_without(x, inner)), args)
        with set_mesh(inner):
            out = f(*args, **kwargs)
        with set_mesh(mesh):
            return reshard(out, out_s)

    return wrapper


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """Run ``f`` with mesh ``axes`` (all by default) explicit (``jax.sharding.explicit_axes``).

    The arguments are resharded to ``in_sharding`` (given here or as a keyword
    argument of the call), so their types carry those axes inside; the results
    leave with the outer mesh's explicit axes only. Needs a mesh set with ``set_mesh``.
    """
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        in_s = _given_or_keyword(in_sharding, kwargs, "in_sharding")
        mesh, inner = _mesh_with(axes, AxisType.Explicit, "explicit_axes")
        with set_mesh(inner):
            args = reshard(args, in_s)
            out = f(*args, **kwargs)
        return tree_map(lambda x: reshard(x, _spec_without(x, mesh)), out)

    return wrapper
