"""Tests of modjax.tracecore.tree_util and modjax.tracecore.tree (JAX pytree semantics)."""

import collections
import dataclasses
import functools
import operator
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.tracecore import tree, tree_util
from modjax.tracecore.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    PyTreeDef,
    SequenceKey,
    keystr,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

# ------------------------------------------------------------ node types used below

Point = collections.namedtuple("Point", ["x", "y"])


class Box:
    """A custom node registered without keys; `label` is its aux data."""

    def __init__(self, label, value):
        self.label, self.value = label, value

    def __eq__(self, other):
        return type(other) is Box and (self.label, self.value) == (other.label, other.value)

    def __repr__(self):
        return f"Box({self.label!r}, {self.value!r})"


tree_util.register_pytree_node(
    Box, lambda b: ((b.value,), b.label), lambda label, children: Box(label, *children)
)


class Pair:
    """A custom node registered with named children."""

    def __init__(self, left, right):
        self.left, self.right = left, right

    def __eq__(self, other):
        return type(other) is Pair and (self.left, self.right) == (other.left, other.right)


tree_util.register_pytree_with_keys(
    Pair,
    lambda p: (((GetAttrKey("left"), p.left), (GetAttrKey("right"), p.right)), None),
    lambda _, children: Pair(*children),
)


@tree_util.register_pytree_node_class
class Tagged:
    def __init__(self, tag, items):
        self.tag, self.items = tag, items

    def tree_flatten(self):
        return self.items, self.tag

    @classmethod
    def tree_unflatten(cls, tag, children):
        return cls(tag, list(children))

    def __eq__(self, other):
        return type(other) is Tagged and (self.tag, self.items) == (other.tag, other.items)


@tree_util.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata={"static": True})


@tree_util.register_static
@dataclasses.dataclass(frozen=True)
class Config:
    depth: int


class Result:
    """An unregistered class, hence a leaf."""

    def __init__(self, value):
        self.value = value


# ------------------------------------------------------------------ strategies

LEAVES = st.one_of(st.integers(-5, 5), st.text(max_size=2), st.booleans(), st.just(None))
KEYS = st.text("abc", min_size=1, max_size=2)


def _nodes(children):
    dicts = st.dictionaries(KEYS, children, max_size=3)
    return st.one_of(
        st.tuples(children, children),
        st.lists(children, max_size=3),
        dicts,
        dicts.map(lambda d: collections.OrderedDict(reversed(list(d.items())))),
        dicts.map(lambda d: collections.defaultdict(list, d)),
        st.builds(Point, children, children),
        st.builds(Box, st.sampled_from(["u", "v"]), children),
        st.builds(Pair, children, children),
        st.builds(Tagged, st.integers(0, 2), st.lists(children, max_size=2)),
        st.builds(Params, children, children, st.sampled_from(["p", "q"])),
        st.builds(Config, st.integers(0, 3)),
    )


TREES = st.recursive(LEAVES, _nodes, max_leaves=12)


def same(a, b):
    """Compare trees strictly: equal values and identical node types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        # Unflatten rebuilds dict and defaultdict in sorted key order, as JAX does.
        ordered = type(a) is collections.OrderedDict
        return (
            (list(a) == list(b) if ordered else a.keys() == b.keys())
            and getattr(a, "default_factory", None) is getattr(b, "default_factory", None)
            and all(same(a[k], b[k]) for k in a)
        )
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, Box | Pair | Tagged | Params):
        return all(same(x, y) for x, y in zip(vars(a).values(), vars(b).values(), strict=True))
    return a == b


# How a test follows one key of a path down a tree.
_FOLLOW = {
    SequenceKey: lambda node, k: node[k.idx],
    DictKey: lambda node, k: node[k.key],
    GetAttrKey: lambda node, k: getattr(node, k.name),
    FlattenedIndexKey: lambda node, k: _UNKEYED_CHILDREN[type(node)](node)[k.key],
}
# Children of the node types registered without keys.
_UNKEYED_CHILDREN = {Box: lambda b: (b.value,), Tagged: lambda t: t.items}


def follow(node, path):
    for key in path:
        node = _FOLLOW[type(key)](node, key)
    return node


# -------------------------------------------------------------- property tests


@settings(max_examples=examples(300), deadline=None)
@given(TREES)
def test_unflatten_inverts_flatten(t):
    leaves, treedef = tree_flatten(t)
    assert treedef.num_leaves == len(leaves)
    assert same(tree_unflatten(treedef, leaves), t)
    assert same(treedef.unflatten(iter(leaves)), t)


@settings(max_examples=examples(150), deadline=None)
@given(TREES)
def test_equal_structures_have_equal_treedefs_and_hashes(t):
    treedef = tree_structure(t)
    rebuilt = tree_unflatten(treedef, range(treedef.num_leaves))
    again = tree_structure(rebuilt)
    assert again == treedef and hash(again) == hash(treedef)
    assert repr(again) == repr(treedef)
    assert pickle.loads(pickle.dumps(treedef)) == treedef


def test_treedef_with_unhashable_aux_data_hashes_as_in_jax():
    # JAX hashes a treedef whatever its node data; equinox passes such treedefs to jit
    # as static arguments (lists in static fields).
    a, b, c = (tree_structure([Box([1, 2], 0), {"k": Box([3], 1)}]) for _ in range(3))
    assert hash(a) == hash(b) and a == b
    other = tree_structure([Box([1, 3], 0), {"k": Box([3], 1)}])
    assert other != a
    assert {a: "cached"}[c] == "cached"
    assert hash(tree_structure(Box(["x"], 0))) == hash(tree_structure(Box(["x"], 0)))


@settings(max_examples=examples(150), deadline=None)
@given(TREES)
def test_paths_lead_to_their_leaves(t):
    pairs, treedef = tree_util.tree_flatten_with_path(t)
    assert [leaf for _, leaf in pairs] == tree_leaves(t)
    assert treedef == tree_structure(t)
    for path, leaf in pairs:
        assert follow(t, path) is leaf


@settings(max_examples=examples(100), deadline=None)
@given(TREES)
def test_map_applies_to_every_leaf_and_keeps_structure(t):
    n = tree_structure(t).num_leaves
    numbered = tree_unflatten(tree_structure(t), range(n))
    # Results are wrapped in a list inside an unregistered class, so they stay leaves.
    mapped = tree_map(lambda a, b: Result([a, b]), numbered, t)
    assert tree_structure(mapped) == tree_structure(t)
    assert [r.value for r in tree_leaves(mapped)] == [[i, x] for i, x in enumerate(tree_leaves(t))]


@settings(max_examples=examples(100), deadline=None)
@given(TREES)
def test_children_and_num_nodes_add_up(t):
    treedef = tree_structure(t)
    kids = tree_util.treedef_children(treedef)
    if tree_util.treedef_is_leaf(treedef):
        assert kids == [] and treedef.num_nodes == 1
    else:
        assert sum(k.num_leaves for k in kids) == treedef.num_leaves
        assert 1 + sum(k.num_nodes for k in kids) == treedef.num_nodes


@settings(max_examples=examples(80), deadline=None)
@given(TREES, st.integers(1, 3))
def test_transpose_swaps_levels_and_back(t, k):
    inner = tree_structure(t)
    n = inner.num_leaves
    stacked = [tree_unflatten(inner, range(i * n, (i + 1) * n)) for i in range(k)]
    outer = tree_structure([0] * k)
    swapped = tree_util.tree_transpose(outer, inner, stacked)
    # Inner leaf j becomes the list of the j-th leaves of every outer entry.
    assert inner.flatten_up_to(swapped) == [[j + i * n for i in range(k)] for j in range(n)]
    assert same(tree_util.tree_transpose(inner, outer, swapped), stacked)


# ------------------------------------------------------------------ flattening


def test_builtin_containers_flatten_in_jax_order():
    d = {"b": 1, "a": 2}
    assert tree_leaves(d) == [2, 1]  # sorted keys
    assert tree_leaves(collections.OrderedDict(d)) == [1, 2]  # insertion order
    assert tree_leaves(collections.defaultdict(list, d)) == [2, 1]
    assert tree_leaves([1, (2, Point(3, 4))]) == [1, 2, 3, 4]


def test_none_is_an_empty_node_unless_is_leaf_says_otherwise():
    assert tree_leaves([None, 1]) == [1]
    assert tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tree_structure(None).num_leaves == 0
    assert tree_unflatten(tree_structure(None), []) is None


def test_is_leaf_stops_the_descent():
    t = [1, (2, 3), {"a": (4,)}]
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tree_leaves(t, is_leaf=is_tuple) == [1, (2, 3), (4,)]
    assert repr(tree_structure(t, is_leaf=is_tuple)) == "PyTreeDef([*, *, {'a': *}])"


def test_unregistered_and_subclassed_types_are_leaves():
    class MyDict(dict):
        pass

    assert tree_leaves([MyDict(a=1), {1, 2}, "ab"]) == [MyDict(a=1), {1, 2}, "ab"]


def test_a_type_seen_as_leaf_becomes_a_node_once_registered():
    class Late:
        def __init__(self, v):
            self.v = v

    assert tree_structure(Late(1)).num_leaves == 1 and tree_leaves(Late(1))[0].v == 1
    tree_util.register_pytree_node(Late, lambda x: ((x.v,), None), lambda _, c: Late(*c))
    assert tree_leaves([Late(5)]) == [5]


def test_namedtuple_kinds_survive_a_cache_trim(monkeypatch):
    before = tree_structure(Point(1, 2))
    monkeypatch.setattr(tree_util, "_CACHE_LIMIT", 0)
    tree_leaves(type("Fresh", (), {})())  # classifying a new type trims the caches
    assert tree_structure(Point(1, 2)) == before
    assert tree_leaves([1.5, Point(1, 2)]) == [1.5, 1, 2]


def test_flatten_rejects_unorderable_dict_keys():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree"):
        tree_flatten({1: "x", "a": "y"})


# --------------------------------------------------------------------- treedefs


@pytest.mark.parametrize(
    "value, text",
    [
        ((1, {"a": 2, "b": None}), "PyTreeDef((*, {'a': *, 'b': None}))"),
        ((1,), "PyTreeDef((*,))"),
        ([], "PyTreeDef([])"),
        (7, "PyTreeDef(*)"),
        (None, "PyTreeDef(None)"),
        (Point(1, 2), "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
        (
            collections.OrderedDict(b=1, a=2),
            "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))",
        ),
        (
            collections.defaultdict(list, b=1, a=2),
            "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))",
        ),
        (Box("u", [1]), "PyTreeDef(CustomNode(Box[u], [[*]]))"),  # str(aux), as JAX
        (Params(1, 2), "PyTreeDef(CustomNode(Params[('p',)], [*, *]))"),
    ],
)
def test_treedef_repr(value, text):
    assert repr(tree_structure(value)) == text


@pytest.mark.parametrize(
    "a, b",
    [
        ([1], (1,)),
        ({"a": 1}, {"b": 1}),
        ({"a": 1}, collections.OrderedDict(a=1)),
        (collections.OrderedDict(a=1, b=2), collections.OrderedDict(b=2, a=1)),
        (collections.defaultdict(list, a=1), collections.defaultdict(int, a=1)),
        (Point(1, 2), (1, 2)),
        (Point(1, 2), collections.namedtuple("Point", "x y")(1, 2)),
        (Box("u", 1), Box("v", 1)),
        (Params(1, 2, "p"), Params(1, 2, "q")),
        (Config(1), Config(2)),
        (None, ()),
        ([1, 2], [1, [2]]),
    ],
)
def test_different_structures_give_unequal_treedefs(a, b):
    assert tree_structure(a) != tree_structure(b)


def test_treedef_equality_ignores_leaves_and_works_as_a_dict_key():
    cache = {tree_structure((1, {"a": 2})): "hit"}
    assert cache[tree_structure(("x", {"a": [3, 4]}), is_leaf=lambda x: type(x) is list)] == "hit"
    assert tree_structure([1]) != 3


def test_treedef_accessors():
    treedef = tree_structure((1, {"a": [2, 3]}))
    assert (treedef.num_leaves, treedef.num_nodes) == (3, 6)
    assert treedef.node_data() == (tuple, None)
    assert treedef.children()[1].node_data() == (dict, ("a",))
    assert tree_structure(1).node_data() is None and tree_structure(1).children() == []
    assert tree_util.treedef_children(treedef) == [tree_structure(0), tree_structure({"a": [0, 0]})]
    assert tree_util.treedef_tuple(treedef.children()) == treedef
    assert [tree_util.treedef_is_leaf(tree_structure(x)) for x in (1, None, (), [1])] == [
        True,
        True,
        True,
        False,
    ]


def test_compose_puts_the_inner_treedef_at_each_leaf():
    outer, inner = tree_structure([0, 0]), tree_structure((0, {"k": 0}))
    assert outer.compose(inner) == tree_structure([(1, {"k": 2}), (3, {"k": 4})])


def test_unflatten_with_the_wrong_number_of_leaves_fails():
    treedef = tree_structure((1, {"a": 2}))
    with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; expected 2, got 1$"):
        tree_unflatten(treedef, [1])
    with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; expected 1\.$"):
        tree_unflatten(tree_structure(0), [1, 2])


# -------------------------------------------------------------- map and prefix


def test_map_over_several_trees():
    assert tree_map(lambda a, b, c: a + b * c, [1, {"x": 2}], [3, {"x": 4}], [5, {"x": 6}]) == [
        16,
        {"x": 26},
    ]


def test_a_leaf_of_the_first_tree_matches_a_whole_subtree_of_the_others():
    assert tree_map(lambda a, b: (a, b), [1, 2], [(3, 4), {"x": 5}]) == [
        (1, (3, 4)),
        (2, {"x": 5}),
    ]
    assert tree_structure([1, 2]).flatten_up_to([(1, 2), {"a": 3}]) == [(1, 2), {"a": 3}]


def test_map_with_is_leaf_passes_the_stopped_subtree():
    out = tree_map(
        lambda a, b: (a, b), [(1, 2), 3], [[5, 6], 7], is_leaf=lambda x: type(x) is tuple
    )
    assert out == [((1, 2), [5, 6]), (3, 7)]


# JAX 0.10.2's texts: tree_map searches for where the trees differ and names the key path.
_TYPES = "different types at key path\n    tree_map tree{}\nAt that key path, the prefix pytree"


@pytest.mark.parametrize(
    "first, other, message",
    [
        (
            (1, 2),
            (1, 2, 3),
            "pytree structure error: different lengths of tuple at key path\n    tree_map tree\n"
            "At that key path, the prefix pytree tree_map tree has a subtree of type tuple of "
            "length 2, but the full pytree has a subtree of the same type but of length 3.",
        ),
        (
            {"a": 1},
            {"b": 1},
            "pytree structure error: different pytree metadata at key path\n    tree_map tree\n"
            "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
            "    <class 'dict'>\nwith metadata\n    ('a',)\nbut at the same key path the full "
            "pytree has a subtree of the same type but with metadata\n    ('b',)\nso the diff "
            "in the metadata at these pytree nodes is\n    - ('a',)\n    ?   ^\n\n"
            "    + ('b',)\n    ?   ^\n",
        ),
        (
            {"a": 1},
            {"a": 1, "b": 2},
            "pytree structure error: different numbers of pytree children at key path\n"
            "    tree_map tree\nAt that key path, the prefix pytree tree_map tree has a subtree "
            "of type\n    <class 'dict'>\nwith 1 child keys\n    a\nbut at the same key path "
            "the full pytree has a subtree of the same type but with 2 child keys\n    a b\n"
            "so the symmetric difference on key sets is\n    b",
        ),
        ({"a": (1, 2)}, {"a": [1, 2]}, "pytree structure error: " + _TYPES.format("['a']")),
        ([None], [1], "pytree structure error: " + _TYPES.format("[0]")),
        ([Point(1, 2)], [(1, 2)], "pytree structure error: " + _TYPES.format("[0]")),
    ],
)
def test_map_structure_mismatch_is_jaxs_message(first, other, message):
    with pytest.raises(ValueError) as info:
        tree_map(lambda a, b: a, first, other)
    assert str(info.value).startswith(message)


def test_map_mismatch_of_custom_node_data_names_the_path():
    with pytest.raises(ValueError, match=r"metadata at key path\n    tree_map tree\['a'\]\[0\]"):
        tree_map(lambda a, b: a, {"a": [Box("u", 1)]}, {"a": [Box("v", 1)]})


@pytest.mark.parametrize(
    "prefix, tree, message",
    [
        ([0, 0], [1, 2, 3], "List arity mismatch: 3 != 2; list: [1, 2, 3]."),
        ((0, 0), (1,), "Tuple arity mismatch: 1 != 2; tuple: (1,)."),
        (
            {"a": 0},
            {"a": 1, "b": 2},
            "Dict key mismatch; expected keys: ['a']; present keys: ['a', 'b'].",
        ),
        ([0, 0], (1, 2), "Expected list, got (1, 2)."),
        ((0, 0), Point(1, 2), "Expected tuple, got Point(x=1, y=2)."),
        (Point(0, 0), (1, 2), "Expected named tuple, got (1, 2)."),
        ((0, {"b": Point((0, 0), 0)}), (0, {"b": Point([1, 2], 3)}), "Expected tuple, got [1, 2]."),
    ],
)
def test_flatten_up_to_raises_jaxs_message(prefix, tree, message):
    with pytest.raises(ValueError) as info:
        tree_structure(prefix).flatten_up_to(tree)
    assert str(info.value) == message


def test_flatten_up_to_none_prefix_explains_the_old_behaviour():
    with pytest.raises(ValueError, match=r"^Expected None, got 1\.\n\nIn previous releases"):
        tree_structure(None).flatten_up_to(1)


def test_map_with_path_and_keystr():
    out = tree_util.tree_map_with_path(
        lambda p, a, b: (keystr(p), a + b),
        {"a": [1], "b": Point(2, 3)},
        {"a": [10], "b": Point(4, 5)},
    )
    assert out == {"a": [("['a'][0]", 11)], "b": Point(("['b'].x", 6), ("['b'].y", 8))}


def test_key_classes_print_like_jax():
    keys = (SequenceKey(0), DictKey("a"), GetAttrKey("x"), FlattenedIndexKey(3))
    assert [str(k) for k in keys] == ["[0]", "['a']", ".x", "[<flat index 3>]"]
    assert [repr(k) for k in keys] == [
        "SequenceKey(idx=0)",
        "DictKey(key='a')",
        "GetAttrKey(name='x')",
        "FlattenedIndexKey(key=3)",
    ]
    assert keystr(keys) == "[0]['a'].x[<flat index 3>]"
    assert keystr(keys, simple=True, separator="/") == "0/a/x/3"
    assert keystr(()) == ""
    assert SequenceKey(1) == SequenceKey(1) != FlattenedIndexKey(1)
    assert pickle.loads(pickle.dumps(DictKey("k"))) == DictKey("k")


def test_paths_of_each_node_kind():
    t = [Box("u", 1), Pair(2, 3), Params(4, 5), collections.OrderedDict(z=6)]
    assert [keystr(p) for p, _ in tree_util.tree_leaves_with_path(t)] == [
        "[0][<flat index 0>]",
        "[1].left",
        "[1].right",
        "[2].w",
        "[2].b",
        "[3]['z']",
    ]


def test_is_leaf_takes_path():
    pairs = tree_util.tree_leaves_with_path(
        [1, [2, [3]]], is_leaf=lambda p, x: len(p) == 2, is_leaf_takes_path=True
    )
    assert pairs == [((SequenceKey(0),), 1), ((SequenceKey(1), SequenceKey(0)), 2),
                     ((SequenceKey(1), SequenceKey(1)), [3])]  # fmt: skip


# ------------------------------------------------------- reduce, all, transpose


def test_reduce_and_all():
    assert tree_util.tree_reduce(operator.add, [1, None, (2, {"a": 3})]) == 6
    assert tree_util.tree_reduce(operator.add, [], 10) == 10
    with pytest.raises(TypeError):
        tree_util.tree_reduce(operator.add, [])
    assert tree_util.tree_all([True, None, (1,)]) and tree_util.tree_all([])
    assert not tree_util.tree_all([1, (0,)])
    assert tree_util.all_leaves([1, "a", object()]) and not tree_util.all_leaves([1, (2,)])
    assert not tree_util.all_leaves([None])
    assert tree_util.all_leaves([None], is_leaf=lambda x: x is None)


def test_transpose_swaps_outer_and_inner_structures():
    outer, inner = tree_structure([0, 0]), tree_structure({"a": 0, "b": 0})
    pytree = [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    expected = {"a": [1, 3], "b": [2, 4]}
    assert tree_util.tree_transpose(outer, inner, pytree) == expected
    assert tree_util.tree_transpose(outer, None, pytree) == expected
    back = tree_util.tree_transpose(inner, outer, expected)
    assert back == pytree


def test_transpose_rejects_a_ragged_pytree():
    with pytest.raises(TypeError) as info:
        tree_util.tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3,)])
    assert (
        str(info.value) == "Mismatch\nPyTreeDef([(*, *), (*,)])\n != \nPyTreeDef([(*, *), (*, *)])"
    )


# ------------------------------------------------------------------ registration


def test_registering_a_type_twice_fails():
    with pytest.raises(ValueError, match="already registered"):
        tree_util.register_pytree_node(Box, lambda b: ((), None), lambda a, c: Box("", None))
    with pytest.raises(ValueError, match="already registered"):
        tree_util.register_static(tuple)


def test_custom_unflatten_gets_children_as_a_tuple():
    seen = []

    class Spy:
        pass

    tree_util.register_pytree_node(
        Spy, lambda s: ([1, 2], None), lambda _, ch: seen.append(type(ch)) or Spy()
    )
    tree_unflatten(tree_structure(Spy()), [3, 4])
    assert seen == [tuple]


def test_register_dataclass_infers_fields_from_metadata():
    leaves, treedef = tree_flatten(Params(1, [2], "q"))
    assert leaves == [1, 2] and treedef.node_data() == (Params, ("q",))
    assert tree_map(lambda x: x * 10, Params(1, [2], "q")) == Params(10, [20], "q")


def test_register_dataclass_with_explicit_and_dropped_fields():
    @functools.partial(tree_util.register_dataclass, data_fields=["x"], meta_fields=["m"])
    @dataclasses.dataclass(frozen=True)
    class Frozen:
        x: int
        m: str

    @dataclasses.dataclass
    class Derived:
        x: int
        cached: int = dataclasses.field(default=0, init=False)

        def __post_init__(self):
            self.cached = self.x * 2

    tree_util.register_dataclass(Derived)  # init=False fields are left out
    assert tree_map(lambda v: v + 1, Frozen(1, "s")) == Frozen(2, "s")
    assert tree_leaves(Derived(3)) == [3]
    assert tree_map(lambda v: v + 1, Derived(3)).cached == 8


def test_register_dataclass_on_a_plain_class_with_field_lists():
    class Plain:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tree_util.register_dataclass(Plain, data_fields=["a"], meta_fields=["b"])
    out = tree_map(lambda v: -v, Plain(1, "k"))
    assert (out.a, out.b) == (-1, "k")


def test_register_dataclass_rejects_bad_field_lists():
    @dataclasses.dataclass
    class D:
        x: int
        y: int

    with pytest.raises(ValueError, match=r"missing \['y'\]"):
        tree_util.register_dataclass(D, data_fields=["x"], meta_fields=[])
    with pytest.raises(ValueError, match=r"unexpected \['y'\]"):
        tree_util.register_dataclass(D, data_fields=["x"], meta_fields=["y"], drop_fields=["y"])
    with pytest.raises(TypeError, match="both data_fields and meta_fields"):
        tree_util.register_dataclass(D, data_fields=["x", "y"])
    with pytest.raises(TypeError, match="not a dataclass"):
        tree_util.register_dataclass(int)


def test_register_static_keeps_the_instance_in_the_treedef():
    leaves, treedef = tree_flatten([Config(2), 1])
    assert leaves == [1]
    assert tree_unflatten(treedef, [5]) == [Config(2), 5]
    assert tree_structure(Config(2)) == tree_structure(Config(2))

    class Unhashable:
        __hash__ = None

    with pytest.raises(TypeError, match="must be hashable"):
        tree_util.register_static(Unhashable)


def test_register_pytree_with_keys_class():
    @tree_util.register_pytree_with_keys_class
    class Named:
        def __init__(self, **kw):
            self.kw = kw

        def tree_flatten_with_keys(self):
            keys = sorted(self.kw)
            return [(GetAttrKey(k), self.kw[k]) for k in keys], tuple(keys)

        @classmethod
        def tree_unflatten(cls, keys, children):
            return cls(**dict(zip(keys, children, strict=True)))

    pairs = tree_util.tree_leaves_with_path(Named(b=1, a=2))
    assert [(keystr(p), v) for p, v in pairs] == [(".a", 2), (".b", 1)]
    assert tree_map(lambda v: v * 3, Named(b=1)).kw == {"b": 3}


# ---------------------------------------------------------------------- Partial


def test_partial_args_are_leaves_and_func_is_static():
    p = Partial(max, 1, key=None)
    leaves, treedef = tree_flatten(p)
    assert leaves == [1]
    assert treedef.node_data() == (Partial, max)
    assert tree_map(lambda x: x + 5, p)(3) == 6
    assert tree_structure(Partial(max, 1)) != tree_structure(Partial(min, 1))
    assert pickle.loads(pickle.dumps(p))(3) == 3


def test_partial_of_a_partial_keeps_the_inner_one_static():
    inner = Partial(max, 1)
    outer = Partial(inner, 7)
    assert outer.func is inner and outer.args == (7,)
    assert tree_leaves(outer) == [7]
    assert outer(3) == 7
    with pytest.raises(TypeError, match="must be callable"):
        Partial(3, 4)


# ------------------------------------------------------------- jax.tree mirror


def test_tree_namespace_delegates():
    t = {"a": [1, 2], "b": (3,)}
    leaves, treedef = tree.flatten(t)
    assert leaves == tree.leaves(t) == [1, 2, 3]
    assert tree.structure(t) == treedef
    assert tree.unflatten(treedef, leaves) == t
    assert tree.map(lambda x, y: x + y, t, t) == {"a": [2, 4], "b": (6,)}
    assert tree.reduce(operator.mul, t) == 6 and tree.reduce(operator.mul, t, 2) == 12
    assert tree.all(t) and not tree.all([0])
    assert tree.transpose(tree.structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert [keystr(p) for p, _ in tree.leaves_with_path(t)] == ["['a'][0]", "['a'][1]", "['b'][0]"]
    assert tree.flatten_with_path(t)[1] == treedef
    assert tree.map_with_path(lambda p, x: len(p), t) == {"a": [2, 2], "b": (2,)}


@pytest.mark.parametrize(
    "module, names",
    [(tree_util, tree_util.__all__), (tree, tree.__all__)],
    ids=["tree_util", "tree"],
)
def test_public_names_have_docstrings_naming_the_jax_counterpart(module, names):
    missing = [n for n in names if "jax.tree" not in (getattr(module, n).__doc__ or "")]
    assert missing == []
    assert isinstance(tree_structure(0), PyTreeDef)


def test_one_level_flattening_and_node_types():
    from modjax.tracecore import tree_util as tu

    children, aux = tu.flatten_one_level({"b": [2, 3], "a": 1})
    assert list(children) == [1, [2, 3]] and aux == ("a", "b")
    keyed, _ = tu.flatten_one_level_with_keys({"b": [2, 3], "a": 1})
    assert [k for k, _ in keyed] == [tu.DictKey("a"), tu.DictKey("b")]
    assert tu.flatten_one_level(None) == ((), None)
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)
    assert tu.is_tree_node(list) and tu.is_tree_node(type(None)) and not tu.is_tree_node(int)


def test_broadcast_and_associative_reduce():
    from modjax.tracecore import tree
    from modjax.tracecore import tree_util as tu

    assert tu.tree_broadcast([1, {"a": 2}], [[3, 4], {"a": (5, 6)}]) == [[1, 1], {"a": (2, 2)}]
    assert tree.broadcast(0, {"x": (1, 2)}) == {"x": (0, 0)}
    with pytest.raises(
        ValueError, match="different lengths of list at key path\n    broadcast_prefix"
    ):
        tu.tree_broadcast([1, 2], [3])
    calls = []

    def concat(a, b):
        calls.append((a, b))
        return a + b

    assert tu.tree_reduce_associative(concat, ["a", "b", "c", "d"]) == "abcd"
    assert calls[-1] == ("ab", "cd")  # a balanced tree of calls, not a left fold
    assert tree.reduce_associative(concat, [], identity="") == ""
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(concat, [])


def test_static_dataclass_fields():
    import dataclasses

    from modjax.tracecore import tree
    from modjax.tracecore import tree_util as tu

    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        name: str = tree.static(default="add")

    leaves, treedef = tu.tree_flatten(Op(1.0))
    assert leaves == [1.0] and tu.tree_unflatten(treedef, [2.0]) == Op(2.0, "add")
