"""Deep pytrees: JAX handles trees nested about 800 levels deep; so does modjax (and deeper).

The walks recurse for speed and run again with room for more levels when a
tree is deeper than the recursion limit allows (tree_util.DEEP_TREE_LEVELS).
"""

import collections
import pickle
import sys

import pytest

from modjax.tracecore import tree_util

DEPTH = 800


def nest(kind: str, depth: int, leaf=1.0):
    """Return ``leaf`` wrapped ``depth`` times in one-child nodes of ``kind``."""
    wrap = {
        "list": lambda t: [t],
        "tuple": lambda t: (t,),
        "dict": lambda t: {"a": t},
        "ordered": lambda t: collections.OrderedDict(a=t),
        "pair": lambda t: (t, 2.0),
    }[kind]
    tree = leaf
    for _ in range(depth):
        tree = wrap(tree)
    return tree


KINDS = ["list", "tuple", "dict", "ordered", "pair"]


@pytest.mark.parametrize("kind", KINDS)
def test_flatten_unflatten_round_trip_at_depth(kind):
    tree = nest(kind, DEPTH)
    leaves, treedef = tree_util.tree_flatten(tree)
    assert leaves[0] == 1.0 and len(leaves) == (DEPTH + 1 if kind == "pair" else 1)
    assert treedef.unflatten(leaves) == tree
    assert treedef.num_nodes > DEPTH
    again = tree_util.tree_structure(nest(kind, DEPTH))
    assert treedef == again and hash(treedef) == hash(again)
    assert treedef != tree_util.tree_structure(nest(kind, DEPTH - 1))
    assert repr(treedef).count("*") == len(leaves)
    assert pickle.loads(pickle.dumps(treedef)) == treedef


@pytest.mark.parametrize("kind", KINDS)
def test_map_with_path_and_prefix_at_depth(kind):
    tree = nest(kind, DEPTH)
    doubled = tree_util.tree_map(lambda x: 2 * x, tree)
    assert tree_util.tree_leaves(doubled)[0] == 2.0
    summed = tree_util.tree_map(lambda x, y: x + y, tree, doubled)
    assert tree_util.tree_leaves(summed)[0] == 3.0
    pairs, _ = tree_util.tree_flatten_with_path(tree)
    assert len(pairs[0][0]) == DEPTH
    assert tree_util.tree_leaves(tree, is_leaf=lambda x: x == 2.0)[0] == 1.0
    composed = tree_util.tree_structure(nest(kind, 3)).compose(tree_util.tree_structure(tree))
    assert composed.num_leaves >= 1


def test_the_recursion_limit_is_restored_and_deeper_trees_fail_cleanly():
    limit = sys.getrecursionlimit()
    tree_util.tree_flatten(nest("list", DEPTH))
    assert sys.getrecursionlimit() == limit
    too_deep = nest("list", limit + tree_util.DEEP_TREE_LEVELS * 3)
    with pytest.raises(RecursionError):
        tree_util.tree_flatten(too_deep)
    assert sys.getrecursionlimit() == limit
