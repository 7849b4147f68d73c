"""modjax.custom_batching (jax.custom_batching): ``custom_vmap`` and ``sequential_vmap``
eagerly, under jit, vmap (nested, partly batched), jvp (through the rule, as JAX's), and
under custom_vjp for reverse mode; JAX's errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax.custom_batching import custom_vmap, sequential_vmap

XS = np.arange(3.0, dtype=np.float32)
YS = np.arange(1.0, 4.0, dtype=np.float32)


def make_f(calls=None):
    @custom_vmap
    def f(x, y):
        return x + y

    @f.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        if calls is not None:
            calls.append((axis_size, in_batched))
        return xs * ys, True

    return f


def test_the_rule_runs_under_vmap_only():
    calls = []
    f = make_f(calls)
    assert float(f(1.0, 2.0)) == 3.0 and float(jax.jit(f)(1.0, 2.0)) == 3.0
    np.testing.assert_array_equal(jax.vmap(f)(XS, YS), XS * YS)
    np.testing.assert_array_equal(jax.vmap(f, in_axes=(0, None))(XS, 2.0), XS * 2)
    np.testing.assert_array_equal(jax.jit(jax.vmap(f))(XS, YS), XS * YS)
    assert calls == [(3, [True, True]), (3, [True, False]), (3, [True, True])]
    # nested: the inner vmap uses the rule, the outer batches what the rule did
    np.testing.assert_array_equal(jax.vmap(jax.vmap(f))(XS[None], YS[None]), (XS * YS)[None])
    text = str(jax.make_jaxpr(f)(1.0, 2.0))
    assert "custom_vmap_call[" in text and "rule=<function" in text and "add d e" in text
    assert "mul a b" in str(jax.make_jaxpr(jax.vmap(f))(XS, YS))


def test_jvp_goes_through_the_program_and_under_vmap_through_the_rule():
    f = make_f()
    primal, tangent = jax.jvp(f, (1.0, 2.0), (1.0, 1.0))
    assert float(primal) == 3.0 and float(tangent) == 2.0
    primal, tangent = jax.jvp(jax.vmap(f), (XS, YS), (YS, YS))
    np.testing.assert_array_equal(primal, XS * YS)
    np.testing.assert_array_equal(tangent, YS * YS + XS * YS)  # the rule's derivative
    # vmap of jvp with the tangent batched but not the primal: the rule is vmapped over it
    out = jax.vmap(lambda t: jax.jvp(lambda x: jax.vmap(f)(x, YS), (XS,), (t,))[1])(
        np.eye(3, dtype=np.float32)
    )
    np.testing.assert_array_equal(out, np.eye(3) * YS)


def test_reverse_mode_fails_as_in_jax_and_works_under_custom_vjp():
    f = make_f()
    with pytest.raises(ValueError, match="Linearization failed to produce known values"):
        jax.grad(f)(1.0, 2.0)

    @jax.custom_vjp
    @custom_vmap
    def g(x, y):
        return jnp.sin(x) * y

    @g.def_vmap  # the inner custom_vmap's, through custom_vjp
    def g_vmap_rule(axis_size, in_batched, xs, ys):
        return jnp.cos(xs) * ys, True

    def g_fwd(x, y):
        return g(x, y), (jnp.cos(x), jnp.sin(x), y)

    def g_bwd(res, ct):
        cos_x, sin_x, y = res
        return (cos_x * ct * y, sin_x * ct)

    g.defvjp(g_fwd, g_bwd)
    np.testing.assert_array_equal(jax.vmap(g)(jnp.zeros(3), jnp.ones(3)), np.ones(3))
    assert float(jax.grad(g)(jnp.zeros(()), jnp.ones(()))) == 1.0


def test_sequential_vmap_loops_over_the_batch():
    seen = []

    @sequential_vmap
    def h(x, scale):
        seen.append(jnp.shape(x))  # traced once per element shape: unbatched
        return {"out": x * scale["s"] + 1}

    out = jax.vmap(h, in_axes=(0, {"s": None}))(jnp.arange(3.0), {"s": 2.0})
    np.testing.assert_array_equal(out["out"], [1.0, 3.0, 5.0])
    assert seen[-1] == ()
    assert "scan[" in str(jax.make_jaxpr(jax.vmap(lambda x: h(x, {"s": 2.0})))(jnp.arange(3.0)))
    np.testing.assert_array_equal(jax.jit(jax.vmap(lambda x: h(x, {"s": 1.0})["out"]))(XS), XS + 1)


def test_errors_and_arguments():
    @custom_vmap
    def no_rule(x):
        return x

    with pytest.raises(
        AttributeError, match="No batching rule defined for custom_vmap function no_rule"
    ):
        no_rule(1.0)

    @custom_vmap
    def pair(x):
        return x, x

    pair.def_vmap(lambda n, b, x: (x, True))
    with pytest.raises(ValueError, match="does not match that of original custom-vmapped function"):
        jax.vmap(pair)(XS)
    pair.def_vmap(lambda n, b, x: ((x, x), True))
    with pytest.raises(ValueError, match="output batching specification"):
        jax.vmap(pair)(XS)

    @custom_vmap
    def kw(x, y=2.0):
        return x * y

    kw.def_vmap(lambda n, b, x, y: (x * y, True))
    assert float(kw(1.0, y=3.0)) == 3.0
    np.testing.assert_array_equal(jax.vmap(kw)(XS), XS * 2)
    with pytest.raises(TypeError, match="could not be resolved to positional-only arguments"):
        kw(1.0, z=2.0)
    assert kw.__name__ == "kw" and isinstance(jax.custom_batching.custom_vmap(kw), custom_vmap)
