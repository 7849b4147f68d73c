"""Forward mode: jvp and linearize on the test primitives."""

import numpy as np
import pytest
from autodiff_test_prims import (
    add,
    cos,
    dot,
    exp,
    floor_int,
    mul,
    mul_p,
    neg,
    sin,
    sin_p,
    sum_all,
    transpose,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.autodiff import (
    Zero,
    add_any_p,
    jvp,
    jvp_flat,
    jvp_jaxpr,
    linearize,
    zeros_like_p,
)
from modjax.tracecore import call, call_p, dtypes, make_jaxpr
from modjax.tracecore.evaluation import eval_jaxpr

points = st.floats(-3.0, 3.0, allow_nan=False, width=32)


def f32(x):
    return np.asarray(x, np.float32)


@settings(max_examples=examples(25), deadline=None)
@given(points, points)
def test_jvp_matches_analytic_derivative(x, t):
    def f(x):
        return mul(sin(x), exp(x))

    y, dy = jvp(f, (f32(x),), (f32(t),))
    np.testing.assert_allclose(y, np.sin(x) * np.exp(x), rtol=1e-5, atol=1e-6)
    want = t * (np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x))
    np.testing.assert_allclose(dy, want, rtol=1e-4, atol=1e-5)


@settings(max_examples=examples(15), deadline=None)
@given(st.lists(points, min_size=3, max_size=3), st.lists(points, min_size=3, max_size=3))
def test_jvp_matches_central_differences(xs, ts):
    x, t = np.asarray(xs, np.float64), np.asarray(ts, np.float64)

    def f(x):
        return sum_all(mul(cos(x), sin(mul(x, x))))

    _, dy = jvp(f, (f32(x),), (f32(t),))
    eps = 1e-3
    fd = (f(x + eps * t) - f(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(dy, fd, rtol=2e-2, atol=2e-2)


def test_jvp_of_a_matrix_program():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((3, 2), np.float32)
    ta, tb = np.full_like(a, 0.5), np.full_like(b, 2.0)
    y, dy = jvp(lambda a, b: dot(a, transpose(transpose(b))), (a, b), (ta, tb))
    np.testing.assert_allclose(y, a @ b)
    np.testing.assert_allclose(dy, ta @ b + a @ tb)


def test_pytrees_in_and_out_and_has_aux():
    def f(p):
        out = {"s": sin(p["x"]), "pair": (mul(p["x"], p["y"]), p["y"])}
        return out, {"aux": cos(p["x"])}

    primals = ({"x": f32(0.5), "y": f32(2.0)},)
    tangents = ({"x": f32(1.0), "y": f32(0.0)},)
    out, tout, aux = jvp(f, primals, tangents, has_aux=True)
    np.testing.assert_allclose(out["s"], np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(tout["s"], np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(tout["pair"][0], 2.0, rtol=1e-6)
    np.testing.assert_allclose(tout["pair"][1], 0.0)
    np.testing.assert_allclose(aux["aux"], np.cos(0.5), rtol=1e-6)


def test_integer_inputs_and_outputs_have_float0_tangents():
    x, n = f32(1.5), np.int32(3)
    y, dy = jvp(
        lambda x, n: (floor_int(x), mul(x, x)), (x, n), (f32(1.0), np.zeros((), dtypes.float0))
    )
    assert dy[0].dtype == dtypes.float0 and dy[0].shape == ()
    np.testing.assert_allclose(dy[1], 3.0)
    with pytest.raises(TypeError, match="tangent dtype must be float0"):
        jvp(lambda n: n, (n,), (np.int32(1),))


def test_input_checks():
    with pytest.raises(TypeError, match="must be tuples or lists"):
        jvp(sin, f32(1.0), f32(1.0))
    with pytest.raises(TypeError, match="same tree structure"):
        jvp(sin, (f32(1.0),), ((f32(1.0),),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jvp(sin, (np.ones(3, np.float32),), (np.ones(4, np.float32),))
    with pytest.raises(TypeError, match="do not match"):
        jvp(sin, (np.ones(3, np.float32),), (np.ones(3, np.complex64),))
    # has_aux: jvp unpacks the output as Python does (``out, aux = r``), as in JAX.
    with pytest.raises(ValueError, match="too many values to unpack"):
        jvp(lambda x: (x, x, x), (f32(1.0),), (f32(1.0),), has_aux=True)
    with pytest.raises(TypeError, match="cannot unpack non-iterable int"):
        jvp(lambda x: 3, (f32(1.0),), (f32(1.0),), has_aux=True)
    out, tangent, aux = jvp(lambda x: [sin(x), x], (f32(1.0),), (f32(1.0),), has_aux=True)
    assert float(aux) == 1.0


def _count(closed, prim=None):
    eqns = closed.jaxpr.eqns
    return len(eqns) if prim is None else sum(e.primitive is prim for e in eqns)


def test_symbolic_zero_tangents_generate_no_work():
    def f(x, y):
        return mul(sin(x), exp(y))

    def only_x(x, y, t):
        return jvp_flat(lambda x, y: [f(x, y)], [x, y], [t, Zero.from_primal_value(y)])[1][0]

    closed = make_jaxpr(only_x)(f32(1.0), f32(2.0), f32(1.0))
    # primal: sin, exp, mul; tangent: cos, mul(t, cos), mul(dsin, exp_y). No tangent work
    # at all for y (no exp of y's tangent, no add_any of two contributions).
    assert [e.primitive.name for e in closed.jaxpr.eqns] == [
        "ad_sin",
        "ad_cos",
        "ad_mul",
        "ad_exp",
        "ad_mul",
        "ad_mul",
    ]
    assert _count(closed, add_any_p) == 0
    both = make_jaxpr(lambda x, y, t, s: jvp(f, (x, y), (t, s))[1])(*[f32(1.0)] * 4)
    assert _count(both, add_any_p) == 1 and _count(both) > _count(closed)


def test_constant_function_has_zero_tangent_without_equations():
    closed = make_jaxpr(lambda x, t: jvp(lambda x: f32(3.0), (x,), (t,)))(f32(1.0), f32(1.0))
    assert _count(closed, zeros_like_p) == 1
    assert _count(closed) == 1  # only the materialized zero of the output tangent


def test_perturbation_confusion_is_avoided():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1 (confusing the perturbations gives 2).
    def f(x):
        inner = jvp(lambda y: add(x, y), (f32(1.0),), (f32(1.0),))[1]
        return mul(x, inner)

    assert float(jvp(f, (f32(2.0),), (f32(1.0),))[1]) == 1.0
    # d/dx [ d/dy (x * y) ] = 1
    g = lambda x: jvp(lambda y: mul(x, y), (f32(3.0),), (f32(1.0),))[1]  # noqa: E731
    assert float(jvp(g, (f32(5.0),), (f32(1.0),))[1]) == 1.0


def test_nested_jvp_gives_second_derivative():
    def d(f):
        # A tangent built with numpy, not from x: numpy cannot read a traced x (as in JAX).
        return lambda x: jvp(f, (x,), (np.float32(1.0),))[1]

    np.testing.assert_allclose(d(d(sin))(f32(0.3)), -np.sin(0.3), rtol=1e-6)
    np.testing.assert_allclose(d(d(d(sin)))(f32(0.3)), -np.cos(0.3), rtol=1e-6)


def test_jvp_of_a_call_is_a_call_of_the_jvp():
    def f(x):
        return call(lambda x: sin(mul(x, x)), x)

    y, dy = jvp(f, (f32(0.7),), (f32(1.0),))
    np.testing.assert_allclose(dy, 2 * 0.7 * np.cos(0.49), rtol=1e-5)
    closed = make_jaxpr(lambda x, t: jvp(f, (x,), (t,)))(f32(0.7), f32(1.0))
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is call_p and len(eqn.invars) == 2 and len(eqn.outvars) == 2


def test_jvp_jaxpr_and_eval():
    closed = make_jaxpr(lambda x, y: mul(sin(x), y))(f32(1.0), f32(2.0))
    jj, out_nz = jvp_jaxpr(closed, [True, False])
    assert out_nz == [True] and len(jj.in_avals) == 3
    y, dy = eval_jaxpr(jj.jaxpr, jj.consts, f32(1.0), f32(2.0), f32(1.0))
    np.testing.assert_allclose(dy, 2 * np.cos(1.0), rtol=1e-6)
    jz, out_nz = jvp_jaxpr(closed, [False, False])
    assert out_nz == [False]


def test_make_jaxpr_of_jvp_records_name_stack_and_user_lines():
    # Equations derived by rules (cos, the tangent muls) point at the user's line, not at
    # the rules in autodiff_test_prims.py.
    def f(x):
        return sin_p.bind(mul_p.bind(x, x))

    closed = make_jaxpr(lambda x, t: jvp(f, (x,), (t,)))(f32(1.0), f32(1.0))
    assert len(closed.jaxpr.eqns) == 7
    for eqn in closed.jaxpr.eqns:
        assert eqn.source_info.name_stack == ("jvp",)
        assert eqn.source_info.frame.file_name == __file__
    assert "[jvp]" in closed.pretty_print(name_stack=True)


def test_concrete_values_are_visible_under_jvp():
    # As in JAX, a known value converts to an int or a bool (float() is refused).
    def f(x):
        return sin(x) if int(floor_int(x)) >= 0 else neg(x)

    np.testing.assert_allclose(jvp(f, (f32(0.5),), (f32(1.0),))[1], np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(jvp(f, (f32(-0.5),), (f32(1.0),))[1], -1.0)


def test_linearize_matches_jvp_and_reuses_the_linearization():
    def f(x):
        return mul(sin(x), cos(x))

    x = np.linspace(-1, 1, 4).astype(np.float32)
    y, f_jvp = linearize(f, x)
    for t in (np.ones(4, np.float32), np.arange(4, dtype=np.float32)):
        np.testing.assert_allclose(f_jvp(t), jvp(f, (x,), (t,))[1], rtol=1e-6)
    np.testing.assert_allclose(y, np.sin(x) * np.cos(x), rtol=1e-6)
    with pytest.raises(ValueError, match="inconsistent"):
        f_jvp(np.ones(3, np.float32))
    y2, f_jvp2, aux = linearize(lambda x: (f(x), x), x, has_aux=True)
    np.testing.assert_allclose(aux, x)
