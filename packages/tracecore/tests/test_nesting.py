"""Nesting of traces: a tiny forward-mode transform written on tracecore's public API.

The classic perturbation-confusion program (Siskind & Pearlmutter) differentiates
``x * d/dy (x + y)``: the inner derivative is 1 whatever x is, so the outer
derivative is 1. A transform that mixed up the two perturbations would give 2.
"""

import numpy as np
from tracecore_test_prims import add_p, cos_p, mul_p, neg_p, sin_p, sub_p

from modjax.tracecore import core
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import Literal
from modjax.tracecore.tracing import make_jaxpr


class DualTracer(core.Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return core.to_aval(self.primal)

    def to_concrete_value(self):
        return None if isinstance(self.primal, core.Tracer) else self.primal


# d(out) given primals and tangents, using only primitives (so rules nest).
JVP_RULES = {
    add_p: lambda p, t: add_p.bind(t[0], t[1]),
    sub_p: lambda p, t: sub_p.bind(t[0], t[1]),
    mul_p: lambda p, t: add_p.bind(mul_p.bind(t[0], p[1]), mul_p.bind(p[0], t[1])),
    sin_p: lambda p, t: mul_p.bind(t[0], cos_p.bind(p[0])),
    cos_p: lambda p, t: mul_p.bind(t[0], neg_p.bind(sin_p.bind(p[0]))),
    neg_p: lambda p, t: neg_p.bind(t[0]),
}


class DualTrace(core.Trace):
    __slots__ = ()

    def process_primitive(self, primitive, args, params):
        primals, tangents = [], []
        for arg in args:
            if isinstance(arg, DualTracer) and arg._trace is self:
                primals.append(arg.primal)
                tangents.append(arg.tangent)
            else:  # anything else, outer tracers included, is a constant here
                primals.append(arg)
                tangents.append(0.0)
        with core.set_current_trace(self.parent):
            out = primitive.bind(*primals, **params)
            tangent = JVP_RULES[primitive](primals, tangents)
        return DualTracer(self, out, tangent)


def derivative(f):
    def df(x):
        trace = DualTrace()
        with core.set_current_trace(trace):
            out = f(DualTracer(trace, x, 1.0))
        trace.invalidate()
        if isinstance(out, DualTracer) and out._trace is trace:
            return out.tangent
        return 0.0

    return df


def test_derivative_of_sin():
    np.testing.assert_allclose(derivative(lambda x: sin_p.bind(x))(0.3), np.cos(0.3), rtol=1e-6)


def test_perturbation_confusion_is_avoided():
    def f(x):
        inner = derivative(lambda y: add_p.bind(x, y))(1.0)
        return mul_p.bind(x, inner)

    assert float(derivative(f)(2.0)) == 1.0


def test_nested_derivative_second_order():
    d2 = derivative(derivative(lambda x: sin_p.bind(x)))
    np.testing.assert_allclose(d2(0.3), -np.sin(0.3), rtol=1e-6)


def test_derivative_of_an_inner_closure_over_an_outer_variable():
    # d/dx [ d/dy (x * y) ] = d/dx x = 1
    result = derivative(lambda x: derivative(lambda y: mul_p.bind(x, y))(3.0))(5.0)
    assert float(result) == 1.0


def test_a_traces_main_tells_its_tracers_from_those_of_nested_traces():
    # Libraries ask ``x._trace.main is trace.main`` (JAX's Trace.main) to tell apart
    # the tracers of one transformation from those of another of the same kind.
    mains = []

    def f(x):
        mains.append(x._trace.main)
        inner = derivative(lambda y: (mains.append(y._trace.main), mul_p.bind(x, y))[1])
        return inner(3.0)

    derivative(f)(5.0)
    outer, inner = mains
    assert outer is not inner and outer.main is outer
    assert core.eval_trace.main is core.eval_trace


def test_concrete_primals_are_visible_through_the_transform():
    def f(x):
        return sin_p.bind(x) if x > 0 else neg_p.bind(x)

    saved = dict(core.tracer_operators)
    core.register_tracer_operator("__gt__", lambda a, b: np.greater(a.primal, b))
    try:
        np.testing.assert_allclose(derivative(f)(0.5), np.cos(0.5), rtol=1e-6)
    finally:
        core.tracer_operators.clear()
        core.tracer_operators.update(saved)


def test_make_jaxpr_of_a_derivative_and_derivative_of_eval_jaxpr():
    closed = make_jaxpr(derivative(lambda x: mul_p.bind(x, sin_p.bind(x))))(1.0)
    x = 0.7
    want = np.sin(x) + x * np.cos(x)
    np.testing.assert_allclose(eval_jaxpr(closed.jaxpr, closed.consts, x)[0], want, rtol=1e-6)
    # Differentiating the evaluation of a jaxpr transforms it equation by equation.
    program = make_jaxpr(lambda x: mul_p.bind(x, sin_p.bind(x)))(1.0)
    got = derivative(lambda x: eval_jaxpr(program.jaxpr, program.consts, x)[0])(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_derivative_inside_make_jaxpr_keeps_source_lines():
    closed = make_jaxpr(derivative(lambda x: sin_p.bind(x)))(1.0)
    for eqn in closed.jaxpr.eqns:
        assert eqn.source_info.frame.file_name == __file__
    assert not any(isinstance(v, Literal) and v.val is None for e in closed.eqns for v in e.invars)


def test_eval_transition_hooks_fire_only_when_tracing_starts_and_stops():
    # set_current_trace tells the hooks when a thread leaves the eval trace and comes
    # back, handing back what leaving returned; swaps between traces say nothing.
    events = []
    saved = list(core._eval_hooks)  # runtime's, when it is imported in this process
    core.set_eval_transition_hooks(
        lambda: events.append("leave") or len(events), lambda kept: events.append(kept)
    )
    try:
        outer = core.EvalTrace()  # any trace other than the eval trace
        inner = core.EvalTrace()
        with core.set_current_trace(outer):
            assert events == ["leave"]
            with core.set_current_trace(inner), core.set_current_trace(core.eval_trace):
                assert events == ["leave"]  # swaps: nothing
                with core.set_current_trace(outer):  # leaves the eval trace again
                    assert events == ["leave", "leave"]
                assert events == ["leave", "leave", 2]
        assert events == ["leave", "leave", 2, 1]
        with core.set_current_trace(core.eval_trace):
            pass
        assert events == ["leave", "leave", 2, 1]
    finally:
        core.set_eval_transition_hooks(*saved)
