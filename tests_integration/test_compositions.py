"""grad, vmap and jit composed in every order, on modjax.numpy programs, end to end.

Each transformation is tested alone in its own package with toy primitives;
here they meet the real lax primitives, the runtime's rules for jit's call
primitive and the XLA lowerings of autodiff's and batching's own primitives.
Values are checked against numpy loops, closed forms and central finite
differences; structure (one program, two calls, cached batching, moved axes,
saved residuals) by inspecting jaxprs. Shapes are shared so that compiled
programs are reused.
"""

from __future__ import annotations

import numpy as np

import modjax as jax
import modjax.numpy as jnp

X3 = np.array([0.3, -1.2, 2.0], np.float32)
XS = np.array([[0.5, 1.0, -0.7], [2.0, -0.3, 0.1], [0.9, 1.5, -1.1], [-2.0, 0.4, 0.6]], np.float32)


def f_scalar(x):
    return jnp.sum(jnp.sin(x) * x + jnp.exp(x * 0.5))


def f_scalar_grad_np(x):
    x = np.asarray(x, np.float64)
    return np.cos(x) * x + np.sin(x) + 0.5 * np.exp(x * 0.5)


def numerical_grad(f, x, eps=1e-3):
    """Central finite differences of scalar ``f`` at ``x``, in float64."""
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        dx = np.zeros_like(x)
        dx[i] = eps
        out[i] = (float(f(x + dx)) - float(f(x - dx))) / (2 * eps)
    return out


def eqns_of(closed, name):
    return [e for e in closed.jaxpr.eqns if e.primitive.name == name]


def all_eqns(jaxpr):
    """Every equation of ``jaxpr`` and of the jaxprs inside its equations."""
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in core_subjaxprs(eqn):
            yield from all_eqns(sub)


def core_subjaxprs(eqn):
    from modjax.tracecore import subjaxprs

    for sub in subjaxprs(eqn.params):
        yield sub.jaxpr if hasattr(sub, "jaxpr") else sub


# --- grad and jit ------------------------------------------------------------------------------


def test_grad_of_jit_is_a_forward_call_and_a_backward_call():
    jf = jax.jit(f_scalar)
    np.testing.assert_allclose(jax.grad(jf)(X3), f_scalar_grad_np(X3), rtol=1e-5)
    closed = jax.make_jaxpr(jax.grad(jf))(X3)
    calls = eqns_of(closed, "jit")
    assert len(calls) == 2, closed
    forward, backward = calls
    assert any(e.primitive.name == "sin" for e in forward.params["jaxpr"].jaxpr.eqns)
    assert not any(e.primitive.name == "sin" for e in backward.params["jaxpr"].jaxpr.eqns)
    for call in calls:  # per-operand params stay in step with the operands
        assert len(call.params["donated_invars"]) == len(call.invars)


def test_jit_of_grad_is_one_program():
    g = jax.jit(jax.grad(f_scalar))
    np.testing.assert_allclose(g(X3), f_scalar_grad_np(X3), rtol=1e-5)
    closed = jax.make_jaxpr(g)(X3)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["jit"]
    inner = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert not any(e.primitive.name == "jit" for e in inner.eqns)
    assert "add_any" in {e.primitive.name for e in inner.eqns}
    text = g.lower(X3).as_text()
    assert text.count("func.func") == 1  # one function: nothing left to call


def test_jit_of_grad_of_jit_compiles_once():
    g = jax.jit(jax.grad(jax.jit(f_scalar)))
    np.testing.assert_allclose(g(X3), f_scalar_grad_np(X3), rtol=1e-5)
    np.testing.assert_allclose(g(X3 + 1), f_scalar_grad_np(X3 + 1), rtol=1e-5)
    assert g._jit.stats["compiles"] == 1


def test_jvp_of_jit_and_linearize():
    jf = jax.jit(lambda x: jnp.sin(x) * 2.0)
    t = np.ones(3, np.float32)
    y, ty = jax.jvp(jf, (X3,), (t,))
    np.testing.assert_allclose(y, 2 * np.sin(X3), rtol=1e-6)
    np.testing.assert_allclose(ty, 2 * np.cos(X3), rtol=1e-6)
    y, f_lin = jax.linearize(jf, X3)
    np.testing.assert_allclose(f_lin(t * 3), 6 * np.cos(X3), rtol=1e-6)


def test_grad_of_jit_of_checkpoint_whose_result_multiplies_a_tangent():
    # The staged side of the checkpoint recomputes sin(x) beside the tangent; the
    # transpose evaluates that primal result before transposing the product.
    def f(x):
        return jnp.sum(jax.checkpoint(jnp.sin)(x) * x + jnp.exp(x * 0.5))

    for g in (jax.grad(jax.jit(f)), jax.jit(jax.grad(jax.jit(f)))):
        np.testing.assert_allclose(g(X3), f_scalar_grad_np(X3), rtol=1e-5)


def test_grad_of_grad_and_third_derivative():
    f = lambda x: jnp.sin(x) * x  # noqa: E731
    x = np.float32(0.7)
    d2 = -np.sin(x) * x + 2 * np.cos(x)
    d3 = -np.cos(x) * x - 3 * np.sin(x)
    np.testing.assert_allclose(jax.grad(jax.grad(f))(x), d2, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(jax.grad(jax.grad(f))))(x), d3, rtol=1e-5)
    np.testing.assert_allclose(jax.grad(jax.jit(jax.grad(f)))(x), d2, rtol=1e-5)


def test_value_and_grad_with_aux_and_argnums_under_jit():
    def loss(w, b, x):
        y = jnp.tanh(x @ w + b)
        return jnp.mean(y**2), y

    w = XS[:3, :2]
    b = np.float32(0.1)
    x = XS[:, :3].T[:, :3]
    vg = jax.jit(jax.value_and_grad(loss, argnums=(0, 1), has_aux=True))
    (val, aux), (gw, gb) = vg(w, b, x)
    np.testing.assert_allclose(val, np.mean(np.tanh(x @ w + b) ** 2), rtol=1e-5)
    assert aux.shape == (3, 2)
    numeric = numerical_grad(lambda ww: np.mean(np.tanh(x @ ww + b) ** 2), w)
    np.testing.assert_allclose(gw, numeric, rtol=2e-3, atol=1e-4)
    numeric_b = numerical_grad(lambda bb: np.mean(np.tanh(x @ w + bb) ** 2), b)
    np.testing.assert_allclose(gb, numeric_b, rtol=2e-3, atol=1e-4)


# --- Jacobians ------------------------------------------------------------------------------------


def test_jacfwd_jacrev_hessian_agree_with_finite_differences():
    f = lambda x: jnp.sum(jnp.sin(x) * x[::-1]) + jnp.sum(x**3)  # noqa: E731

    def f_np(x):
        return np.sum(np.sin(x) * x[::-1]) + np.sum(x**3)

    h = jax.hessian(f)(X3)
    h_fr = jax.jacfwd(jax.jacrev(f))(X3)
    h_rr = jax.jit(jax.jacrev(jax.jacrev(f)))(X3)
    numeric = numerical_grad(lambda x: numerical_grad(f_np, x, 1e-4)[0], X3, 1e-3)
    np.testing.assert_allclose(h[0], numeric, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(h, h_fr, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, h_rr, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, h.T, rtol=1e-5, atol=1e-6)
    jac = jax.jacfwd(jax.grad(f))(X3)
    np.testing.assert_allclose(jac, h, rtol=1e-5, atol=1e-6)


def test_jacobians_of_pytrees_and_shapes():
    def f(p):
        return {"y": jnp.tanh(p["w"] @ p["x"]), "s": jnp.sum(p["x"] ** 2)}

    p = {"w": XS[:2, :3], "x": X3}
    jf = jax.jit(jax.jacfwd(f))(p)
    jr = jax.jit(jax.jacrev(f))(p)
    assert jf["y"]["w"].shape == (2, 2, 3) and jf["y"]["x"].shape == (2, 3)
    assert jf["s"]["w"].shape == (2, 3) and jf["s"]["x"].shape == (3,)
    for out in ("y", "s"):
        for arg in ("w", "x"):
            np.testing.assert_allclose(jf[out][arg], jr[out][arg], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jf["s"]["x"], 2 * X3, rtol=1e-6)
    h = jax.hessian(lambda x, y: jnp.sum(x * x * y), argnums=(0, 1))(X3, X3)
    np.testing.assert_allclose(h[0][1], np.diag(2 * X3), rtol=1e-6)
    assert jax.jacfwd(lambda x: x)(jnp.zeros((0,))).shape == (0, 0)


def test_jacobians_under_vmap_and_jit():
    f = lambda x: jnp.sin(x) * jnp.sum(x)  # noqa: E731
    batched = jax.jit(jax.vmap(jax.jacrev(f)))(XS)
    for i, x in enumerate(XS):
        np.testing.assert_allclose(batched[i], jax.jacfwd(f)(x), rtol=1e-5, atol=1e-6)


# --- vmap and jit ---------------------------------------------------------------------------------


def test_vmap_of_jit_batches_the_inner_program_once():
    jf = jax.jit(lambda x: jnp.sin(x) * jnp.sum(x))
    expected = np.stack([np.sin(x) * np.sum(x) for x in XS])
    np.testing.assert_allclose(jax.vmap(jf)(XS), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jf, in_axes=1, out_axes=1)(XS.T), expected.T, rtol=1e-6)
    a = jax.make_jaxpr(jax.vmap(jf))(XS)
    b = jax.make_jaxpr(jax.vmap(lambda x: jf(jf(x))))(XS)
    (call,) = eqns_of(a, "jit")
    assert call.params["jaxpr"].in_avals[0].shape == (4, 3)
    first, second = eqns_of(b, "jit")
    assert first.params["jaxpr"] is second.params["jaxpr"] is call.params["jaxpr"]


def test_jit_of_vmap_and_nested_vmap_jit():
    f = lambda x, y: jnp.tanh(x * y) + y  # noqa: E731
    g = jax.jit(jax.vmap(f, in_axes=(0, None)))
    expected = np.tanh(XS * X3) + X3
    np.testing.assert_allclose(g(XS, X3), expected, rtol=1e-6)
    h = jax.vmap(jax.jit(jax.vmap(jax.jit(f))))
    xs = np.stack([XS, XS * 2])
    np.testing.assert_allclose(h(xs, xs), np.tanh(xs * xs) + xs, rtol=1e-6)


def test_nested_vmap_with_in_axes_1_moves_no_axis_twice():
    f = lambda x: jnp.sin(x) * 2.0 + x  # noqa: E731
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10
    vv = jax.vmap(jax.vmap(f, in_axes=1), in_axes=1)
    expected = np.stack([np.stack([f_np(x[:, i, j]) for j in range(4)]) for i in range(3)])
    np.testing.assert_allclose(vv(x), expected, rtol=1e-6)
    closed = jax.make_jaxpr(vv)(x)
    moves = [e for e in closed.jaxpr.eqns if e.primitive.name in ("moveaxis", "transpose")]
    # The element function moves nothing: it runs on the input as laid out. Only the
    # out_axes=0 of each vmap asks for a move (JAX composes them into one transpose in
    # the jaxpr; here XLA does, so the program transposes once).
    assert len(moves) <= 2, closed
    compute = [e for e in closed.jaxpr.eqns if e.primitive.name in ("sin", "mul", "add")]
    assert all(e.outvars[0].aval.shape == (2, 3, 4) for e in compute)
    hlo = jax.jit(vv).lower(x).compile().as_text()
    assert hlo.count(" transpose(") == 1, hlo


def f_np(x):
    return np.sin(x) * 2.0 + x


# --- per-example gradients ---------------------------------------------------------------------


def mlp_init():
    rng = np.random.default_rng(0)
    return {
        "w1": rng.normal(size=(3, 4)).astype(np.float32) * 0.5,
        "b1": np.zeros(4, np.float32),
        "w2": rng.normal(size=(4, 1)).astype(np.float32) * 0.5,
        "b2": np.zeros(1, np.float32),
    }


def mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return jnp.mean((out - y) ** 2)


def mlp_loss_np(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def test_per_example_gradients_of_an_mlp():
    params = mlp_init()
    xs = XS[:, None, :]  # 4 examples, each a batch of one
    ys = np.array([[[0.5]], [[-1.0]], [[0.2]], [[1.5]]], np.float32)
    per_example = jax.jit(jax.vmap(jax.grad(mlp_loss), in_axes=(None, 0, 0)))(params, xs, ys)
    assert per_example["w1"].shape == (4, 3, 4)
    for i in range(4):
        one = jax.grad(mlp_loss)(params, xs[i], ys[i])
        for k in params:
            np.testing.assert_allclose(per_example[k][i], one[k], rtol=1e-5, atol=1e-6)
    numeric = numerical_grad(lambda w: mlp_loss_np({**params, "w1": w}, xs[1], ys[1]), params["w1"])
    np.testing.assert_allclose(per_example["w1"][1], numeric, rtol=2e-3, atol=1e-4)
    # vmap of grad eagerly (no jit) agrees too.
    eager = jax.vmap(jax.grad(mlp_loss), in_axes=(None, 0, 0))(params, xs, ys)
    np.testing.assert_allclose(eager["b1"], per_example["b1"], rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_sums_over_the_batch():
    params = mlp_init()
    ys = np.array([[0.5], [-1.0], [0.2], [1.5]], np.float32)

    def total(params):
        losses = jax.vmap(mlp_loss, in_axes=(None, 0, 0))(params, XS[:, None, :], ys[:, None, :])
        return jnp.sum(losses)

    g = jax.grad(total)(params)
    g_jit = jax.jit(jax.grad(total))(params)
    numeric = numerical_grad(
        lambda w2: sum(
            mlp_loss_np({**params, "w2": w2}, XS[i : i + 1], ys[i : i + 1]) for i in range(4)
        ),
        params["w2"],
    )
    np.testing.assert_allclose(g["w2"], numeric, rtol=2e-3, atol=1e-4)
    for k in params:
        np.testing.assert_allclose(g[k], g_jit[k], rtol=1e-5, atol=1e-6)


# --- vjp with pytrees, closures -----------------------------------------------------------------


def test_vjp_with_pytree_inputs_and_outputs():
    def f(p, scale):
        return {"a": jnp.sin(p["x"]) * scale, "b": (p["x"] * p["y"], jnp.sum(p["y"]))}

    p = {"x": X3, "y": X3 * 2}
    out, pullback = jax.vjp(f, p, np.float32(3.0))
    ct = {"a": np.ones(3, np.float32), "b": (np.full(3, 2.0, np.float32), np.float32(1.0))}
    gp, gscale = pullback(ct)
    np.testing.assert_allclose(gp["x"], 3 * np.cos(X3) + 2 * X3 * 2, rtol=1e-6)
    np.testing.assert_allclose(gp["y"], 2 * X3 + 1, rtol=1e-6)
    np.testing.assert_allclose(gscale, np.sum(np.sin(X3)), rtol=1e-6)
    gp_jit, _ = jax.jit(lambda p, s, ct: jax.vjp(f, p, s)[1](ct))(p, np.float32(3.0), ct)
    np.testing.assert_allclose(gp_jit["x"], gp["x"], rtol=1e-6)


def test_closures_over_outer_tracers_are_not_confused():
    # d/dx [x * d/dy (x + y)] = d/dx [x] = 1 (perturbation confusion would give 2)
    assert float(jax.grad(lambda x: x * jax.grad(lambda y: x + y)(1.0))(2.0)) == 1.0
    assert float(jax.jit(jax.grad(lambda x: x * jax.grad(lambda y: x + y)(1.0)))(2.0)) == 1.0
    # A jitted function closing over an outer grad's tracer.
    g = jax.grad(lambda x: jax.jit(lambda y: x * jnp.sin(y))(2.0))(3.0)
    np.testing.assert_allclose(g, np.sin(2.0), rtol=1e-6)
    # vmap closing over an outer vmap's tracer, and grad inside.
    out = jax.vmap(lambda x: jax.vmap(lambda y: jax.grad(lambda z: x * z * y)(1.0))(X3))(X3)
    np.testing.assert_allclose(out, np.outer(X3, X3), rtol=1e-6)


# --- custom rules, checkpoint ------------------------------------------------------------------


@jax.custom_vjp
def clipped_sin(x):
    return jnp.sin(x)


def _clipped_sin_fwd(x):
    return jnp.sin(x), jnp.cos(x)


def _clipped_sin_bwd(cos_x, ct):
    return (jnp.clip(cos_x * ct, -0.5, 0.5),)


clipped_sin.defvjp(_clipped_sin_fwd, _clipped_sin_bwd)


@jax.custom_jvp
def soft_abs(x):
    return jnp.sqrt(x * x + 1.0)


@soft_abs.defjvp
def _soft_abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return soft_abs(x), x / soft_abs(x) * t * 10.0  # deliberately scaled: used, not derived


def test_custom_vjp_inside_checkpoint_inside_jit():
    f = jax.checkpoint(lambda x: jnp.sum(clipped_sin(x) * x))
    g = jax.jit(jax.grad(f))(X3)
    expected = np.clip(np.cos(X3) * X3, -0.5, 0.5) + np.sin(X3)
    np.testing.assert_allclose(g, expected, rtol=1e-5)
    np.testing.assert_allclose(jax.grad(f)(X3), expected, rtol=1e-5)
    text = jax.jit(jax.grad(f)).lower(X3).as_text()
    assert "optimization_barrier" in text


def test_custom_rules_under_vmap_and_grad_in_every_order():
    expected = np.clip(np.cos(XS), -0.5, 0.5)
    np.testing.assert_allclose(
        jax.vmap(jax.grad(lambda x: jnp.sum(clipped_sin(x))))(XS), expected, rtol=1e-6
    )
    np.testing.assert_allclose(
        jax.grad(lambda x: jnp.sum(jax.vmap(clipped_sin)(x)))(XS), expected, rtol=1e-6
    )
    np.testing.assert_allclose(
        jax.jit(jax.grad(lambda x: jnp.sum(jax.vmap(clipped_sin)(x))))(XS), expected, rtol=1e-6
    )
    deriv = XS / np.sqrt(XS * XS + 1) * 10
    np.testing.assert_allclose(
        jax.grad(lambda x: jnp.sum(jax.vmap(soft_abs)(x)))(XS), deriv, rtol=1e-5
    )
    np.testing.assert_allclose(
        jax.vmap(jax.grad(lambda x: jnp.sum(soft_abs(x))))(XS), deriv, rtol=1e-5
    )
    _, t = jax.jvp(jax.vmap(soft_abs), (XS,), (np.ones_like(XS),))
    np.testing.assert_allclose(t, deriv, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.vmap(soft_abs))(XS), np.sqrt(XS * XS + 1), rtol=1e-6)


def test_custom_vjp_under_vmap_with_an_unbatched_argument():
    @jax.custom_vjp
    def scale(x, s):
        return x * s

    scale.defvjp(lambda x, s: (x * s, (x, s)), lambda r, ct: (ct * r[1] * 2.0, jnp.sum(ct * r[0])))
    s = np.float32(1.5)
    gs = jax.grad(lambda s: jnp.sum(jax.vmap(scale, in_axes=(0, None))(XS, s)))(s)
    np.testing.assert_allclose(gs, XS.sum(), rtol=1e-5)
    gx = jax.grad(lambda x: jnp.sum(jax.vmap(scale, in_axes=(0, None))(x, s)))(XS)
    np.testing.assert_allclose(gx, np.full_like(XS, 3.0), rtol=1e-6)


def count(closed, name):
    return sum(e.primitive.name == name for e in all_eqns(closed.jaxpr))


def test_checkpoint_policies_under_jit():
    def body(x):
        y = jnp.sin(x @ x)
        return jnp.sum(jnp.sin(y))

    m = XS[:3, :3]
    expected = jax.grad(body)(m)
    for policy, saves_dot in [
        (jax.checkpoint_policies.nothing_saveable, False),
        (jax.checkpoint_policies.everything_saveable, True),
        (jax.checkpoint_policies.dots_saveable, True),
    ]:
        f = jax.checkpoint(body, policy=policy)
        np.testing.assert_allclose(jax.jit(jax.grad(f))(m), expected, rtol=1e-5)
        closed = jax.make_jaxpr(jax.grad(f))(m)
        # The dot is recomputed by the backward pass unless the policy saves it.
        dots = count(closed, "dot_general")
        assert dots == (3 if saves_dot else 4), (policy, closed)

    def named(x):
        y = jax.ad_checkpoint.checkpoint_name(jnp.sin(x), "s")
        return jnp.sum(jnp.sin(y) * jnp.cos(x))

    only_s = jax.checkpoint(named, policy=jax.checkpoint_policies.save_only_these_names("s"))
    none = jax.checkpoint(named)
    np.testing.assert_allclose(jax.jit(jax.grad(only_s))(X3), jax.grad(named)(X3), rtol=1e-5)
    assert count(jax.make_jaxpr(jax.grad(only_s))(X3), "sin") < count(
        jax.make_jaxpr(jax.grad(none))(X3), "sin"
    )


def test_checkpoint_under_vmap():
    f = jax.checkpoint(lambda x: jnp.sum(jnp.sin(jnp.sin(x))))
    g = jax.vmap(jax.grad(f))(XS)
    np.testing.assert_allclose(g, np.cos(np.sin(XS)) * np.cos(XS), rtol=1e-5)
    g2 = jax.grad(lambda x: jnp.sum(jax.vmap(f)(x)))(XS)
    np.testing.assert_allclose(g2, g, rtol=1e-6)


# --- donation ------------------------------------------------------------------------------------


def test_donated_arguments_under_grad():
    jf = jax.jit(lambda x, y: jnp.sum(jnp.sin(x) * y), donate_argnums=0)
    x, y = jnp.asarray(X3), jnp.asarray(X3 * 2)
    g = jax.grad(jf)(x, y)
    np.testing.assert_allclose(g, np.cos(X3) * X3 * 2, rtol=1e-6)
    assert x.is_deleted()  # as in JAX: the forward call consumed the donated buffer
    # The backward call reads the donated x itself: the forward call must not donate it.
    jg = jax.jit(lambda x, y: x * y, donate_argnums=0)
    x = jnp.asarray(X3)
    gy = jax.grad(lambda y: jnp.sum(jg(x, y)))(jnp.asarray(X3))
    np.testing.assert_allclose(gy, X3, rtol=1e-6)
    assert not x.is_deleted()


# --- the surface ----------------------------------------------------------------------------------


def test_surface_names_and_stop_gradient():
    for name in (
        "grad value_and_grad jvp vjp linearize linear_transpose vmap custom_jvp custom_vjp "
        "checkpoint remat checkpoint_policies jacfwd jacrev jacobian hessian closure_convert"
    ).split():
        assert callable(getattr(jax, name)) or name == "checkpoint_policies", name
    assert jax.custom_derivatives.custom_vjp is jax.custom_vjp
    g = jax.grad(lambda x: jnp.sum(jax.lax.stop_gradient(x) * x))(X3)
    np.testing.assert_allclose(g, X3, rtol=1e-6)
    vec = jnp.vectorize(lambda a, b: jnp.sum(a * b), signature="(n),(n)->()")
    np.testing.assert_allclose(vec(XS, X3), XS @ X3, rtol=1e-6)
    t = jax.linear_transpose(lambda x: x * 2.0, X3)(np.ones(3, np.float32))
    np.testing.assert_allclose(t[0], np.full(3, 2.0), rtol=1e-6)
    # (the dot-product test sums in float64, so float32 needs explicit tolerances)
    jax.test_util.check_grads(lambda x: jnp.sin(x) * x, (X3,), order=2, atol=1e-2, rtol=1e-2)
