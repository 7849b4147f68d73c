"""Effects as first-class parts of jaxprs: per equation, unioned, checked, printed, parsed, kept."""

from __future__ import annotations

import numpy as np
import pytest
from tracecore_test_prims import mul_p, sin_p

from modjax.tracecore.call import call
from modjax.tracecore.check import JaxprTypeError, check_jaxpr
from modjax.tracecore.core import Primitive
from modjax.tracecore.dce import dce_closed_jaxpr
from modjax.tracecore.effects import (
    Effect,
    EffectTypeSet,
    control_flow_allowed_effects,
    generic_effect,
    ordered_effects,
)
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.parse import parse_jaxpr
from modjax.tracecore.tracing import make_jaxpr

X = np.arange(3, dtype=np.float32)
LOG: list = []

Log = Effect("TestLog")
OrderedLog = Effect("TestOrderedLog", ordered=True)

# A host-side logging primitive: no outputs, its effect chosen by a param.
log_p = Primitive("test_log")
log_p.multiple_results = True
log_p.def_abstract_eval(lambda *avals, ordered: [])
log_p.def_effects(lambda ordered: {OrderedLog if ordered else Log})


def _log_impl(*args, ordered):
    LOG.append((ordered, *(np.asarray(a).tolist() for a in args)))
    return []


log_p.def_impl(_log_impl)

legacy_p = Primitive("test_legacy_effect")
legacy_p.effectful = True
legacy_p.def_impl(lambda x: x)
legacy_p.def_abstract_eval(lambda a: a)


def program(x):
    log_p.bind(x, ordered=False)
    y = sin_p.bind(x)
    log_p.bind(y, ordered=True)
    return [mul_p.bind(x, 2.0)]


def test_equations_carry_their_effects_and_the_jaxpr_their_union():
    closed = make_jaxpr(program)(X)
    assert [eqn.effects for eqn in closed.eqns] == [
        frozenset({Log}),
        frozenset(),
        frozenset({OrderedLog}),
        frozenset(),
    ]
    assert closed.effects == {Log, OrderedLog}
    assert closed.jaxpr.effects == {Log, OrderedLog}
    assert ordered_effects(closed.effects) == [OrderedLog]
    assert make_jaxpr(lambda x: [legacy_p.bind(x)])(X).effects == {generic_effect}


def test_higher_order_equations_have_their_bodies_effects():
    closed = make_jaxpr(lambda x: call(lambda y: call(program, y), x))(X)
    (outer,) = closed.eqns
    assert outer.effects == {Log, OrderedLog}
    (inner,) = outer.params["jaxpr"].eqns
    assert inner.effects == {Log, OrderedLog}
    pure = make_jaxpr(lambda x: call(lambda y: [sin_p.bind(y)], x))(X)
    assert pure.eqns[0].effects == frozenset() and pure.effects == frozenset()


def test_effects_are_interned_by_name():
    assert Effect("TestLog") is Log
    assert repr(OrderedLog) == "TestOrderedLog" and OrderedLog.ordered and not Log.ordered
    with pytest.raises(ValueError, match="already declared with ordered=False"):
        Effect("TestLog", ordered=True)


def test_printer_shows_effects_and_parser_reads_them_back():
    closed = make_jaxpr(lambda x: call(program, x))(X)
    text = str(closed)
    assert "test_log{TestLog}[ordered=False] a" in text.replace("\n", " ") or (
        "test_log{TestLog}[ordered=False]" in text
    )
    assert "test_log{TestOrderedLog}[ordered=True]" in text
    assert "call{TestLog,TestOrderedLog}[" in text
    back = parse_jaxpr(text)
    assert str(back) == text
    assert back.effects == {Log, OrderedLog}
    assert back.eqns[0].effects == {Log, OrderedLog}
    check_jaxpr(back)


def test_parser_rejects_unknown_effects_and_infers_missing_ones():
    text = "{ lambda ; a:f32[3]. let test_log{NoSuchEffect}[ordered=False] a in (a,) }"
    with pytest.raises(ValueError, match="unknown effect 'NoSuchEffect'"):
        parse_jaxpr(text)
    inferred = parse_jaxpr("{ lambda ; a:f32[3]. let test_log[ordered=True] a in (a,) }")
    assert inferred.eqns[0].effects == {OrderedLog}


def test_check_jaxpr_rejects_wrong_effects():
    closed = make_jaxpr(program)(X)
    check_jaxpr(closed)
    closed.jaxpr.eqns[0] = closed.eqns[0].replace(effects=frozenset())
    with pytest.raises(JaxprTypeError, match=r"'test_log' has effects \{TestLog\} but the eq"):
        check_jaxpr(closed)
    text = "{ lambda ; a:f32[3]. let test_log{TestLog}[ordered=True] a in (a,) }"
    with pytest.raises(JaxprTypeError, match=r"has effects \{TestOrderedLog\}"):
        check_jaxpr(parse_jaxpr(text))


# An effect chosen by a param holding the effect itself; without a param parser the
# text reads it back as a string, and the effects rule returns that string.
chosen_p = Primitive("test_chosen_effect")
chosen_p.multiple_results = True
chosen_p.def_abstract_eval(lambda *avals, effect: [])
chosen_p.def_effects(lambda effect: (effect,))


def test_check_jaxpr_names_effects_that_are_not_effects():
    text = "{ lambda ; a:f32[3]. let test_chosen_effect{TestLog}[effect=TestLog] a in (a,) }"
    with pytest.raises(JaxprTypeError, match=r"has effects \{'TestLog'\} but the eq.*\{TestLog\}"):
        parse_jaxpr(text)


def test_dce_keeps_effectful_equations_and_calls_holding_them():
    closed = make_jaxpr(lambda x: call(program, x))(X)
    pruned, used = dce_closed_jaxpr(closed, [False])
    assert pruned.effects == {Log, OrderedLog}
    (kept,) = pruned.eqns
    inner_prims = [e.primitive.name for e in kept.params["jaxpr"].eqns]
    assert inner_prims == ["test_log", "test_sin", "test_log"]  # the unused mul goes
    assert kept.effects == {Log, OrderedLog}
    LOG.clear()
    eval_jaxpr(pruned.jaxpr, pruned.consts, *[X for u in used if u])
    assert [(False, [0.0, 1.0, 2.0]), (True, np.sin(X).tolist())] == LOG


def test_replacing_params_recomputes_effects():
    closed = make_jaxpr(lambda x: call(program, x))(X)
    eqn = closed.eqns[0]
    pure = make_jaxpr(lambda x: [sin_p.bind(x)])(X)
    assert eqn.replace(params={**eqn.params, "jaxpr": pure}).effects == frozenset()


class _SubclassedEffect(Effect):
    """An effect declared as JAX's are: a subclass instantiated without arguments."""


class _OtherModuleEffect(Effect):
    pass


def test_an_effect_subclass_made_without_a_name_is_named_after_its_class():
    effect = _SubclassedEffect()
    assert effect is _SubclassedEffect() and type(effect) is _SubclassedEffect
    assert repr(effect) == "_SubclassedEffect" and not effect.ordered
    # Another class of the same name gets a name of its own.
    clash = type("_SubclassedEffect", (Effect,), {})()
    assert clash is not effect and repr(clash) == "_SubclassedEffect_2"
    with pytest.raises(TypeError, match="needs a name"):
        Effect()


def test_effect_type_sets_hold_classes_and_filter_effects():
    allowed = EffectTypeSet()
    allowed.add_type(_SubclassedEffect)
    first, second = _SubclassedEffect(), _OtherModuleEffect()
    assert allowed.contains(first) and not allowed.contains(second)
    assert allowed.filter_in([first, second]) == [first]
    assert allowed.filter_not_in([first, second]) == [second]
    control_flow_allowed_effects.add_type(_SubclassedEffect)
    assert control_flow_allowed_effects.contains(first)
