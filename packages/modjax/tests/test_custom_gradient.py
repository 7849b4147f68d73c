"""jax.custom_gradient: the function returns its value and its VJP rule."""

import numpy as np

import modjax as jax
import modjax.numpy as jnp


@jax.custom_gradient
def scaled_product(x, y):
    # A deliberately "wrong" gradient, so the test sees the rule is used.
    return x * y, lambda g: (2 * g * y, 3 * g * x)


@jax.custom_gradient
def clipped_sin(x):
    # The true derivative, clipped: a typical use (gradient clipping in a layer).
    return jnp.sin(x), lambda g: (jnp.clip(g * jnp.cos(x), -0.5, 0.5),)


@jax.custom_gradient
def single_cotangent(x):
    return jnp.tanh(x), lambda g: g * 10.0  # one argument: a bare cotangent is accepted


def test_values_are_the_function_and_gradients_are_the_rule():
    assert float(scaled_product(2.0, 3.0)) == 6.0
    gx, gy = jax.grad(scaled_product, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (6.0, 6.0)
    assert float(jax.grad(single_cotangent)(0.3)) == 10.0


def test_rule_under_jit_vmap_and_closure():
    xs = jnp.linspace(-2.0, 2.0, 5)
    want = np.clip(np.cos(np.linspace(-2.0, 2.0, 5)), -0.5, 0.5)
    np.testing.assert_allclose(jax.vmap(jax.grad(clipped_sin))(xs), want, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(clipped_sin)))(xs), want, rtol=1e-6)
    # A vector argument, the rule applied elementwise through grad of a sum.
    total = jax.grad(lambda v: jnp.sum(clipped_sin(v)))(xs)
    np.testing.assert_allclose(total, want, rtol=1e-6)
