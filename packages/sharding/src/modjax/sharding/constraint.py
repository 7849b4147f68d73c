"""``with_sharding_constraint``: pin an intermediate value's sharding inside jit.

One primitive, ``sharding_constraint``, with its rules: it is the identity on
values; lowered, it is Shardy's ``sdy.sharding_constraint`` on the program's
mesh; eagerly, a ``device_put``; its JVP and transpose constrain tangents and
cotangents the same way; under ``vmap`` the batch dimension is left unsplit.
"""

from __future__ import annotations

from modjax import runtime
from modjax.autodiff import deflinear
from modjax.batching import batching_rules
from modjax.lowering import register_lowering, sharding_constraint
from modjax.tracecore import core
from modjax.tracecore.tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten

from .mesh import current_mesh
from .named_sharding import NamedSharding
from .partition_spec import PartitionSpec

__all__ = ["with_sharding_constraint", "reshard", "sharding_constraint_p"]

sharding_constraint_p = core.Primitive("sharding_constraint")


def _abstract_eval(x, *, sharding):
    return x


def _impl(x, *, sharding):
    return runtime.device_put(x, sharding)


def _lowering(ctx, x, *, sharding):
    (aval,) = ctx.avals_in
    text = sharding._to_sdy_sharding(len(aval.shape))
    return sharding_constraint(x, text.removeprefix("#sdy.sharding"))


def _batching(args, dims, *, sharding):
    (x,), (d,) = args, dims
    spec = list(sharding.spec) + [None] * (x.ndim - 1 - len(sharding.spec))
    spec.insert(d, None)
    batched = NamedSharding(sharding.mesh, PartitionSpec(*spec), memory_kind=sharding.memory_kind)
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


runtime.register_sharding_spec(PartitionSpec, _spec_on_current_mesh)
sharding_constraint_p.def_abstract_eval(_abstract_eval)
sharding_constraint_p.def_impl(_impl)
register_lowering(sharding_constraint_p, _lowering)
deflinear(
    sharding_constraint_p,
    lambda ct, x, *, sharding: [sharding_constraint_p.bind(ct, sharding=sharding)],
)
batching_rules[sharding_constraint_p] = _batching


def _as_sharding(s, what: str):
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
    return x is None or isinstance(x, PartitionSpec | runtime.Sharding)


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
        subtrees = prefix.flatten_up_to(x)
        per_leaf = []
        for s, sub in zip(tree_leaves(shardings, is_leaf=_is_leaf), subtrees, strict=True):
            per_leaf.extend([s] * len(tree_leaves(sub)))
    out = []
    for leaf, s in zip(leaves, per_leaf, strict=True):
        if s is None:
            out.append(leaf)
            continue
        sharding = _as_sharding(s, "with_sharding_constraint")
        ndim = len(core.to_aval(leaf).shape)
        if len(sharding.spec) > ndim:
            raise ValueError(
                f"with_sharding_constraint: the spec {sharding.spec} has {len(sharding.spec)} "
                f"entries for a value of rank {ndim}"
            )
        out.append(sharding_constraint_p.bind(leaf, sharding=sharding))
    return tree_unflatten(treedef, out)


def reshard(xs, out_shardings):
    """Move ``xs`` (a pytree) to ``out_shardings`` (``jax.sharding.reshard``).

    Without shardings in types (explicit axes are treated as automatic here),
    this is ``with_sharding_constraint``: inside jit the compiler lays the value
    out so, eagerly the values are moved (``device_put``).
    """
    return with_sharding_constraint(xs, out_shardings)
