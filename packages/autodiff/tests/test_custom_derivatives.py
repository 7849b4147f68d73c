"""custom_jvp and custom_vjp: user-written derivative rules."""

import functools

import numpy as np
import pytest
from autodiff_test_prims import add, cos, exp, log, mul, neg, sin, sum_all

from modjax.autodiff import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    grad,
    jvp,
    linearize,
    value_and_grad,
    vjp,
)
from modjax.autodiff.custom_derivatives import zero_from_primal
from modjax.autodiff.tangents import Zero
from modjax.tracecore import call, make_jaxpr
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import UnexpectedTracerError
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.tree_util import register_pytree_node, tree_flatten, tree_map


def f32(x):
    return np.asarray(x, np.float32)


def make_f():
    calls = []

    @custom_jvp
    def f(x, y):
        return mul(sin(x), y)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        calls.append(1)
        # deliberately not the true derivative, so we can tell the rule ran
        return f(x, y), add(mul(mul(cos(x), tx), y), mul(ty, 10.0))

    return f, calls


def test_custom_jvp_rule_is_used_in_forward_and_reverse_mode():
    f, calls = make_f()
    x, y = f32(1.0), f32(2.0)
    np.testing.assert_allclose(f(x, y), np.sin(1.0) * 2.0, rtol=1e-6)
    assert not calls
    _, t = jvp(f, (x, y), (f32(0.0), f32(1.0)))
    np.testing.assert_allclose(t, 10.0)
    gx, gy = grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose((gx, gy), (np.cos(1.0) * 2.0, 10.0), rtol=1e-6)
    assert calls


def test_custom_jvp_under_make_jaxpr_is_one_equation_and_evaluates():
    f, _ = make_f()
    closed = make_jaxpr(f)(f32(1.0), f32(2.0))
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is custom_jvp_call_p
    assert "custom_jvp_call" in str(closed) and "f_jvp" in str(closed)
    np.testing.assert_allclose(
        eval_jaxpr(closed.jaxpr, closed.consts, f32(1.0), f32(2.0))[0], np.sin(1.0) * 2.0, rtol=1e-6
    )
    # differentiating the evaluation of the jaxpr still uses the rule
    g = grad(lambda y: eval_jaxpr(closed.jaxpr, closed.consts, f32(1.0), y)[0])(f32(2.0))
    np.testing.assert_allclose(g, 10.0)
    # and make_jaxpr of grad traces the rule
    closed_g = make_jaxpr(grad(f, argnums=1))(f32(1.0), f32(2.0))
    np.testing.assert_allclose(
        eval_jaxpr(closed_g.jaxpr, closed_g.consts, f32(1.0), f32(2.0))[0], 10.0
    )


def _rebind_each_equation(closed, *args, inline_custom_calls=False):
    """An interpreter in the style of libraries written against JAX (equinox's)."""
    env = dict(zip(closed.jaxpr.invars, args, strict=True))
    for eqn in closed.jaxpr.eqns:
        params = eqn.primitive.get_bind_params(eqn.params)
        invals = [env[v] for v in eqn.invars]
        if inline_custom_calls and "subfuns" in params:
            outs = params["subfuns"][0].call_wrapped(*invals)
        else:
            outs = eqn.primitive.bind(*invals, **params)
        env.update(
            zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs], strict=True)
        )
    return [env[v] for v in closed.jaxpr.outvars]


def test_custom_calls_rebind_from_and_inline_through_get_bind_params():
    f, calls = make_f()

    @custom_vjp
    def s(x):
        return sin(x)

    s.defvjp(lambda x: (s(x), cos(x)), lambda c, g: (mul(mul(c, g), 3.0),))
    g = lambda x, y: add(f(x, y), s(x))  # noqa: E731
    closed = make_jaxpr(g)(f32(1.0), f32(2.0))
    params = closed.jaxpr.eqns[0].primitive.get_bind_params(closed.jaxpr.eqns[0].params)
    assert "call_jaxpr" not in params and len(params["subfuns"]) == 2
    expected = np.sin(1.0) * 2.0 + np.sin(1.0)
    for inline in (False, True):
        run = functools.partial(_rebind_each_equation, closed, inline_custom_calls=inline)
        np.testing.assert_allclose(run(f32(1.0), f32(2.0))[0], expected, rtol=1e-6)
        # Rebinding keeps the rules (the custom gradients: 10 for y, 3 cos(x) for s);
        # inlining replaces each call by its program (the true gradients).
        gx, gy = grad(lambda x, y, run=run: run(x, y)[0], argnums=(0, 1))(f32(1.0), f32(2.0))
        want_gx = np.cos(1.0) * 2.0 + (np.cos(1.0) if inline else 3 * np.cos(1.0))
        want_gy = np.sin(1.0) if inline else 10.0
        np.testing.assert_allclose((gx, gy), (want_gx, want_gy), rtol=1e-6)
    with pytest.raises(TypeError, match="subfuns must come from custom_jvp_call.get_bind_params"):
        custom_jvp_call_p.bind(f32(1.0), subfuns=(lambda x: x,), num_consts=0)


def test_custom_jvp_numerically_stable_log1pexp():
    @custom_jvp
    def softplus(x):
        return log(add(exp(x), 1.0))

    softplus.defjvps(lambda t, ans, x: mul(t, sub_one_minus_sigmoid(x)))

    def sub_one_minus_sigmoid(x):  # sigmoid(x) = 1 / (1 + exp(-x)) via exp/log
        return exp(neg(log(add(exp(neg(x)), 1.0))))

    np.testing.assert_allclose(grad(softplus)(f32(0.0)), 0.5, rtol=1e-6)
    np.testing.assert_allclose(grad(softplus)(f32(50.0)), 1.0, rtol=1e-6)
    np.testing.assert_allclose(grad(grad(softplus))(f32(0.0)), 0.25, rtol=1e-5)


def test_defjvps_skips_arguments_without_tangent():
    seen = []

    @custom_jvp
    def f(x, y):
        return mul(x, y)

    f.defjvps(
        lambda tx, ans, x, y: (seen.append("x"), mul(tx, y))[1],
        lambda ty, ans, x, y: (seen.append("y"), mul(x, ty))[1],
    )
    np.testing.assert_allclose(grad(f)(f32(3.0), f32(4.0)), 4.0)
    assert seen == ["x"]
    with pytest.raises(TypeError, match="defjvps"):
        custom_jvp(lambda a, b: a, nondiff_argnums=(0,)).defjvps(None)


def test_custom_jvp_nondiff_argnums_and_kwargs():
    @functools.partial(custom_jvp, nondiff_argnums=(0,))
    def app(fn, x):
        return fn(x)

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(fn, x), mul(t, 7.0)

    np.testing.assert_allclose(app(sin, f32(1.0)), np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(grad(lambda x: app(sin, x))(f32(1.0)), 7.0)
    np.testing.assert_allclose(grad(lambda x: app(fn=sin, x=x))(f32(1.0)), 7.0)


def test_nondiff_argnames_name_positions():
    # JAX 0.10's nondiff_argnames: parameter names, turned into nondiff_argnums.
    @functools.partial(custom_jvp, nondiff_argnames=("fn",))
    def app(x, fn):
        return fn(x)

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        return app(primals[0], fn), mul(tangents[0], 7.0)

    assert app.nondiff_argnums == (1,)
    np.testing.assert_allclose(grad(lambda x: app(x, fn=sin))(f32(1.0)), 7.0)

    @functools.partial(custom_vjp, nondiff_argnums=(0,), nondiff_argnames="scale")
    def scaled(k, x, scale):
        return mul(x, scale)

    scaled.defvjp(lambda k, x, scale: (mul(x, scale), None), lambda k, scale, r, ct: (mul(ct, k),))
    assert scaled.nondiff_argnums == (0, 2)
    np.testing.assert_allclose(grad(lambda x: scaled(10.0, x, 2.0))(f32(1.0)), 10.0)


def test_custom_jvp_symbolic_zeros():
    received = []

    @custom_jvp
    def f(x, y):
        return mul(x, y)

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        received.append((type(tx) is SymbolicZero, type(ty) is SymbolicZero))
        out = SymbolicZero(tx.aval) if type(tx) is SymbolicZero else mul(tx, y)
        return f(x, y), out

    f.defjvp(f_jvp, symbolic_zeros=True)
    _, t = jvp(lambda y: f(f32(2.0), y), (f32(3.0),), (f32(1.0),))
    assert received == [(True, False)]
    np.testing.assert_allclose(t, 0.0)
    grad(f)(f32(2.0), f32(3.0))
    assert received[-1] == (False, True)


def test_custom_jvp_nested_and_inside_a_call():
    f, _ = make_f()

    def g(x):
        return call(lambda x: f(sin(x), f32(2.0)), x)

    want = np.cos(np.sin(0.3)) * np.cos(0.3) * 2.0
    np.testing.assert_allclose(grad(g)(f32(0.3)), want, rtol=1e-5)

    # a custom_jvp function calling another custom_jvp function
    @custom_jvp
    def h(x):
        return f(x, f32(1.0))

    h.defjvp(lambda p, t: (h(p[0]), mul(t[0], f(p[0], f32(3.0)))))
    np.testing.assert_allclose(grad(h)(f32(0.5)), 3 * np.sin(0.5), rtol=1e-6)
    # the rule's own derivative is taken for second order
    np.testing.assert_allclose(grad(grad(h))(f32(0.5)), 3 * np.cos(0.5) * 1.0 + 0.0, rtol=1e-5)


def test_custom_jvp_errors():
    @custom_jvp
    def f(x):
        return sin(x)

    with pytest.raises(AttributeError, match="No JVP defined"):
        f(f32(1.0))
    f.defjvp(lambda p, t: (f(p[0]),))
    with pytest.raises(TypeError, match="must produce a pair"):
        jvp(f, (f32(1.0),), (f32(1.0),))
    f.defjvp(lambda p, t: ((f(p[0]),), (t[0],)))
    # As JAX 0.10.2: the rule's primal output is checked against the function's only when
    # the function was traced (inside a staged call), not when a JVP runs just the rule.
    with pytest.raises(TypeError, match="container/pytree structure"):
        jvp(lambda x: call(f, x), (f32(1.0),), (f32(1.0),))
    (out,), _ = jvp(f, (f32(1.0),), (f32(1.0),))
    np.testing.assert_allclose(out, np.sin(1.0), rtol=1e-6)
    f.defjvp(lambda p, t: (f(p[0]), np.ones(3, np.float32)))
    with pytest.raises(TypeError, match="equal container|corresponding shapes"):
        jvp(f, (f32(1.0),), (f32(1.0),))


def test_custom_jvp_closing_over_a_differentiated_value_is_an_error():
    def outer(x):
        @custom_jvp
        def g(y):
            return mul(x, y)

        g.defjvp(lambda p, t: (g(p[0]), mul(x, t[0])))
        return g(f32(2.0))

    with pytest.raises(UnexpectedTracerError):
        grad(outer)(f32(3.0))


# --- custom_vjp -------------------------------------------------------------------------


def make_clip_gradient():
    @custom_vjp
    def clip_grad(x, bound):
        return x

    def fwd(x, bound):
        return x, {"bound": bound, "unused": (x,)}

    def bwd(res, g):
        b = float(res["bound"])
        return (f32(np.clip(g, -b, b)), None)

    clip_grad.defvjp(fwd, bwd)
    return clip_grad


def test_custom_vjp_rule_is_used_with_pytree_residuals():
    clip = make_clip_gradient()
    f = lambda x: mul(clip(mul(x, 10.0), f32(2.0)), 1.0)  # noqa: E731
    np.testing.assert_allclose(f(f32(0.5)), 5.0)
    np.testing.assert_allclose(grad(f)(f32(0.5)), 10.0)  # g = 1, within the bound; times 10
    np.testing.assert_allclose(grad(lambda x: mul(clip(x, f32(0.5)), 3.0))(f32(1.0)), 0.5)
    # bound received a None cotangent: zero
    g_bound = grad(lambda b: sum_all(clip(f32([1.0, 2.0]), b)))(f32(2.0))
    np.testing.assert_allclose(g_bound, 0.0)


def test_custom_vjp_sin_with_cotangent_scaling_and_second_order():
    @custom_vjp
    def s(x):
        return sin(x)

    def s_fwd(x):
        return s(x), cos(x)

    def s_bwd(c, g):
        return (mul(mul(c, g), 2.0),)

    s.defvjp(s_fwd, s_bwd)
    np.testing.assert_allclose(grad(s)(f32(0.3)), 2 * np.cos(0.3), rtol=1e-6)
    # the derivative of the bwd rule (through cos) gives the second order
    np.testing.assert_allclose(grad(grad(s))(f32(0.3)), -2 * np.sin(0.3), rtol=1e-6)
    value, g = value_and_grad(lambda x: add(s(x), s(x)))(f32(0.3))
    np.testing.assert_allclose(g, 4 * np.cos(0.3), rtol=1e-6)


def test_custom_vjp_under_make_jaxpr_and_linearize():
    @custom_vjp
    def s(x):
        return sin(x)

    s.defvjp(lambda x: (s(x), cos(x)), lambda c, g: (mul(c, g),))
    closed = make_jaxpr(s)(f32(1.0))
    assert closed.jaxpr.eqns[0].primitive is custom_vjp_call_p
    closed_g = make_jaxpr(grad(s))(f32(1.0))
    np.testing.assert_allclose(
        eval_jaxpr(closed_g.jaxpr, closed_g.consts, f32(1.0))[0], np.cos(1.0), rtol=1e-6
    )
    # the fwd rule calls s, so the forward pass holds a custom_vjp_call; the bwd rule's mul
    # is the backward pass
    assert [e.primitive.name for e in closed_g.jaxpr.eqns] == [
        "custom_vjp_call",
        "ad_cos",
        "ad_mul",
    ]
    # linearize works (the linear map is the custom_lin equation); forward mode does not
    _, f_lin = linearize(s, f32(1.0))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        f_lin(f32(1.0))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jvp(s, (f32(1.0),), (f32(1.0),))


def test_custom_vjp_nondiff_argnums():
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def app(fn, x):
        return fn(x)

    def app_fwd(fn, x):
        return app(fn, x), x

    def app_bwd(fn, x, g):
        return (mul(g, 5.0),)

    app.defvjp(app_fwd, app_bwd)
    np.testing.assert_allclose(grad(lambda x: app(sin, x))(f32(1.0)), 5.0)

    @functools.partial(custom_vjp, nondiff_argnums=(1,))
    def scale(x, k):
        return mul(x, k)

    scale.defvjp(lambda x, k: (scale(x, k), None), lambda k, res, g: (mul(g, k),))
    np.testing.assert_allclose(grad(scale)(f32(1.0), 3.0), 3.0)
    with pytest.raises(UnexpectedTracerError, match="nondiff_argnums"):
        grad(lambda k: scale(f32(1.0), k))(f32(2.0))


def test_custom_vjp_symbolic_zeros():
    seen = {}

    @custom_vjp
    def f(x, y):
        return mul(x, y), x

    def fwd(x, y):
        seen["perturbed"] = (x.perturbed, y.perturbed)
        assert isinstance(x, CustomVJPPrimal)
        return f(x.value, y.value), (x.value, y.value)

    def bwd(res, g):
        x, y = res
        g_prod, g_x = g
        seen["zero_ct"] = type(g_x) is SymbolicZero
        return mul(g_prod, y), mul(g_prod, x)

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    g = grad(lambda x: f(x, f32(3.0))[0])(f32(2.0))
    np.testing.assert_allclose(g, 3.0)
    assert seen == {"perturbed": (True, False), "zero_ct": True}


def test_custom_vjp_errors():
    @custom_vjp
    def f(x):
        return sin(x)

    with pytest.raises(AttributeError, match="No VJP defined"):
        f(f32(1.0))
    f.defvjp(lambda x: sin(x), lambda r, g: (g,))
    with pytest.raises(TypeError, match="fwd rule .* must produce a pair"):
        grad(f)(f32(1.0))
    f.defvjp(lambda x: (f(x), None), lambda r, g: g)
    with pytest.raises(TypeError, match="bwd rule must produce an output with the same container"):
        grad(f)(f32(1.0))
    f.defvjp(lambda x: (f(x), None), lambda r, g: (np.ones(2, np.float32),))
    with pytest.raises(ValueError, match="same type as the args"):
        grad(f)(f32(1.0))

    def outer(x):
        @custom_vjp
        def g(y):
            return mul(x, y)

        g.defvjp(lambda y: (g(y), None), lambda r, ct: (ct,))
        return g(f32(2.0))

    # As JAX 0.10.2: on known values the call runs as written, and the closed-over tracer
    # escapes its transformation.
    with pytest.raises(UnexpectedTracerError):
        grad(outer)(f32(1.0))
    # Staged (as jit(grad(outer)) stages it), the call goes to the trace below the JVP,
    # which cannot see the JVP's tracer: it escapes too (JAX 0.10.2 raises the same).
    with pytest.raises(UnexpectedTracerError):
        make_jaxpr(grad(outer))(f32(1.0))

    def outer_traced_arg(x):
        @custom_vjp
        def g(y):
            return mul(x, y)

        g.defvjp(lambda y: (g(y), None), lambda r, ct: (ct,))
        return g(x)

    with pytest.raises(UnexpectedTracerError):
        grad(outer_traced_arg)(f32(1.0))
    with pytest.raises(UnexpectedTracerError):
        make_jaxpr(grad(outer_traced_arg))(f32(1.0))


def test_custom_vjp_inside_custom_jvp_and_nested_grad():
    @custom_vjp
    def s(x):
        return sin(x)

    s.defvjp(lambda x: (s(x), x), lambda x, g: (mul(g, cos(x)),))

    @custom_jvp
    def twice(x):
        return s(s(x))

    twice.defjvp(lambda p, t: (twice(p[0]), mul(t[0], 1.0)))
    np.testing.assert_allclose(grad(twice)(f32(0.3)), 1.0)
    np.testing.assert_allclose(
        grad(lambda x: s(s(x)))(f32(0.3)), np.cos(np.sin(0.3)) * np.cos(0.3), rtol=1e-6
    )
    _, ct = vjp(lambda x: s(mul(x, 2.0)), f32(0.3))
    np.testing.assert_allclose(ct(f32(1.0))[0], 2 * np.cos(0.6), rtol=1e-6)


def test_without_a_transformation_the_function_runs_as_written():
    # As JAX: with no transformation active, a custom_jvp/custom_vjp function is called
    # directly, so Python control flow on its concrete values works (jaxopt's Bisection).
    @custom_jvp
    def branchy_jvp(x):
        return x if float(x) > 0 else neg(x)

    branchy_jvp.defjvp(lambda p, t: (branchy_jvp(*p), t[0]))

    @custom_vjp
    def branchy_vjp(x):
        return x if float(x) > 0 else neg(x)

    branchy_vjp.defvjp(lambda x: (branchy_vjp(x), None), lambda r, g: (g,))
    for f in (branchy_jvp, branchy_vjp):
        assert float(f(f32(-2.0))) == 2.0 and float(f(f32(3.0))) == 3.0


def test_nondiff_python_scalars_stay_python_scalars():
    # Only tracers are stopped, as JAX: equinox keeps a Python float among static leaves.
    seen = []

    @functools.partial(custom_jvp, nondiff_argnums=(0,))
    def scale(k, x):
        seen.append(type(k))
        return mul(x, k)

    scale.defjvp(lambda k, p, t: (scale(k, *p), mul(t[0], k)))
    np.testing.assert_allclose(grad(lambda x: scale(3.0, x))(f32(1.0)), 3.0)
    assert set(seen) == {float}


def test_bwd_none_stands_for_a_subtree_with_nones_in_it():
    # As JAX: a None in the bwd output covers the argument's whole subtree, which may
    # itself hold None (an empty node), and None where the argument has None is fine.
    @custom_vjp
    def f(x, pair):
        return mul(x, pair[0])

    f.defvjp(
        lambda x, pair: (f(x, pair), pair[0]),
        lambda k, g: (mul(g, k), (None, None)),
    )
    np.testing.assert_allclose(grad(lambda x: f(x, (f32(3.0), None)))(f32(1.0)), 3.0)
    f.defvjp(lambda x, pair: (f(x, pair), pair[0]), lambda k, g: (mul(g, k), None))
    np.testing.assert_allclose(grad(lambda x: f(x, (f32(3.0), None)))(f32(1.0)), 3.0)
    # JAX 0.10.2 ignores a cotangent given where the argument is None.
    f.defvjp(lambda x, pair: (f(x, pair), pair[0]), lambda k, g: (mul(g, k), (g, g)))
    np.testing.assert_allclose(grad(lambda x: f(x, (f32(3.0), None)))(f32(1.0)), 3.0)
    f.defvjp(lambda x, pair: (f(x, pair), pair[0]), lambda k, g: (mul(g, k), ((g, g), None)))
    with pytest.raises(TypeError, match="bwd rule must produce an output with the same container"):
        grad(lambda x: f(x, (f32(3.0), None)))(f32(1.0))


class _Box:
    """A one-leaf pytree node, as flax's Param is around its value."""

    def __init__(self, value):
        self.value = value


register_pytree_node(_Box, lambda b: ((b.value,), None), lambda _, c: _Box(*c))


def test_bwd_array_may_stand_for_an_argument_node_of_one_leaf():
    # As JAX 0.10.2 (flax's nnx.custom_vjp returns raw arrays for its Params); a node
    # of more leaves still needs its structure.
    @custom_vjp
    def f(box, y):
        return mul(box.value, y)

    f.defvjp(lambda box, y: (f(box, y), (box.value, y)), lambda r, g: (mul(r[1], g), mul(r[0], g)))
    gb, gy = grad(lambda b, y: f(b, y), argnums=(0, 1))(_Box(f32(2.0)), f32(3.0))
    assert isinstance(gb, _Box)
    np.testing.assert_allclose([gb.value, gy], [3.0, 2.0])

    @custom_vjp
    def h(pair):
        return mul(pair[0], pair[1])

    h.defvjp(lambda p: (h(p), p), lambda r, g: (g,))
    with pytest.raises(TypeError, match="bwd rule must produce an output with the same container"):
        grad(h)((f32(2.0), f32(3.0)))


def test_an_untransformed_custom_vjp_call_passes_pytrees_through_their_leaves():
    # As JAX 0.10.2: the function gets new nodes rebuilt from the arguments' leaves and
    # the caller new nodes rebuilt from the results' (flax's nnx.custom_vjp checks the
    # Variables it gets back were made at the caller's trace level).
    made = []

    @custom_vjp
    def f(box, static):
        made.append(box)
        return _Box(mul(box.value, 2.0)), static

    f.defvjp(lambda b, s: (f(b, s), None), lambda r, g: (g[0], None))
    given = _Box(f32(3.0))
    out, static = f(given, "text")
    assert made[0] is not given and isinstance(made[0], _Box)
    assert isinstance(out, _Box) and static == "text"
    np.testing.assert_allclose(out.value, 6.0)


def test_under_grad_only_the_rules_run_so_python_control_flow_works():
    # As JAX 0.10.2: a JVP calls the jvp rule or fwd on the primal values, never tracing
    # the function; fwd may call the function itself on known values (jaxopt's pattern).
    @custom_jvp
    def absolute(x):
        return x if float(x) > 0 else neg(x)

    absolute.defjvp(lambda p, t: (absolute(*p), mul(t[0], 3.0)))

    @custom_vjp
    def solve(x):
        return x if float(x) > 0 else neg(x)

    solve.defvjp(lambda x: (solve(x), None), lambda r, g: (mul(g, 5.0),))
    assert float(grad(absolute)(f32(-2.0))) == 3.0
    assert float(grad(solve)(f32(-2.0))) == 5.0
    assert float(grad(lambda x: mul(solve(x), absolute(x)))(f32(2.0))) == 5.0 * 2.0 + 2.0 * 3.0
    with pytest.raises(Exception, match="abstract tracer|concrete"):
        make_jaxpr(lambda x: solve(x))(f32(1.0))  # staging traces the function, as JAX


def test_zero_is_an_empty_pytree_node_and_symbolic_zero_a_leaf():
    # As JAX: trees of tangents skip Zero (its aval is the node's data); the
    # SymbolicZero that symbolic_zeros rules get is a leaf they can tree_map over.
    aval = ShapedArray((2,), np.dtype(np.float32))
    assert tree_flatten(Zero(aval))[0] == [] and tree_map(lambda x: 1, Zero(aval)).aval == aval
    leaves = tree_flatten({"a": SymbolicZero(aval)})[0]
    assert type(leaves[0]) is SymbolicZero and repr(leaves[0]) == "SymbolicZero"
    assert leaves[0].shape == (2,) and leaves[0].weak_type is False
    assert type(zero_from_primal(f32(1.0), symbolic_zeros=True)) is SymbolicZero
