"""Shardings in types with a stand-in sharding class: rules, printing, errors, equality."""

from __future__ import annotations

import numpy as np
import pytest

from modjax.tracecore import Primitive, ShapedArray, make_jaxpr
from modjax.tracecore.sharding_types import (
    ShardingTypeError,
    cumulative_rule,
    dot_general_rule,
    reduce_rule,
    reshape_rule,
    sharding_rules,
    sort_rule,
    varying_shape_rule,
)


class Mesh:
    """What the rules read of a mesh: the size of each axis."""

    shape = {"x": 2, "y": 4}


class Spec:
    """The least a sharding in a type provides: ``spec``, ``update(spec=)`` and ``mesh.shape``."""

    mesh = Mesh()

    def __init__(self, *spec):
        self.spec = tuple(spec)

    def update(self, *, spec):
        return Spec(*spec)

    def __eq__(self, other):
        return isinstance(other, Spec) and self.spec == other.spec

    def __hash__(self):
        return hash(self.spec)


def f32(shape, *spec):
    return ShapedArray(shape, np.float32, sharding=Spec(*spec) if spec else None)


add_p = Primitive("test_sharding_add")
add_p.def_abstract_eval(lambda x, y: ShapedArray(x.shape, x.dtype))
sum_p = Primitive("test_sharding_sum")
sum_p.def_abstract_eval(
    lambda x, *, axes: ShapedArray(
        tuple(n for i, n in enumerate(x.shape) if i not in axes), x.dtype
    )
)
sharding_rules[sum_p] = reduce_rule


def test_printing_equality_and_hash():
    a = f32((8, 4), "x", None)
    assert a.str_short(short_dtypes=True) == "f32[8@x,4]"
    assert f32((8, 4), ("x", "y"), None).str_short() == "float32[8@(x,y),4]"
    assert a != f32((8, 4)) and a == f32((8, 4), "x", None)
    assert hash(a) == hash(f32((8, 4), "x", None))
    assert a.update(dtype=np.int32).type_sharding == a.type_sharding
    assert a.update(shape=(4, 8)).type_sharding is None
    assert a.strip_weak_type() is a


def test_sharding_is_jaxs_view_of_the_type_sharding(monkeypatch):
    from modjax.tracecore import abstract

    a = f32((8, 4), "x", None)
    assert a.sharding is a.type_sharding
    # With no mesh class installed, an unsharded type reports None...
    monkeypatch.setattr(abstract, "_unsharded_sharding", [None])
    assert f32((3,)).sharding is None
    # ...and with one, what it makes for the rank (JAX's empty-mesh NamedSharding).
    monkeypatch.setattr(abstract, "_unsharded_sharding", [lambda ndim: ("unsharded", ndim)])
    assert f32((3, 2)).sharding == ("unsharded", 2) and f32((3, 2)).type_sharding is None
    # A sharding on a mesh with no axes is no sharding in the type: it round-trips.
    empty = Spec(None)
    empty.mesh = type("EmptyMesh", (), {"axis_names": ()})()
    assert f32((3,)).update(sharding=empty) == f32((3,))
    assert ShapedArray((3,), np.float32, sharding=empty).type_sharding is None


def test_elementwise_and_reduce_rules_while_tracing():
    x = f32((8, 4), "x", None)
    y = f32((8, 4), None, "y")
    jaxpr = make_jaxpr(lambda x, y: sum_p.bind(add_p.bind(x, y), axes=(0,)))(x, y)
    assert "c:f32[8@x,4@y] = test_sharding_add a b" in str(jaxpr), str(jaxpr)
    assert "d:f32[4@y] = test_sharding_sum" in str(jaxpr), str(jaxpr)
    with pytest.raises(ShardingTypeError, match="incompatible shardings for broadcasting"):
        make_jaxpr(add_p.bind)(x, f32((8, 4), "y", None))
    # An axis used by two dimensions is an error too.
    with pytest.raises(ShardingTypeError):
        make_jaxpr(add_p.bind)(x, f32((8, 4), None, "x"))


def test_unsharded_programs_keep_unsharded_types():
    jaxpr = make_jaxpr(add_p.bind)(f32((3,)), f32((3,)))
    assert jaxpr.jaxpr.outvars[0].aval.type_sharding is None


def test_dot_general_rule():
    numbers = (((1,), (0,)), ((), ()))
    out = ShapedArray((8, 16), np.float32)
    got = dot_general_rule([f32((8, 4), "x", None), f32((4, 16), None, "y")], out,
                           dimension_numbers=numbers)  # fmt: skip
    assert got.type_sharding.spec == ("x", "y")
    with pytest.raises(ShardingTypeError, match="ambiguous"):
        dot_general_rule([f32((8, 4), None, "x"), f32((4, 16), "x", None)], out,
                         dimension_numbers=numbers)  # fmt: skip
    with pytest.raises(ShardingTypeError, match="illegally sharded result"):
        dot_general_rule([f32((8, 4), "x", None), f32((4, 16), None, "x")], out,
                         dimension_numbers=numbers)  # fmt: skip


def _reshaped(x, *new_sizes):
    out = reshape_rule([x], ShapedArray(new_sizes, np.float32), new_sizes=new_sizes)
    return out.type_sharding.spec


def test_reshape_rule():
    x = f32((8, 4), "x", None)
    assert _reshaped(x, 1, 8, 4) == (None, "x", None)
    # One run of dimensions split or merged, the axes on its major part (JAX's rule).
    assert _reshaped(x, 32) == ("x",)
    assert _reshaped(x, 2, 4, 4) == ("x", None, None)
    assert _reshaped(f32((8, 4), ("x", "y"), None), 2, 4, 4) == ("x", "y", None)
    assert _reshaped(f32((2, 4, 3), "x", "y", None), 8, 3) == (("x", "y"), None)
    for shape, spec, new in (
        ((8, 4), (None, "x"), (32,)),  # the unsharded part leads: the axes would move
        ((8, 4), (("x", "y"), None), (4, 8)),  # neither a split nor a merge
        ((4, 4), ("y", None), (2, 8)),  # 2 is not divisible by y's 4
        ((8, 6), ("x", None), (2, 4, 2, 3)),  # two splits at once
    ):
        with pytest.raises(ShardingTypeError, match="reshape is not supported"):
            reshape_rule([f32(shape, *spec)], ShapedArray(new, np.float32), new_sizes=new)


def test_rules_that_need_an_unsharded_dimension():
    x = f32((8, 4), "x", None)
    assert cumulative_rule([x], ShapedArray((8, 4), np.float32), axis=1).type_sharding.spec == (
        "x",
        None,
    )
    with pytest.raises(ShardingTypeError, match="unsharded over the axis being reduced"):
        cumulative_rule([x], ShapedArray((8, 4), np.float32), axis=0)
    with pytest.raises(ShardingTypeError, match="unsharded over the sorting dimension"):
        sort_rule([x], [ShapedArray((8, 4), np.float32)], dimension=0)
    (out,) = sort_rule([x, f32((8, 4))], [ShapedArray((8, 4), np.float32)] * 2, dimension=1)[:1]
    assert out.type_sharding.spec == ("x", None)


def test_slicing_keeps_divisible_entries():
    rule = varying_shape_rule("slicing")
    x = f32((8, 8), "x", "y")
    assert rule([x], ShapedArray((4, 4), np.float32)).type_sharding.spec == ("x", "y")
    with pytest.raises(ShardingTypeError, match=r"out dim \(1\) is not divisible by mesh axes"):
        rule([x], ShapedArray((1, 8), np.float32))
