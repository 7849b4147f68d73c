"""Pytrees: nested containers of leaves, flattened and rebuilt (mirrors jax.tree_util).

A pytree is a value built from registered *node* types (tuple, list, dict,
None, namedtuples, ``OrderedDict``, ``defaultdict``, plus anything registered
here); every other value is a *leaf*.

Representation. A treedef wraps a *spec*, a nested tuple in preorder:

* ``None`` marks a leaf (a pytree ``None`` is a node with no children, so it
  is a spec ``(kind_of_NoneType, None, ())``, never the marker),
* ``(kind, aux, children)`` marks a node: ``kind`` is the node type's
  ``_NodeKind``, ``aux`` its static data, ``children`` a tuple of specs.

Plain nested tuples make equality and hashing run in C (kinds compare by
identity, one kind object per type for the life of the process), and the
hash is computed once per treedef. Flattening dispatches on ``type(node)``
with one dict lookup; unknown types are classified once and cached.

Depth. The walks recurse (two Python frames per level), which is the fast way
for the trees programs use; a tree nested deeper than the interpreter's
recursion limit allows (JAX handles about 800 levels) makes a walk raise
RecursionError, and the walk then runs again once with room for
``DEEP_TREE_LEVELS`` more levels (:func:`_deep`), so the common case pays nothing.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import operator
import sys
import textwrap
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "Partial",
    "PyTreeDef",
    "PyTreeRegistry",
    "SequenceKey",
    "all_leaves",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]


# --------------------------------------------------------------------- keys


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Key of a positional child, printed ``[0]`` (jax.tree_util.SequenceKey)."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Key of a mapping entry, printed ``['a']`` (jax.tree_util.DictKey)."""

    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Key of an attribute, printed ``.name`` (jax.tree_util.GetAttrKey)."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Key of the i-th child of a node registered without keys (jax.tree_util.FlattenedIndexKey)."""

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


# The field that `keystr(..., simple=True)` prints for each key class.
_SIMPLE_KEY_FIELD = {
    SequenceKey: "idx",
    DictKey: "key",
    GetAttrKey: "name",
    FlattenedIndexKey: "key",
}


def keystr(keys: Iterable[Any], *, simple: bool = False, separator: str = "") -> str:
    """Render a key path as a string such as ``[0]['a'].b`` (jax.tree_util.keystr)."""
    if not simple:
        return separator.join(map(str, keys))
    return separator.join(_simple_key_str(k) for k in keys)


def _simple_key_str(key: Any) -> str:
    field = _SIMPLE_KEY_FIELD.get(type(key))
    return str(key) if field is None else str(getattr(key, field))


# ------------------------------------------------------------------ node kinds


class _NodeKind:
    """How to take one node type apart and put it back together.

    ``flatten(node) -> (children, aux)``; ``unflatten(aux, children_tuple)``;
    ``flatten_with_keys(node) -> (((key, child), ...), aux)``. Kinds compare
    by identity (the default), which keeps spec equality and hashing in C.
    """

    __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys", "label")

    def __init__(self, nodetype, flatten, unflatten, flatten_with_keys, label=None):
        self.type = nodetype
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        # How the node prints inside `CustomNode(...)`; None means "Name[aux]".
        self.label = label


def _index_keys(flatten):
    """Derive a keyed flatten that numbers children with FlattenedIndexKey."""

    def flatten_with_keys(node):
        children, aux = flatten(node)
        return tuple((FlattenedIndexKey(i), c) for i, c in enumerate(children)), aux

    return flatten_with_keys


def _drop_keys(flatten_with_keys):
    """Derive a plain flatten from a keyed one."""

    def flatten(node):
        keyed, aux = flatten_with_keys(node)
        return [c for _, c in keyed], aux

    return flatten


def _sorted_keys(mapping) -> tuple:
    # JAX orders dict children by sorted key; keys that cannot be ordered
    # against each other would give an arbitrary (unstable) structure.
    try:
        return tuple(sorted(mapping))
    except TypeError as err:
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys."
        ) from err


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _flatten_ordered_dict(d):
    return list(d.values()), tuple(d)


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _sequence_with_keys(seq):
    return tuple((SequenceKey(i), c) for i, c in enumerate(seq)), None


def _dict_with_keys(d):
    children, keys = _flatten_dict(d)
    return tuple(zip(map(DictKey, keys), children, strict=True)), keys


def _ordered_dict_with_keys(d):
    return tuple((DictKey(k), v) for k, v in d.items()), tuple(d)


def _defaultdict_with_keys(d):
    children, aux = _flatten_defaultdict(d)
    return tuple(zip(map(DictKey, aux[1]), children, strict=True)), aux


def _children_are_node(node):
    # For tuple-like nodes the node itself is the sequence of children; the
    # flatten walker recognises this function and skips calling it.
    return node, None


def _namedtuple_kind(nodetype: type) -> _NodeKind:
    fields = nodetype._fields  # type: ignore[attr-defined]  # a namedtuple class

    def flatten_with_keys(node):
        return tuple(zip(map(GetAttrKey, fields), node, strict=True)), None

    return _NodeKind(
        nodetype,
        _children_are_node,
        lambda _, children: nodetype(*children),
        flatten_with_keys,
        label=f"namedtuple[{nodetype.__name__}]",
    )


_BUILTIN_KINDS = [
    _NodeKind(tuple, _children_are_node, lambda _, ch: ch, _sequence_with_keys),
    _NodeKind(list, _children_are_node, lambda _, ch: list(ch), _sequence_with_keys),
    _NodeKind(
        dict, _flatten_dict, lambda keys, ch: dict(zip(keys, ch, strict=True)), _dict_with_keys
    ),
    _NodeKind(type(None), lambda _: ((), None), lambda _, __: None, lambda _: ((), None)),
    _NodeKind(
        collections.OrderedDict,
        _flatten_ordered_dict,
        lambda keys, ch: collections.OrderedDict(zip(keys, ch, strict=True)),
        _ordered_dict_with_keys,
    ),
    _NodeKind(
        collections.defaultdict,
        _flatten_defaultdict,
        lambda aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch, strict=True)),
        _defaultdict_with_keys,
    ),
]
_TUPLE_KIND, _LIST_KIND, _DICT_KIND, _NONE_KIND = _BUILTIN_KINDS[:4]
# Types registered by `register_dataclass` (JAX's messages call them dataclass nodes).
_dataclass_types: set[type] = set()


# ------------------------------------------------------------- dispatch tables
#
# Two caches keyed by exact type, filled together by `_install`:
#   _kinds:   type -> _NodeKind, or None for a leaf type
#   _walkers: type -> walker(leaves, node) -> spec (the flatten hot path);
#             a walker appends the node's leaves to the list `leaves`
# Unregistered types are classified on first sight (leaf or namedtuple).
# Both are mutated in place only, because hot loops hold their bound `get`.

_registry: dict[type, _NodeKind] = {}  # explicit registrations and builtins
_kinds: dict[type, _NodeKind | None] = {}
_walkers: dict[type, Callable] = {}
_kinds_get = _kinds.get
_walkers_get = _walkers.get
_UNSEEN = object()
# Leaf types are cached too; bound the caches so that classes created in a
# loop cannot grow them forever.
_CACHE_LIMIT = 4096


# The walker of a leaf type: list.append(leaves, node) appends the node and
# returns None, the leaf spec, without a Python frame per leaf.
_walk_leaf = list.append


def _walk_unseen(leaves, node):
    _classify(type(node))
    return _walkers[type(node)](leaves, node)


def _node_walker(kind: _NodeKind) -> Callable:
    """Return the flatten walker of a node kind: it appends leaves, returns the spec."""
    flatten = kind.flatten
    if flatten is _children_are_node:

        def walk_children(leaves, node):
            return kind, None, tuple([_walkers_get(type(c), _walk_unseen)(leaves, c) for c in node])

        return walk_children

    def walk(leaves, node):
        children, aux = flatten(node)
        return kind, aux, tuple([_walkers_get(type(c), _walk_unseen)(leaves, c) for c in children])

    return walk


def _install(nodetype: type, kind: _NodeKind | None) -> None:
    _kinds[nodetype] = kind
    _walkers[nodetype] = _walk_leaf if kind is None else _node_walker(kind)


def _kind_of(nodetype: type) -> _NodeKind | None:
    """Return the kind of a type (None for leaves), classifying it on first sight."""
    kind = _kinds_get(nodetype, _UNSEEN)
    if kind is _UNSEEN:
        return _classify(nodetype)
    return kind  # type: ignore[return-value]  # not the sentinel: a kind or None


def _classify(nodetype: type) -> _NodeKind | None:
    if len(_kinds) >= _CACHE_LIMIT:
        # Trim leaf types only: node kinds (namedtuples) must stay the same
        # objects, because specs compare kinds by identity.
        # list() snapshots the items in one step, safe if another thread inserts.
        for t, k in list(_kinds.items()):
            if k is None:
                _kinds.pop(t, None)
                _walkers.pop(t, None)
    kind = None
    if issubclass(nodetype, tuple) and hasattr(nodetype, "_fields"):
        kind = _namedtuple_kind(nodetype)
    _install(nodetype, kind)
    return kind


# ---------------------------------------------------------------- registration


def _register(kind: _NodeKind) -> None:
    # Also replaces a cached classification (leaf or namedtuple) of the type.
    if kind.type in _registry:
        raise ValueError(f"pytree node type {kind.type!r} is already registered")
    _registry[kind.type] = kind
    _install(kind.type, kind)


for _kind in _BUILTIN_KINDS:
    _register(_kind)
del _kind


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable,
    unflatten_func: Callable,
    flatten_with_keys_func: Callable | None = None,
) -> None:
    """Register a type as a pytree node (jax.tree_util.register_pytree_node).

    ``flatten_func(node) -> (children, aux_data)`` and
    ``unflatten_func(aux_data, children) -> node``; aux_data must be hashable
    and comparable, since it is part of the treedef.
    """
    if flatten_with_keys_func is None:
        flatten_with_keys_func = _index_keys(flatten_func)
    _register(_NodeKind(nodetype, flatten_func, unflatten_func, flatten_with_keys_func))


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable,
    unflatten_func: Callable,
    flatten_func: Callable | None = None,
) -> None:
    """Register a node type whose flatten names its children.

    Mirrors jax.tree_util.register_pytree_with_keys.

    ``flatten_with_keys(node) -> (((key, child), ...), aux_data)``.
    """
    if flatten_func is None:
        flatten_func = _drop_keys(flatten_with_keys)
    _register(_NodeKind(nodetype, flatten_func, unflatten_func, flatten_with_keys))


def register_pytree_node_class(cls: type[Any]) -> type[Any]:
    """Register a class by its tree_flatten/tree_unflatten methods.

    Mirrors jax.tree_util.register_pytree_node_class; return ``cls``.
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type[Any]) -> type[Any]:
    """Register a class by its tree_flatten_with_keys/tree_unflatten methods.

    Mirrors jax.tree_util.register_pytree_with_keys_class; return ``cls``.
    """
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(
        cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten, flatten
    )
    return cls


def _attr_tuple_getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
    # attrgetter returns a bare value for one name and fails for none.
    if not names:
        return lambda _: ()
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return operator.attrgetter(*names)


def _dataclass_fields(nodetype, data_fields, meta_fields, drop_fields):
    """Return (data, meta) field names, inferred or checked against the dataclass."""
    if (data_fields is None) != (meta_fields is None):
        raise TypeError(
            "register_dataclass: pass both data_fields and meta_fields, or neither "
            f"(got data_fields={data_fields!r}, meta_fields={meta_fields!r})"
        )
    if data_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                f"register_dataclass: {nodetype!r} is not a dataclass, so data_fields "
                "and meta_fields must be given"
            )
        # Fields with init=False are recomputed by __init__, so they are dropped.
        init = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta = tuple(f.name for f in init if f.metadata.get("static", False))
        data = tuple(f.name for f in init if not f.metadata.get("static", False))
        return data, meta
    data, meta = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        _check_dataclass_fields(nodetype, data, meta, drop_fields)
    return data, meta


def _check_dataclass_fields(nodetype, data, meta, drop_fields) -> None:
    # Unflatten calls nodetype(**fields), so the names must be exactly the
    # __init__ parameters not explicitly dropped.
    given = set(data) | set(meta)
    expected = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
    problems = []
    if expected - given:
        problems.append(f"missing {sorted(expected - given)} (add them to drop_fields?)")
    if given - expected:
        problems.append(f"unexpected {sorted(given - expected)}")
    if problems:
        raise ValueError(
            f"register_dataclass: data_fields and meta_fields of {nodetype.__name__} must "
            f"name each init field once: {'; '.join(problems)}"
        )


def register_dataclass(
    nodetype: type,
    data_fields: Iterable[str] | None = None,
    meta_fields: Iterable[str] | None = None,
    drop_fields: Iterable[str] = (),
) -> type:
    """Register a type whose fields are children or static data (jax.tree_util.register_dataclass).

    With no field lists, infer them from ``dataclasses.fields``: a field with
    ``metadata=dict(static=True)`` is static (meta), other init fields are
    children. Unflatten calls ``nodetype(**fields)``. Return ``nodetype`` so
    this works as a decorator.
    """
    drop_fields = tuple(drop_fields)
    data, meta = _dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)
    get_data, get_meta = _attr_tuple_getter(data), _attr_tuple_getter(meta)
    data_keys = tuple(map(GetAttrKey, data))

    def flatten(node):
        return get_data(node), get_meta(node)

    def flatten_with_keys(node):
        return tuple(zip(data_keys, get_data(node), strict=True)), get_meta(node)

    def unflatten(aux, children):
        return nodetype(
            **dict(zip(data, children, strict=True)), **dict(zip(meta, aux, strict=True))
        )

    _register(_NodeKind(nodetype, flatten, unflatten, flatten_with_keys))
    _dataclass_types.add(nodetype)
    return nodetype


def register_static(cls: type) -> type:
    """Register a type whose instances are static, childless nodes (jax.tree_util.register_static).

    Each instance is kept whole in the treedef as its aux data.

    Raise TypeError when instances are unhashable, since they become
    treedef data. Return ``cls`` so this works as a decorator.
    """
    if getattr(cls, "__hash__", None) is None:
        raise TypeError(f"register_static: instances of {cls!r} must be hashable")

    def flatten(node):
        return (), node

    _register(_NodeKind(cls, flatten, lambda aux, _: aux, flatten))
    return cls


# -------------------------------------------------------------------- flatten


def _flatten_is_leaf(node, append, is_leaf):
    """Flatten as the walkers do, but first ask `is_leaf` at every node."""
    if is_leaf(node):
        append(node)
        return None
    kind = _kind_of(type(node))
    if kind is None:
        append(node)
        return None
    children, aux = kind.flatten(node)
    return kind, aux, tuple([_flatten_is_leaf(c, append, is_leaf) for c in children])


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Flatten a pytree into its leaves and a treedef (jax.tree_util.tree_flatten)."""
    leaves: list[Any] = []
    try:
        if is_leaf is None:
            spec = _walkers_get(type(tree), _walk_unseen)(leaves, tree)
        else:
            spec = _flatten_is_leaf(tree, leaves.append, is_leaf)
    except RecursionError:
        leaves = []
        spec = _deep(_flatten_is_leaf, tree, leaves.append, is_leaf or _never)
    return leaves, PyTreeDef._make(spec, len(leaves))


def _never(_node) -> bool:
    return False


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """Return the leaves of a pytree in flatten order (jax.tree_util.tree_leaves)."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """Return the treedef of a pytree (jax.tree_util.tree_structure)."""
    return tree_flatten(tree, is_leaf)[1]


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Return whether every item is a leaf on its own (jax.tree_util.all_leaves)."""
    if is_leaf is None:
        return all(_kind_of(type(x)) is None for x in iterable)
    return all(is_leaf(x) or _kind_of(type(x)) is None for x in iterable)


# ------------------------------------------------------------ flatten with keys


def _flatten_keyed(node, path, append, is_leaf):
    """Append (key path, leaf) pairs and return the spec; is_leaf takes (path, node)."""
    if is_leaf is not None and is_leaf(path, node):
        append((path, node))
        return None
    kind = _kind_of(type(node))
    if kind is None:
        append((path, node))
        return None
    keyed, aux = kind.flatten_with_keys(node)
    specs = tuple([_flatten_keyed(c, (*path, k), append, is_leaf) for k, c in keyed])
    return kind, aux, specs


def _path_is_leaf(is_leaf, takes_path):
    # The keyed walk always passes (path, node); adapt a node-only predicate.
    if is_leaf is None or takes_path:
        return is_leaf
    return lambda _, node: is_leaf(node)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
):
    """Flatten a pytree into (key path, leaf) pairs and a treedef.

    Mirrors jax.tree_util.tree_flatten_with_path.
    """
    pairs: list[tuple[Any, Any]] = []
    is_leaf = _path_is_leaf(is_leaf, is_leaf_takes_path)
    try:
        spec = _flatten_keyed(tree, (), pairs.append, is_leaf)
    except RecursionError:
        pairs = []
        spec = _deep(_flatten_keyed, tree, (), pairs.append, is_leaf)
    return pairs, PyTreeDef._make(spec, len(pairs))


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list:
    """Return the (key path, leaf) pairs of a pytree (jax.tree_util.tree_leaves_with_path)."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


# ------------------------------------------------------------------ unflatten


def _build(spec, next_leaf):
    """Rebuild the value of `spec`, drawing leaves from `next_leaf`."""
    kind, aux, children = spec
    # Leaves are inlined here: most children are leaves, and skipping a
    # Python call for each one is the main cost saving of unflatten.
    return kind.unflatten(
        aux,
        tuple([next_leaf() if c is None else _build(c, next_leaf) for c in children]),
    )


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from a treedef and its leaves (jax.tree_util.tree_unflatten)."""
    return treedef.unflatten(leaves)


# ------------------------------------------------------------ prefix matching


class _Mismatch(Exception):
    """Raised inside `_flatten_up_to` with the text JAX's flatten_up_to raises."""


# JAX's flatten_up_to names the expected container in its messages.
_SEQUENCE_NAMES = {tuple: ("tuple", "Tuple"), list: ("list", "List")}
_NONE_PREFIX_NOTE = (
    "\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a "
    "tree-prefix of non-None values. To obtain the previous behavior, you can usually "
    "write:\n  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
    "is_leaf=lambda x: x is None)"
)


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _node_mismatch(kind: _NodeKind, aux, n_children: int, tree) -> str | None:
    """JAX's text for why ``tree`` is not a node ``(kind, aux)`` with ``n_children``, or None."""
    if kind.type in _SEQUENCE_NAMES:
        name, title = _SEQUENCE_NAMES[kind.type]
        if type(tree) is not kind.type:
            return f"Expected {name}, got {tree!r}."
        if len(tree) != n_children:
            return f"{title} arity mismatch: {len(tree)} != {n_children}; {name}: {tree!r}."
        return None
    if kind is _DICT_KIND:
        if type(tree) is not dict:
            return f"Expected dict, got {tree!r}."
        keys = _sorted_keys(tree)
        if keys != aux:
            return f"Dict key mismatch; expected keys: {list(aux)}; present keys: {list(keys)}."
        return None
    if kind is _NONE_KIND:
        return None if tree is None else f"Expected None, got {tree!r}.{_NONE_PREFIX_NOTE}"
    if kind.label is not None and kind.label.startswith("namedtuple["):
        if not _is_namedtuple(tree):
            return f"Expected named tuple, got {tree!r}."
        if len(tree) != n_children:
            return f"Named tuple arity mismatch: {len(tree)} != {n_children}; tuple: {tree!r}."
        if type(tree) is not kind.type:
            return f"Named tuple type mismatch: expected type: {kind.type!r}, tuple: {tree!r}."
        return None
    custom = "custom dataclass node" if kind.type in _dataclass_types else "custom node"
    if type(tree) is not kind.type:
        return (
            f"{custom.capitalize()} type mismatch: expected type: {kind.type!r}, value: {tree!r}."
        )
    children, tree_aux = kind.flatten(tree)
    if tree_aux != aux:
        return f"Mismatch {custom} data: {aux!r} != {tree_aux!r}; value: {tree!r}."
    if len(tuple(children)) != n_children:
        return (
            f"Custom type arity mismatch: {len(tuple(children))} != {n_children}; value: {tree!r}."
        )
    return None


def _flatten_up_to(spec, tree, append):
    """Append the subtrees of `tree` found at the leaves of `spec`."""
    if spec is None:
        append(tree)
        return
    kind, aux, children = spec
    if type(tree) is not kind.type:
        raise _Mismatch(_node_mismatch(kind, aux, len(children), tree))
    if kind.flatten is _children_are_node:
        subtrees = tree
    else:
        subtrees, tree_aux = kind.flatten(tree)
        subtrees = tuple(subtrees)
        if tree_aux != aux:
            raise _Mismatch(_node_mismatch(kind, aux, len(children), tree))
    if len(subtrees) != len(children):
        raise _Mismatch(_node_mismatch(kind, aux, len(children), tree))
    for child_spec, subtree in zip(children, subtrees, strict=True):
        _flatten_up_to(child_spec, subtree, append)


def _up_to(treedef: PyTreeDef, tree: Any) -> list:
    """The subtrees of `tree` at the leaves of `treedef` (`_Mismatch` where it is no prefix)."""
    out: list[Any] = []
    try:
        _flatten_up_to(treedef._spec, tree, out.append)
    except RecursionError:
        out = []
        _deep(_flatten_up_to, treedef._spec, tree, out.append)
    return out


def _prefix_leaves(treedef: PyTreeDef, prefix: Any, tree: Any, name: str, is_leaf=None) -> list:
    """The subtrees of `tree` at the leaves of `treedef` (the structure of `prefix`).

    Where `prefix` is not a prefix of `tree`, raise JAX's ValueError: the first place
    where they differ, with its key path in the pytree called `name`.
    """
    try:
        return _up_to(treedef, tree)
    except _Mismatch as err:
        errors = prefix_errors(prefix, tree, is_leaf)
        raise (errors[0](name) if errors else ValueError(str(err))) from None


def prefix_errors(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[Callable[[str], ValueError]]:
    """Describe every place where ``prefix_tree`` is not a prefix of ``full_tree``.

    Counterpart of the ``prefix_errors`` behind jax.tree_util (private in JAX): each entry,
    called with the name of the prefix tree (``"vmap in_axes"``), returns the
    ValueError JAX raises there, naming the key path. Empty when it is a prefix.
    """
    out: list[Callable[[str], ValueError]] = []
    try:
        _collect_prefix_errors(prefix_tree, full_tree, is_leaf, (), out.append)
    except RecursionError:
        out = []
        _deep(_collect_prefix_errors, prefix_tree, full_tree, is_leaf, (), out.append)
    return out


class PytreeLeaf:
    """Stand for each leaf of a value whose structure an error message compares.

    Counterpart of the ``PytreeLeaf`` behind jax.tree_util's prefix errors (private in JAX).
    """

    def __repr__(self):
        return "pytree leaf"


def leaf_stand_ins(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Return ``tree`` with a ``PytreeLeaf`` in place of each leaf.

    What jax.tree_util's prefix errors compare a spec with (JAX builds it in its callers).
    """
    treedef = tree_structure(tree, is_leaf)
    return treedef.unflatten([PytreeLeaf()] * treedef.num_leaves)


def axis_spec_prefix_error(
    name: str, prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> ValueError:
    """Return JAX's ValueError for an axis spec that is not a prefix of its value.

    jax.tree_util's prefix errors as JAX words them for ``vmap in_axes``, ``device_put
    device`` and ``with_sharding_constraint shardings``: every place where
    ``prefix_tree`` and ``full_tree`` (usually ``leaf_stand_ins`` of the value) differ.
    """
    errors = prefix_errors(prefix_tree, full_tree, is_leaf)
    details = "\n  ".join(str(e(name)) for e in errors)
    return ValueError(
        f"{name} specification must be a tree prefix of the corresponding value; \n"
        f"  Mismatch details ({len(errors)} found):\n  {details}"
    )


class _LeafType(type):
    def __repr__(cls):
        return "pytree leaf"


# Stands for the leaves of treedefs compared by `equality_errors_pytreedef`; its
# type prints as "pytree leaf" in the messages.
_TREEDEF_LEAF = _LeafType("Leaf", (), {})()


def equality_errors(
    tree1: Any, tree2: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[tuple[tuple, str, str, str]]:
    """Describe where two pytrees differ in structure: ``(key path, thing1, thing2, why)``.

    Counterpart of the ``equality_errors`` behind jax.tree_util (private in JAX), whose
    tuples its callers turn into messages ("at args[0], seen ... but now given ...").
    """
    out: list[tuple[tuple, str, str, str]] = []
    _collect_equality_errors((), tree1, tree2, is_leaf, out.append)
    return out


def equality_errors_pytreedef(
    treedef1: PyTreeDef, treedef2: PyTreeDef
) -> list[tuple[tuple, str, str, str]]:
    """Like ``equality_errors``, on two treedefs (jax.tree_util's, private in JAX)."""
    return equality_errors(
        treedef1.unflatten([_TREEDEF_LEAF] * treedef1.num_leaves),
        treedef2.unflatten([_TREEDEF_LEAF] * treedef2.num_leaves),
    )


def _children_text(tree, n: int) -> str:
    return f"{type(tree)} with {n} child{'ren' if n > 1 else ''}"


def _collect_equality_errors(path: tuple, tree1, tree2, is_leaf, add) -> None:
    if (
        tree_structure(tree1, is_leaf)._spec is None
        and tree_structure(tree2, is_leaf)._spec is None
    ):
        return
    if type(tree1) is not type(tree2):
        add((path, str(type(tree1)), str(type(tree2)), "their Python types differ"))
        return
    if isinstance(tree1, (list, tuple)) and len(tree1) != len(tree2):
        kind = type(tree1).__name__
        add(
            (
                path,
                f"{kind} of length {len(tree1)}",
                f"{kind} of length {len(tree2)}",
                "the lengths do not match",
            )
        )
        return
    keyed1, meta1 = flatten_one_level_with_keys(tree1)
    keyed2, meta2 = flatten_one_level_with_keys(tree2)
    keyed1, keyed2 = tuple(keyed1), tuple(keyed2)
    if len(keyed1) != len(keyed2):
        try:
            keys = {k for k, _ in keyed1} ^ {k for k, _ in keyed2}
            diff = " ".join(repr(getattr(k, "key", k)) for k in keys)
        except TypeError:  # unhashable keys
            diff = ""
        why = "the numbers of children do not match"
        if diff:
            why += f", with the symmetric difference of key sets: {{{diff}}}"
        add((path, _children_text(tree1, len(keyed1)), _children_text(tree2, len(keyed2)), why))
        return
    if meta1 != meta2:
        add(
            (
                path,
                f"{type(tree1)} with pytree metadata {meta1}",
                f"{type(tree2)} with pytree metadata {meta2}",
                "the pytree node metadata does not match",
            )
        )
        return
    for (key, child1), (_, child2) in zip(keyed1, keyed2, strict=True):
        _collect_equality_errors((*path, key), child1, child2, is_leaf, add)


def _different_types(prefix, full, path, name) -> ValueError:
    return ValueError(
        f"pytree structure error: different types at key path\n    {name}{keystr(path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix)}\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        f"    {type(full)}."
    )


def _different_lengths(prefix, full, path, name) -> ValueError:
    kind = type(prefix).__name__
    return ValueError(
        f"pytree structure error: different lengths of {kind} at key path\n"
        f"    {name}{keystr(path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type {kind} of length "
        f"{len(prefix)}, but the full pytree has a subtree of the same type but of length "
        f"{len(full)}."
    )


def _key_names(keys) -> str:
    return " ".join(_simple_key_str(key) for key in keys)


def _different_children(prefix, prefix_keys, full_keys, path, name) -> ValueError:
    try:
        keys = set(prefix_keys) ^ set(full_keys)
        difference = f"so the symmetric difference on key sets is\n    {_key_names(keys)}"
    except TypeError:  # unhashable keys
        difference = ""
    return ValueError(
        "pytree structure error: different numbers of pytree children at key path\n"
        f"    {name}{keystr(path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix)}\n"
        f"with {len(prefix_keys)} child keys\n"
        f"    {_key_names(prefix_keys)}\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        f"{len(full_keys)} child keys\n"
        f"    {_key_names(full_keys)}\n" + difference
    )


def _different_metadata(prefix, prefix_meta, full_meta, path, name) -> ValueError:
    prefix_text, full_text = str(prefix_meta), str(full_meta)
    lines = difflib.ndiff(prefix_text.splitlines(), full_text.splitlines())
    return ValueError(
        "pytree structure error: different pytree metadata at key path\n"
        f"    {name}{keystr(path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix)}\n"
        "with metadata\n"
        f"    {prefix_text}\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        f"    {full_text}\n"
        "so the diff in the metadata at these pytree nodes is\n"
        + textwrap.indent("\n".join(lines), "    ")
    )


def _collect_prefix_errors(prefix, full, is_leaf, path: tuple, add) -> None:
    """Add an error maker for each place where ``prefix`` is not a prefix of ``full``."""
    if tree_structure(prefix, is_leaf)._spec is None:
        return  # a leaf is a prefix of any subtree
    if type(prefix) is not type(full):
        add(functools.partial(_different_types, prefix, full, path))
        return
    prefix_keyed, prefix_meta = flatten_one_level_with_keys(prefix)
    full_keyed, full_meta = flatten_one_level_with_keys(full)
    prefix_keys = [key for key, _ in prefix_keyed]
    full_keys = [key for key, _ in full_keyed]
    if isinstance(prefix, (list, tuple)):
        if len(prefix) != len(full):
            add(functools.partial(_different_lengths, prefix, full, path))
            return
    elif len(prefix_keys) != len(full_keys):
        add(functools.partial(_different_children, prefix, prefix_keys, full_keys, path))
        return
    if prefix_meta != full_meta:
        add(functools.partial(_different_metadata, prefix, prefix_meta, full_meta, path))
        return
    for (key, prefix_child), (_, full_child) in zip(prefix_keyed, full_keyed, strict=True):
        _collect_prefix_errors(prefix_child, full_child, is_leaf, (*path, key), add)


# ---------------------------------------------------------------------- depth

#: How many levels deeper than the recursion limit allows a pytree may be nested.
DEEP_TREE_LEVELS = 4000
_FRAMES_PER_LEVEL = 3  # a walk's frame, its comprehension's and (in C) a tuple's


def _deep(fn: Callable, *args):
    """Run the tree walk ``fn(*args)`` with room for ``DEEP_TREE_LEVELS`` more levels.

    Called after the walk raised RecursionError. Walks are pure (user callbacks
    run outside them), so running one again is safe. Deeper trees still raise
    RecursionError, never crash the process.
    """
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + DEEP_TREE_LEVELS * _FRAMES_PER_LEVEL)
    try:
        return fn(*args)
    finally:
        sys.setrecursionlimit(limit)


# ------------------------------------------------------------------- treedef


def _spec_leaf_count(spec) -> int:
    if spec is None:
        return 1
    return sum(_spec_leaf_count(c) for c in spec[2])


def _spec_hash_skipping_unhashable(spec) -> int:
    """Hash a spec whose aux data may not be hashable: such aux counts by its type only.

    JAX's treedefs hash whatever their node data is (its hash leaves node data out), and
    libraries keep lists there (equinox's static fields), then pass the treedef as a
    static argument to jit.
    """
    if spec is None:
        return hash(None)
    kind, aux, children = spec
    try:
        aux_hash = hash(aux)
    except TypeError:
        aux_hash = hash(type(aux))
    return hash((kind, aux_hash, tuple(_spec_hash_skipping_unhashable(c) for c in children)))


def _hash_spec(spec) -> int:
    try:
        return hash(spec)
    except TypeError:
        return _spec_hash_skipping_unhashable(spec)


def _spec_node_count(spec) -> int:
    if spec is None:
        return 1
    return 1 + sum(_spec_node_count(c) for c in spec[2])


def _compose(outer, inner):
    if outer is None:
        return inner
    kind, aux, children = outer
    return kind, aux, tuple(_compose(c, inner) for c in children)


def _repr_sequence(kind, aux, parts):
    open_, close = "()" if kind is _TUPLE_KIND else "[]"
    trailing = "," if kind is _TUPLE_KIND and len(parts) == 1 else ""
    return f"{open_}{', '.join(parts)}{trailing}{close}"


def _repr_dict(kind, aux, parts):
    return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts, strict=True)) + "}"


def _repr_custom(kind, aux, parts):
    label = kind.label or f"{kind.type.__name__}[{aux}]"  # str(aux), as JAX prints it
    return f"CustomNode({label}, [{', '.join(parts)}])"


_REPR_BY_KIND = {
    _TUPLE_KIND: _repr_sequence,
    _LIST_KIND: _repr_sequence,
    _DICT_KIND: _repr_dict,
    _NONE_KIND: lambda *_: "None",
}


def _spec_repr(spec) -> str:
    if spec is None:
        return "*"
    kind, aux, children = spec
    parts = [_spec_repr(c) for c in children]
    return _REPR_BY_KIND.get(kind, _repr_custom)(kind, aux, parts)


def _portable(spec) -> tuple:
    """Return the spec as a flat preorder tuple of ``(node type, aux, child count)`` or None.

    Types instead of kinds keep lambdas out of a pickle; flat keeps pickling a
    deep tree within the recursion limit.
    """
    out: list[tuple[Any, Any, int] | None] = []
    stack = [spec]
    while stack:
        node = stack.pop()
        if node is None:
            out.append(None)
            continue
        kind, aux, children = node
        out.append((kind.type, aux, len(children)))
        stack.extend(reversed(children))
    return tuple(out)


def _treedef_from_portable(portable) -> PyTreeDef:
    built: list = []  # specs of the subtrees read so far, last read on top
    for item in reversed(portable):
        if item is None:
            built.append(None)
            continue
        nodetype, aux, count = item
        kind = _kind_of(nodetype)
        if kind is None:
            raise ValueError(f"cannot rebuild a treedef: {nodetype!r} is not a pytree node type")
        built.append((kind, aux, tuple([built.pop() for _ in range(count)])))
    return PyTreeDef._make(built[0])


class PyTreeDef:
    """The structure of a pytree: nodes and static data, no leaves (jax.tree_util.PyTreeDef)."""

    __slots__ = ("_spec", "_num_leaves", "_hash")
    _spec: Any  # (kind, aux, children) nested, None for a leaf
    _num_leaves: int
    _hash: int | None

    @classmethod
    def _make(cls, spec, num_leaves: int | None = None) -> PyTreeDef:
        self = object.__new__(cls)
        self._spec = spec
        if num_leaves is None:
            try:
                num_leaves = _spec_leaf_count(spec)
            except RecursionError:
                num_leaves = _deep(_spec_leaf_count, spec)
        self._num_leaves = num_leaves
        self._hash = None
        return self

    @property
    def num_leaves(self) -> int:
        """Return the number of leaves (PyTreeDef.num_leaves)."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Return the number of nodes, leaves included (PyTreeDef.num_nodes)."""
        try:
            return _spec_node_count(self._spec)
        except RecursionError:
            return _deep(_spec_node_count, self._spec)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Rebuild a pytree from leaves (PyTreeDef.unflatten)."""
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        if len(leaves) < self._num_leaves:
            raise ValueError(
                f"Too few leaves for PyTreeDef; expected {self._num_leaves}, got {len(leaves)}"
            )
        if len(leaves) > self._num_leaves:
            raise ValueError(f"Too many leaves for PyTreeDef; expected {self._num_leaves}.")
        spec = self._spec
        if spec is None:
            return leaves[0]
        try:
            return _build(spec, iter(leaves).__next__)
        except RecursionError:
            return _deep(_build, spec, iter(leaves).__next__)

    def flatten_up_to(self, tree: Any) -> list:
        """Return the subtrees of `tree` at this treedef's leaves (PyTreeDef.flatten_up_to).

        Raise ValueError when this treedef is not a prefix of the structure of `tree`.
        """
        try:
            return _up_to(self, tree)
        except _Mismatch as err:
            raise ValueError(str(err)) from None

    def children(self) -> list[PyTreeDef]:
        """Return the treedefs of the root's children (PyTreeDef.children)."""
        if self._spec is None:
            return []
        return [PyTreeDef._make(c) for c in self._spec[2]]

    def node_data(self):
        """Return the root's ``(node type, aux data)``, None for a leaf (PyTreeDef.node_data)."""
        if self._spec is None:
            return None
        return self._spec[0].type, self._spec[1]

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """Return this treedef with `inner` at each of its leaves (PyTreeDef.compose)."""
        try:
            return PyTreeDef._make(_compose(self._spec, inner._spec))
        except RecursionError:
            return PyTreeDef._make(_deep(_compose, self._spec, inner._spec))

    def __eq__(self, other):
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if self._num_leaves != other._num_leaves:
            return False
        if self._hash is not None and other._hash is not None and self._hash != other._hash:
            return False
        try:
            return self._spec == other._spec
        except RecursionError:
            return _deep(operator.eq, self._spec, other._spec)

    def __hash__(self):
        h = self._hash
        if h is None:
            try:
                h = _hash_spec(self._spec)
            except RecursionError:
                h = _deep(_hash_spec, self._spec)
            self._hash = h
        return h

    def __repr__(self):
        try:
            return f"PyTreeDef({_spec_repr(self._spec)})"
        except RecursionError:
            return f"PyTreeDef({_deep(_spec_repr, self._spec)})"

    def __reduce__(self):
        return _treedef_from_portable, (_portable(self._spec),)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Return whether the treedef has a single node (jax.tree_util.treedef_is_leaf).

    As in JAX, a childless node such as ``None`` or ``()`` also counts.
    """
    spec = treedef._spec
    return spec is None or not spec[2]


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """Return the treedefs of the root's children (jax.tree_util.treedef_children)."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """Return the treedef of a tuple of the given treedefs (jax.tree_util.treedef_tuple)."""
    specs = tuple(t._spec for t in treedefs)
    return PyTreeDef._make((_TUPLE_KIND, None, specs))


# ------------------------------------------------------------ map and friends


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Apply f to corresponding leaves of one or more pytrees (jax.tree_util.tree_map).

    Each tree in `rest` must have the structure of `tree` or have it as a
    prefix: a leaf of `tree` then matches a whole subtree, passed to f as is.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = [_prefix_leaves(treedef, tree, r, "tree_map tree", is_leaf) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others, strict=True)])


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Apply f to each key path and the matching leaves of pytrees.

    Mirrors jax.tree_util.tree_map_with_path; f is called as ``f(path, x, *ys)``.
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    # The error search walks without paths, so a path-taking is_leaf cannot stop it.
    prefix_is_leaf = None if is_leaf_takes_path else is_leaf
    others = [
        _prefix_leaves(treedef, tree, r, "tree_map_with_path tree", prefix_is_leaf) for r in rest
    ]
    return treedef.unflatten([f(p, x, *ys) for (p, x), *ys in zip(pairs, *others, strict=True)])


_NO_INITIALIZER = object()


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _NO_INITIALIZER,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Fold a two-argument function over the leaves of a pytree (jax.tree_util.tree_reduce)."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Return whether every leaf of a pytree is truthy (jax.tree_util.tree_all)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turn an outer tree of inner trees into an inner tree of outer trees.

    Mirrors jax.tree_util.tree_transpose.

    With ``inner_treedef=None`` take the inner structure from the first
    outer leaf. Raise TypeError (as JAX does) when the pytree is not
    ``outer_treedef`` composed with ``inner_treedef``.
    """
    if inner_treedef is None:
        inner_treedef = _infer_inner(outer_treedef, pytree_to_transpose)
    leaves, treedef = tree_flatten(pytree_to_transpose)
    expected = outer_treedef.compose(inner_treedef)
    if treedef != expected:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    n_inner = inner_treedef.num_leaves
    # Leaves come outer-major; column j gathers inner leaf j of every outer leaf.
    columns = [leaves[j::n_inner] for j in range(n_inner)] if n_inner else []
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in columns])


def _infer_inner(outer_treedef: PyTreeDef, tree: Any) -> PyTreeDef:
    try:
        subtrees = _up_to(outer_treedef, tree)
    except _Mismatch as err:
        raise ValueError(str(err)) from None
    if not subtrees:
        raise ValueError(
            "tree_transpose: cannot infer inner_treedef from an outer treedef with no "
            "leaves; pass inner_treedef"
        )
    return tree_structure(subtrees[0])


# ------------------------------------------------------------------- Partial


class Partial(functools.partial):
    """A functools.partial that is a pytree (jax.tree_util.Partial).

    Its args and keywords are children; its func is static (aux data).
    """

    def __new__(cls, func, *args, **keywords):
        # functools.partial.__new__ merges a partial `func` into the result,
        # which would turn the inner partial's bound arguments into leaves of
        # this one. Setting the state directly keeps `func` intact.
        if not callable(func):
            raise TypeError(f"Partial: the first argument must be callable, got {func!r}")
        self = super().__new__(cls, _placeholder)
        self.__setstate__((func, args, keywords, None))
        return self


def _placeholder(*args, **keywords):
    raise AssertionError("Partial placeholder called")  # replaced in __new__


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)


# ------------------------------------------------------- one level, broadcast

#: An entry of a key path (``SequenceKey``, ``DictKey``, ``GetAttrKey``, ...).
KeyEntry = TypeVar("KeyEntry", bound=Any)
#: A path of keys from the root of a pytree to one of its leaves.
KeyPath = tuple[KeyEntry, ...]


def is_tree_node(typ: type) -> bool:
    """Return whether ``typ`` is a pytree node type (jax.tree_util.is_tree_node).

    Registered types, the built-in containers and namedtuples are nodes.
    """
    return _kind_of(typ) is not None


def _one_level_kind(tree: Any) -> _NodeKind:
    kind = _kind_of(type(tree))
    if kind is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return kind


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Any]:
    """Return the children and aux data of the root of ``tree`` (jax.tree_util.flatten_one_level).

    Raises ValueError when ``tree`` is a leaf.
    """
    return _one_level_kind(tree).flatten(tree)


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[Any, Any]], Any]:
    """Return the (key, child) pairs and auxiliary data of the root of ``tree``
    (jax.tree_util.flatten_one_level_with_keys)."""
    return _one_level_kind(tree).flatten_with_keys(tree)


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """Repeat each leaf of ``prefix_tree`` over the subtree of ``full_tree`` it stands for
    (jax.tree_util.tree_broadcast); the result has ``full_tree``'s structure."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = _prefix_leaves(
        prefix_def, prefix_tree, full_tree, "broadcast_prefix prefix_tree", is_leaf
    )
    leaves = []
    for leaf, subtree in zip(prefix_leaves, subtrees, strict=True):
        leaves.extend([leaf] * tree_structure(subtree).num_leaves)
    return tree_unflatten(tree_structure(full_tree), leaves)


def tree_reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: Any,
    *,
    identity: Any = _NO_INITIALIZER,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Combine the leaves of ``tree`` pairwise, as a balanced tree of ``operation`` calls
    (jax.tree_util.tree_reduce_associative); ``operation`` must be associative."""

    def reduce(leaves: list) -> Any:
        if len(leaves) == 1:
            return leaves[0]
        half = len(leaves) // 2
        return operation(reduce(leaves[:half]), reduce(leaves[half:]))

    leaves = tree_leaves(tree, is_leaf)
    if leaves:
        return reduce(leaves)
    if identity is _NO_INITIALIZER:
        raise TypeError("Must specify identity for parallel reduction of empty sequence.")
    return identity


class PyTreeRegistry:
    """The pytree node types, as one object (jax.tree_util.default_registry's interface).

    JAX's is jaxlib's C++ registry; modjax's node types live in this module's
    tables, and every method here reads or extends them, so a type registered
    through the registry is a node for ``tree_flatten`` and the other way round.
    """

    def flatten(self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None):
        """Return ``(leaves, treedef)`` (``tree_flatten``)."""
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree: Any):
        """Return the root's ``(children, aux_data)``, or None if ``tree`` is a leaf."""
        kind = _kind_of(type(tree))
        return None if kind is None else kind.flatten(tree)

    def flatten_one_level_with_keys(self, tree: Any):
        """Return the root's ``((key, child) pairs, aux_data)``, or None if ``tree`` is a leaf."""
        kind = _kind_of(type(tree))
        return None if kind is None else kind.flatten_with_keys(tree)

    def flatten_with_path(
        self, tree: Any, leaf_predicate: Callable[[Any, Any], bool] | None = None
    ):
        """Return ``([(key_path, leaf)], treedef)``; ``leaf_predicate(path, value)`` stops early."""
        return tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def is_node(self, type: type) -> bool:  # noqa: A002  (JAX's parameter name)
        """Return whether ``type`` is a pytree node type (not a leaf)."""
        return is_tree_node(type)

    def register_node(
        self,
        type: type,  # noqa: A002
        to_iterable: Callable,
        from_iterable: Callable,
        to_iterable_with_keys: Callable | None = None,
    ) -> None:
        """Register ``type`` as a node (``register_pytree_node``); ValueError if it is one."""
        register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(
        self,
        type: type,  # noqa: A002
        data_fields: Iterable[str],
        meta_fields: Iterable[str],
    ) -> None:
        """Register a dataclass whose ``data_fields`` are children (``register_dataclass``)."""
        register_dataclass(type, data_fields, meta_fields)


#: The registry of pytree node types (jax.tree_util.default_registry).
default_registry = PyTreeRegistry()
