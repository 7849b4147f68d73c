"""Reverse mode: vjp, grad, value_and_grad, linear_transpose and their errors."""

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
    sub,
    sum_all,
    transpose,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.autodiff import (
    closure_convert,
    grad,
    jvp,
    linear_transpose,
    stop_gradient,
    value_and_grad,
    vjp,
)
from modjax.tracecore import ShapeDtypeStruct, call, call_p, dtypes, make_jaxpr, tree_util
from modjax.tracecore.check import check_jaxpr

points = st.floats(-3.0, 3.0, allow_nan=False, width=32)


def f32(x):
    return np.asarray(x, np.float32)


@settings(max_examples=examples(25), deadline=None)
@given(points)
def test_grad_matches_analytic_derivative(x):
    def f(x):
        return mul(sin(x), exp(x))

    np.testing.assert_allclose(
        grad(f)(f32(x)), np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x), rtol=1e-4, atol=1e-5
    )
    np.testing.assert_allclose(
        grad(grad(f))(f32(x)), 2 * np.cos(x) * np.exp(x), rtol=1e-4, atol=1e-4
    )


@settings(max_examples=examples(15), deadline=None)
@given(st.lists(points, min_size=4, max_size=4), st.lists(points, min_size=4, max_size=4))
def test_vjp_agrees_with_jvp_by_the_dot_product_test(xs, vs):
    x = f32(xs).reshape(2, 2)
    v = f32(vs).reshape(2, 2)

    def f(x):
        return dot(sin(x), transpose(cos(x)))

    y, f_vjp = vjp(f, x)
    (ct,) = f_vjp(v)
    t = np.ones((2, 2), np.float32)
    _, jt = jvp(f, (x,), (t,))
    np.testing.assert_allclose(np.sum(ct * t), np.sum(v * jt), rtol=1e-4, atol=1e-4)


@settings(max_examples=examples(10), deadline=None)
@given(st.lists(points, min_size=3, max_size=3))
def test_grad_matches_central_differences(xs):
    x = np.asarray(xs, np.float64)

    def f(x):
        return sum_all(mul(exp(mul(x, 0.3)), cos(x)))

    g = grad(f)(f32(x))
    eps = 1e-3
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        fd = (float(f(f32(x + e))) - float(f(f32(x - e)))) / (2 * eps)
        np.testing.assert_allclose(g[i], fd, rtol=2e-2, atol=2e-2)


def test_grad_of_grad_of_grad():
    d3 = grad(grad(grad(sin)))
    np.testing.assert_allclose(d3(f32(0.4)), -np.cos(0.4), rtol=1e-6)
    # forward over reverse and reverse over forward
    fwd_rev = jvp(grad(sin), (f32(0.4),), (f32(1.0),))[1]
    rev_fwd = grad(lambda x: jvp(sin, (x,), (f32(1.0),))[1])(f32(0.4))
    np.testing.assert_allclose(fwd_rev, -np.sin(0.4), rtol=1e-6)
    np.testing.assert_allclose(rev_fwd, -np.sin(0.4), rtol=1e-6)


def test_argnums_and_value_and_grad():
    def f(x, y, z):
        return mul(mul(x, y), sin(z))

    args = (f32(2.0), f32(3.0), f32(0.5))
    gx = grad(f)(*args)
    gy, gz = grad(f, argnums=(1, 2))(*args)
    np.testing.assert_allclose(gx, 3 * np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(gy, 2 * np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(gz, 6 * np.cos(0.5), rtol=1e-6)
    (gz2,) = grad(f, argnums=(-1,))(*args)
    np.testing.assert_allclose(gz2, gz)
    value, g = value_and_grad(f, argnums=2)(*args)
    np.testing.assert_allclose(value, 6 * np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(g, gz)
    # keyword arguments are passed through, never differentiated
    np.testing.assert_allclose(grad(lambda x, k: mul(x, k))(f32(1.0), k=f32(4.0)), 4.0)


def test_pytree_inputs_and_outputs():
    params = {"w": np.arange(3, dtype=np.float32), "b": (f32(1.0), [f32(2.0)])}

    def loss(p):
        return add(sum_all(mul(p["w"], p["w"])), mul(p["b"][0], p["b"][1][0]))

    g = grad(loss)(params)
    assert tree_util.tree_structure(g) == tree_util.tree_structure(params)
    np.testing.assert_allclose(g["w"], 2 * params["w"])
    np.testing.assert_allclose(g["b"][0], 2.0)
    np.testing.assert_allclose(g["b"][1][0], 1.0)

    out, f_vjp = vjp(lambda p: {"s": sin(p["w"]), "t": (p["b"][0],)}, params)
    (ct,) = f_vjp({"s": np.ones(3, np.float32), "t": (f32(5.0),)})
    np.testing.assert_allclose(ct["w"], np.cos(params["w"]), rtol=1e-6)
    np.testing.assert_allclose(ct["b"][0], 5.0)
    np.testing.assert_allclose(ct["b"][1][0], 0.0)  # instantiated zero


def test_has_aux():
    def f(x):
        return sin(x), {"c": cos(x), "n": 3}

    g, aux = grad(f, has_aux=True)(f32(0.3))
    np.testing.assert_allclose(g, np.cos(0.3), rtol=1e-6)
    np.testing.assert_allclose(aux["c"], np.cos(0.3), rtol=1e-6)
    (value, aux2), g2 = value_and_grad(f, has_aux=True)(f32(0.3))
    np.testing.assert_allclose(value, np.sin(0.3), rtol=1e-6)
    assert aux2["n"] == 3
    out, f_vjp, aux3 = vjp(f, f32(0.3), has_aux=True)
    np.testing.assert_allclose(f_vjp(f32(2.0))[0], 2 * np.cos(0.3), rtol=1e-6)
    with pytest.raises(TypeError, match="two-element tuple"):
        grad(sin, has_aux=True)(f32(0.3))


def test_errors_as_jax_raises_them():
    with pytest.raises(TypeError, match=r"scalar-output functions. Output had shape: \(3,\)"):
        grad(sin)(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="requires real- or complex-valued inputs.*int32"):
        grad(lambda n: mul(n, 2.0))(np.int32(3))
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex"):
        grad(sin, holomorphic=True)(f32(1.0))
    with pytest.raises(TypeError, match="requires real-valued outputs"):
        grad(lambda x: mul(np.complex64(1j), x))(f32(1.0))
    with pytest.raises(TypeError, match="at least 3 positional arguments"):
        grad(lambda x, y: x, argnums=2)(f32(1.0), f32(2.0))
    # argnums is read as JAX reads it (operator.index, else a tuple of them): Python's errors.
    with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
        grad(sin, argnums="x")
    with pytest.raises(TypeError, match="'float' object is not iterable"):
        grad(sin, argnums=1.0)
    with pytest.raises(ValueError, match="greater than or equal to -len.args."):
        grad(lambda x, y: x, argnums=-3)(f32(1.0), f32(2.0))
    with pytest.raises(TypeError, match="callable"):
        grad(3)


def test_reduce_axes_is_refused_as_in_jax():
    # Deprecated in JAX: an empty one is accepted, any axis is its NotImplementedError.
    assert grad(sin, 0, False, False, False, ())(f32(0.0)) == 1.0
    for make, what in [
        (lambda: grad(sin, reduce_axes=("i",)), "grad"),
        (lambda: value_and_grad(sin, reduce_axes=("i",)), "grad"),
        (lambda: vjp(sin, f32(1.0), reduce_axes=("i",)), "vjp"),
        (lambda: linear_transpose(sin, f32(1.0), reduce_axes=("i",)), "transpose"),
    ]:
        with pytest.raises(NotImplementedError, match=f"reduce_axes argument to {what} is"):
            make()
    out, pullback = vjp(sin, f32(0.0), reduce_axes=())
    assert pullback(f32(1.0)) == (1.0,)


def test_argnums_takes_any_index_as_jax_does():
    two = lambda x, y: mul(x, y)  # noqa: E731
    assert grad(two, argnums=np.int64(1))(f32(3.0), f32(2.0)) == 3.0
    assert grad(two, argnums=True)(f32(3.0), f32(2.0)) == 3.0  # operator.index(True) == 1
    assert grad(two, argnums=[-1, 0])(f32(3.0), f32(2.0)) == (3.0, 2.0)


def test_allow_int_gives_float0_gradients():
    g = grad(lambda x, n: mul(x, 2.0), argnums=(0, 1), allow_int=True)(f32(1.0), np.int32(3))
    np.testing.assert_allclose(g[0], 2.0)
    assert g[1].dtype == dtypes.float0 and g[1].shape == ()
    # an integer intermediate does not carry derivatives
    np.testing.assert_allclose(grad(lambda x: mul(x, floor_int(x)))(f32(2.5)), 2.0)


def test_holomorphic_grad():
    z = np.complex64(0.5 + 0.25j)
    np.testing.assert_allclose(grad(sin, holomorphic=True)(z), np.cos(z), rtol=1e-5)


def test_vjp_cotangent_checks():
    _, f_vjp = vjp(sin, f32(1.0))
    with pytest.raises(ValueError, match="unexpected JAX type"):
        f_vjp(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="unexpected tree structure"):
        f_vjp((f32(1.0),))
    with pytest.raises(TypeError, match="single argument"):
        f_vjp(f32(1.0), f32(1.0))


def test_vjp_function_is_a_pytree_of_residuals():
    x = f32([0.5, 1.0])
    _, f_vjp = vjp(lambda x: mul(sin(x), x), x)
    leaves, tree = tree_util.tree_flatten(f_vjp)
    assert len(leaves) == 3  # the residuals: cos(x), x and sin(x)
    rebuilt = tree_util.tree_unflatten(tree, leaves)
    np.testing.assert_allclose(rebuilt(np.ones(2, np.float32))[0], f_vjp(np.ones(2, np.float32))[0])


def test_grad_of_a_call_splits_it_into_known_and_unknown_calls():
    def f(x):
        return call(lambda x: sin(mul(x, x)), x, name="inner")

    np.testing.assert_allclose(grad(f)(f32(0.7)), 2 * 0.7 * np.cos(0.49), rtol=1e-5)
    closed = make_jaxpr(grad(f))(f32(0.7))
    check_jaxpr(closed)
    calls = [e for e in closed.jaxpr.eqns if e.primitive is call_p]
    assert len(calls) == 2  # the forward (known) call and the transposed (backward) call
    fwd, bwd = calls
    assert [e.primitive.name for e in fwd.params["jaxpr"].jaxpr.eqns] == [
        "ad_mul",
        "ad_sin",
        "ad_cos",
    ]
    assert all(e.primitive.name != "ad_sin" for e in bwd.params["jaxpr"].jaxpr.eqns)
    np.testing.assert_allclose(
        grad(grad(f))(f32(0.7)), 2 * np.cos(0.49) - 4 * 0.49 * np.sin(0.49), rtol=1e-5
    )


def test_make_jaxpr_of_grad_shows_forward_and_transposed_equations():
    def f(x):
        return mul_p.bind(sin_p.bind(x), 2.0)

    closed = make_jaxpr(grad(f))(f32(1.0))
    check_jaxpr(closed)
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert names == ["ad_sin", "ad_cos", "ad_mul", "ad_mul", "ad_mul"]
    stacks = [e.source_info.name_stack for e in closed.jaxpr.eqns]
    assert stacks[:3] == [("jvp",)] * 3 and stacks[3:] == [("transpose", "jvp")] * 2
    # JAX's text: a transformation wraps the scope after it.
    assert [str(s) for s in stacks] == ["jvp()"] * 3 + ["transpose(jvp())"] * 2
    assert all(e.source_info.frame.file_name == __file__ for e in closed.jaxpr.eqns)
    assert "transpose" in closed.pretty_print(name_stack=True)


def test_residuals_are_only_what_the_backward_pass_needs():
    def f(x):
        return sin(sin(x))

    x = f32([0.3, 0.6])
    _, f_vjp = vjp(f, x)
    residuals = tree_util.tree_leaves(f_vjp)
    # cos(x) and cos(sin(x)); no primal value is kept that the backward pass does not read
    assert len(residuals) == 2
    want = [np.cos(x), np.cos(np.sin(x))]
    got = sorted(residuals, key=lambda r: float(r[0]))
    np.testing.assert_allclose(got, sorted(want, key=lambda r: float(r[0])), rtol=1e-6)


def test_python_control_flow_on_primal_values_under_grad():
    def f(x):
        return sin(x) if int(floor_int(x)) >= 0 else mul(x, x)

    np.testing.assert_allclose(grad(f)(f32(0.5)), np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(grad(f)(f32(-0.5)), -1.0)


def test_perturbation_confusion_in_reverse_mode():
    def f(x):
        return mul(x, grad(lambda y: add(x, y))(f32(1.0)))

    assert float(grad(f)(f32(2.0))) == 1.0
    # grad of a function closing over the outer variable: d/dx d/dy (x*y*y) at y=1 = 2
    g = lambda x: grad(lambda y: mul(mul(x, y), y))(f32(1.0))  # noqa: E731
    np.testing.assert_allclose(grad(g)(f32(3.0)), 2.0)


def test_stop_gradient():
    def f(x):
        return mul(stop_gradient(sin(x)), x)

    np.testing.assert_allclose(grad(f)(f32(0.5)), np.sin(0.5), rtol=1e-6)
    tree = stop_gradient({"a": f32(1.0), "n": np.int32(2)})
    assert tree["n"] == 2
    np.testing.assert_allclose(jvp(stop_gradient, (f32(1.0),), (f32(1.0),))[1], 0.0)


def test_linear_transpose():
    def f(x, y):
        return sub(mul(x, 0.5), mul(y, 0.5))

    s = ShapeDtypeStruct((), np.float32)
    ft = linear_transpose(f, s, s)
    gx, gy = ft(f32(1.0))
    np.testing.assert_allclose((gx, gy), (0.5, -0.5))
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    dt = linear_transpose(lambda v: dot(m, v), ShapeDtypeStruct((3, 1), np.float32))
    (ct,) = dt(np.ones((2, 1), np.float32))
    np.testing.assert_allclose(ct, m.T @ np.ones((2, 1)))
    # an unused input gets zeros of its own type
    (z,) = linear_transpose(lambda v: f32(0.0), s)(f32(1.0))
    assert z.dtype == np.float32 and float(z) == 0.0
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        ft((f32(1.0),))
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        linear_transpose(lambda x, n: x, s, ShapeDtypeStruct((), np.int32))
    # a function that is not linear (JAX: an internal AssertionError)
    with pytest.raises(TypeError, match="Cannot transpose 'ad_mul' of two linear operands"):
        linear_transpose(lambda x: mul(x, x), s)(f32(1.0))


def test_closure_convert_hoists_traced_values():
    def outer(x):
        def inner(y):
            return mul(x, sin(y))

        converted, consts = closure_convert(inner, f32(0.0))
        assert len(consts) == 1
        return converted(f32(0.5), *consts)

    np.testing.assert_allclose(grad(outer)(f32(2.0)), np.sin(0.5), rtol=1e-6)
    converted, consts = closure_convert(lambda y: mul(np.float32(2.0), y), f32(0.0))
    assert consts == [] and float(converted(f32(3.0))) == 6.0


def test_vjp_of_neg_and_exp_in_a_pytree_function():
    out, f_vjp = vjp(lambda a, b: (neg(a), exp(b)), f32(1.0), f32(0.0))
    ga, gb = f_vjp((f32(1.0), f32(2.0)))
    np.testing.assert_allclose((ga, gb), (-1.0, 2.0))


def test_grad_through_a_call_closing_over_the_differentiated_value():
    def f(x):
        return call(lambda y: mul(x, sin(y)), f32(2.0))

    np.testing.assert_allclose(grad(f)(f32(3.0)), np.sin(2.0), rtol=1e-6)
    np.testing.assert_allclose(
        grad(grad(lambda x: call(lambda y: mul(y, mul(x, x)), x)))(f32(3.0)), 18.0, rtol=1e-6
    )


def test_arguments_not_differentiated_generate_no_tangent_work():
    def f(x, y):
        return mul_p.bind(sin_p.bind(x), exp(y))

    closed = make_jaxpr(grad(f, argnums=0))(f32(1.0), f32(2.0))
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    # forward: sin, cos (for the tangent), exp, mul; backward: two muls. Nothing for y.
    assert names == ["ad_sin", "ad_cos", "ad_exp", "ad_mul", "ad_mul", "ad_mul"]
    both = make_jaxpr(grad(f, argnums=(0, 1)))(f32(1.0), f32(2.0))
    assert len(both.jaxpr.eqns) > len(closed.jaxpr.eqns)


def test_grad_names_and_documents_the_function_as_jax_does():
    def f(x):
        """Not the docstring of the gradient."""
        return x

    g = grad(f, argnums=[0])
    assert g.__name__ == "f" and g.__qualname__.endswith("f")
    assert g.__doc__ == (
        "Gradient of f with respect to positional argument(s) (0,). Takes the same arguments "
        "as f but returns the gradient, which has the same shape as the arguments at "
        "positions (0,)."
    )
    assert value_and_grad(f).__doc__.startswith(
        "Value and gradient of f with respect to positional argument(s) 0. "
    )

    def gen(x):
        yield x

    with pytest.raises(TypeError, match="Expected a function, got a generator function"):
        grad(gen)
    with pytest.raises(TypeError, match="staticmethod arguments are not supported"):
        vjp(staticmethod(f), 1.0)
    with pytest.raises(TypeError, match="Argument 'a' of type <class 'str'> is not a valid JAX"):
        grad(f)("a")
