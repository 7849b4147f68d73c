"""Dead-code elimination and inlining of calls, on examples and generated programs."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis_profiles import examples
from tracecore_test_prims import add_p, cos_p, mul_p, neg_p, sin_p, sumdiff_p
from tracecore_test_programs import (
    CLOSED_WITH_CONST,
    INNER_CONST,
    LOG,
    X,
    effect_p,
    f32,
    opaque_p,
    programs,
    trace,
)

from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.call import call, call_p
from modjax.tracecore.check import check_jaxpr
from modjax.tracecore.core import Primitive
from modjax.tracecore.dce import dce_closed_jaxpr, dce_jaxpr, dce_rules, eqn_has_effects
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.inline import inline_calls, is_call_eqn
from modjax.tracecore.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, subjaxprs
from modjax.tracecore.tracing import make_jaxpr


def run(closed, *args) -> list:
    if isinstance(closed, Jaxpr):
        raise TypeError("run takes a ClosedJaxpr")
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def all_eqns(jaxpr):
    """Yield every equation at any depth."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in subjaxprs(eqn.params):
            yield from all_eqns(sub)


def count_work(jaxpr) -> int:
    """Count equations that are not calls, looking through calls."""
    return sum(1 for e in all_eqns(jaxpr) if e.primitive is not call_p)


def assert_no_dead_code(jaxpr):
    """Check each equation feeds a later one or an output, or has an effect."""
    read = {a for a in jaxpr.outvars if isinstance(a, Var)}
    for eqn in reversed(jaxpr.eqns):
        assert eqn_has_effects(eqn) or any(v in read for v in eqn.outvars)
        read.update(a for a in eqn.invars if isinstance(a, Var))


def args_for(closed):
    return [X * (i + 1) for i in range(len(closed.jaxpr.invars))]


# --- DCE: properties ----------------------------------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(st.data())
def test_dce_keeps_used_results_and_effects(data):
    closed = trace(data.draw(programs()))
    n_out = len(closed.jaxpr.outvars)
    used = data.draw(st.lists(st.booleans(), min_size=n_out, max_size=n_out))
    args = args_for(closed)
    LOG.clear()
    expected = run(closed, *args)
    effects = len(LOG)

    pruned, used_inputs = dce_closed_jaxpr(closed, used)
    check_jaxpr(pruned)
    assert len(pruned.eqns) <= len(closed.eqns)
    LOG.clear()
    got = run(pruned, *[a for a, u in zip(args, used_inputs, strict=True) if u])
    assert len(LOG) == effects
    for value, want in zip(got, [v for v, u in zip(expected, used, strict=True) if u], strict=True):
        assert_same(value, want)
    assert_no_dead_code(pruned.jaxpr)
    # A second pass finds nothing to do and says so by returning the same object.
    again, again_used = dce_closed_jaxpr(pruned, [True] * len(pruned.jaxpr.outvars))
    assert again is pruned and all(again_used)


@settings(max_examples=examples(60), deadline=None)
@given(programs())
def test_dce_with_instantiate_keeps_the_signature(prog):
    closed = trace(prog)
    n_out = len(closed.jaxpr.outvars)
    pruned, used_inputs = dce_jaxpr(closed.jaxpr, [False] * n_out, instantiate=True)
    assert all(used_inputs) and pruned.invars == closed.jaxpr.invars and pruned.outvars == []
    assert pruned.constvars == closed.jaxpr.constvars
    check_jaxpr(ClosedJaxpr(pruned, closed.consts))
    assert_no_dead_code(pruned)
    assert any(eqn_has_effects(e) for e in pruned.eqns) or pruned.eqns == []


# --- DCE: examples ------------------------------------------------------------------------


def test_dce_removes_dead_equations():
    closed = make_jaxpr(lambda x, y: [sin_p.bind(x), cos_p.bind(y), neg_p.bind(sin_p.bind(x))])(
        X, X
    )
    pruned, used_inputs = dce_jaxpr(closed.jaxpr, [True, False, False])
    assert [e.primitive for e in pruned.eqns] == [sin_p]
    assert used_inputs == [True, False] and len(pruned.invars) == 1
    pruned, used_inputs = dce_jaxpr(closed.jaxpr, [False, False, True], instantiate=[False, True])
    assert [e.primitive for e in pruned.eqns] == [sin_p, neg_p]
    assert used_inputs == [True, True]


def test_dce_keeps_effects_even_unused():
    def f(x):
        effect_p.bind(x)
        call(lambda a: [effect_p.bind(sin_p.bind(a)), cos_p.bind(a)], x)
        return [cos_p.bind(x)]

    closed = make_jaxpr(f)(X)
    pruned, _ = dce_closed_jaxpr(closed, [False])
    assert [e.primitive for e in pruned.eqns] == [effect_p, call_p]
    inner_call = pruned.eqns[1]
    assert inner_call.outvars == []  # no results used, but the effect inside stays
    assert [e.primitive for e in inner_call.params["jaxpr"].eqns] == [sin_p, effect_p]


def test_dce_call_rule_prunes_inner_outputs_and_operands():
    def f(x, y):
        a, b = call(lambda u, v: [sin_p.bind(u), cos_p.bind(v)], x, y)
        return [a, b]

    closed = make_jaxpr(f)(X, X)
    pruned, used_inputs = dce_closed_jaxpr(closed, [False, True])
    assert used_inputs == [False, True]
    (eqn,) = pruned.eqns
    assert eqn.invars == pruned.jaxpr.invars and len(eqn.outvars) == 1
    inner = eqn.params["jaxpr"]
    assert [e.primitive for e in inner.eqns] == [cos_p] and len(inner.jaxpr.invars) == 1
    check_jaxpr(pruned)
    assert_same(run(pruned, X)[0], np.cos(X))
    # A call none of whose results are used goes away.
    pruned, used_inputs = dce_closed_jaxpr(closed, [False, False])
    assert pruned.eqns == [] and used_inputs == [False, False]


def test_dce_drops_unused_consts_and_keeps_unchanged_jaxprs():
    c1, c2 = np.ones(3, f32), np.full(3, 2.0, f32)
    closed = make_jaxpr(lambda x: [mul_p.bind(x, c1), add_p.bind(x, c2)])(X)
    pruned, _ = dce_closed_jaxpr(closed, [False, True])
    assert pruned.consts == [c2] and len(pruned.jaxpr.constvars) == 1
    kept, used = dce_jaxpr(closed.jaxpr, [False, True])
    assert len(kept.constvars) == 2  # dce_jaxpr keeps constvars
    same, used = dce_closed_jaxpr(closed, [True, True])
    assert same is closed and used == [True]


def test_dce_cleans_inside_primitives_without_rules():
    def g(a, b):
        sin_p.bind(a)
        cos_p.bind(b)
        return [neg_p.bind(a), b]

    body = make_jaxpr(g)(X, X)
    closed = make_jaxpr(lambda x: opaque_p.bind(x, x, body=body))(X)
    assert len(body.eqns) == 3
    pruned, _ = dce_closed_jaxpr(closed, [True, False])
    (eqn,) = pruned.eqns
    new_body = eqn.params["body"]
    # The signature cannot change without a rule; the dead code inside goes.
    assert len(eqn.invars) == 2 and len(eqn.outvars) == 2
    assert [e.primitive for e in new_body.eqns] == [neg_p]
    check_jaxpr(pruned)


def test_dce_uses_registered_rules():
    seen = []
    prim = Primitive("dce_test_ruled")
    prim.multiple_results = True
    prim.def_abstract_eval(lambda a, b: [a, b])

    def rule(used_outputs, eqn):
        seen.append(list(used_outputs))
        return [True, False], eqn.replace(invars=eqn.invars[:1] * 2)

    dce_rules[prim] = rule
    try:
        closed = make_jaxpr(lambda x, y: prim.bind(x, y))(X, X)
        pruned, used_inputs = dce_jaxpr(closed.jaxpr, [True, False])
        assert seen == [[True, False]] and used_inputs == [True, False]
    finally:
        del dce_rules[prim]


def test_dce_drop_vars_and_bad_arguments():
    aval = ShapedArray((3,), f32)
    x, y, dropped = Var(aval), Var(aval), DropVar(aval)
    eqn = JaxprEqn(sumdiff_p, [x, x], [y, dropped], {})
    jaxpr = Jaxpr([], [x], [y], [eqn])
    pruned, _ = dce_jaxpr(jaxpr, [True])
    assert pruned is jaxpr
    with pytest.raises(ValueError, match="used_outputs has 2 entries for 1 outputs"):
        dce_jaxpr(jaxpr, [True, True])
    with pytest.raises(ValueError, match="instantiate has 3 entries for 1 inputs"):
        dce_jaxpr(jaxpr, [True], instantiate=[True] * 3)


# --- inlining: properties -----------------------------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(programs())
def test_inlining_removes_every_call_and_keeps_results(prog):
    closed = trace(prog)
    args = args_for(closed)
    LOG.clear()
    expected = run(closed, *args)
    effects = len(LOG)

    inlined = inline_calls(closed)
    check_jaxpr(inlined)
    assert not any(e.primitive is call_p for e in all_eqns(inlined))
    assert count_work(inlined) == count_work(closed)
    if not any(e.primitive is call_p for e in all_eqns(closed)):
        assert inlined is closed
    LOG.clear()
    for got, want in zip(run(inlined, *args), expected, strict=True):
        assert_same(got, want)
    assert len(LOG) == effects


@settings(max_examples=examples(60), deadline=None)
@given(programs())
def test_inlining_a_plain_jaxpr_leaves_calls_with_consts(prog):
    closed = trace(prog)
    inlined = inline_calls(closed.jaxpr)
    assert isinstance(inlined, Jaxpr)
    check_jaxpr(ClosedJaxpr(inlined, closed.consts))
    for eqn in all_eqns(inlined):
        if eqn.primitive is call_p:
            assert eqn.params["jaxpr"].consts  # only calls that have consts remain
    args = args_for(closed)
    for got, want in zip(
        eval_jaxpr(inlined, closed.consts, *args), run(closed, *args), strict=True
    ):
        assert_same(got, want)


# --- inlining: examples -------------------------------------------------------------------


def test_inlining_substitutes_literal_and_input_results():
    closed = make_jaxpr(lambda x: call(lambda a: [a, 1.0, sin_p.bind(a)], x))(X)
    inlined = inline_calls(closed)
    (eqn,) = inlined.eqns
    assert eqn.primitive is sin_p and eqn.invars == inlined.jaxpr.invars
    x_out, lit, s = inlined.jaxpr.outvars
    assert x_out is inlined.jaxpr.invars[0]
    assert isinstance(lit, Literal) and lit.val == 1.0
    assert s is eqn.outvars[0]


def test_inlining_the_same_jaxpr_twice_uses_fresh_variables():
    inner = make_jaxpr(lambda a: [sin_p.bind(a)])(X)

    def f(x):
        (y,) = call_p.bind(x, jaxpr=inner, name="s")
        (z,) = call_p.bind(y, jaxpr=inner, name="s")
        return [z]

    inlined = inline_calls(make_jaxpr(f)(X))
    first, second = inlined.eqns
    assert first.outvars[0] is not second.outvars[0]
    assert second.invars[0] is first.outvars[0]
    check_jaxpr(inlined)
    assert_same(run(inlined, X)[0], np.sin(np.sin(X)))


def test_inlining_hoists_inner_consts():
    closed = make_jaxpr(
        lambda x: [
            *call_p.bind(x, jaxpr=CLOSED_WITH_CONST, name="a"),
            *call_p.bind(x, jaxpr=CLOSED_WITH_CONST, name="b"),
        ]
    )(X)
    inlined = inline_calls(closed)
    assert inlined.consts == [INNER_CONST]  # shared by both inlined copies
    assert all(e.primitive is not call_p for e in inlined.eqns)
    check_jaxpr(inlined)
    for got, want in zip(run(inlined, X), run(closed, X), strict=True):
        assert_same(got, want)


def test_inlining_follows_the_predicate_and_reaches_inside_other_primitives():
    def f(x):
        (a,) = call(lambda u: [sin_p.bind(u)], x, name="keep")
        (b,) = call(lambda u: [cos_p.bind(u)], x, name="go")
        body = make_jaxpr(lambda u: call(lambda v: [neg_p.bind(v)], u, name="go"))(X)
        (c,) = opaque_p.bind(x, body=body)
        return [a, b, c]

    closed = make_jaxpr(f)(X)
    inlined = inline_calls(closed, lambda e: is_call_eqn(e) and e.params["name"] != "keep")
    assert [e.primitive for e in inlined.eqns] == [call_p, cos_p, opaque_p]
    assert inlined.eqns[0].params["name"] == "keep"
    assert [e.primitive for e in inlined.eqns[2].params["body"].eqns] == [neg_p]
    check_jaxpr(inlined)
    for got, want in zip(run(inlined, X), run(closed, X), strict=True):
        assert_same(got, want)


def test_inlining_an_equation_without_a_jaxpr_param_is_an_error():
    closed = make_jaxpr(lambda x: sin_p.bind(x))(X)
    with pytest.raises(TypeError, match="has no 'jaxpr' param"):
        inline_calls(closed, lambda e: True)
