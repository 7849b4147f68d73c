"""The shape of lowered modules: main, private functions, locations, errors, attributes."""

from __future__ import annotations

import os
import re
import sys
import threading

import numpy as np
import pytest
from lowering_test_util import add, mul, neg, neg_p, sin, sin_p, sumdiff, to_numpy

from modjax import lowering
from modjax.lowering import (
    LoweredModule,
    LoweringError,
    hlo,
    ir_type,
    lower_fun,
    lower_jaxpr_to_module,
    register_lowering,
)
from modjax.tracecore import core, source_info
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.call import call, call_p
from modjax.tracecore.jaxpr import ClosedJaxpr, Jaxpr, Var
from modjax.tracecore.tracing import make_jaxpr

THIS_FILE = os.path.abspath(__file__)
F32 = np.float32


def x23():
    return np.linspace(-1, 1, 6, dtype=F32).reshape(2, 3)


def lower(fun, *args, **kwargs) -> LoweredModule:
    return lower_jaxpr_to_module(make_jaxpr(fun)(*args), **kwargs)


def line_of(marker: str) -> int:
    """Return the line of this file holding ``marker`` (in a comment)."""
    with open(THIS_FILE) as f:
        for number, text in enumerate(f, start=1):
            if marker in text and "line_of(" not in text:
                return number
    raise AssertionError(marker)


# --- main and the module -------------------------------------------------------------------


def test_main_is_public_with_types_from_avals():
    def f(x, y):
        return sin(x), add(y, 1.0)

    lowered = lower(f, x23(), 2.0, module_name="jit_f")
    text = lowered.as_text()
    assert text.startswith("module @jit_f")
    # The weakly-typed Python scalar argument is a plain f32 in HLO.
    assert "func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>)" in text
    assert "-> (tensor<2x3xf32>, tensor<f32>)" in text
    assert "stablehlo.sine" in text and "loc(" not in text
    assert "mhlo.num_partitions" not in text
    assert lowered.module_name == "jit_f"
    assert [a.shape for a in lowered.in_avals] == [(2, 3), ()]
    assert [a.shape for a in lowered.out_avals] == [(2, 3), ()]
    assert lowered.context is lowering.make_context()
    assert str(lowered) == text
    assert "jit_f" in repr(lowered)


def test_inputs_and_literals_as_outputs():
    lowered = lower(lambda x, y: (y, 3, x), x23(), np.int32(7))
    text = lowered.as_text()
    assert "stablehlo.constant dense<3> : tensor<i32>" in text
    assert re.search(r"return %arg1, %\w+, %arg0", text)


def test_open_jaxpr_without_consts_is_accepted():
    x, y = Var(ShapedArray((2,), F32)), Var(ShapedArray((), np.int32))
    lowered = lower_jaxpr_to_module(Jaxpr([], [x, y], [y, x], []))
    assert "(%arg0: tensor<2xf32>, %arg1: tensor<i32>) -> (tensor<i32>, tensor<2xf32>)" in (
        lowered.as_text()
    )
    c = Var(ShapedArray((), F32))
    with pytest.raises(TypeError, match="constvars"):
        lower_jaxpr_to_module(Jaxpr([c], [], [c], []))


def test_module_is_compilable_as_module_object_and_bytecode(cpu):
    lowered = lower(lambda x: sumdiff(sin(x), x), x23())
    bytecode = lowered.as_bytecode()
    assert isinstance(bytecode, bytes) and bytecode.startswith(b"ML\xefR")
    for form in (lowered.module, bytecode):
        outs = cpu.execute(cpu.compile(form), cpu.put(x23()))
        np.testing.assert_allclose(outs[0], np.sin(x23()) + x23(), rtol=1e-6)
        np.testing.assert_allclose(outs[1], np.sin(x23()) - x23(), rtol=1e-6, atol=1e-7)


# --- nested calls ----------------------------------------------------------------------------


def test_call_of_one_jaxpr_twice_makes_one_private_function(cpu):
    inner = ClosedJaxpr(make_jaxpr(lambda u: sin(mul(u, 2.0)))(x23()).jaxpr, ())
    other = make_jaxpr(lambda u: neg(u))(x23())

    def f(x):
        (a,) = call_p.bind(x, jaxpr=inner, name="inner")
        (b,) = call_p.bind(a, jaxpr=inner, name="inner")
        (c,) = call_p.bind(b, jaxpr=other, name="inner")  # another jaxpr, same name
        # A call inside a call.
        return call(lambda v: call(lambda w: add(w, 1.0), v, name="deep"), c, name="outer")

    text = lower(f, x23()).as_text()
    assert text.count("func.func private @inner(") == 1
    assert text.count("call @inner(") == 2
    assert text.count("func.func private @inner_0(") == 1
    assert text.count("call @inner_0(") == 1
    assert "func.func private @outer(" in text and "call @deep(" in text
    # main comes first.
    assert text.index("@main(") < text.index("@inner(")
    (out,) = cpu.run(text, x23())
    expected = -np.sin(2 * np.sin(2 * x23())) + 1
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)


def test_inner_function_named_main_does_not_clash():
    text = lower(lambda x: call(sin, x, name="main"), x23()).as_text()
    assert "func.func public @main(" in text
    assert re.search(r"func\.func private @main_\d+\(", text)


# --- locations ---------------------------------------------------------------------------------


def traced_with_locations(x):
    # Primitives are bound here, not through the helpers, so that this is the user's line.
    y = sin_p.bind(x)  # LOC-SIN
    with source_info.transform_name("jvp"):
        z = neg_p.bind(y)  # LOC-NEG
    return z


def test_locations_name_the_user_line_and_name_stack(cpu):
    lowered = lower(traced_with_locations, x23())
    text = lowered.as_text(debug_info=True)
    sin_line, neg_line = line_of("LOC-SIN"), line_of("LOC-NEG")
    assert f'loc("{THIS_FILE}":{sin_line}:0)' in text
    assert f'loc("{THIS_FILE}":{neg_line}:0)' in text
    assert re.search(r'loc\("lt_sin"\(#loc\d+\)\)', text)
    assert re.search(r'loc\("jvp/lt_neg"\(#loc\d+\)\)', text)
    # Arguments are named after the Python parameters.
    assert 'loc("x")' in text
    assert "loc(" not in lowered.as_text()
    # XLA keeps the location as op metadata, so its messages point to the user's line.
    hlo_text = cpu.compile(lowered.module).hlo_modules()[0].to_string()
    assert f'"{THIS_FILE}"' in hlo_text and '"traced_with_locations"' in hlo_text
    assert f"line={sin_line} " in hlo_text and f"line={neg_line} " in hlo_text
    assert 'op_name="jvp/lt_neg"' in hlo_text


# --- errors ------------------------------------------------------------------------------------

norule_p = core.Primitive("lt_norule")
norule_p.def_abstract_eval(lambda x: x)

broken_p = core.Primitive("lt_broken")
broken_p.def_abstract_eval(lambda x: x)


def _broken_rule(ctx, x):
    raise ZeroDivisionError("the rule divided by zero")


register_lowering(broken_p, _broken_rule)


def test_missing_rule_raises_lowering_error_naming_the_line():
    def f(x):
        return norule_p.bind(x)  # LOC-NORULE

    with pytest.raises(LoweringError) as info:
        lower(f, x23())
    message = str(info.value)
    assert "No lowering rule for primitive 'lt_norule'" in message
    assert "float32[2,3]" in message
    assert f"{THIS_FILE}:{line_of('LOC-NORULE')}" in message
    assert info.value.primitive is norule_p
    assert info.value.source_info.frame.line == line_of("LOC-NORULE")


def test_failing_rule_is_wrapped_with_its_cause():
    def f(x):
        return call(lambda y: broken_p.bind(y), x)  # LOC-BROKEN

    with pytest.raises(LoweringError) as info:
        lower(f, x23())
    message = str(info.value)
    assert "Lowering 'lt_broken' failed: ZeroDivisionError: the rule divided by zero" in message
    assert f"{THIS_FILE}:{line_of('LOC-BROKEN')}" in message
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_rules_user_error_keeps_its_class():
    refusing_p = core.Primitive("lt_refusing")
    refusing_p.def_abstract_eval(lambda x: x)

    def refuse(ctx, x):
        raise ValueError("not on this platform")

    register_lowering(refusing_p, refuse)
    with pytest.raises(ValueError, match="not on this platform") as info:
        lower(lambda x: refusing_p.bind(x), x23())
    assert isinstance(info.value, LoweringError)
    assert info.value.primitive is refusing_p
    assert not isinstance(info.value, TypeError)


def test_rule_results_are_checked():
    wrong_type_p = core.Primitive("lt_wrong_type")
    wrong_type_p.def_abstract_eval(lambda x: ShapedArray(x.shape, np.int32))
    register_lowering(wrong_type_p, lambda ctx, x: x)
    with pytest.raises(LoweringError, match=r"type tensor<2x3xf32> for result 0.*tensor<2x3xi32>"):
        lower(lambda x: wrong_type_p.bind(x), x23())

    wrong_count_p = core.Primitive("lt_wrong_count")
    wrong_count_p.multiple_results = True
    wrong_count_p.def_abstract_eval(lambda x: [x, x])
    register_lowering(wrong_count_p, lambda ctx, x: [x])
    with pytest.raises(LoweringError, match="returned 1 values for 2 results"):
        lower(lambda x: wrong_count_p.bind(x), x23())

    not_a_list_p = core.Primitive("lt_not_a_list")
    not_a_list_p.multiple_results = True
    not_a_list_p.def_abstract_eval(lambda x: [x])
    register_lowering(not_a_list_p, lambda ctx, x: x)
    with pytest.raises(LoweringError, match="must return a sequence of ir.Value"):
        lower(lambda x: not_a_list_p.bind(x), x23())

    # A one-result op object is accepted in place of its result.
    op_p = core.Primitive("lt_op_result")
    op_p.def_abstract_eval(lambda x: x)
    register_lowering(op_p, lambda ctx, x: hlo.NegOp(x))
    assert "stablehlo.negate" in lower(lambda x: op_p.bind(x), x23()).as_text()


# --- arguments: donation and shardings --------------------------------------------------------


reshape_p = core.Primitive("lt_reshape")
reshape_p.def_abstract_eval(lambda x, *, shape: ShapedArray(shape, x.dtype))
register_lowering(reshape_p, lambda ctx, x, *, shape: hlo.reshape(ir_type(ctx.avals_out[0]), x))


def test_donation_attributes_and_xla_aliasing(cpu):
    def f(x, y, z, w):
        return add(x, 1.0), mul(y, 2.0), reshape_p.bind(z, shape=(2, 3))

    args = (x23(), np.ones((4,), F32), np.arange(6, dtype=F32), np.ones((5,), F32))
    lowered = lower(f, *args, donated_args=[True, False, True, True])
    text = lowered.as_text()
    assert "%arg0: tensor<2x3xf32> {tf.aliasing_output = 0 : i32}" in text
    assert "%arg1: tensor<4xf32>," in text  # not donated
    # No output of their shape: XLA may still reuse a buffer of the right size.
    assert "%arg2: tensor<6xf32> {jax.buffer_donor = true}" in text
    assert "%arg3: tensor<5xf32> {jax.buffer_donor = true}" in text
    assert lowered.donated_args == (True, False, True, True)
    assert lowered.input_output_aliases == (0, None, None, None)

    buffers = [cpu.put(a) for a in args]
    outs = cpu.execute(cpu.compile(lowered), *buffers)
    np.testing.assert_allclose(outs[0], x23() + 1)
    np.testing.assert_allclose(outs[2], np.arange(6, dtype=F32).reshape(2, 3))
    # XLA took the aliased buffer and the same-size donor; nothing could use the last one.
    assert [b.is_deleted() for b in buffers] == [True, False, True, False]

    with pytest.raises(ValueError, match="donated_args has 1 entries for 4 values"):
        lower(f, *args, donated_args=[True])


def test_two_donated_args_alias_distinct_outputs():
    lowered = lower(lambda a, b: (b, a), x23(), x23(), donated_args=[True, True])
    assert lowered.input_output_aliases == (0, 1)


def test_sharding_attributes_and_partition_counts():
    lowered = lower(
        lambda x, y: (add(x, y), x),
        x23(),
        x23(),
        arg_shardings=["{devices=[2,1]<=[2]}", None],
        result_shardings=[None, "{replicated}"],
        donated_args=[True, False],
        num_partitions=2,
        num_replicas=1,
    )
    text = lowered.as_text()
    assert "mhlo.num_partitions = 2 : i32" in text and "mhlo.num_replicas" not in text
    assert 'mhlo.sharding = "{devices=[2,1]<=[2]}"' in text
    assert '-> (tensor<2x3xf32>, tensor<2x3xf32> {mhlo.sharding = "{replicated}"})' in text
    # Output 0 has no sharding while others do: the donated arg is not aliased to it.
    assert lowered.input_output_aliases == (1, None)
    assert lowered.num_partitions == 2


def test_shardy_mesh_and_sharding_attributes():
    # JAX 0.10 annotates with Shardy: one sdy.mesh and sdy.sharding on main's values.
    lowered = lower(
        lambda x, y: (add(x, y), x),
        x23(),
        x23(),
        arg_shardings=['#sdy.sharding<@mesh, [{"x"}, {}]>', None],
        result_shardings=['#sdy.sharding<@mesh, [{}, {"y", "x"}]>', None],
        num_partitions=8,
        sdy_mesh=(("x", 2), ("y", 4)),
    )
    text = lowered.as_text()
    assert 'sdy.mesh @mesh = <["x"=2, "y"=4]>' in text, text
    assert '%arg0: tensor<2x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}' in text
    assert '{sdy.sharding = #sdy.sharding<@mesh, [{}, {"y", "x"}]>}' in text
    assert "mhlo.num_partitions = 8 : i32" in text


# --- composite rules and platform rules ----------------------------------------------------------

sin_plus_one_p = core.Primitive("lt_sin_plus_one")
sin_plus_one_p.def_abstract_eval(lambda x: x)
register_lowering(sin_plus_one_p, lower_fun(lambda x: add(sin(x), 1.0)))

twice_p = core.Primitive("lt_twice")
twice_p.multiple_results = True
twice_p.def_abstract_eval(lambda x, *, scale: [x, x])
register_lowering(
    twice_p, lower_fun(lambda x, *, scale: sumdiff(mul(x, scale), x), multiple_results=True)
)


def test_lower_fun_lowers_a_composite_inline(cpu):
    def f(x):
        a = sin_plus_one_p.bind(x)  # LOC-COMPOSITE
        return (a, *twice_p.bind(x, scale=3.0))

    lowered = lower(f, x23())
    text = lowered.as_text(debug_info=True)
    assert "stablehlo.sine" in text and "call @" not in text
    # The composite's ops carry the location of the equation being lowered.
    assert f'loc("{THIS_FILE}":{line_of("LOC-COMPOSITE")}:0)' in text
    assert re.search(r'loc\("lt_add"\(#loc\d+\)\)', text)
    a, s, d = cpu.run(lowered, x23())
    np.testing.assert_allclose(a, np.sin(x23()) + 1, rtol=1e-6)
    np.testing.assert_allclose(s, 4 * x23(), rtol=1e-6)
    np.testing.assert_allclose(d, 2 * x23(), rtol=1e-6)


def test_platform_rules_win_on_their_platform():
    register_lowering(sin_p, lambda ctx, x: hlo.cosine(x), platform="lt_platform")
    try:
        assert "stablehlo.cosine" in lower(sin, x23(), platform="lt_platform").as_text()
        assert "stablehlo.sine" in lower(sin, x23()).as_text()
    finally:
        del lowering.platform_lowering_rules["lt_platform"]


# --- contexts and threads ----------------------------------------------------------------------


def test_each_thread_has_its_own_context():
    results = {}

    def work(name):
        results[name] = lower(lambda x: sin(add(x, 1.0)), x23(), module_name=name)

    threads = [threading.Thread(target=work, args=(f"jit_t{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    contexts = {id(m.context) for m in results.values()}
    assert len(contexts) == 3 and id(lowering.make_context()) not in contexts
    for name, m in results.items():
        assert m.as_text().startswith(f"module @{name}")


def test_context_is_reused_and_replaced_after_large_constants(monkeypatch):
    from modjax.lowering import _mlir

    first = lower(sin, x23()).context
    assert lower(sin, x23()).context is first
    monkeypatch.setattr(_mlir, "CONTEXT_BYTES_LIMIT", _mlir._state.embedded_bytes + 1000)
    big = np.arange(1000, dtype=F32)
    assert lower(lambda x: add(x, big), big).context is first  # over the limit now
    fresh = lower(sin, x23()).context
    assert fresh is not first
    assert lower(sin, x23()).context is fresh


def test_type_helpers():
    from modjax.tracecore import dtypes

    with lowering.make_context():
        names = {
            np.bool_: "i1",
            np.int8: "i8",
            np.uint32: "ui32",
            np.float64: "f64",
            dtypes.bfloat16: "bf16",
            dtypes.int4: "i4",
            dtypes.uint4: "ui4",
            dtypes.float8_e4m3fn: "f8E4M3FN",
            dtypes.float4_e2m1fn: "f4E2M1FN",
            np.complex64: "complex<f32>",
            dtypes.float0: "i1",
        }
        for dtype, name in names.items():
            assert str(lowering.dtype_to_ir_type(dtype)) == name
            assert str(lowering.dtype_to_ir_type(np.dtype(dtype))) == name
        aval = ShapedArray((2, 0, 3), dtypes.bfloat16, weak_type=True)
        assert str(lowering.ir_type(aval)) == "tensor<2x0x3xbf16>"
        assert lowering.ir_type(aval) is lowering.ir_type(aval.update(weak_type=False))
        assert str(lowering.dense_int_array([1, 0])) == "array<i64: 1, 0>"
        assert str(lowering.dense_bool_array([True])) == "array<i1: true>"
        assert str(lowering.dense_int_elements([3])) == "dense<3> : tensor<1xi64>"
        assert str(lowering.i64_attr(5)) == "5 : i64"
        with pytest.raises(TypeError, match="no MLIR element type"):
            lowering.dtype_to_ir_type(np.dtype("U3"))


def test_module_of_many_equations_is_one_op_per_equation():
    def f(x):
        for _ in range(500):
            x = sin(add(x, 1.0))
        return x

    lowered = lower_jaxpr_to_module(make_jaxpr(f)(x23()))
    text = lowered.as_text()
    # One op per equation (no per-equation helper functions or conversions), each
    # literal 1.0 a scalar splat, every op on the one tensor type.
    assert text.count("stablehlo.sine") == 500 and text.count("stablehlo.add") == 500
    assert "func.call" not in text and "stablehlo.convert" not in text
    assert "stablehlo.constant dense<1.000000e+00> : tensor<f32>" in text
    sines = [line for line in text.splitlines() if "stablehlo.sine" in line]
    assert {line.rsplit(":", 1)[1].strip() for line in sines} == {"tensor<2x3xf32>"}


def test_to_numpy_helper_reads_sub_byte_arrays(cpu):
    from modjax.tracecore import dtypes

    values = np.array([-8, 7, 0], dtypes.int4)
    np.testing.assert_array_equal(to_numpy(cpu.put(values)).astype(np.int8), [-8, 7, 0])


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
