"""Shardings in types with a stand-in sharding class: rules, printing, errors, equality."""

from __future__ import annotations

import numpy as np
import pytest

from modjax.tracecore import Primitive, ShapedArray, make_jaxpr
from modjax.tracecore.sharding_types import (
    ShardingTypeError,
    dot_general_rule,
    reduce_rule,
    reshape_rule,
    sharding_rules,
)


class Spec:
    """The least a sharding in a type provides: ``spec`` and ``update(spec=)``."""

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
    assert a.update(dtype=np.int32).sharding == a.sharding
    assert a.update(shape=(4, 8)).sharding is None
    assert a.strip_weak_type() is a


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
    assert jaxpr.jaxpr.outvars[0].aval.sharding is None


def test_dot_general_rule():
    numbers = (((1,), (0,)), ((), ()))
    out = ShapedArray((8, 16), np.float32)
    got = dot_general_rule([f32((8, 4), "x", None), f32((4, 16), None, "y")], out,
                           dimension_numbers=numbers)  # fmt: skip
    assert got.sharding.spec == ("x", "y")
    with pytest.raises(ShardingTypeError, match="ambiguous"):
        dot_general_rule([f32((8, 4), None, "x"), f32((4, 16), "x", None)], out,
                         dimension_numbers=numbers)  # fmt: skip
    with pytest.raises(ShardingTypeError, match="illegally sharded result"):
        dot_general_rule([f32((8, 4), "x", None), f32((4, 16), None, "x")], out,
                         dimension_numbers=numbers)  # fmt: skip


def test_reshape_rule():
    x = f32((8, 4), "x", None)
    out = reshape_rule([x], ShapedArray((1, 8, 4), np.float32), new_sizes=(1, 8, 4))
    assert out.sharding.spec == (None, "x", None)
    with pytest.raises(ShardingTypeError, match="reshape is not supported"):
        reshape_rule([x], ShapedArray((32,), np.float32), new_sizes=(32,))
