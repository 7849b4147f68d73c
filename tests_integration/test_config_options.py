"""jax.config takes every option of JAX 0.10.2, and the options with a meaning on CPU have JAX's.

``data/jax_config_options.json`` holds JAX 0.10.2's options and defaults (recorded
with the script inside it). Expected behaviours were checked against JAX 0.10.2
with ``/work/jaxref/bin/python``: messages, which transfers the guards stop, the
jaxprs under ``default_matmul_precision`` and ``allow_f16_reductions``, and the
softmax gradients under ``softmax_custom_jvp``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.runtime import compile_cache

RECORDED = json.loads((Path(__file__).parent / "data" / "jax_config_options.json").read_text())
JAX_OPTIONS = RECORDED["options"]
# Set before any backend exists, so not to be reset in a running process.
_BACKEND_OPTIONS = {"jax_num_cpu_devices", "jax_platforms", "jax_platform_name"}


@pytest.mark.parametrize("name", sorted(set(JAX_OPTIONS) - _BACKEND_OPTIONS))
def test_every_jax_option_is_accepted_with_jax_default(name):
    before = jax.config.read(name)
    try:
        jax.config.update(name, JAX_OPTIONS[name])
        assert jax.config.read(name) == JAX_OPTIONS[name]
        assert getattr(jax.config, name) == JAX_OPTIONS[name]
    finally:
        jax.config.update(name, before)


def test_unknown_options_and_bad_values_raise_as_in_jax():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such_option"):
        jax.config.update("jax_no_such_option", True)
    with pytest.raises(AttributeError, match="jax_no_such_option"):
        jax.config.read("jax_no_such_option")
    with pytest.raises(ValueError, match=r"new enum value must be None or in \['default'"):
        jax.config.update("jax_default_matmul_precision", 3)
    with pytest.raises(ValueError, match="must be None or of type int"):
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", "big")
    with pytest.raises(ValueError, match="Device object"):
        jax.config.update("jax_default_device", 3)


# --- the trace context: options that change what jit traces --------------------------------


def _dot(x, y):
    return jnp.dot(x, y)


def test_default_matmul_precision_sets_dot_precision_at_trace_time_and_jit_keeps_both():
    x = jnp.ones((2, 2))
    f = jax.jit(_dot)
    assert "DEFAULT, DEFAULT" in f.lower(x, x).as_text()
    f(x, x)
    for name, precision in (("highest", "HIGHEST"), ("float32", "HIGHEST"), ("high", "HIGH")):
        with jax.default_matmul_precision(name):
            expected = f"precision=(Precision.{precision}, Precision.{precision})"
            assert expected in str(jax.make_jaxpr(_dot)(x, x))
            assert f"{precision}, {precision}" in f.lower(x, x).as_text()
            assert float(f(x, x).sum()) == 8.0
    assert "precision=None" in str(jax.make_jaxpr(_dot)(x, x))
    # Back to the first context: the program traced first is reused, not traced again.
    sizes = f._cache_size()
    f(x, x)
    with jax.default_matmul_precision("highest"):
        f(x, x)
    assert f._cache_size() == sizes
    with jax.default_matmul_precision("BF16_BF16_F32"):  # a dot algorithm preset
        assert "precision=BF16_BF16_F32" in str(jax.make_jaxpr(_dot)(x, x))


def test_explain_cache_misses_names_the_trace_context(caplog):
    f = jax.jit(_dot)
    x = jnp.ones((2, 2))
    f(x, x)
    with jax.explain_cache_misses(True), jax.default_matmul_precision("highest"):
        caplog.clear()
        f(x, x)
    text = caplog.text
    assert "tracing context doesn't match" in text and "default_matmul_precision" in text


def test_allow_f16_reductions_false_refuses_half_precision_reduce_sum():
    h = jnp.ones(4, jnp.float16)
    assert float(lax.reduce_sum(h, (0,))) == 4.0
    with jax.allow_f16_reductions(False):
        with pytest.raises(ValueError, match="is not allowed when jax_allow_f16_reductions"):
            lax.reduce_sum(h, (0,))
        with pytest.raises(ValueError, match=r"on operand bf16\[4\] is not allowed"):
            jax.jit(lambda v: lax.reduce_sum(v, (0,)))(h.astype(jnp.bfloat16))
        # jnp.sum accumulates half floats in float32 (as JAX), so it is unaffected
        assert float(jnp.sum(h)) == 4.0
        assert float(lax.reduce_sum(jnp.ones((1, 3), jnp.float16), (0,))[0]) == 1.0


def test_half_precision_sums_accumulate_in_float32_as_jax():
    h = jnp.ones(2048, jnp.float16) * 0.1
    assert float(jnp.sum(h)) == pytest.approx(204.8, abs=0.1)  # JAX 0.10.2: 204.8
    text = str(jax.make_jaxpr(jnp.sum)(h))
    assert "f32[2048] = convert_element_type" in text and "f16[] = convert_element_type" in text


# JAX 0.10.2's grad of sum(softmax(x) * [0, 1, 2]), with and without where=, under
# softmax_custom_jvp=True.
_SOFTMAX_X = [[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]]
_SOFTMAX_WHERE = [[True, False, True], [True, True, False]]
_JAX_GRAD = [[-0.1418171, -0.14077035, 0.28258753], [-0.01324728, -0.00241729, 0.01566458]]
_JAX_GRAD_WHERE = [[-0.20998713, 0.0, 0.20998728], [-0.19661194, 0.19661194, 0.0]]


def _softmax_loss(x, where=None):
    return (jax.nn.softmax(x, where=where) * jnp.arange(3.0)).sum()


def test_softmax_custom_jvp_differentiates_softmax_by_its_own_rule():
    x = jnp.array(_SOFTMAX_X)
    where = jnp.array(_SOFTMAX_WHERE)
    plain = str(jax.make_jaxpr(jax.grad(_softmax_loss))(x))
    with jax.softmax_custom_jvp(True):
        np.testing.assert_allclose(jax.grad(_softmax_loss)(x), _JAX_GRAD, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(
            jax.grad(_softmax_loss)(x, where), _JAX_GRAD_WHERE, rtol=1e-5, atol=1e-7
        )
        np.testing.assert_allclose(
            jax.jit(jax.grad(_softmax_loss))(x), _JAX_GRAD, rtol=1e-5, atol=1e-7
        )
        custom = str(jax.make_jaxpr(jax.grad(_softmax_loss))(x))
    assert "custom_jvp_call" in custom and "custom_jvp_call" not in plain
    np.testing.assert_allclose(jax.grad(_softmax_loss)(x), _JAX_GRAD, rtol=1e-5)


# --- tracing and execution switches ----------------------------------------------------------


def _doubled(x):
    return x * 2


def test_no_tracing_raises_when_jit_would_trace_and_allows_cached_calls():
    f = jax.jit(_doubled)
    x, y = jnp.ones(3), jnp.ones(4)
    f(x)
    jax.config.update("jax_no_tracing", True)
    try:
        assert f(x).tolist() == [2.0, 2.0, 2.0]
        with pytest.raises(RuntimeError, match=r"re-tracing function _doubled at .* for `jit`"):
            f(y)
        with pytest.raises(RuntimeError, match="re-tracing function cos"):
            jnp.cos(x)  # an eager op of a new signature traces too
        assert jax.make_jaxpr(_doubled)(x) is not None  # make_jaxpr is not jit
    finally:
        jax.config.update("jax_no_tracing", False)


def test_no_execution_raises_on_every_run_but_lets_programs_trace_and_lower():
    f = jax.jit(_doubled)
    x = jnp.ones(3)
    f(x)
    with jax.no_execution(True):
        message = r"tried to execute function jit\(_doubled\), but the no_execution config"
        with pytest.raises(RuntimeError, match=message):
            f(x)  # a cached call: the fast paths forgot their entries
        with pytest.raises(RuntimeError, match=r"jit\(sin\), but the no_execution"):
            jnp.sin(x)
        assert "stablehlo.multiply" in f.lower(x).as_text()
    assert f(x).tolist() == [2.0, 2.0, 2.0]


def test_enable_checks_type_checks_every_traced_program():
    from modjax.tracecore import Primitive, ShapedArray

    answers = iter([(3,), (4,)])  # an abstract eval that answers differently the second time
    liar = Primitive("liar")
    liar.def_abstract_eval(lambda x: ShapedArray(next(answers), x.dtype))
    jax.make_jaxpr(lambda x: liar.bind(x))(np.ones(3, np.float32))  # unchecked: one answer
    answers = iter([(3,), (4,)])
    with jax.enable_checks(True), pytest.raises(TypeError, match="liar"):
        jax.make_jaxpr(lambda x: liar.bind(x))(np.ones(3, np.float32))


# --- transfer guards -------------------------------------------------------------------------

_DISALLOWED = "Disallowed host-to-device transfer"


def test_transfer_guard_disallow_stops_implicit_host_to_device_transfers_only():
    x = jnp.arange(3.0)
    f = jax.jit(_doubled)
    with jax.transfer_guard("disallow"):
        for implicit in (
            lambda: f(np.ones(3, np.float32)),
            lambda: f(1.0),
            lambda: jnp.array(np.ones(3)),
            lambda: jnp.sin(np.ones(3)),
            lambda: x + np.ones(3, np.float32),
        ):
            with pytest.raises(jax.errors.JaxRuntimeError, match=_DISALLOWED):
                implicit()
        f(x)  # already on the device
        jax.device_put(np.ones(3))  # explicit
        np.asarray(x)  # on CPU reading an Array is not a transfer (as in JAX)
        jax.device_get(x)
    with (
        jax.transfer_guard("disallow_explicit"),
        pytest.raises(jax.errors.JaxRuntimeError, match=_DISALLOWED),
    ):
        jax.device_put(np.ones(3))
    with jax.transfer_guard_host_to_device("disallow"):
        assert jax.config.jax_transfer_guard_host_to_device == "disallow"
        with pytest.raises(jax.errors.JaxRuntimeError, match=_DISALLOWED):
            f(np.ones(3, np.float32))
    assert jax.config.jax_transfer_guard_host_to_device is None
    assert f(np.ones(3, np.float32)).tolist() == [2.0, 2.0, 2.0]


def test_gc_and_thread_guards_are_options_and_context_managers():
    with jax.array_garbage_collection_guard("log"), jax.thread_guard(True):
        assert jax.config.jax_array_garbage_collection_guard == "log"
        assert float(jnp.ones(2).sum()) == 2.0
    assert jax.config.jax_thread_guard is False


# --- devices and platforms (a fresh process with two CPU devices) ----------------------------

_TWO_DEVICES = """
import numpy as np
import modjax as jax, modjax.numpy as jnp
d0, d1 = jax.devices()
x = jnp.arange(3.0)
f = jax.jit(lambda a: a + 1)
f(x)
with jax.default_device(d1):
    assert jnp.ones(2).devices() == {d1}, jnp.ones(2).devices()
    assert f(x).devices() == {d1}  # an uncommitted argument follows the default device
    assert jnp.sin(x).devices() == {d1}
with jax.default_device("cpu"):
    assert jnp.ones(2).devices() == {d0}
assert f(x).devices() == {d0}
try:
    with jax.default_device("gpu"):
        jnp.ones(2)
except RuntimeError as err:
    assert "gpu" in str(err), err
else:
    raise AssertionError("default_device('gpu') on a CPU-only system")
y = jax.device_put(x, d1)
with jax.transfer_guard("disallow"):
    jax.device_put(x, d1)  # explicit
    try:
        jax.jit(lambda a, b: a + b)(y, x)
    except Exception as err:
        assert "Disallowed device-to-device transfer" in str(err), err
    else:
        raise AssertionError("an implicit device-to-device transfer went through")
print("ok")
"""


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )


def test_default_device_places_uncommitted_work_and_device_to_device_guard():
    out = _run(_TWO_DEVICES, MODJAX_NUM_CPU_DEVICES="2")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_platforms_chooses_the_backends_and_names_one_that_cannot_start():
    code = "import modjax as jax; jax.config.update('jax_platforms', {!r}); print(jax.devices())"
    ok = _run(code.format("cpu"))
    assert ok.returncode == 0 and "CpuDevice" in ok.stdout, ok.stderr[-2000:]
    bad = _run(code.format("tpu"))
    assert bad.returncode != 0
    assert "RuntimeError: Unable to initialize backend 'tpu'" in bad.stderr, bad.stderr[-2000:]
    from_env = _run("import modjax as jax; print(jax.config.jax_platforms)", MODJAX_PLATFORMS="cpu")
    assert from_env.stdout.strip() == "cpu"


# --- the persistent compilation cache ------------------------------------------------------


def test_persistent_cache_options_choose_what_is_written(tmp_path):
    def program(k):
        return jax.jit(lambda v: jnp.tanh(v) * k)  # a new program per k

    x = jnp.ones(5)
    with jax.config.option("compilation_cache_dir")(str(tmp_path)):
        with jax.config.option("persistent_cache_min_entry_size_bytes")(10**12):
            program(3.0)(x)
        assert not list(tmp_path.rglob("*")), "an entry smaller than the minimum was written"
        with jax.config.option("enable_compilation_cache")(False):
            program(4.0)(x)
        assert not list(tmp_path.rglob("*")), "written with enable_compilation_cache=False"
        before = compile_cache.stats["disk_writes"]
        program(5.0)(x)
        assert compile_cache.stats["disk_writes"] == before + 1


def test_make_user_context_is_part_of_jit_keys():
    context = jax.make_user_context(default_value=None)
    assert context.value is None
    f = jax.jit(_doubled)
    f(1.0)
    with context(1):
        assert context.value == 1
        f(1.0)
    with context(2):
        f(1.0)
    f(1.0)
    with context(1):
        f(1.0)
    assert f._cache_size() == 3  # one per value; a value seen before is reused
    with pytest.raises(TypeError):
        jax.make_user_context(default_value=[])  # values are cache keys: hashable
