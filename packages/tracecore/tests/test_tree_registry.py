"""tree_util.default_registry: JAX's registry interface over tracecore's node tables.

Expected values are JAX 0.10.2's answers for the same calls.
"""

from __future__ import annotations

import dataclasses

import pytest

from modjax.tracecore import tree_util as tu

registry = tu.default_registry
TREE = {"a": [1, 2], "b": (3, None)}


def test_flattening_through_the_registry_is_tree_flatten():
    assert registry.flatten(TREE) == tu.tree_flatten(TREE)
    leaves, _ = registry.flatten(TREE, lambda x: isinstance(x, list))
    assert leaves == [[1, 2], 3]
    assert list(registry.flatten_one_level(TREE)[0]) == [[1, 2], (3, None)]
    assert registry.flatten_one_level(TREE)[1] == ("a", "b")
    assert registry.flatten_one_level(1) is None
    assert tuple(registry.flatten_one_level(None)[0]) == ()
    pairs, aux = registry.flatten_one_level_with_keys([5])
    assert list(pairs) == [(tu.SequenceKey(0), 5)] and aux is None
    assert registry.flatten_one_level_with_keys(3) is None
    paths, treedef = registry.flatten_with_path(TREE)
    assert paths[0] == ((tu.DictKey("a"), tu.SequenceKey(0)), 1)
    assert treedef == tu.tree_structure(TREE)
    kept, _ = registry.flatten_with_path(TREE, lambda path, x: path == (tu.DictKey("a"),))
    assert kept[0] == ((tu.DictKey("a"),), [1, 2])


def test_node_types_registered_through_the_registry_are_pytrees():
    assert registry.is_node(dict) and registry.is_node(type(None)) and not registry.is_node(int)

    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

    registry.register_node(Pair, lambda p: ((p.x, p.y), "aux"), lambda aux, ch: Pair(*ch))
    assert registry.is_node(Pair) and tu.tree_leaves(Pair(1, 2)) == [1, 2]
    assert registry.flatten_one_level(Pair(1, 2)) == ((1, 2), "aux")
    pairs, _ = registry.flatten_one_level_with_keys(Pair(1, 2))
    assert list(pairs) == [(tu.FlattenedIndexKey(0), 1), (tu.FlattenedIndexKey(1), 2)]
    with pytest.raises(ValueError, match="already registered"):
        registry.register_node(Pair, lambda p: ((), None), lambda aux, ch: Pair(0, 0))

    @dataclasses.dataclass
    class Point:
        a: int
        b: int
        label: str

    registry.register_dataclass_node(Point, ["a", "b"], ["label"])
    leaves, treedef = tu.tree_flatten(Point(1, 2, "p"))
    assert leaves == [1, 2] and tu.tree_unflatten(treedef, [3, 4]) == Point(3, 4, "p")
