"""Tracers print as JAX 0.10.2's do, and a non-array argument to jit or make_jaxpr gets
JAX's TypeError naming its path.

The expected strings were printed by JAX 0.10.2 for the same calls.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax

V = np.arange(3, dtype=np.float32)


def seen(transform, fun, *args):
    """Run ``transform(fun)`` on ``args`` and return the reprs ``fun`` saw."""
    reprs = []

    def record(*xs):
        reprs.extend(repr(x) for x in xs)
        assert [str(x) for x in xs] == reprs[-len(xs) :]
        return fun(*xs)

    transform(record)(*args)
    return reprs


CASES = [
    ("jit", lambda f: jax.jit(f), lambda a: a, (V,), ["JitTracer(float32[3])"]),
    ("jit_weak", lambda f: jax.jit(f), lambda a: a, (1.0,), ["JitTracer(~float32[])"]),
    ("make_jaxpr", jax.make_jaxpr, lambda a: a, (V,), ["JitTracer(float32[3])"]),
    (
        "grad",
        jax.grad,
        lambda a: a.sum(),
        (V,),
        ["GradTracer(primal=[0. 1. 2.], typeof(tangent)=f32[3])"],
    ),
    (
        "jvp",
        lambda f: lambda a: jax.jvp(f, (a,), (a,)),
        lambda a: a,
        (V,),
        ["JVPTracer(primal=[0. 1. 2.], tangent=[0. 1. 2.])"],
    ),
    (
        "vmap",
        jax.vmap,
        lambda a: a,
        (np.ones((2, 3), jnp.bfloat16),),
        ["VmapTracer(aval=bfloat16[3], batched=bfloat16[2,3])"],
    ),
    (
        "jit_grad",
        lambda f: jax.jit(jax.grad(f)),
        lambda a: a.sum(),
        (V,),
        ["GradTracer(primal=JitTracer(float32[3]), typeof(tangent)=f32[3])"],
    ),
    (
        "vmap_grad",
        lambda f: jax.vmap(jax.grad(f)),
        lambda a: a.sum(),
        (np.ones((2, 3), np.float32),),
        [
            "GradTracer(primal=VmapTracer(aval=float32[3], batched=float32[2,3]), "
            "typeof(tangent)=f32[3])"
        ],
    ),
    (
        "grad_grad",
        lambda f: jax.grad(lambda a: jax.grad(f)(a)),
        lambda b: b * b,
        (1.0,),
        ["GradTracer(primal=GradTracer(primal=1.0, typeof(tangent)=f32[]), typeof(tangent)=f32[])"],
    ),
    (
        "scan_body",
        lambda f: lambda c, xs: lax.scan(lambda c, x: (f(c, x)[0], None), c, xs),
        lambda c, x: (c, x),
        (0.0, np.ones(3, np.float32)),
        ["JitTracer(~float32[])", "JitTracer(float32[])"],
    ),
    (
        "key",
        lambda f: jax.jit(f),
        lambda k: k,
        (jax.random.key(0),),
        ["JitTracer(key<fry>[])"],
    ),
]


@pytest.mark.parametrize(
    ("transform", "fun", "args", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_tracers_print_as_jax(transform, fun, args, want):
    assert seen(transform, fun, *args) == want


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (lambda: jax.jit(lambda a, b: a)(1, {"k": "x"}), "b['k']"),
        (lambda: jax.jit(lambda a: a)(object()), "a"),
        (lambda: jax.jit(lambda a, n: a, static_argnums=1)("s", 2), "a"),
        (lambda: jax.jit(lambda a: a).lower("s"), "a"),
        (lambda: jax.jit(lambda *a, **k: a)(1, z="s"), "k['z']"),
        (lambda: jax.make_jaxpr(lambda a: a)("s"), "a"),
    ],
)
def test_non_array_arguments_raise_naming_their_path(call, path):
    with pytest.raises(TypeError, match="Error interpreting argument to <function") as info:
        call()
    assert f"was passed to the function at path {path}." in str(info.value)
    assert "static_argnums or static_argnames" in str(info.value)


def test_an_array_of_an_unsupported_dtype_names_the_dtype():
    with pytest.raises(TypeError, match="Dtype <U1 is not a valid"):
        jax.jit(lambda a: a)(np.array(["a"]))
