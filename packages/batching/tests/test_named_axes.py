"""Named axes: axis_index, the axis environment, and the hook collectives plug into."""

import numpy as np
import pytest
from batching_test_prims import add_p, mul_p, reduce_sum_p

from modjax.batching import (
    AxisData,
    axis_frames,
    axis_index,
    axis_index_p,
    axis_names,
    axis_primitive_batchers,
    axis_size,
    extend_axis_env,
    vmap,
)
from modjax.tracecore import Primitive, ShapedArray, call, make_jaxpr

X = np.zeros((3, 4), np.float32)


def _grid(x):
    return add_p.bind(mul_p.bind(axis_index("i"), 10), axis_index("j"))


def test_axis_index_under_nested_named_vmaps():
    want = 10 * np.arange(3)[:, None] + np.arange(4)[None, :]
    out = vmap(vmap(_grid, axis_name="j"), axis_name="i")(X)
    np.testing.assert_array_equal(out, want)
    # Mapping over the other axis first swaps the roles.
    out = vmap(vmap(_grid, axis_name="i"), axis_name="j")(X)
    np.testing.assert_array_equal(out, np.arange(3)[:, None] + 10 * np.arange(4)[None, :])
    closed = make_jaxpr(vmap(vmap(_grid, axis_name="j"), axis_name="i"))(X)
    assert closed.jaxpr.outvars[0].aval == ShapedArray((3, 4), np.int32, weak_type=False)


def test_axis_index_without_batched_inputs_and_out_axes():
    out = vmap(lambda: axis_index("k"), axis_name="k", axis_size=5)()
    np.testing.assert_array_equal(out, np.arange(5))
    out = vmap(lambda x: add_p.bind(x, axis_index("k")), in_axes=None, axis_name="k", axis_size=2)(
        np.zeros(3, np.int32)
    )
    np.testing.assert_array_equal(out, [[0, 0, 0], [1, 1, 1]])


def test_unbound_axis_names():
    with pytest.raises(NameError, match="unbound axis name: k"):
        vmap(lambda a: axis_index("k"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        axis_index("i")
    with pytest.raises(NameError, match="unbound axis name"):
        axis_size("i")
    # An unnamed vmap cannot be referred to.
    with pytest.raises(NameError, match="unbound axis name: None"):
        vmap(lambda a: axis_index(None))(X)
    with pytest.raises(NameError, match="unbound axis name: None"):
        vmap(lambda a: axis_size(None))(X)


def test_axis_environment_queries():
    seen = []

    def inner(x):
        seen.append((axis_names(), axis_size("i"), axis_size("j"), axis_size(("i", "j"))))
        seen.append(tuple(f.size for f in axis_frames()))
        return x

    vmap(vmap(inner, axis_name="j"), axis_name="i")(X)
    assert seen[0] == (("i", "j"), 3, 4, 12)
    assert seen[1] == (3, 4)
    assert axis_frames() == ()  # popped afterwards
    # Unnamed vmaps are frames too, without names; the innermost binding of a name wins.
    vmap(
        vmap(lambda x: seen.append((axis_names(), axis_size("i"))) or x, axis_name="i"),
        axis_name="i",
    )(X)
    assert seen[-1] == (("i", "i"), 4)
    vmap(lambda x: seen.append(axis_frames()) or x)(X)
    assert seen[-1] == (AxisData(None, 3, None),)


def test_extend_axis_env_for_other_mapping_transforms():
    with extend_axis_env(AxisData("dev", 8)):
        assert axis_size("dev") == 8 and axis_names() == ("dev",)
    assert axis_names() == ()


def test_make_jaxpr_axis_env_binds_names_while_tracing():
    def f(x):
        return mul_p.bind(x, axis_size(("i", "j"))), axis_index("j")

    closed = make_jaxpr(f, axis_env=[("i", 2), ("j", 3)])(np.float32(1.0))
    assert [e.primitive for e in closed.jaxpr.eqns] == [mul_p, axis_index_p]
    mul_eqn, index_eqn = closed.jaxpr.eqns
    assert mul_eqn.invars[1].val == 6 and index_eqn.params == {"axis_name": "j"}
    assert axis_names() == ()  # unbound again afterwards
    closed, shape = make_jaxpr(lambda x: axis_index("i"), (), [("i", 4)], True)(1.0)
    assert shape.shape == () and shape.dtype == np.int32
    with pytest.raises(NameError, match="unbound axis name: k"):
        make_jaxpr(lambda x: axis_index("k"), axis_env=[("i", 2)])(1.0)


def test_axis_index_inside_a_call_with_unbatched_operands():
    # The call's operands are not batched, but its program asks for the axis index.
    out = vmap(
        lambda x, y: call(lambda b: add_p.bind(b, axis_index("i")), y),
        in_axes=(0, None),
        axis_name="i",
    )(X, np.float32(1.0))
    np.testing.assert_array_equal(out, [1, 2, 3])


def test_axis_index_recorded_in_an_inner_jaxpr():
    def f(x):
        closed = make_jaxpr(lambda v: add_p.bind(v, axis_index("i")))(x)
        from modjax.tracecore import eval_jaxpr

        return eval_jaxpr(closed.jaxpr, closed.consts, x)[0]

    out = vmap(f, axis_name="i")(np.zeros(3, np.int32))
    np.testing.assert_array_equal(out, [0, 1, 2])


# A toy all-reduce, written the way the sharding package will write psum's rule.
psum_p = Primitive("bt_psum")
psum_p.def_abstract_eval(lambda x, *, axis_name: x)


def _psum_batcher(axis_data, args, dims, *, axis_name):
    (x,), (d,) = args, dims
    if axis_data.name != axis_name:  # someone else's axis: pass it outwards
        return psum_p.bind(x, axis_name=axis_name), d
    if d is None:  # the same value everywhere along this axis
        return mul_p.bind(x, axis_data.size), None
    return reduce_sum_p.bind(x, axes=(d,)), None


axis_primitive_batchers[psum_p] = _psum_batcher


def test_collective_hook_over_nested_axes():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = vmap(vmap(lambda v: psum_p.bind(v, axis_name="i"), axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(out, np.broadcast_to(x.sum(0), (3, 4)))
    out = vmap(vmap(lambda v: psum_p.bind(v, axis_name="j"), axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(out, np.broadcast_to(x.sum(1, keepdims=True), (3, 4)))
    # An unbatched operand: psum multiplies by the axis size.
    out = vmap(
        lambda v, c: add_p.bind(v, psum_p.bind(c, axis_name="i")), in_axes=(0, None), axis_name="i"
    )(x, np.float32(2.0))
    np.testing.assert_allclose(out, x + 6.0)
