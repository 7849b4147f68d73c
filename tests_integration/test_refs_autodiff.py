"""Differentiation through mutable array references (``jax.Ref``), against JAX 0.10.2.

Forward mode pairs each reference with one holding its tangent. Reverse mode
linearizes (the tangent reference of a value that is not differentiated, such as
``jax.new_ref(0.0)``, is staged into the linear program with the writes into it)
and transposes the state-discharged linear program. The answers were recorded from
JAX 0.10.2; finite differences check the ones JAX does not print exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_refs import double_then_bump, scaled_sum

import modjax as jax
import modjax.numpy as jnp

# --- forward mode -----------------------------------------------------------------------------


def test_jvp_through_references():
    for run in (jax.jvp, jax.jit(jax.jvp, static_argnums=0)):
        y, t = run(double_then_bump, (jnp.arange(3.0),), (jnp.ones(3),))
        assert (float(y), float(t)) == (21.0, 30.0)  # JAX 0.10.2's answer
    # A reference made from a constant is still differentiated, as in JAX.
    y, t = jax.jvp(scaled_sum, (jnp.arange(3.0),), (jnp.ones(3),))
    assert (float(y), float(t)) == (0.0, 3.0)
    shared = jax.new_ref(jnp.ones(3))
    y, t = jax.jvp(lambda x: jnp.sum(shared[...] * x), (2.0,), (1.0,))
    assert (float(y), float(t)) == (6.0, 3.0)
    with pytest.raises(Exception, match="with a differentiated value on a non-differentiated"):
        jax.jvp(lambda x: shared.__setitem__(0, x), (2.0,), (1.0,))


def _while_accumulate(x, step):
    r = jax.new_ref(0.0)

    def body(c):
        r[...] += x * c
        return c + step(x)

    jax.lax.while_loop(lambda c: c < 5.0, body, 0.0)
    return r[...]


def test_while_loop_writing_a_reference_from_a_constant():
    # The loop's carry has no tangent; only the reference it writes does.
    def f(x):
        return _while_accumulate(x, lambda x: 1.0)

    y, t = jax.jvp(f, (1.3,), (1.0,))
    assert (float(y), float(t)) == pytest.approx((13.0, 10.0))  # JAX 0.10.2's answers
    y, f_lin = jax.linearize(f, 1.3)
    assert (float(y), float(f_lin(1.0))) == pytest.approx((13.0, 10.0))
    y, f_lin = jax.linearize(lambda x: _while_accumulate(x, lambda x: x), 1.3)
    assert (float(y), float(f_lin(1.0))) == pytest.approx((10.14, 15.6))
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.wh"):
        jax.grad(f)(1.3)


# --- reverse mode -----------------------------------------------------------------------------


def test_grad_through_references_made_from_the_inputs():
    for run in (jax.grad(double_then_bump), jax.jit(jax.grad(double_then_bump))):
        np.testing.assert_array_equal(run(jnp.arange(3.0)), [4.0, 10.0, 16.0])  # JAX's
    np.testing.assert_array_equal(
        jax.vmap(jax.grad(double_then_bump))(jnp.ones((2, 3))), [[12, 14, 8]] * 2
    )

    def fill(x):
        r = jax.new_ref(x * jnp.zeros(3))  # made from the input: its tangent is staged

        def body(i, c):
            r[i] = x * i
            return c

        jax.lax.fori_loop(0, 3, body, 0.0)
        return r[...].sum()

    assert float(jax.grad(fill)(2.0)) == 3.0
    shared = jax.new_ref(jnp.ones(3))
    assert float(jax.grad(lambda x: jnp.sum(shared[...] * x))(2.0)) == 3.0


def _two_writes(x, w):
    r = jax.new_ref(0.0)
    r[...] += x * w
    r[...] += jnp.sin(x)
    return r[...]


def _fori_accumulate(x):
    r = jax.new_ref(jnp.zeros(3))

    def body(i, c):
        r[i] += x * i + c
        return c * x

    c = jax.lax.fori_loop(0, 3, body, 1.0)
    return (r[...] ** 2).sum() + c


def _read_back(x):
    r = jax.new_ref(0.0)
    r[...] = x * 3
    y = r[...]
    r[...] = y * x
    return r[...] + y


def _branches(x):
    r = jax.new_ref(jnp.zeros(2))

    def yes():
        r[0] += x * 3

    def no():
        r[1] += x * x

    jax.lax.cond(x > 1, yes, no)
    return (r[...] * jnp.array([1.0, 2.0])).sum()


def _inner_jit(x):
    r = jax.new_ref(0.0)

    @jax.jit
    def inner(y):
        r[...] += y * y

    inner(x)
    inner(x * 2)
    return r[...]


def _swap_and_freeze(x):
    r = jax.new_ref(1.0)
    old = jax.ref.swap(r, ..., x * 2)
    s = jax.new_ref(jnp.zeros(()))
    s[...] += x
    return old + r[...] * x + jax.freeze(s) * 2


def _array_index_writes(x):
    r = jax.new_ref(jnp.zeros((3,)))
    r[jnp.array([0, 2])] += x * jnp.array([1.0, 2.0])
    r[1:] += x**2
    return (r[...] ** 2).sum()


def _repeated_index_write(x):
    r = jax.new_ref(jnp.zeros(3))
    r[jnp.array([0, 0, 2])] = x * jnp.array([1.0, 2.0, 3.0])  # one of the two writes wins
    return (r[...] * jnp.array([1.0, 10.0, 100.0])).sum()


def _repeated_index_from_input(x):
    r = jax.new_ref(x)
    r[jnp.array([0, 0, 2])] = r[jnp.array([1, 1, 1])] * 2
    return (r[...] ** 2).sum()


# (function, argument, JAX 0.10.2's gradient)
CONSTANT_REFERENCES = [
    (scaled_sum, jnp.arange(3.0), [3.0, 0.0, 0.0]),
    (scaled_sum, jnp.arange(1.0, 4.0), [7.0, 1.0, 1.0]),
    (_fori_accumulate, 1.3, 54.938),
    (_read_back, 2.0, 15.0),
    (_branches, 2.0, 3.0),
    (_branches, 0.5, 2.0),
    (_inner_jit, 1.5, 15.0),
    (_swap_and_freeze, 1.5, 8.0),
    (_array_index_writes, 1.5, 69.0),
    # A write at repeated indices: each gets the cotangent read back there, as JAX's
    # transpose of a reference write gives it.
    (_repeated_index_write, 1.5, 303.0),
    (_repeated_index_from_input, jnp.arange(1.0, 4.0), [0.0, 52.0, 0.0]),
]


@pytest.mark.parametrize(
    "fn,x,want",
    CONSTANT_REFERENCES,
    ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CONSTANT_REFERENCES)],
)
def test_grad_through_a_reference_made_from_a_constant(fn, x, want):
    np.testing.assert_allclose(jax.grad(fn)(x), want, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(fn))(x), want, rtol=1e-5)


def test_vjp_and_finite_differences_through_a_constant_reference():
    grads = jax.grad(_two_writes, argnums=(0, 1))(1.5, 2.0)
    np.testing.assert_allclose(grads, (2.0707371, 1.5), rtol=1e-6)  # JAX 0.10.2's answers
    _, f_vjp = jax.vjp(_two_writes, 1.5, 2.0)
    np.testing.assert_allclose(f_vjp(2.0), (4.1414742, 3.0), rtol=1e-6)

    def scan_writes(xs, w):
        acc = jax.new_ref(jnp.zeros(3))

        def body(c, x):
            acc[...] += jnp.sin(x * w) * c
            return c * w, acc[...].sum()

        c, ys = jax.lax.scan(body, 1.0, xs)
        return acc[...].sum() + ys.sum() + c

    xs = jnp.arange(12.0).reshape(4, 3) / 10
    gw = jax.grad(scan_writes, argnums=1)
    assert float(gw(xs, 0.7)) == pytest.approx(25.25275, rel=1e-5)  # JAX 0.10.2's answer
    np.testing.assert_allclose(
        jax.vmap(gw, (None, 0))(xs, jnp.array([0.5, 0.7])), [14.09393, 25.25275], rtol=1e-5
    )
    jax.test_util.check_grads(scan_writes, (xs, 0.7), order=1, modes=("rev",), atol=2e-2, rtol=2e-2)


def test_vjp_with_refs_accumulates_cotangents():
    _, f_vjp = jax.vjp(lambda x, y: jnp.sum(x * y), jnp.ones(3), 2.0)
    r = jax.new_ref(jnp.full(3, 10.0))
    assert f_vjp.with_refs(r, jax.ad.DontWant())(1.0) == (jax.ad.GradRef(), jax.ad.DidntWant())
    np.testing.assert_array_equal(r[...], [12.0, 12.0, 12.0])  # JAX 0.10.2's answer
    value, marker = f_vjp.with_refs(jax.ad.GradValue(), jax.new_ref(1.0))(1.0)
    np.testing.assert_array_equal(value, [2.0, 2.0, 2.0])
    assert marker == jax.ad.GradRef()
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        f_vjp.with_refs(jax.new_ref(jnp.ones(2)), jax.ad.DontWant())(1.0)
    np.testing.assert_array_equal(f_vjp(1.0)[0], [2.0, 2.0, 2.0])


def test_derivatives_through_an_empty_ref():
    def fill(x):
        r = jax.empty_ref(jax.typeof(jnp.zeros(3)))
        r[...] = jnp.zeros(3)
        r[1] += x * 2
        return r[...].sum()

    y, t = jax.jvp(fill, (2.0,), (1.0,))
    assert (float(y), float(t)) == (4.0, 2.0)  # JAX 0.10.2's answers (its grad fails)
    assert float(jax.grad(fill)(2.0)) == 2.0
    assert float(jax.jit(jax.grad(fill))(2.0)) == 2.0

    def counts(x):  # an integer reference has no tangent
        r = jax.empty_ref(jax.typeof(jnp.zeros(3, jnp.int32)))
        r[1] = 3
        return r[...].sum() * x

    assert float(jax.grad(counts)(2.0)) == 3.0


def test_checkpointed_functions_writing_references():
    def accumulate(x):
        r = jax.new_ref(0.0)

        @jax.checkpoint
        def g(y):
            r[...] += jnp.sin(y)
            return y * 2

        z = g(x)
        return r[...] + z

    def scale(x):
        r = jax.new_ref(x)

        @jax.checkpoint
        def g(y):
            r[...] = r[...] * jnp.sin(y)
            return y * 2

        z = g(x)
        return r[...] + z

    assert float(jax.jit(accumulate)(1.5)) == pytest.approx(3.9975, rel=1e-5)  # JAX's
    assert float(jax.jit(scale)(1.5)) == pytest.approx(4.4962, rel=1e-5)
    assert float(jax.jvp(accumulate, (1.5,), (1.0,))[1]) == pytest.approx(2.0707, rel=1e-4)
    # JAX 0.10.2's grad fails here; these are the derivatives (cos(x) + 2, sin + x cos + 2).
    assert float(jax.grad(accumulate)(1.5)) == pytest.approx(np.cos(1.5) + 2, rel=1e-5)
    want = np.sin(1.5) + 1.5 * np.cos(1.5) + 2
    assert float(jax.jit(jax.grad(scale))(1.5)) == pytest.approx(want, rel=1e-5)
