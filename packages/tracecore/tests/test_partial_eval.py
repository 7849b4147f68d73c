"""Partial evaluation: known/unknown splits, residuals, remat policies and the call rule."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis_profiles import examples
from tracecore_test_prims import add_p, cos_p, mul_p, sin_p
from tracecore_test_programs import (
    CONST,
    LOG,
    Program,
    X,
    effect_p,
    programs,
    trace,
)

from modjax.tracecore.call import call, call_abstract_eval, call_impl, call_p, register_call_rules
from modjax.tracecore.check import check_jaxpr
from modjax.tracecore.core import Primitive
from modjax.tracecore.dce import dce_closed_jaxpr, eqn_has_effects
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, Literal, Var, subjaxprs
from modjax.tracecore.partial_eval import partial_eval_jaxpr
from modjax.tracecore.tracing import make_jaxpr


def run(closed: ClosedJaxpr, *args) -> list:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def reference_unknowns(jaxpr, unknowns) -> list[bool]:
    """Which outputs depend on an unknown input (looking inside calls)."""
    unknown = {v for v, u in zip(jaxpr.invars, unknowns, strict=True) if u}
    for eqn in jaxpr.eqns:
        ins = [isinstance(a, Var) and a in unknown for a in eqn.invars]
        if eqn.primitive is call_p:
            outs = reference_unknowns(eqn.params["jaxpr"].jaxpr, ins)
        else:
            outs = [any(ins)] * len(eqn.outvars)
        unknown.update(v for v, o in zip(eqn.outvars, outs, strict=True) if o)
    return [isinstance(a, Var) and a in unknown for a in jaxpr.outvars]


def contains_call(jaxpr) -> bool:
    return any(e.primitive is call_p for e in jaxpr.eqns)


def split_and_recombine(closed, unknowns, instantiate, saveable):
    """Partially evaluate, run both halves, and check they give the original outputs."""
    args = [X * (i + 1) for i in range(len(closed.jaxpr.invars))]
    LOG.clear()
    expected = run(closed, *args)
    effects_expected = len(LOG)

    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(
        closed, unknowns, instantiate, saveable
    )
    check_jaxpr(known)
    check_jaxpr(unknown)
    known_args = [a for a, u in zip(args, unknowns, strict=True) if not u]
    unknown_args = [a for a, u in zip(args, unknowns, strict=True) if u]
    assert len(known.jaxpr.invars) == len(known_args)
    assert len(unknown.jaxpr.invars) == num_res + len(unknown_args)
    n_known = out_unknowns.count(False)
    assert len(known.jaxpr.outvars) == n_known + num_res
    assert known.out_avals[n_known:] == unknown.in_avals[:num_res]

    LOG.clear()
    known_out = run(known, *known_args)
    unknown_out = run(unknown, *known_out[n_known:], *unknown_args)
    assert len(LOG) == effects_expected  # every effect runs exactly once
    known_it, unknown_it = iter(known_out[:n_known]), iter(unknown_out)
    for value, u in zip(expected, out_unknowns, strict=True):
        assert_same(next(unknown_it) if u else next(known_it), value)
    return known, unknown, out_unknowns, num_res


# --- properties ---------------------------------------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(st.data())
def test_split_recombines_to_the_original(data):
    prog = data.draw(programs(opaque=False))
    closed = trace(prog)
    n_in, n_out = len(closed.jaxpr.invars), len(closed.jaxpr.outvars)
    unknowns = data.draw(st.lists(st.booleans(), min_size=n_in, max_size=n_in))
    instantiate = data.draw(st.booleans() | st.lists(st.booleans(), min_size=n_out, max_size=n_out))
    policy = data.draw(st.sampled_from(["all", "none", "sin_only", "no_calls"]))
    saveable = {
        "all": None,
        "none": lambda e: False,
        "sin_only": lambda e: e.primitive is sin_p,
        "no_calls": lambda e: e.primitive is not call_p,
    }[policy]
    known, unknown, out_unknowns, _ = split_and_recombine(closed, unknowns, instantiate, saveable)

    inst = [instantiate] * n_out if isinstance(instantiate, bool) else instantiate
    depends = reference_unknowns(closed.jaxpr, unknowns)
    assert out_unknowns == [d or i for d, i in zip(depends, inst, strict=True)]

    if policy == "all" and not contains_call(closed.jaxpr):
        # Every equation the outputs need lands on exactly one side.
        pruned, _ = dce_closed_jaxpr(closed, [True] * n_out)
        assert len(known.eqns) + len(unknown.eqns) == len(pruned.eqns)


@settings(max_examples=examples(100), deadline=None)
@given(st.data())
def test_saving_nothing_makes_residuals_only_of_inputs(data):
    closed = trace(data.draw(programs(opaque=False)))
    n_in = len(closed.jaxpr.invars)
    unknowns = data.draw(st.lists(st.booleans(), min_size=n_in, max_size=n_in))
    known, _, out_unknowns, num_res = split_and_recombine(
        closed, unknowns, data.draw(st.booleans()), lambda e: False
    )
    n_known = out_unknowns.count(False)
    residuals = known.jaxpr.outvars[n_known:]
    effect_outputs = {v for e in known.eqns if eqn_has_effects(e) for v in e.outvars}
    for r in residuals:
        assert r in known.jaxpr.invars or r in effect_outputs
    assert num_res <= n_in + len(effect_outputs)


@settings(max_examples=examples(60), deadline=None)
@given(programs(opaque=False))
def test_all_known_leaves_nothing_unknown(prog):
    closed = trace(prog)
    n_in = len(closed.jaxpr.invars)
    known, unknown, out_unknowns, num_res = split_and_recombine(closed, [False] * n_in, False, None)
    assert not any(out_unknowns) and num_res == 0 and unknown.eqns == []


@settings(max_examples=examples(60), deadline=None)
@given(programs(effects=False, opaque=False))
def test_all_unknown_leaves_only_const_work_known(prog):
    closed = trace(prog)
    n_in = len(closed.jaxpr.invars)
    known, _, _, _ = split_and_recombine(closed, [True] * n_in, False, None)
    assert known.jaxpr.invars == []
    # Whatever stays known reads only consts and literals.
    for eqn in known.eqns:
        assert all(isinstance(a, Literal) or a not in known.jaxpr.invars for a in eqn.invars)


# --- examples -----------------------------------------------------------------------------


def test_known_values_become_residuals():
    closed = make_jaxpr(lambda x, y: mul_p.bind(sin_p.bind(x), y))(X, X)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [True] and num_res == 1
    assert [e.primitive for e in known.eqns] == [sin_p]
    assert [e.primitive for e in unknown.eqns] == [mul_p]
    assert known.jaxpr.outvars == [known.eqns[0].outvars[0]]
    assert unknown.eqns[0].invars[0] is unknown.jaxpr.invars[0]
    assert known.jaxpr.debug_info.arg_names == ("x",)
    assert unknown.jaxpr.debug_info.arg_names == ("residual[0]", "y")


def test_residuals_are_deduplicated_and_literals_are_not_residuals():
    def f(x, y):
        s = sin_p.bind(x)
        return [add_p.bind(mul_p.bind(s, y), mul_p.bind(s, 3.0)), mul_p.bind(y, 2.0)]

    closed = make_jaxpr(f)(X, X)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [True, True]
    # s is read twice by the unknown side but is one residual; `s * 3.0` is known too.
    assert num_res == 2
    assert [e.primitive for e in known.eqns] == [sin_p, mul_p]
    assert all(isinstance(a, Var) for a in unknown.jaxpr.invars)
    split_and_recombine(closed, [False, True], False, None)


def test_known_input_read_by_the_unknown_side_is_a_residual():
    closed = make_jaxpr(lambda x, y: mul_p.bind(x, y))(X, X)
    known, unknown, _, num_res = partial_eval_jaxpr(closed, [False, True])
    assert num_res == 1 and known.eqns == []
    assert known.jaxpr.outvars == known.jaxpr.invars  # passes its input through


def test_instantiate_forces_known_outputs_to_the_unknown_side():
    closed = make_jaxpr(lambda x, y: [sin_p.bind(x), 1.0, x, mul_p.bind(y, 2.0)])(X, X)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(
        closed, [False, True], instantiate=[True, True, False, False]
    )
    assert out_unknowns == [True, True, False, True]
    assert num_res == 1  # sin x; the literal is written in place
    assert isinstance(unknown.jaxpr.outvars[1], Literal)
    split_and_recombine(closed, [False, True], [True, True, False, False], None)
    _, _, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True], instantiate=True)
    assert out_unknowns == [True] * 4 and num_res == 2  # sin x and x


def test_consts_are_closed_over_not_residuals():
    closed = make_jaxpr(lambda x, y: [mul_p.bind(CONST, y), add_p.bind(x, CONST)])(X, X)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [True, False] and num_res == 0
    assert unknown.consts == [CONST] and known.consts == [CONST]
    # A const only the unknown side reads is dropped from the known side.
    closed = make_jaxpr(lambda x, y: [mul_p.bind(CONST, y), sin_p.bind(x)])(X, X)
    known, unknown, _, _ = partial_eval_jaxpr(closed, [False, True])
    assert known.consts == [] and unknown.consts == [CONST]
    # Forcing a const output to the unknown side closes over it too.
    closed = make_jaxpr(lambda x: [CONST, sin_p.bind(x)])(X)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [False], instantiate=True)
    assert out_unknowns == [True, True] and num_res == 1 and unknown.consts == [CONST]


def test_saveable_policy_recomputes_what_it_does_not_save():
    closed = make_jaxpr(lambda x, y: mul_p.bind(sin_p.bind(cos_p.bind(x)), y))(X, X)
    # Save cos, recompute sin.
    known, unknown, _, num_res = split_and_recombine(
        closed, [False, True], False, lambda e: e.primitive is cos_p
    )
    assert num_res == 1 and [e.primitive for e in known.eqns] == [cos_p]
    assert [e.primitive for e in unknown.eqns] == [sin_p, mul_p]
    # Save nothing: the residual is x itself and everything is recomputed.
    known, unknown, _, num_res = split_and_recombine(closed, [False, True], False, lambda e: False)
    assert num_res == 1 and known.eqns == [] and known.jaxpr.outvars == known.jaxpr.invars
    assert [e.primitive for e in unknown.eqns] == [cos_p, sin_p, mul_p]


def test_policy_recomputation_keeps_known_outputs_on_the_known_side():
    closed = make_jaxpr(lambda x, y: [sin_p.bind(x), mul_p.bind(sin_p.bind(x), y)])(X, X)
    known, unknown, out_unknowns, num_res = split_and_recombine(
        closed, [False, True], False, lambda e: False
    )
    assert out_unknowns == [False, True]
    assert [e.primitive for e in known.eqns] == [sin_p]
    assert [e.primitive for e in unknown.eqns] == [sin_p, mul_p]


def test_effectful_known_equations_stay_known_and_run_once():
    closed = make_jaxpr(lambda x, y: mul_p.bind(effect_p.bind(x), y))(X, X)
    known, unknown, _, num_res = split_and_recombine(closed, [False, True], False, lambda e: False)
    assert [e.primitive for e in known.eqns] == [effect_p]
    assert [e.primitive for e in unknown.eqns] == [mul_p] and num_res == 1

    # An effect nobody reads still runs on its side.
    def g(x, y):
        effect_p.bind(x)
        effect_p.bind(y)
        return [x]

    closed = make_jaxpr(g)(X, X)
    known, unknown, _, _ = split_and_recombine(closed, [False, True], False, None)
    assert [e.primitive for e in known.eqns] == [effect_p]
    assert [e.primitive for e in unknown.eqns] == [effect_p]


def test_mixed_call_splits_into_a_known_and_an_unknown_call():
    def f(x, y):
        return call(lambda a, b: [mul_p.bind(sin_p.bind(a), b), cos_p.bind(a)], x, y)

    closed = make_jaxpr(f)(X, X)
    known, unknown, out_unknowns, num_res = split_and_recombine(closed, [False, True], False, None)
    assert out_unknowns == [True, False] and num_res == 1
    (known_call,) = known.eqns
    (unknown_call,) = unknown.eqns
    assert known_call.primitive is call_p and unknown_call.primitive is call_p
    inner_known = known_call.params["jaxpr"].jaxpr
    inner_unknown = unknown_call.params["jaxpr"].jaxpr
    assert [e.primitive for e in inner_known.eqns] == [sin_p, cos_p]
    assert [e.primitive for e in inner_unknown.eqns] == [mul_p]
    assert len(known_call.outvars) == 2  # cos a, and the residual sin a
    assert len(unknown_call.invars) == 2  # the residual, and b


def test_call_residuals_that_are_operands_are_forwarded():
    closed = make_jaxpr(lambda x, y: call(lambda a, b: mul_p.bind(a, b), x, y))(X, X)
    known, unknown, _, num_res = split_and_recombine(closed, [False, True], False, None)
    # The inner residual is `a` itself: no known call at all, the unknown call reads x.
    assert known.eqns == [] and num_res == 1
    assert known.jaxpr.outvars == known.jaxpr.invars
    (unknown_call,) = unknown.eqns
    assert unknown_call.invars == unknown.jaxpr.invars


def test_call_policy_recomputes_inside_the_unknown_call():
    def f(x, y):
        (s,) = call(lambda a: [sin_p.bind(cos_p.bind(a))], x)
        return mul_p.bind(s, y)

    closed = make_jaxpr(f)(X, X)
    known, unknown, _, num_res = split_and_recombine(closed, [False, True], False, lambda e: False)
    assert num_res == 1 and known.jaxpr.outvars == known.jaxpr.invars
    recompute = next(e for e in unknown.eqns if e.primitive is call_p)
    assert [e.primitive for e in recompute.params["jaxpr"].eqns] == [cos_p, sin_p]
    # Saving only cos: the known call returns cos a as a residual, sin is recomputed.
    known, unknown, _, num_res = split_and_recombine(
        closed, [False, True], False, lambda e: e.primitive is cos_p
    )
    (known_call,) = known.eqns
    assert [e.primitive for e in known_call.params["jaxpr"].eqns] == [cos_p]
    recompute = next(e for e in unknown.eqns if e.primitive is call_p)
    assert [e.primitive for e in recompute.params["jaxpr"].eqns] == [sin_p]


def test_nested_calls_split_at_every_level():
    def inner(a, b):
        return [mul_p.bind(sin_p.bind(a), b)]

    def f(x, y):
        return call(lambda a, b: call(inner, cos_p.bind(a), b), x, y)

    closed = make_jaxpr(f)(X, X)
    known, unknown, _, num_res = split_and_recombine(closed, [False, True], False, None)
    assert num_res == 1
    outer_unknown = unknown.eqns[0].params["jaxpr"]
    (inner_unknown,) = outer_unknown.eqns
    assert [e.primitive for e in inner_unknown.params["jaxpr"].eqns] == [mul_p]


# A call-like primitive whose params describe its operands: its updater must keep them in step.
donating_call_p = Primitive("pe_test_donating_call")
donating_call_p.multiple_results = True
donating_call_p.def_impl(lambda *args, jaxpr, donated, tags: call_impl(*args, jaxpr=jaxpr))
donating_call_p.def_abstract_eval(
    lambda *avals, jaxpr, donated, tags: call_abstract_eval(*avals, jaxpr=jaxpr)
)


def _update_donation(params, in_map, out_map, new_jaxpr):
    return {
        **params,
        "jaxpr": new_jaxpr,
        "donated": tuple(False if i is None else params["donated"][i] for i in in_map),
        "tags": tuple("res" if i is None else params["tags"][i] for i in out_map),
    }


register_call_rules(donating_call_p, _update_donation)


def test_registered_call_like_primitive_keeps_params_in_step():
    inner = make_jaxpr(lambda a, b: [mul_p.bind(sin_p.bind(a), b), cos_p.bind(a)])(X, X)

    def f(x, y):
        return donating_call_p.bind(x, y, jaxpr=inner, donated=(True, False), tags=("p", "c"))

    closed = make_jaxpr(f)(X, X)
    known, unknown, _, _ = split_and_recombine(closed, [False, True], False, None)
    (known_eqn,) = known.eqns
    (unknown_eqn,) = unknown.eqns
    assert known_eqn.params["donated"] == (True,) and known_eqn.params["tags"] == ("c", "res")
    assert unknown_eqn.params["donated"] == (False, False)
    assert unknown_eqn.params["tags"] == ("p",)
    for eqn in (known_eqn, unknown_eqn):
        assert len(eqn.params["donated"]) == len(eqn.invars)
        assert len(eqn.params["tags"]) == len(eqn.outvars)


def test_partial_eval_of_inner_jaxprs_is_type_correct():
    prog = Program(
        2, [("call", Program(2, [("bin", "mul", 0, 1)], [2, 0], True), [0, 1])], [2], True
    )
    closed = trace(prog)
    known, unknown, _, _ = partial_eval_jaxpr(closed, [True, False])
    for part in (known, unknown):
        check_jaxpr(part)
        for eqn in part.eqns:
            for sub in subjaxprs(eqn.params):
                check_jaxpr(sub)


def test_bad_arguments_are_rejected():
    closed = make_jaxpr(lambda x: sin_p.bind(x))(X)
    with pytest.raises(ValueError, match="unknowns has 2 entries for 1 inputs"):
        partial_eval_jaxpr(closed, [True, False])
    with pytest.raises(ValueError, match="instantiate has 3 entries for 1 outputs"):
        partial_eval_jaxpr(closed, [True], instantiate=[True] * 3)
    with pytest.raises(TypeError, match="expects a ClosedJaxpr"):
        partial_eval_jaxpr(closed.jaxpr, [True])
