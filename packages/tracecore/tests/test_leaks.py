"""check_tracer_leaks with tracecore alone: a tracer stored in a global is reported."""

from __future__ import annotations

import numpy as np
import pytest
from tracecore_test_prims import sin_p

from modjax.tracecore import checking_leaks, config
from modjax.tracecore.tracing import make_jaxpr

X = np.ones(3, np.float32)
stash: list = []


def _leaky(x):
    y = sin_p.bind(x)
    stash.append(y)
    return [y]


def test_a_stored_tracer_is_reported_with_its_origin_and_holder():
    stash.clear()
    with checking_leaks(), pytest.raises(Exception, match="Leaked trace JaxprTrace") as info:
        make_jaxpr(_leaky)(X)
    message = str(info.value)
    assert "computed by 'test_sin'" in message and "(_leaky)" in message
    assert f"{__name__}.stash" in message
    stash.clear()


def test_without_the_option_or_a_leak_nothing_is_raised():
    stash.clear()
    make_jaxpr(_leaky)(X)  # off: the leak goes unnoticed until the tracer is used
    stash.clear()
    config.update("jax_check_tracer_leaks", True)
    try:
        closed = make_jaxpr(lambda x: [sin_p.bind(sin_p.bind(x))])(X)
    finally:
        config.update("jax_check_tracer_leaks", False)
    assert len(closed.eqns) == 2
