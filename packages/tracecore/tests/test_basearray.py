"""tracecore's abstract ``Array``: tracers are instances, other values are not."""

import numpy as np
import pytest
from tracecore_test_prims import sin_p

from modjax.tracecore import Array, Tracer
from modjax.tracecore.tracing import make_jaxpr


def test_tracers_are_arrays_and_plain_values_are_not():
    seen = []

    def f(x):
        seen.append(x)
        return sin_p.bind(x)

    make_jaxpr(f)(np.ones(3, np.float32))
    assert isinstance(seen[0], Tracer) and isinstance(seen[0], Array)
    assert issubclass(type(seen[0]), Array)
    for value in (np.ones(3), 1.0, 2, [1.0], None):
        assert not isinstance(value, Array)


def test_array_is_abstract_and_unhashable():
    assert Array.__module__ == "modjax" and Array.__hash__ is None
    with pytest.raises(TypeError, match="abstract"):
        Array()
