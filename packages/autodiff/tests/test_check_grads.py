"""check_grads: the public numerical check of derivative rules."""

import numpy as np
import pytest
from autodiff_test_prims import (
    add,
    cos,
    dot,
    exp,
    log,
    mul,
    neg,
    sin,
    sub,
    sum_all,
    transpose,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.autodiff import defjvp, jvp_rules, transpose_rules
from modjax.autodiff.testing import check_grads, numerical_jvp
from modjax.tracecore import core, enable_x64
from modjax.tracecore.abstract import ShapedArray

FUNCTIONS = {
    "sin": lambda x: sin(x),
    "cos_exp": lambda x: mul(cos(x), exp(x)),
    "log": lambda x: log(add(mul(x, x), 1.0)),
    "neg_sub": lambda x: sub(neg(x), mul(x, x)),
    "sum": lambda x: sum_all(mul(x, sin(x))),
    "dot": lambda x: dot(sin(x), transpose(x)),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_rules_of_the_test_primitives_pass(name):
    x = np.linspace(-1.2, 0.9, 6).reshape(2, 3)
    with enable_x64(True):
        check_grads(FUNCTIONS[name], (x,), order=2)


@settings(max_examples=examples(10), deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=2, max_size=2))
def test_check_grads_at_generated_points_in_float32(xs):
    x = np.asarray(xs, np.float32)
    check_grads(
        lambda x, y: mul(sin(x), exp(y)),
        (x, x[::-1].copy()),
        order=1,
        atol=5e-2,
        rtol=5e-2,
        eps=1e-2,
    )


def test_pytree_arguments_and_modes():
    with enable_x64(True):
        check_grads(
            lambda p: mul(p["a"], sin(p["b"][0])),
            ({"a": np.float64(0.3), "b": (np.float64(1.1),)},),
            order=2,
            modes=("rev",),
        )
        check_grads(lambda x: (sin(x), cos(x)), (np.float64(0.2),), order=1, modes=("fwd",))


def _bad_prim(name, jvp=None):
    """A sin with a wrong derivative rule."""
    prim = core.Primitive(name)
    prim.def_impl(np.sin)
    prim.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype, x.weak_type))
    defjvp(prim, jvp or (lambda g, x: mul(g, sin(x))))  # should be cos
    return prim


def test_a_wrong_jvp_rule_is_caught_in_both_modes():
    prim = _bad_prim("ad_bad_sin")
    try:
        with enable_x64(True):
            for modes in (("fwd",), ("rev",)):
                with pytest.raises(AssertionError):
                    check_grads(prim.bind, (np.float64(0.5),), order=1, modes=modes)
    finally:
        jvp_rules.pop(prim)


def test_a_wrong_transpose_rule_is_caught_in_reverse_mode_only():
    # A linear "scale by 2" whose transpose forgets the factor.
    prim = core.Primitive("ad_bad_double")
    prim.def_impl(lambda x: np.asarray(2 * x))
    prim.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype, x.weak_type))
    defjvp(prim, lambda g, x: prim.bind(g))
    transpose_rules[prim] = lambda ct, x: [ct]
    try:
        with enable_x64(True):
            check_grads(prim.bind, (np.arange(3.0),), order=1, modes=("fwd",))
            with pytest.raises(AssertionError, match="cotangent projection"):
                check_grads(prim.bind, (np.arange(3.0),), order=1, modes=("rev",))
    finally:
        jvp_rules.pop(prim)
        transpose_rules.pop(prim)


def test_a_wrong_second_derivative_is_caught_at_order_two():
    # The first derivative is right, but its own rule is wrong: d/dx cos(x) given as cos.
    cos_bad = core.Primitive("ad_cos_bad2")
    cos_bad.def_impl(np.cos)
    cos_bad.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype, x.weak_type))
    defjvp(cos_bad, lambda g, x: mul(g, cos(x)))
    prim = _bad_prim("ad_sin_good1", jvp=lambda g, x: mul(g, cos_bad.bind(x)))
    try:
        with enable_x64(True):
            check_grads(prim.bind, (np.float64(0.5),), order=1)
            with pytest.raises(AssertionError):
                check_grads(prim.bind, (np.float64(0.5),), order=2)
    finally:
        jvp_rules.pop(prim)
        jvp_rules.pop(cos_bad)


def test_numerical_jvp():
    with enable_x64(True):
        t = numerical_jvp(lambda x: sin(x), (np.float64(0.3),), (np.float64(2.0),))
    np.testing.assert_allclose(t, 2 * np.cos(0.3), rtol=1e-6)
