"""Generated NumPy-style programs give the same values eagerly (op by op) and under jit.

Also checks the path of an eager call (bind -> impl -> apply_primitive) and
that the jaxpr of a program lowers to the StableHLO ops expected.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax.numpy as jnp
from modjax import lax
from modjax.lowering import lower_jaxpr_to_module
from modjax.runtime import Array, jit
from modjax.tracecore import make_jaxpr

W = np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)

UNARY = {
    "sin": jnp.sin,
    "tanh": jnp.tanh,
    "neg": lambda v: -v,
    "abs": abs,
    "square": lambda v: v**2,
    "sqrt_abs": lambda v: jnp.sqrt(jnp.abs(v)),
    "exp_clip": lambda v: jnp.exp(jnp.clip(v, -5, 5)),
    "log1p_abs": lambda v: jnp.log1p(abs(v)),
    "flip": lambda v: v[::-1],
    "double_transpose": lambda v: v.T.T,
    "cast_roundtrip": lambda v: v.astype(jnp.float16).astype(jnp.float32),
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "max": jnp.maximum,
    "where": lambda a, b: jnp.where(a > b, a, b),
    "scalar": lambda a, b: 2.5 * a - 1,
}
REDUCE = {
    "sum0": lambda v: v.sum(axis=0, keepdims=True),
    "mean1": lambda v: jnp.mean(v, axis=-1, keepdims=True),
    "max_all": lambda v: jnp.max(v),
}


@st.composite
def programs(draw):
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["unary", "binary", "reduce", "matmul"]))
        table = {"unary": UNARY, "binary": BINARY, "reduce": REDUCE, "matmul": {"matmul": None}}[
            kind
        ]
        name = draw(st.sampled_from(sorted(table)))
        steps.append((kind, name, draw(st.integers(0, 100)), draw(st.integers(0, 100))))
    return steps


def run(steps, x, y):
    values = [x, y]
    for kind, name, i, j in steps:
        a, b = values[i % len(values)], values[j % len(values)]
        if kind == "unary":
            out = UNARY[name](a)
        elif kind == "binary":
            out = BINARY[name](a, b)
        elif kind == "reduce":
            out = REDUCE[name](a)
        else:
            out = jnp.matmul(a, W) if jnp.shape(a)[-1:] == (3,) else a
        values.append(out)
    return values[-1] + values[0]


@settings(max_examples=examples(20))
@given(steps=programs(), seed=st.integers(0, 2**32 - 1))
def test_jit_of_a_program_equals_its_eager_run(steps, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    y = rng.uniform(-2, 2, (3,)).astype(np.float32)
    eager = run(steps, jnp.asarray(x), jnp.asarray(y))
    traced = jit(lambda a, b: run(steps, a, b))(x, y)
    assert eager.shape == traced.shape and eager.dtype == traced.dtype
    np.testing.assert_allclose(np.asarray(traced), np.asarray(eager), rtol=2e-5, atol=1e-5)


def test_eager_calls_run_on_device():
    x = jnp.arange(3.0)
    out = lax.sin(x)
    assert isinstance(out, Array)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(3.0)), rtol=1e-6)
    assert isinstance(jnp.sin(np.arange(3.0)), Array)  # numpy inputs are placed on the device


def test_lowering_uses_the_expected_ops():
    def f(x, y):
        return (
            lax.asin(x),
            lax.tan(x),
            lax.nextafter(x, y),
            lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
            lax.argmax(x, 0, np.int32),
            lax.reduce_max(x, (0,)),
            lax.dot_general(x, y, (((0,), (0,)), ((), ()))),
            lax.shift_right_logical(lax.convert_element_type(x, np.int32), np.int32(1)),
            lax.select_n(np.int32(1), x, y, x),
        )

    x = np.ones(3, np.float32)
    text = lower_jaxpr_to_module(make_jaxpr(f)(x, x)).as_text()
    for op in (
        "chlo.asin",
        "stablehlo.tan",
        "chlo.next_after",
        "stablehlo.round_nearest_even",
        "stablehlo.reduce",
        "stablehlo.maximum",
        "stablehlo.dot_general",
        "stablehlo.shift_right_logical",
        "stablehlo.select",
        "stablehlo.iota",
    ):
        assert op in text, op
