"""Short names for the pytree functions of tree_util (mirrors jax.tree).

``tree.map`` is ``tree_util.tree_map`` and so on; the names shadow builtins
(``map``, ``all``) on purpose, as in JAX, so this module uses neither.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from . import tree_util
from .tree_util import PyTreeDef

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]

_NO_INITIALIZER = tree_util._NO_INITIALIZER


def map(f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:
    """Apply f to corresponding leaves of one or more pytrees (jax.tree.map)."""
    return tree_util.tree_map(f, tree, *rest, is_leaf=is_leaf)


def leaves(tree: Any, is_leaf: Callable | None = None) -> list:
    """Return the leaves of a pytree in flatten order (jax.tree.leaves)."""
    return tree_util.tree_leaves(tree, is_leaf)


def structure(tree: Any, is_leaf: Callable | None = None) -> PyTreeDef:
    """Return the treedef of a pytree (jax.tree.structure)."""
    return tree_util.tree_structure(tree, is_leaf)


def flatten(tree: Any, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """Flatten a pytree into its leaves and a treedef (jax.tree.flatten)."""
    return tree_util.tree_flatten(tree, is_leaf)


def unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from a treedef and its leaves (jax.tree.unflatten)."""
    return tree_util.tree_unflatten(treedef, leaves)


def reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _NO_INITIALIZER,
    is_leaf: Callable | None = None,
) -> Any:
    """Fold a two-argument function over the leaves of a pytree (jax.tree.reduce)."""
    return tree_util.tree_reduce(function, tree, initializer, is_leaf)


def all(tree: Any, *, is_leaf: Callable | None = None) -> bool:
    """Return whether every leaf of a pytree is truthy (jax.tree.all)."""
    return tree_util.tree_all(tree, is_leaf=is_leaf)


def transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any):
    """Turn an outer tree of inner trees into an inner tree of outer trees (jax.tree.transpose)."""
    return tree_util.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Apply f to each key path and the corresponding leaves of pytrees (jax.tree.map_with_path)."""
    return tree_util.tree_map_with_path(
        f, tree, *rest, is_leaf=is_leaf, is_leaf_takes_path=is_leaf_takes_path
    )


def leaves_with_path(
    tree: Any, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False
) -> list:
    """Return the (key path, leaf) pairs of a pytree (jax.tree.leaves_with_path)."""
    return tree_util.tree_leaves_with_path(tree, is_leaf, is_leaf_takes_path)


def flatten_with_path(
    tree: Any, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False
) -> tuple[list, PyTreeDef]:
    """Flatten a pytree into (key path, leaf) pairs and a treedef (jax.tree.flatten_with_path)."""
    return tree_util.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)


def broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable | None = None) -> Any:
    """Repeat the leaves of a prefix tree over a full tree's structure (jax.tree.broadcast)."""
    return tree_util.tree_broadcast(prefix_tree, full_tree, is_leaf)


def reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: Any,
    *,
    identity: Any = _NO_INITIALIZER,
    is_leaf: Callable | None = None,
) -> Any:
    """Combine the leaves pairwise with an associative operation (jax.tree.reduce_associative)."""
    return tree_util.tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def static(**kwargs: Any) -> Any:
    """A ``dataclasses.field`` marked static for ``register_dataclass`` (jax.tree.static)."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
