"""Constants and literals: every dtype, splats, broadcast views, large arrays, odd shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from lowering_test_util import add, assert_same_bits, mul, sin

from modjax import lowering
from modjax.lowering import LoweringError, lower_jaxpr_to_module
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from modjax.tracecore.tracing import make_jaxpr

# Every dtype XLA's CPU backend takes as a constant and an output. Left out: int1/uint1
# (no StableHLO type), float6_* (XLA aborts on their constants), float0 (no buffers).
# Every dtype, the narrow ones (loaded on first use) included.
dtypes.load_narrow_dtypes()

DTYPES = [
    dt
    for dt in dtypes.supported_dtypes()
    if dt != dtypes.float0 and dt.name not in ("int1", "uint1", "float6_e2m3fn", "float6_e3m2fn")
]


def sample(dtype: np.dtype, shape, rng: np.random.Generator) -> np.ndarray:
    """Return values of ``dtype`` spanning its range (negative, fractional, large)."""
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if dtype.kind == "V" and "int" in dtype.name:  # int2, uint4, ...
        info = dtypes.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max), shape, endpoint=True).astype(dtype)
    if dtype.kind == "c":
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)
    return (rng.normal(size=shape) * 3).astype(dtype)


def constants_jaxpr(consts: list[np.ndarray], literals: list = ()) -> ClosedJaxpr:
    """A jaxpr with no inputs returning ``consts`` (as constvars) and ``literals``."""
    constvars = [Var(ShapedArray(c.shape, c.dtype)) for c in consts]
    lits = [Literal(v, ShapedArray((), np.asarray(v).dtype)) for v in literals]
    return ClosedJaxpr(Jaxpr(constvars, [], [*constvars, *lits], []), consts)


def test_literals_and_constants_of_every_dtype(cpu):
    rng = np.random.default_rng(0)
    consts = [sample(dt, (2, 3), rng) for dt in DTYPES]
    literals = [sample(dt, (), rng)[()] for dt in DTYPES]
    literals += [True, np.float32(np.nan), np.float32(-np.inf), np.int64(-(2**62))]
    lowered = lower_jaxpr_to_module(constants_jaxpr(consts, literals))
    text = lowered.as_text()
    for name in ("tensor<2x3xbf16>", "tensor<i1>", "tensor<2x3xi4>", "tensor<f8E4M3FN>"):
        assert name in text
    outs = cpu.run(lowered)
    expected = consts + [np.asarray(v) for v in literals]
    assert len(outs) == len(expected)
    for out, want in zip(outs, expected, strict=True):
        assert_same_bits(out, want)


def test_python_scalar_literals_take_the_aval_dtype(cpu):
    # Weakly-typed literals: the Python value is converted to the aval's dtype.
    def f(x):
        return add(x, 2), mul(x, 0.5), add(np.int8(3), True)

    closed = make_jaxpr(f)(np.ones((2,), np.float16))
    outs = cpu.run(lower_jaxpr_to_module(closed), np.ones((2,), np.float16))
    assert_same_bits(outs[0], np.full((2,), 3, np.float16))
    assert_same_bits(outs[1], np.full((2,), 0.5, np.float16))
    assert_same_bits(outs[2], np.int8(4))


PATTERNS = ["random", "uniform", "broadcast", "strided"]


@st.composite
def constant_arrays(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.sampled_from([(), (1,), (0,), (5,), (2, 0, 3), (3, 4), (2, 1, 3)]))
    pattern = draw(st.sampled_from(PATTERNS))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if pattern == "uniform":
        return np.full(shape, sample(dtype, (), rng), dtype)
    if pattern == "broadcast" and shape:
        row = sample(dtype, shape[-1:], rng)
        return np.broadcast_to(row, shape)  # a view with zero strides
    if pattern == "strided" and shape:
        return sample(dtype, (*shape[:-1], 2 * shape[-1]), rng)[..., ::2]
    return sample(dtype, shape, rng)


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.lists(constant_arrays(), min_size=1, max_size=4))
def test_constants_round_trip_through_xla(cpu, consts):
    lowered = lower_jaxpr_to_module(constants_jaxpr(consts))
    for out, want in zip(cpu.run(lowered), consts, strict=True):
        assert_same_bits(out, want)


def _structured(dtype: np.dtype) -> list[np.ndarray]:
    """Constants that are not uniform yet agree at the places a shortcut might look.

    ``eye``, alternating patterns, and arrays whose first, middle and last elements
    are equal while others differ (for 5 and 6 elements, as either midpoint), besides
    the two zeros that are equal as numbers but not as bits.
    """

    def of(values, shape=None):
        return np.asarray(values).astype(dtype).reshape(shape or np.shape(values))

    out = [of(np.eye(n)) for n in (2, 3, 5)]
    out += [of([1, 0, 1, 0, 1]), of([0, 1] * 8, (4, 4)), of([1, 0] * 3, (2, 3))]
    out += [of([1, 0, 1, 1, 1]), of([1, 1, 0, 1, 0, 1]), of([1, 0, 0, 1, 0, 1])]
    out += [of([1] * 11 + [0] + [1] * 12, (2, 3, 4)), of(np.ones((3, 3)) - np.eye(3)[::-1])]
    if dtypes.issubdtype(dtype, np.inexact):
        out.append(of([0.0, -0.0, 0.0]))
    return out


STRUCTURED_DTYPES = [
    *map(np.dtype, ("float32", "float64", "float16", "int8", "uint32", "int64", "bool")),
    *map(np.dtype, ("complex64", "complex128")),
    *map(np.dtype, (dtypes.bfloat16, dtypes.int4, dtypes.float8_e4m3fn)),
]


@pytest.mark.parametrize("dtype", STRUCTURED_DTYPES, ids=str)
def test_structured_constants_round_trip_as_constants(cpu, dtype):
    # Lowered as constants of the module (constvars), never as arguments, so the
    # splat shortcut for uniform arrays is the path they take.
    consts = _structured(dtype)
    assert all(c.size > 1 and len(np.unique(c.view(np.uint8))) > 1 for c in consts)
    lowered = lower_jaxpr_to_module(constants_jaxpr(consts))
    assert "func.func public @main() ->" in lowered.as_text()  # no arguments
    outs = cpu.run(lowered)
    for out, want in zip(outs, consts, strict=True):
        assert_same_bits(out, want)


def test_uniform_constants_are_splats_and_broadcasts_stay_small():
    row = np.arange(4, dtype=np.float32)
    consts = [
        np.ones((1000, 1000), np.float32),
        np.full((3, 3), np.nan, np.float32),
        np.zeros((7,), dtypes.bfloat16),
        np.ones((2, 2), np.bool_),
        np.broadcast_to(row, (500, 4)),
        np.full((2,), 1 + 2j, np.complex128),
    ]
    text = lower_jaxpr_to_module(constants_jaxpr(consts)).as_text()
    assert "dense<1.000000e+00> : tensor<1000x1000xf32>" in text
    assert "dense<0x7FC00000> : tensor<3x3xf32>" in text
    assert "dense<0.000000e+00> : tensor<7xbf16>" in text
    assert "dense<true> : tensor<2x2xi1>" in text
    assert "dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>" in text
    assert "stablehlo.broadcast_in_dim" in text and "dims = [1]" in text
    assert "dense<(1.000000e+00,2.000000e+00)> : tensor<2xcomplex<f64>>" in text
    assert len(text) < 3000


def test_large_constant_is_one_dense_constant_and_correct(cpu):
    rng = np.random.default_rng(1)
    big = rng.normal(size=1_000_000).astype(np.float32)
    x = rng.normal(size=1_000_000).astype(np.float32)
    closed = make_jaxpr(lambda v: add(v, big))(x)
    lowered = lower_jaxpr_to_module(closed)
    # The whole array is one constant op holding a dense elements attribute built
    # from the buffer (not one op or one Python-level element at a time).
    text = lowered.module.operation.get_asm(large_elements_limit=16)
    assert text.count("stablehlo.constant") == 1
    assert "stablehlo.constant dense_resource<__elided__> : tensor<1000000xf32>" in text
    (out,) = cpu.execute(cpu.compile(lowered.as_bytecode()), cpu.put(x))
    np.testing.assert_array_equal(out, x + big)


def test_zero_size_and_scalar_shapes(cpu):
    def f(x, s):
        return sin(x), add(s, 1.0), mul(x, s), add(x, np.zeros((0, 3), np.float32))

    x = np.zeros((0, 3), np.float32)
    s = np.float32(0.5)
    lowered = lower_jaxpr_to_module(make_jaxpr(f)(x, s))
    assert "tensor<0x3xf32>" in lowered.as_text()
    outs = cpu.run(lowered, x, s)
    assert [o.shape for o in outs] == [(0, 3), (), (0, 3), (0, 3)]
    assert outs[1] == np.float32(1.5)


def test_consts_are_converted_to_their_avals_dtype():
    # A float64 value bound to a float32 constvar (x64 off) is converted; a list works too.
    v = Var(ShapedArray((3,), np.float32))
    w = Var(ShapedArray((2,), np.int32))
    closed = ClosedJaxpr(Jaxpr([v, w], [], [v, w], []), [np.array([1.5, 2, 3]), [7, 8]])
    text = lower_jaxpr_to_module(closed).as_text()
    assert "dense<[1.500000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>" in text
    assert "dense<[7, 8]> : tensor<2xi32>" in text

    bad = ClosedJaxpr(Jaxpr([v], [], [v], []), [np.zeros((4,))])
    message = r"const 0 \(a ndarray\) as a constant of type float32\[3\]: ValueError: its shape"
    with pytest.raises(LoweringError, match=message):
        lower_jaxpr_to_module(bad)


def test_float0_constants_are_boolean_zeros():
    v = Var(ShapedArray((2,), dtypes.float0))
    closed = ClosedJaxpr(Jaxpr([v], [], [v], []), [np.zeros((2,), dtypes.float0)])
    assert "dense<false> : tensor<2xi1>" in lower_jaxpr_to_module(closed).as_text()


def test_float6_constants_are_refused_not_crashing_xla():
    value = np.ones((2,), dtypes.float6_e2m3fn)
    with lowering.make_context(), pytest.raises(TypeError, match="float6_e2m3fn"):
        lowering.dense_elements(value)
    closed = make_jaxpr(lambda: add(value, value))()
    with pytest.raises(LoweringError, match="XLA cannot compile constants of dtype"):
        lower_jaxpr_to_module(closed)
