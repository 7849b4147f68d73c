"""``isinstance(x, modjax.Array)`` and ``jnp.ndarray``: true of concrete arrays and of
the tracers of every transformation, as in JAX (einops and optax rely on it)."""

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax


def _record(seen):
    def check(x):
        seen.append((type(x).__name__, isinstance(x, jax.Array), isinstance(x, jnp.ndarray)))
        return x

    return check


def _loss(check):
    return lambda x: jnp.sum(check(x) ** 2)


TRANSFORMS = {
    "eager": lambda f, x: f(x),
    "jit": lambda f, x: jax.jit(f)(x),
    "grad": lambda f, x: jax.grad(f)(x),
    "vmap": lambda f, x: jax.vmap(f)(jnp.stack([x, x])),
    "jvp": lambda f, x: jax.jvp(f, (x,), (x,)),
    "linearize": lambda f, x: jax.linearize(f, x),
    "vjp": lambda f, x: jax.vjp(f, x),
    "checkpoint": lambda f, x: jax.grad(jax.checkpoint(f))(x),
    "make_jaxpr": lambda f, x: jax.make_jaxpr(f)(x),
    "eval_shape": lambda f, x: jax.eval_shape(f, x),
    "jit_grad_vmap": lambda f, x: jax.jit(jax.vmap(jax.grad(f)))(jnp.stack([x, x])),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_values_seen_by_a_transformed_function_are_arrays(name):
    seen = []
    TRANSFORMS[name](_loss(_record(seen)), jnp.arange(3.0))
    assert seen and all(is_array and is_ndarray for _, is_array, is_ndarray in seen), seen


def test_control_flow_bodies_see_arrays():
    seen = []
    check = _record(seen)
    xs = jnp.arange(3.0)
    lax.scan(lambda c, x: (check(c) + check(x), None), 0.0, xs)
    lax.cond(True, lambda x: check(x) + 1, lambda x: x, xs)
    lax.fori_loop(0, 2, lambda i, c: check(c) * 2, xs)
    lax.while_loop(lambda c: check(c)[0] < 5, lambda c: c + 1, xs)
    assert len(seen) >= 5 and all(a and b for _, a, b in seen), seen


def test_concrete_arrays_and_non_arrays():
    x = jnp.ones(2)
    assert isinstance(x, jax.Array) and isinstance(x, jnp.ndarray)
    assert issubclass(type(x), jax.Array) and jax.Array is jnp.ndarray
    for value in (np.ones(2), 1.0, 3, [1.0], None):
        assert not isinstance(value, jax.Array)
    with pytest.raises(TypeError):
        jax.Array()
