"""Generated programs: lowered, compiled and run by XLA, they agree with numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from lowering_test_util import add, mul, neg, sin, sub, sumdiff

from modjax.lowering import lower_jaxpr_to_module
from modjax.tracecore.call import call
from modjax.tracecore.tracing import make_jaxpr

SHAPES = [(), (0,), (3,), (2, 3), (2, 0, 4)]
OPS = ["sin", "neg", "add", "mul", "literal", "const", "call", "sumdiff"]


@st.composite
def programs(draw):
    shape = draw(st.sampled_from(SHAPES))
    num_inputs = draw(st.integers(1, 3))
    steps = draw(
        st.lists(
            st.tuples(
                st.sampled_from(OPS),
                st.integers(0, 50),
                st.integers(0, 50),
                st.floats(-2, 2, width=32),
            ),
            min_size=1,
            max_size=8,
        )
    )
    num_outputs = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**16))
    return shape, num_inputs, steps, num_outputs, seed


def build(shape, steps, num_outputs, rng):
    """Return a function of the program, written with the test primitives."""
    const = rng.uniform(-1, 1, shape).astype(np.float32)

    def inner(u, v):
        return add(sin(u), mul(v, 0.5))

    def fun(*xs):
        values = list(xs)
        for op, i, j, c in steps:
            a, b = values[i % len(values)], values[j % len(values)]
            if op == "sin":
                values.append(sin(a))
            elif op == "neg":
                values.append(neg(a))
            elif op == "add":
                values.append(add(a, b))
            elif op == "mul":
                values.append(mul(a, np.float32(c)))  # a scalar literal
            elif op == "literal":
                values.append(sub(a, float(c)))  # a weakly-typed Python scalar
            elif op == "const":
                values.append(add(a, const))  # a closed-over array: a constvar
            elif op == "call":
                values.append(call(inner, a, b, name="inner"))
            else:
                values.extend(sumdiff(a, b))
        return values[-num_outputs:]

    return fun


@settings(
    max_examples=examples(15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(programs())
def test_lowered_programs_agree_with_numpy(cpu, program):
    shape, num_inputs, steps, num_outputs, seed = program
    rng = np.random.default_rng(seed)
    fun = build(shape, steps, num_outputs, rng)
    args = [rng.uniform(-2, 2, shape).astype(np.float32) for _ in range(num_inputs)]

    expected = fun(*args)  # evaluated eagerly by the numpy impls
    lowered = lower_jaxpr_to_module(make_jaxpr(fun)(*args))
    actual = cpu.run(lowered, *args)

    assert len(actual) == len(expected)
    for out, want in zip(actual, expected, strict=True):
        want = np.asarray(want)
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
