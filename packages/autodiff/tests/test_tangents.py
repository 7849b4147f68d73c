"""The tangent machinery: zeros, add_any, zeros_like, float0 and the rule helpers."""

import numpy as np
import pytest
from autodiff_test_prims import floor_int, mul, sin

from modjax.autodiff import (
    UndefinedPrimal,
    Zero,
    add_any_p,
    add_tangents,
    backward_pass,
    instantiate_zeros,
    jvp,
    tangent_aval,
    transpose_jaxpr,
    zeros_like_p,
)
from modjax.tracecore import ShapedArray, dtypes, make_jaxpr
from modjax.tracecore.core import Primitive
from modjax.tracecore.parse import parse_jaxpr


def test_tangent_types():
    f32 = ShapedArray((2,), np.float32, weak_type=True)
    assert tangent_aval(f32) is f32
    i32 = ShapedArray((2,), np.int32)
    assert tangent_aval(i32) == ShapedArray((2,), dtypes.float0)
    z = Zero(f32)
    assert z.shape == (2,) and z.dtype == np.float32 and "Zero" in repr(z)
    assert instantiate_zeros(Zero(i32.update(dtype=dtypes.float0))).dtype == dtypes.float0
    np.testing.assert_array_equal(z.instantiate(), np.zeros(2, np.float32))
    assert add_tangents(z, 3) == 3 and add_tangents(3, z) == 3
    assert "UndefinedPrimal" in repr(UndefinedPrimal(f32))


def test_add_any_and_zeros_like():
    np.testing.assert_array_equal(
        add_any_p.bind(np.ones(2, np.float32), np.ones(2, np.float32)), [2, 2]
    )
    with pytest.raises(TypeError, match="same shape and dtype"):
        add_any_p.bind(np.ones(2, np.float32), np.ones(3, np.float32))
    out = zeros_like_p.bind(aval=ShapedArray((2, 1), np.float32))
    assert out.shape == (2, 1) and out.dtype == np.float32
    # both transpose: add_any to both operands, zeros_like to nothing
    closed = make_jaxpr(lambda x, y: add_any_p.bind(x, y))(np.float32(1), np.float32(2))
    cts = backward_pass(
        closed.jaxpr, [], [UndefinedPrimal(a) for a in closed.in_avals], [np.float32(5)]
    )
    assert [float(c) for c in cts] == [5.0, 5.0]


def test_zeros_like_prints_and_parses_back():
    closed = make_jaxpr(lambda: zeros_like_p.bind(aval=ShapedArray((3,), np.float32)))()
    text = str(closed)
    assert "aval=f32[3]" in text
    parsed = parse_jaxpr(text)
    assert parsed.jaxpr.eqns[0].params["aval"] == ShapedArray((3,), np.float32)


def test_non_differentiable_outputs_get_float0_zeros():
    y, t = jvp(floor_int, (np.float32(2.5),), (np.float32(1.0),))
    assert y == 2 and t.dtype == dtypes.float0


def test_missing_rules_are_reported_by_name():
    p = Primitive("ad_no_rules")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'ad_no_rules'"):
        jvp(p.bind, (np.float32(1),), (np.float32(1),))
    closed = make_jaxpr(p.bind)(np.float32(1))
    with pytest.raises(NotImplementedError, match="Transpose rule .* for 'ad_no_rules'"):
        backward_pass(closed.jaxpr, [], [UndefinedPrimal(closed.in_avals[0])], [np.float32(1)])


def test_transpose_jaxpr_reports_zero_cotangents():
    closed = make_jaxpr(lambda x, y, c: mul(x, c))(np.float32(1), np.float32(2), np.float32(3))
    t, in_zeros = transpose_jaxpr(closed, [True, True, False], [False])
    assert in_zeros == [False, True]  # y does not reach the output
    assert [a.shape for a in t.in_avals] == [(), ()]  # c and the output cotangent
    assert len(t.out_avals) == 1


def test_backward_pass_evaluates_non_linear_equations_first():
    # sin(c) depends only on the non-linear input: computed forward, then used by the mul.
    closed = make_jaxpr(lambda x, c: mul(x, sin(c)))(np.float32(1), np.float32(0.5))
    (ct_x, ct_c) = backward_pass(
        closed.jaxpr, [], [UndefinedPrimal(closed.in_avals[0]), np.float32(0.5)], [np.float32(2)]
    )
    np.testing.assert_allclose(ct_x, 2 * np.sin(0.5), rtol=1e-6)
    assert ct_c is None
