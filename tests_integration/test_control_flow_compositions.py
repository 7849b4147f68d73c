"""Control flow under composed transformations, through ``import modjax as jax``.

Each construct's own rules are tested in numpy_api; here they meet each other
and every transformation at once: ``vmap(grad(scan))``, ``grad(vmap(cond))``,
``jit(grad(fori_loop))``, ``jacfwd(while_loop)``, nested scans, a scan inside a
cond inside a while, ``checkpoint`` on a scan body. Values are checked against
numpy loops and central finite differences in float64 on the function's
numpy twin; every traced program is checked by ``check_jaxpr`` and parsed back.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_compositions import numerical_grad

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.tracecore import check_jaxpr, jaxpr_equal, parse_jaxpr

XS = np.array([[0.5, 1.0, -0.7], [2.0, -0.3, 0.1], [0.9, 1.5, -1.1], [-2.0, 0.4, 0.6]], np.float32)
W = np.array([[0.4, -0.2, 0.1], [0.3, 0.5, -0.6], [-0.1, 0.2, 0.3]], np.float32)


def close(got, want, tol=2e-3):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol)


def round_trips(fn, *args):
    """Check the program of ``fn`` and that its text parses back to an equal program."""
    closed = jax.make_jaxpr(fn)(*args)
    check_jaxpr(closed)
    back = parse_jaxpr(str(closed), consts=closed.consts)
    assert jaxpr_equal(back, closed)


# --- an RNN loss: scan ------------------------------------------------------------------------


def rnn_loss(h0, xs, w=W):
    def step(h, x):
        h = jnp.tanh(w @ h + x)
        return h, h.sum()

    h, ys = lax.scan(step, h0, xs)
    return (h**2).sum() + ys.sum()


def rnn_loss_np(h0, xs, w=W):
    h, total = h0, 0.0
    for x in xs:
        h = np.tanh(w @ h + x)
        total += h.sum()
    return (h**2).sum() + total


def test_vmap_of_grad_of_scan():
    h0s = XS[:2] * 0.5
    got = jax.vmap(jax.grad(rnn_loss), in_axes=(0, None))(h0s, XS)
    for h0, row in zip(h0s, got, strict=True):
        close(row, numerical_grad(lambda h: rnn_loss_np(h, XS), h0))
    round_trips(jax.vmap(jax.grad(rnn_loss), in_axes=(0, None)), h0s, XS)


def test_jit_grad_of_scan_in_every_argument():
    g_h, g_xs, g_w = jax.jit(jax.grad(rnn_loss, argnums=(0, 1, 2)))(XS[0], XS, W)
    close(g_h, numerical_grad(lambda h: rnn_loss_np(h, XS), XS[0]))
    close(g_xs, numerical_grad(lambda xs: rnn_loss_np(XS[0], xs), XS))
    close(g_w, numerical_grad(lambda w: rnn_loss_np(XS[0], XS, w), W))


def test_grad_of_nested_scans():
    def inner_sum(c, row):
        total, _ = lax.scan(lambda a, v: (a + jnp.sin(v * c), None), 0.0, row)
        return c + total, total

    def f(x):
        c, ys = lax.scan(inner_sum, 0.1, x)
        return c + ys.sum()

    def f_np(x):
        c, total = 0.1, 0.0
        for row in x:
            t = sum(np.sin(v * c) for v in row)
            c, total = c + t, total + t
        return c + total

    close(jax.grad(f)(XS), numerical_grad(f_np, XS))
    round_trips(jax.grad(f), XS)


def test_checkpointed_scan_body_gives_the_same_gradient():
    def loss(h0, remat):
        def step(h, x):
            h = jnp.tanh(W @ h + x)
            return h, None

        body = jax.checkpoint(step) if remat else step
        h, _ = lax.scan(body, h0, XS)
        return (h**2).sum()

    close(jax.grad(lambda h: loss(h, True))(XS[0]), jax.grad(lambda h: loss(h, False))(XS[0]), 1e-5)


# --- cond, switch and fori_loop -------------------------------------------------------------------


def piecewise(x):
    return lax.cond(x.sum() > 0, lambda y: jnp.sin(y) * y, lambda y: jnp.cos(y) + y, x)


def piecewise_np(x):
    return np.sin(x) * x if x.sum() > 0 else np.cos(x) + x


def test_grad_of_vmap_of_cond_with_batched_predicates():
    def loss(xs):
        return jax.vmap(piecewise)(xs).sum()

    close(jax.grad(loss)(XS), numerical_grad(lambda xs: sum(piecewise_np(r).sum() for r in xs), XS))
    round_trips(jax.grad(loss), XS)


def test_vmap_of_grad_of_switch():
    branches = [jnp.sin, jnp.cos, lambda y: y * y]

    def f(i, x):
        return lax.switch(i, branches, x).sum()

    got = jax.vmap(jax.grad(f, argnums=1))(np.array([0, 1, 2, 7], np.int32), XS)
    want = [np.cos(XS[0]), -np.sin(XS[1]), 2 * XS[2], 2 * XS[3]]
    close(got, np.stack(want))


def test_jit_grad_of_fori_loop():
    def f(x):
        return lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) * x + i, x).sum()

    def f_np(x):
        c = x
        for i in range(5):
            c = np.sin(c) * x + i
        return c.sum()

    close(jax.jit(jax.grad(f))(XS[1]), numerical_grad(f_np, XS[1]))


# --- while_loop -------------------------------------------------------------------------------


def newton_sqrt(a):
    def body(state):
        x, i = state
        return 0.5 * (x + a / x), i + 1

    x, _ = lax.while_loop(lambda s: s[1] < 8, body, (a, 0))
    return x


def test_jacfwd_of_while_loop():
    a = np.array([2.0, 9.0, 0.5], np.float32)
    jac = jax.jacfwd(newton_sqrt)(a)
    close(jac, np.diag(0.5 / np.sqrt(a)))


def test_grad_of_while_loop_raises_jax_error():
    with pytest.raises(
        ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"
    ):
        jax.grad(lambda a: newton_sqrt(a).sum())(np.float32([2.0]))


def test_scan_inside_cond_inside_while_under_jit_vmap_and_jvp():
    def f(x):
        def body(state):
            v, k = state
            v = lax.cond(
                k % 2 == 0,
                lambda u: lax.scan(lambda c, y: (c * 0.9 + y, None), u, XS[:, :1] * u)[0],
                lambda u: jnp.sin(u),
                v,
            )
            return v, k + 1

        v, _ = lax.while_loop(lambda s: s[1] < 3, body, (x, 0))
        return v

    def f_np(x):
        v = x
        for k in range(3):
            if k % 2 == 0:
                c = v
                for y in XS[:, :1] * v:
                    c = c * 0.9 + y
                v = c
            else:
                v = np.sin(v)
        return v

    x = np.array([0.3], np.float32)
    close(f(x), f_np(x.astype(np.float64)))
    close(jax.jit(f)(x), f_np(x.astype(np.float64)))
    rows = np.array([[0.3], [-0.5], [1.1]], np.float32)
    close(jax.vmap(f)(rows), np.stack([f_np(r.astype(np.float64)) for r in rows]))
    _, tangent = jax.jvp(f, (x,), (np.ones_like(x),))
    close(tangent, numerical_grad(lambda v: f_np(v).sum(), x))
    round_trips(jax.vmap(f), rows)
