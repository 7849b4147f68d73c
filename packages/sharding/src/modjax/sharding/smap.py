"""``smap``: shard_map over one mesh axis, with vmap-style ``in_axes``/``out_axes``.

``smap(f, in_axes=, out_axes=, axis_name=)`` is ``shard_map`` on the current
mesh, manual over ``axis_name`` only: an integer axis ``i`` becomes the spec
``P(None, ..., None, axis_name)`` with ``axis_name`` at position ``i`` (as in
JAX 0.10.2, a negative ``i`` leaves no ``None`` before it, so it names
dimension 0), ``None`` the replicated ``P()``. Without ``in_axes`` the
arguments' explicit-axes types give the specs, which needs ``axis_name`` to be
an explicit axis.
"""

from __future__ import annotations

import functools

from modjax.tracecore.tree_util import tree_leaves, tree_map

from .mesh import AxisType, current_mesh
from .partition_spec import PartitionSpec
from .shard_map import shard_map

__all__ = ["smap"]


class _Infer:
    """``in_axes`` not given: take each argument's spec from its type (JAX's ``Infer``)."""

    def __repr__(self) -> str:
        return "Infer"


Infer = _Infer()


def _axis_spec(axis_name, axis) -> PartitionSpec:
    if axis is None:
        return PartitionSpec()
    return PartitionSpec(*[None] * axis, axis_name)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """Map ``f`` over the shards of one mesh axis ``axis_name`` (``jax.smap``).

    ``in_axes`` (an int, None, or a tuple per positional argument, as in
    ``vmap``; omitted: each argument's explicit sharding) says which array axis
    each argument is split along; ``out_axes`` (an int, None, or a pytree of
    them) where the results' pieces are joined. The other mesh axes stay
    automatic. Used without ``f`` it returns a decorator.
    """
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, list | tuple):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, int | tuple):
        raise TypeError(
            "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries "
            f"corresponding to the positional arguments passed to the function, but got {in_axes}."
        )
    if in_axes is not Infer and not all(_is_int(a) for a in tree_leaves(in_axes)):
        raise TypeError(
            "smap in_axes must be an int, None, jax.sharding.Infer, or (nested) container with "
            f"those types as leaves, but got {in_axes}."
        )
    if not all(_is_int(a) for a in tree_leaves(out_axes)):
        raise TypeError(
            "smap out_axes must be an int, None, or (nested) container with those types as "
            f"leaves, but got {out_axes}."
        )

    def to_specs(axes):
        return tree_map(lambda a: _axis_spec(axis_name, a), axes, is_leaf=lambda a: a is None)

    out_specs = to_specs(out_axes)

    @functools.wraps(f)
    def wrapped(*args):
        mesh = current_mesh()
        if mesh is None or mesh.empty:
            raise ValueError(
                "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a "
                "mesh context"
            )
        if axis_name not in mesh.axis_names:
            raise ValueError(
                f"jax.shard_map requires axis_names={frozenset({axis_name})} to be a subset of "
                f"mesh.axis_names={frozenset(mesh.axis_names)}"
            )
        kind = mesh.axis_types[mesh.axis_names.index(axis_name)]
        if in_axes is Infer and kind != AxisType.Explicit:
            raise TypeError(
                f"in_axes was not specified when axis_name={frozenset({axis_name})} was of type "
                f"AxisType.{kind.name}"
            )
        in_specs = None if in_axes is Infer else to_specs(in_axes)
        mapped = shard_map(
            f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names={axis_name}
        )
        return mapped(*args)

    return wrapped
