"""``pmap``: map a function over the leading axis of its arguments, one device per element.

Built on ``shard_map``, as JAX 0.10 does: the mapped axis becomes a one-axis
mesh over the first devices (or ``devices``), each argument is split along it
(``in_axes``; None broadcasts), the function sees one element per device with
the axis name bound for the collectives, and results are stacked along
``out_axes``. The result is jitted: each call with new shapes compiles once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from modjax import runtime
from modjax.batching import expand_dims, moveaxis, squeeze
from modjax.tracecore import core
from modjax.tracecore.tree_util import (
    leaf_stand_ins,
    prefix_errors,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from modjax.tracecore.wrapped_fun import wraps_transform

from .mesh import Mesh
from .partition_spec import PartitionSpec
from .shard_map import shard_map

__all__ = ["pmap"]


def _flat_axes(axes, tree, what: str) -> list:
    """One axis (int or None) per leaf of ``tree`` from the pytree prefix ``axes``."""
    if axes is None or isinstance(axes, int):
        return [axes] * len(tree_leaves(tree))
    treedef = tree_structure(axes, is_leaf=lambda x: x is None)
    try:
        subtrees = treedef.flatten_up_to(tree)
    except ValueError as err:
        # JAX compares (axes, 0) with (positional arguments, keyword arguments).
        errors = prefix_errors((axes, 0), leaf_stand_ins((tree, {})), lambda x: x is None)
        if not errors:
            raise
        word = what.split()[-1]  # in_axes or out_axes
        raise ValueError(
            f"{errors[0](f'pmap {what}')}\n\nThe 'full pytree' here is the tuple of arguments "
            f"passed positionally to the pmapped function, and the value of `{word}` must be a "
            "tree prefix of that tuple. But it was not a prefix.\n\nCheck that the value of "
            f"the `{word}` argument to `pmap` is a tree prefix of the tuple of arguments passed "
            "positionally to the pmapped function."
        ) from err.__cause__
    out = []
    for a, sub in zip(tree_leaves(axes, is_leaf=lambda x: x is None), subtrees, strict=True):
        out.extend([a] * len(tree_leaves(sub)))
    return out


def _argnums(argnums) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _dynamic_positions(donated, statics, nargs) -> tuple[int, ...]:
    """Positions, among the dynamic arguments, of the donated ones."""
    dynamic = [i for i in range(nargs) if i not in statics]
    return tuple(k for k, i in enumerate(dynamic) if i in donated)


def pmap(
    fun: Callable,
    axis_name=None,
    *,
    in_axes=0,
    out_axes=0,
    static_broadcasted_argnums: int | Sequence[int] = (),
    devices: Sequence | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums=(),
):
    """Map ``fun`` over axis ``in_axes`` of its arguments, one device per element (``jax.pmap``).

    ``axis_name`` names the mapped axis for collectives inside ``fun``;
    ``in_axes`` is an int, None (broadcast) or a pytree prefix of them, and
    ``out_axes`` likewise for the results;
    ``static_broadcasted_argnums`` are passed as Python values; ``devices``
    chooses the devices (default: the first ones of ``backend``, or of the
    default backend); ``donate_argnums`` donates those arguments' buffers.
    """
    statics = _argnums(static_broadcasted_argnums)
    donated = _argnums(donate_argnums)
    name = axis_name if axis_name is not None else object()
    fun_name = getattr(fun, "__name__", "fun")
    cache: dict = {}

    def prepare(args, kwargs):
        """Return the jitted program for these arguments and its dynamic arguments."""
        if statics and max(statics) >= len(args):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={statics} but was called "
                f"with only {len(args)} positional argument{'s' if len(args) > 1 else ''}. "
                "All static broadcasted arguments must be passed positionally."
            )
        static_vals = tuple((i, args[i]) for i in statics if i < len(args))
        dyn = tuple(a for i, a in enumerate(args) if i not in statics)
        leaves, _ = tree_flatten(dyn)
        axes = _flat_axes(tuple(in_axes) if isinstance(in_axes, list) else in_axes, dyn, "in_axes")
        # As in JAX, in_axes covers the positional arguments; keyword ones map over axis 0.
        kw_leaves, kw_tree = tree_flatten(kwargs)
        leaves = [*leaves, *kw_leaves]
        axes = [*axes, *[0] * len(kw_leaves)]
        sizes = set()
        for i, (x, a) in enumerate(zip(leaves, axes, strict=True)):
            if a is None:
                continue
            shape = core.to_aval(x).shape
            if sizes and len(shape) <= a:  # the first mapped leaf's IndexError is JAX's too
                raise ValueError(
                    f"pmap argument flat_args[{i}] is mapped along axis {a}, which is only "
                    f"valid for values of rank at least {a + 1}, but was applied to a value "
                    f"of rank {len(shape)}."
                )
            sizes.add(shape[a])
        if axis_size is not None:
            sizes.add(axis_size)
        if len(sizes) != 1:
            raise ValueError(
                f"pmap got inconsistent sizes for array axes to be mapped: {sorted(sizes)}"
                if sizes
                else "pmap requires at least one argument with a mapped axis (or axis_size)"
            )
        (size,) = sizes
        pool = list(devices) if devices is not None else runtime.devices(backend)
        if size > len(pool):
            raise ValueError(
                f"compiling computation that requires {size} logical devices, but only "
                f"{len(pool)} XLA devices are available (num_replicas={size})"
            )
        key = (static_vals, size, tree_structure(dyn), kw_tree, tuple(axes))
        compiled = cache.get(key)
        if compiled is None:
            donated_dyn = _dynamic_positions(donated, statics, len(args))
            compiled = cache[key] = _build(
                size, pool[:size], static_vals, dyn, kw_tree, axes, donated_dyn
            )
        return compiled, dyn

    def _build(size, pool, static_vals, dyn, kw_tree, axes, donated_dyn):
        mesh_name = name if isinstance(name, str) else "_pmap"
        mesh = Mesh(np.array(pool, dtype=object), (mesh_name,))
        treedef = tree_structure(dyn)
        n_positional = treedef.num_leaves
        statics_by_pos = dict(static_vals)
        holder = {}

        def body(*local):
            local = [x if a is None else squeeze(x, (0,)) for x, a in zip(local, axes, strict=True)]
            it = iter(tree_unflatten(treedef, local[:n_positional]))
            full = [
                statics_by_pos[i] if i in statics_by_pos else next(it)
                for i in range(len(dyn) + len(statics_by_pos))
            ]
            out = fun(*full, **tree_unflatten(kw_tree, local[n_positional:]))
            out_leaves, holder["tree"] = tree_flatten(out)
            holder["axes"] = _flat_axes(out_axes, out, "out_axes")
            out_leaves = [
                x if a is None else expand_dims(x, (0,))
                for x, a in zip(out_leaves, holder["axes"], strict=True)
            ]
            return tree_unflatten(holder["tree"], out_leaves)

        in_specs = tuple(PartitionSpec() if a is None else PartitionSpec(mesh_name) for a in axes)
        out_specs = tree_map(
            lambda a: PartitionSpec() if a is None else PartitionSpec(mesh_name),
            out_axes,
            is_leaf=lambda a: a is None,
        )
        mapped = shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)

        def call(*dyn_args, **kwargs):
            leaves = [*tree_leaves(dyn_args), *tree_leaves(kwargs)]
            moved = [
                x if a is None else moveaxis(x, a, 0) for x, a in zip(leaves, axes, strict=True)
            ]
            outs = tree_leaves(mapped(*moved))
            outs = [
                x if a is None else moveaxis(x, 0, a)
                for x, a in zip(outs, holder["axes"], strict=True)
            ]
            return tree_unflatten(holder["tree"], outs)

        call.__name__ = fun_name
        return runtime.jit(call, donate_argnums=donated_dyn)

    @wraps_transform(fun)
    def wrapped(*args, **kwargs):
        compiled, dyn = prepare(args, kwargs)
        return compiled(*dyn, **kwargs)

    def lower(*args, **kwargs):
        """Lower the mapped program for these arguments (``jax.pmap(f).lower``).

        As in JAX, the static arguments are bound: the ``Compiled`` it gives is
        called with the others.
        """
        compiled, dyn = prepare(args, kwargs)
        return compiled.lower(*dyn, **kwargs)

    wrapped.__name__ = f"pmap({fun_name})"
    wrapped.lower = lower  # type: ignore[attr-defined]
    return wrapped
