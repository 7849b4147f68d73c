"""An abstract value may give its tracers methods and properties (aval_method/aval_property)."""

from __future__ import annotations

import numpy as np

from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import aval_method, aval_property
from modjax.tracecore.tracing import trace_to_jaxpr
from modjax.tracecore.wrapped_fun import wrap_init


class _Labelled(ShapedArray):
    """A ShapedArray whose tracers have a ``label`` property and a ``describe`` method."""

    label = aval_property(lambda tracer: f"labelled {tracer.aval.shape}")
    describe = aval_method(lambda tracer, suffix: f"{tracer.label}{suffix}")


def test_tracers_expose_their_avals_members_bound_to_themselves():
    seen = []

    def fun(x):
        seen.append((x.label, x.describe("!")))
        return [x]

    trace_to_jaxpr(wrap_init(fun), [_Labelled((2, 3), np.dtype("float32"))])
    assert seen == [("labelled (2, 3)", "labelled (2, 3)!")]


def test_other_missing_attributes_still_raise_attribute_error():
    def fun(x):
        assert not hasattr(x, "no_such_member")
        return [x]

    trace_to_jaxpr(wrap_init(fun), [ShapedArray((2,), np.dtype("float32"))])
