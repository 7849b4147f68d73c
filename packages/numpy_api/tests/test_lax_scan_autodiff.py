"""Autodiff of lax.scan: JVP, partial evaluation (linearize, grad, checkpoint) and transpose.

Derivatives are checked against finite differences and the dot-product test
(``check_grads``, both modes) for pytrees of carries and xs, ``xs=None``,
``reverse``, ``unroll``, closed-over consts (tracers of an outer ``grad`` too),
integer carries, nested scans and ``fori_loop``; the jaxprs of JVPs and
gradients print, parse back and check; the known scan hoists loop-invariant
residuals out of the loop; ``checkpoint`` policies on the body shrink the
residuals saved per iteration.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import checkpoint, checkpoint_policies, grad, jvp, vjp
from modjax.autodiff.linearize import linearize_flat
from modjax.autodiff.testing import check_grads
from modjax.runtime import jit
from modjax.tracecore import check_jaxpr, dtypes, jaxpr_equal, make_jaxpr, parse_jaxpr
from modjax.tracecore.jaxpr import subjaxprs

TOL = {"atol": 2e-2, "rtol": 2e-2}
RNG = np.random.default_rng(0)


def f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


# --- bodies shared by the tests (traced once each) ------------------------------------------

W = f32(3, 3, scale=0.5)


def rnn_body(h, x):
    h = jnp.tanh(jnp.dot(W, h) + x)
    return h, jnp.sin(h) * x


def rnn_loss(h0, xs, reverse=False, unroll=1):
    h, ys = lax.scan(rnn_body, h0, xs, reverse=reverse, unroll=unroll)
    return jnp.sum(h * h) + jnp.sum(ys)


def tree_body(carry, x):
    (a, b), count = carry
    a2 = a * jnp.cos(x["u"]) + b
    b2 = b * 0.9 + x["v"] * a
    return ((a2, b2), count + 1), {"p": a2 * b2, "q": count}


def tree_loss(a, b, u, v):
    ((a, b), count), ys = lax.scan(tree_body, ((a, b), np.int32(0)), {"u": u, "v": v})
    return jnp.sum(a) + jnp.sum(b * b) + jnp.sum(ys["p"]) + 0.0 * count


def consts_loss(w, c0, n):
    def body(c, _):
        return jnp.sin(w) * c + w, c * w

    c, ys = lax.scan(body, c0, None, length=n)
    return jnp.sum(c) + jnp.sum(ys * ys)


# --- forward and reverse mode against finite differences ------------------------------------


@settings(max_examples=5, deadline=None)
@given(st.booleans(), st.sampled_from([1, 2]), st.integers(0, 2**16))
def test_rnn_scan_grads(reverse, unroll, seed):
    rng = np.random.default_rng(seed)
    h0 = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((5, 3)).astype(np.float32)
    check_grads(lambda h, x: rnn_loss(h, x, reverse, unroll), (h0, xs), order=1, **TOL)


def test_rnn_scan_second_order():
    check_grads(rnn_loss, (f32(3), f32(4, 3)), order=2, **TOL)


def test_pytree_carries_and_xs_with_an_integer_carry():
    args = (f32(2), f32(2), f32(4, 2), f32(4, 2))
    check_grads(tree_loss, args, order=2, **TOL)
    ga = grad(tree_loss, argnums=(0, 1, 2, 3))(*args)
    assert [g.shape for g in ga] == [(2,), (2,), (4, 2), (4, 2)]


def test_integer_carry_gets_no_tangent_and_its_value_is_right():
    def f(a, u):
        ((_, _), count), ys = lax.scan(tree_body, ((a, a), np.int32(0)), {"u": u, "v": u})
        return count, ys["q"]

    (count, q), (count_t, q_t) = jvp(f, (f32(2), f32(3, 2)), (f32(2), f32(3, 2)))
    assert int(count) == 3 and list(np.asarray(q)) == [0, 1, 2]
    assert count_t.dtype == dtypes.float0 and q_t.dtype == dtypes.float0


def test_xs_none_with_length_and_consts_closed_over():
    check_grads(lambda w, c: consts_loss(w, c, 4), (f32(3), f32(3)), order=2, **TOL)


def _reference_consts_loss(w, c, n):
    total = 0.0
    for _ in range(n):
        c, y = np.sin(w) * c + w, c * w
        total += np.sum(y * y)
    return np.sum(c) + total


def test_grad_equals_numpy_finite_differences_of_the_python_loop():
    w, c = f32(3).astype(np.float64), f32(3).astype(np.float64)
    g = np.asarray(grad(lambda w: consts_loss(w, c.astype(np.float32), 4))(w.astype(np.float32)))
    eps, fd = 1e-5, np.zeros(3)
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        fd[i] = (_reference_consts_loss(w + e, c, 4) - _reference_consts_loss(w - e, c, 4)) / (
            2 * eps
        )
    np.testing.assert_allclose(g, fd, rtol=2e-3, atol=2e-3)


def test_consts_that_are_tracers_of_an_outer_grad():
    def outer(s):
        def inner(c0):
            def body(c, x):
                return c * s + x, c * s

            c, ys = lax.scan(body, c0, jnp.ones(4) * s)
            return jnp.sum(c) + jnp.sum(ys)

        return grad(inner)(s * 2.0)

    check_grads(outer, (np.float32(0.7),), order=1, **TOL)


def test_jit_of_grad_equals_grad():
    args = (f32(3), f32(5, 3))
    g = grad(rnn_loss, argnums=(0, 1))(*args)
    gj = jit(grad(rnn_loss, argnums=(0, 1)))(*args)
    for a, b in zip(g, gj, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)


def test_grad_of_fori_loop_with_concrete_bounds():
    def f(x):
        return lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) * x + i, x)

    check_grads(f, (np.float32(0.4),), order=2, **TOL)
    g = jit(grad(f))(np.float32(0.4))
    np.testing.assert_allclose(np.asarray(g), np.asarray(grad(f)(np.float32(0.4))), rtol=1e-5)


def test_jacfwd_like_jvp_of_scan_columns():
    h0, xs = f32(3), f32(4, 3)

    def final(h):
        return lax.scan(rnn_body, h, xs)[0]

    cols = [np.asarray(jvp(final, (h0,), (np.eye(3, dtype=np.float32)[i],))[1]) for i in range(3)]
    _, pullback = vjp(final, h0)
    rows = [np.asarray(pullback(np.eye(3, dtype=np.float32)[i])[0]) for i in range(3)]
    np.testing.assert_allclose(np.stack(cols, 1), np.stack(rows, 0), rtol=1e-4, atol=1e-5)


def test_nested_scans_under_grad():
    def f(c0, xss):
        def outer(c, xs):
            c, ys = lax.scan(lambda c, x: (jnp.sin(c) * x + c, c * x), c, xs)
            return c * 0.5, jnp.sum(ys)

        c, ys = lax.scan(outer, c0, xss)
        return jnp.sum(c) + jnp.sum(ys)

    check_grads(f, (np.float32(0.3), f32(3, 4)), order=2, **TOL)


def test_checkpointed_body_under_grad():
    body = checkpoint(rnn_body, policy=checkpoint_policies.dots_saveable)
    check_grads(lambda h, x: jnp.sum(lax.scan(body, h, x)[0]), (f32(3), f32(4, 3)), order=1, **TOL)


# --- jaxprs ---------------------------------------------------------------------------------


def _roundtrip(closed):
    check_jaxpr(closed)
    text = str(closed)
    back = parse_jaxpr(text, consts=closed.consts)
    assert jaxpr_equal(back, closed), text
    check_jaxpr(back)
    return text


def _scans(jaxpr):
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "scan":
            yield eqn
        for sub in subjaxprs(eqn.params):
            yield from _scans(getattr(sub, "jaxpr", sub))


def test_jaxprs_of_jvp_and_grad_print_parse_and_check():
    args = (f32(3), f32(5, 3))
    jvp_text = _roundtrip(make_jaxpr(lambda h, x: jvp(rnn_loss, (h, x), (h, x)))(*args))
    assert "scan[" in jvp_text
    grad_closed = make_jaxpr(grad(rnn_loss, argnums=(0, 1)))(*args)
    _roundtrip(grad_closed)
    assert [e.params["reverse"] for e in _scans(grad_closed.jaxpr)] == [False, True]
    _roundtrip(
        make_jaxpr(grad(tree_loss, argnums=(0, 1, 2, 3)))(f32(2), f32(2), f32(4, 2), f32(4, 2))
    )


# --- residuals ------------------------------------------------------------------------------

L, H = 6, 4


def _residual_shapes(fun, *args):
    _, linear, *_ = linearize_flat(lambda *a: [fun(*a)], list(args))
    return [np.shape(c) for c in linear.consts]


def test_loop_invariant_residuals_are_hoisted_out_of_the_loop():
    def f(w, h0, xs):
        def body(h, x):
            return jnp.tanh(jnp.dot(jnp.sin(w), h) + x), None

        return jnp.sum(lax.scan(body, h0, xs)[0])

    shapes = _residual_shapes(f, f32(H, H), f32(H), f32(L, H))
    assert (L, H, H) not in shapes, shapes  # sin(w) and cos(w) are not stacked per step
    assert shapes.count((H, H)) >= 2, shapes
    args = (f32(H, H), f32(H), f32(L, H))
    check_grads(f, args, order=1, **TOL)
    # The hoisted work and the known scan form one call; the gradient's jaxpr round-trips.
    text = _roundtrip(make_jaxpr(grad(f, argnums=(0, 1, 2)))(*args))
    assert "name=scan_known" in text
    g, gj = grad(f, argnums=(0, 1, 2))(*args), jit(grad(f, argnums=(0, 1, 2)))(*args)
    for a, b in zip(g, gj, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_checkpoint_policy_reduces_residuals_per_iteration():
    w1, w2 = f32(H, H), f32(H, H)
    h0, xs = f32(H), f32(L, H)

    def cell(h, x):
        b = jnp.dot(w2, jnp.sin(jnp.dot(w1, h)))
        return jnp.tanh(jnp.sin(b) + x), None

    def loss(policy):
        body = cell if policy is None else checkpoint(cell, policy=policy)
        return lambda h0: jnp.sum(lax.scan(body, h0, xs)[0])

    def saved_per_step(policy):
        # The residuals stacked by the known scan (xs, read in place, are not copies).
        _, linear, *_ = linearize_flat(lambda h: [loss(policy)(h)], [h0])
        return [np.shape(c)[1:] for c in linear.consts if np.shape(c)[:1] == (L,) and c is not xs]

    everything = saved_per_step(None)
    assert saved_per_step(checkpoint_policies.everything_saveable) == everything
    dots = saved_per_step(checkpoint_policies.dots_saveable)
    nothing = saved_per_step(checkpoint_policies.nothing_saveable)
    assert len(nothing) == 1 < len(dots) == 2 < len(everything), (nothing, dots, everything)
    ref = np.asarray(grad(loss(None))(h0))
    for policy in (checkpoint_policies.nothing_saveable, checkpoint_policies.dots_saveable):
        np.testing.assert_allclose(np.asarray(grad(loss(policy))(h0)), ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_transpose_of_linear_scan_keeps_zero_cotangents_symbolic(reverse):
    # Only ys feed the loss: the final carry's cotangent is a symbolic zero on entry.
    def f(h0, xs):
        _, ys = lax.scan(rnn_body, h0, xs, reverse=reverse)
        return jnp.sum(ys)

    check_grads(f, (f32(3), f32(4, 3)), order=1, **TOL)


def test_grad_of_a_const_only_with_a_constant_initial_carry():
    # The carry's tangent starts as a (known) zero and becomes unknown by fixpoint.
    xs = f32(4, 3)

    def f(w):
        c, ys = lax.scan(lambda c, x: (c * jnp.sin(w) + x, c * x), np.ones(3, np.float32), xs)
        return jnp.sum(c) + jnp.sum(ys)

    check_grads(f, (np.float32(0.5),), order=2, **TOL)


def test_a_residual_that_is_a_known_y_is_not_stacked_twice():
    xs = f32(L, H)

    def f(h0):
        _, hs = lax.scan(lambda h, x: (jnp.tanh(h * x), h), h0, xs)  # the residual h is a y
        return jnp.sum(hs**2)

    _, linear, *_ = linearize_flat(lambda h: [f(h)], [f32(H)])
    stacked = [c for c in linear.consts if np.shape(c) == (L, H) and c is not xs]
    # hs, tanh(h x) and 1 - tanh(h x) (JAX's form of tanh's derivative); h again would be a 4th.
    assert len(stacked) == 3, [np.shape(c) for c in linear.consts]
    check_grads(f, (f32(H),), order=1, **TOL)


def test_vmap_of_grad_of_scan_equals_a_loop_of_grads():
    from modjax.batching import vmap

    def loss(c, xs):
        c, ys = lax.scan(lambda c, x: (jnp.sin(c) * x, c), c, xs)
        return jnp.sum(c) + jnp.sum(ys)

    cs, xss = f32(2, 3), f32(2, 4, 3)
    batched = np.asarray(vmap(grad(loss))(cs, xss))
    looped = np.stack([np.asarray(grad(loss)(cs[i], xss[i])) for i in range(2)])
    np.testing.assert_allclose(batched, looped, rtol=1e-5, atol=1e-6)


def test_grad_of_grad_forward_and_reverse():
    check_grads(grad(rnn_loss), (f32(3), f32(4, 3)), order=1, **TOL)


def test_eager_grad_of_scan_compiles_nothing_new_when_called_again():
    from modjax.runtime import dispatch

    args = (f32(3), f32(5, 3))
    g = grad(rnn_loss, argnums=(0, 1))
    first = g(*args)
    before = dispatch.stats["compiles"]
    again = g(*args)
    assert dispatch.stats["compiles"] == before
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
