"""Effects in lowered modules: tokens of ordered effects and host callbacks, run on XLA's CPU."""

from __future__ import annotations

import numpy as np
import pytest
from jaxlib import xla_client
from lowering_test_util import sin_p

from modjax.lowering import emit_host_callback, lower_jaxpr_to_module, register_lowering
from modjax.lowering.host_callbacks import check_callback_results
from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.call import call
from modjax.tracecore.effects import Effect
from modjax.tracecore.tracing import make_jaxpr

Log = Effect("LoweringTestLog")
OrderedLog = Effect("LoweringTestOrderedLog", ordered=True)
LOG: list = []

# Record the operand on the host; returns it doubled (a callback with a result).
log_p = core.Primitive("lt_log")
log_p.def_abstract_eval(lambda x, ordered: x)
log_p.def_effects(lambda ordered: (OrderedLog if ordered else Log,))


def _log_lowering(ctx, x, ordered):
    def host(value):
        LOG.append((ordered, value.tolist()))
        return [value * 2]

    (out,) = emit_host_callback(
        ctx,
        host,
        [x],
        ctx.avals_out,
        has_side_effect=True,
        ordered_effect=OrderedLog if ordered else None,
    )
    return out


register_lowering(log_p, _log_lowering)

X = np.arange(3, dtype=np.float32)


def _program(x):
    a = log_p.bind(x, ordered=True)
    b = call(lambda y: [log_p.bind(sin_p.bind(y), ordered=True)], a)[0]
    return [log_p.bind(b, ordered=False)]


def _compile(cpu, lowered):
    return cpu.client.compile_and_load(
        lowered.module,
        executable_devices=cpu.devices,
        compile_options=xla_client.CompileOptions(),
        host_callbacks=list(lowered.host_callbacks),
    )


def test_ordered_effects_add_token_arguments_and_results(cpu):
    lowered = lower_jaxpr_to_module(make_jaxpr(_program)(X), module_name="jit_program")
    text = lowered.as_text()
    assert lowered.ordered_effects == (OrderedLog,)
    assert len(lowered.host_callbacks) == 3
    main = next(line for line in text.splitlines() if "func.func public @main" in line)
    assert main.count("!stablehlo.token") == 2 and "jax.token = true" in main
    assert text.count("xla_ffi_python_cpu_callback") == 3
    assert "index = 2 : ui64" in text
    private = next(line for line in text.splitlines() if "func.func private" in line)
    assert private.count("!stablehlo.token") == 2  # the call threads the token too

    LOG.clear()
    executable = _compile(cpu, lowered)
    token = cpu.put(np.zeros((0,), bool))
    outs = executable.execute_sharded([token, cpu.put(X)]).disassemble_into_single_device_arrays()
    result = np.asarray(outs[1][0])
    expected = np.sin(X * 2) * 2 * 2
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    assert [entry[0] for entry in LOG] == [True, True, False]
    np.testing.assert_allclose(LOG[0][1], X)


def test_unordered_effects_need_no_token():
    lowered = lower_jaxpr_to_module(make_jaxpr(lambda x: [log_p.bind(x, ordered=False)])(X))
    assert lowered.ordered_effects == ()
    assert "!stablehlo.token" not in lowered.as_text()
    assert len(lowered.host_callbacks) == 1


def test_results_are_checked_with_jaxs_messages():
    aval = ShapedArray((3,), np.dtype(np.float32))
    assert check_callback_results([np.ones(3, np.float64)], [aval])[0].dtype == np.float32
    with pytest.raises(RuntimeError, match="Mismatched number of outputs from callback"):
        check_callback_results([], [aval])
    with pytest.raises(RuntimeError, match=r"Incorrect output shape for return value #0"):
        check_callback_results([np.ones(2, np.float32)], [aval])
    with pytest.raises(RuntimeError, match="Incorrect output dtype"):
        check_callback_results([np.ones(3, np.int32)], [aval])
