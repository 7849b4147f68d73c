"""The debugging flags as a user sees them: debug_nans/infs, disable_jit, leak checks, cache misses.

Messages follow JAX 0.10.2's (checked by running the same programs with
``/work/jaxref/bin/python``): ``invalid value (nan) encountered in log``, the
"Calling the de-optimized version" warning, ``Leaked trace ...`` and
``TRACING CACHE MISS`` with its ``never seen function`` / ``different input
types`` explanations; modjax adds the user's source line where JAX relies on
its traceback.
"""

from __future__ import annotations

import inspect
import logging

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.tracecore.core import Tracer

HERE = __file__


def _log_of_negative(x):
    y = jnp.sin(x)
    z = jnp.log(y - 2.0)  # the NaN is made here
    return z * 2


LOG_LINE = (
    inspect.getsource(_log_of_negative)
    .splitlines()
    .index("    z = jnp.log(y - 2.0)  # the NaN is made here")
    + inspect.getsourcelines(_log_of_negative)[1]
)


# --- debug_nans / debug_infs -------------------------------------------------------------------


def test_debug_nans_names_the_primitive_and_line_under_jit(caplog):
    f = jax.jit(_log_of_negative)
    assert np.isnan(f(1.0))  # off: NaNs flow silently
    nans = jax.debug_nans(True)
    with nans, caplog.at_level(logging.WARNING), pytest.raises(FloatingPointError) as info:
        f(1.0)
    message = str(info.value)
    assert message.startswith("invalid value (nan) encountered in log")
    assert f"{HERE}:{LOG_LINE} (_log_of_negative)" in message
    assert any(
        "Invalid nan value encountered in the output of a jit(_log_of_negative) function. "
        "Calling the de-optimized version." in r.getMessage()
        for r in caplog.records
    )
    assert float(f(0.5) * 0) != 1.0  # the flag is off again after the block


def test_debug_nans_eagerly_and_through_config():
    jax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match=rf"encountered in log at {HERE}:{LOG_LINE}"):
            _log_of_negative(jnp.float32(1.0))
        with pytest.raises(FloatingPointError, match="invalid value \\(nan\\) encountered in div"):
            jnp.float32(0.0) / 0.0
        assert float(jax.jit(jnp.sin)(1.0)) == pytest.approx(np.sin(1.0))  # no false alarm
    finally:
        jax.config.update("jax_debug_nans", False)


def test_debug_infs_reports_infinities_but_debug_nans_does_not():
    f = jax.jit(lambda x: 1 / x)
    with jax.debug_nans(True):
        assert np.isinf(f(jnp.float32(0.0)))
    infs = jax.debug_infs(True)
    with infs, pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
        f(jnp.float32(0.0))


def test_debug_nans_inside_grad_under_jit():
    g = jax.jit(jax.grad(lambda x: jnp.sqrt(x - 2.0)))
    with jax.debug_nans(True), pytest.raises(FloatingPointError, match="encountered in sqrt"):
        g(1.0)


def _scan_body(c, x):
    y = jnp.log(x - 1.5)  # NaN for x < 1.5
    return c + y, y


SCAN_LINE = inspect.getsourcelines(_scan_body)[1] + 1


def test_debug_nans_finds_the_primitive_inside_loop_bodies():
    f = jax.jit(lambda xs: lax.scan(_scan_body, 0.0, xs))
    assert np.isfinite(f(jnp.arange(3.0) + 2)[0])
    with jax.debug_nans(True), pytest.raises(FloatingPointError) as info:
        f(jnp.arange(3.0))
    assert (
        str(info.value)
        == f"invalid value (nan) encountered in log at {HERE}:{SCAN_LINE} (_scan_body)"
    )
    g = jax.jit(lambda p, x: lax.cond(p, jnp.arcsin, lambda x: x, x))
    with jax.debug_nans(True), pytest.raises(FloatingPointError, match="encountered in asin"):
        g(True, 2.0)


# --- disable_jit ---------------------------------------------------------------------------------


def test_disable_jit_runs_functions_and_control_flow_in_python(capsys):
    seen = []

    @jax.jit
    def f(x):
        seen.append(isinstance(x, Tracer))
        return x * 2

    def body(carry, x):
        seen.append(isinstance(carry, Tracer) or isinstance(x, Tracer))
        return carry + x, carry

    with jax.disable_jit():
        assert float(f(1.0)) == 2.0 and float(f(2.0)) == 4.0
        carry, ys = lax.scan(body, 0.0, jnp.arange(3.0))
        count = lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0)
        branch = lax.cond(True, lambda x: x + 1, lambda x: x - 1, 1.0)
        picked = lax.switch(2, [lambda: 0, lambda: 1, lambda: 2])
    assert seen == [False] * 5  # two calls of f, three scan steps: all concrete
    assert float(carry) == 3.0 and ys.tolist() == [0.0, 0.0, 1.0]
    assert (int(count), float(branch), int(picked)) == (3, 2.0, 2)
    f(3.0)
    assert seen[-1] is True  # compiled again once the block ends


def test_disable_jit_through_config_matches_jit():
    def fun(x):
        return lax.fori_loop(0, 3, lambda i, c: c * 2 + i, x)

    expected = float(jax.jit(fun)(1.0))
    jax.config.update("jax_disable_jit", True)
    try:
        assert float(jax.jit(fun)(1.0)) == expected
    finally:
        jax.config.update("jax_disable_jit", False)


# --- check_tracer_leaks --------------------------------------------------------------------------

leaked: list = []


def _leaky(x):
    y = x * 2
    leaked.append(y)
    return y


def test_checking_leaks_reports_where_a_tracer_escaped():
    leaked.clear()
    with jax.checking_leaks(), pytest.raises(Exception, match="Leaked trace JaxprTrace") as info:
        jax.jit(_leaky)(1.0)
    message = str(info.value)
    assert "computed by 'mul' at" in message and "(_leaky)" in message
    assert f"{__name__}.leaked" in message
    leaked.clear()
    with jax.checking_leaks(), pytest.raises(Exception, match="Leaked trace JVPTrace"):
        jax.grad(_leaky)(1.0)
    leaked.clear()


def test_check_tracer_leaks_is_the_option_as_a_context_manager():
    leaked.clear()
    with jax.check_tracer_leaks(True):
        assert jax.config.jax_check_tracer_leaks is True
        with pytest.raises(Exception, match="Leaked trace JaxprTrace"):
            jax.jit(_leaky)(1.0)
    leaked.clear()
    assert jax.config.jax_check_tracer_leaks is False


def test_checking_leaks_has_no_false_alarms():
    with jax.checking_leaks():
        assert float(jax.jit(lambda x: x * 2)(1.0)) == 2.0
        assert float(jax.grad(lambda x: jnp.sin(x) * x)(0.0)) == 0.0
        assert jax.vmap(lambda x: x + 1)(jnp.arange(3.0)).tolist() == [1.0, 2.0, 3.0]
        assert float(lax.scan(lambda c, x: (c + x, None), 0.0, jnp.arange(3.0))[0]) == 3.0


# --- explain_cache_misses ------------------------------------------------------------------------


def _misses(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "CACHE MISS" in r.getMessage()]


def test_explain_cache_misses_says_which_argument_changed_and_how(caplog):
    @jax.jit
    def add(x, y):
        return x + y

    scale = jax.jit(lambda x, n: x * n, static_argnums=1)
    first = jax.jit(lambda d: d["a"])
    with jax.explain_cache_misses(True), caplog.at_level(logging.WARNING):
        add(1.0, 2.0)
        add(1.0, 2.0)  # a hit: no message
        add(jnp.ones(3), 2.0)
        add(jnp.ones(3, jnp.int32), 2.0)
        add(jnp.ones(3, jnp.int32), jnp.float32(2.0))
        scale(1.0, 2)
        scale(1.0, 3)
        first({"a": 1.0})
        first({"a": 1.0, "b": 2.0})
    never, shape, dtype, weak, _, static, _, tree = _misses(caplog)
    assert never.startswith(f"TRACING CACHE MISS at {HERE}:")
    assert "never seen function:\n    add id=" in never and "defined at" in never
    assert "all previously seen cache keys differ. For the closest previous key:" in shape
    assert "* at x, now f32[3]{weak_type=False} and before f32[]{weak_type=True}" in shape
    assert "* at x, now i32[3] and before f32[3]" in dtype
    assert "* at y, now f32[]{weak_type=False} and before f32[]{weak_type=True}" in weak
    assert "different static arguments:\n  * at position 1, now 3 and before 2" in static
    assert "different input pytree:" in tree and "'b'" in tree


def test_explain_cache_misses_names_a_placement_change(caplog):
    f = jax.jit(lambda x: x + 1)
    x = jnp.ones(2)
    with jax.explain_cache_misses(True), caplog.at_level(logging.WARNING):
        f(x)
        f(jax.device_put(x, jax.devices()[0]))  # committed now: same types, new executable
    (_, placement) = _misses(caplog)
    assert placement.startswith("COMPILE CACHE MISS")
    assert "different device or sharding" in placement and "(committed)" in placement
