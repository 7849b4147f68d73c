"""Transformations of fresh functions free the functions' closures, as JAX's caches do."""

import gc
import weakref

import pytest

import modjax
import modjax.numpy as jnp
from modjax.runtime.jit import clear_caches


class Payload:
    def __init__(self):
        self.value = jnp.full(3, 2.0)


PATTERNS = {
    "grad_of_jit": lambda x, p: modjax.grad(modjax.jit(lambda a: (a * p.value).sum()))(x),
    "jit_of_grad": lambda x, p: modjax.jit(modjax.grad(lambda a: (a * p.value).sum()))(x),
    "jit_of_vmap": lambda x, p: modjax.jit(modjax.vmap(lambda a: a * p.value))(jnp.ones((2, 3))),
    "vjp": lambda x, p: modjax.vjp(lambda a: a * p.value, x)[1](x),
    "checkpoint": lambda x, p: modjax.grad(modjax.checkpoint(lambda a: (a * p.value).sum()))(x),
    "cond": lambda x, p: modjax.jit(
        lambda a: modjax.lax.cond(a[0] > 0, lambda y: y * p.value, lambda y: y, a)
    )(x),
}


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_transformed_closures_are_freed(pattern):
    x = jnp.ones(3)
    refs = []
    for _ in range(4):
        payload = Payload()
        refs.append(weakref.ref(payload))
        PATTERNS[pattern](x, payload)
        del payload
    gc.collect()
    assert sum(r() is not None for r in refs[:-1]) == 0
    clear_caches()
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
