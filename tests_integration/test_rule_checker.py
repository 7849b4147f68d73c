"""modjax.testing.check_primitive: it passes correct rules and names the rule at fault.

Each broken rule is planted for one test only (the rule table entry swapped and
restored), as a DSL author's mistake would be: a transpose with its sign dropped
(``grad`` never reaches ``sub``'s transpose, ``linear_transpose`` does), a JVP of the
wrong slope, a batching rule that ignores the batch, an abstract eval of the wrong
weak type, a lowering of the wrong operation.
"""

import numpy as np
import pytest
from hypothesis import strategies as st

from modjax.autodiff import is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.lax import elementwise
from modjax.lowering import hlo, lowering_rules
from modjax.testing import MODES, RuleCheckError, check_primitive, default_cases, rules_of
from modjax.tracecore.core import primitives_by_name

F32 = np.float32


def _pairs(seed):
    rng = np.random.RandomState(seed)
    return (
        np.asarray(rng.uniform(-2, 2, (2, 3)), F32),
        np.asarray(rng.uniform(-2, 2, (2, 3)), F32),
    ), {}


SUB_CASES = st.integers(0, 2**16).map(_pairs)


def test_correct_rules_pass_and_every_rule_is_checked():
    assert check_primitive(elementwise.sub_p, SUB_CASES, max_examples=3) == MODES
    assert rules_of(elementwise.sin_p) == tuple(m for m in MODES if m != "transpose")


def test_default_cases_come_from_the_accepted_dtypes():
    assert check_primitive(elementwise.neg_p, max_examples=3) == MODES
    with pytest.raises(ValueError, match="no default cases"):
        default_cases(primitives_by_name["reduce_sum"][0])  # needs its axes


def _check_catches(table, prim, rule, expected_rule, cases=SUB_CASES):
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(table, prim, rule)
        with pytest.raises(RuleCheckError) as info:
            check_primitive(prim, cases, max_examples=5)
    assert info.value.rule == expected_rule and info.value.primitive is prim
    assert f"the {expected_rule} rule of '{prim.name}'" in str(info.value)


def test_catches_the_sign_dropped_transpose_of_sub():
    def dropped(ct, x, y):  # the one-line bug: ``neg(ct)`` became ``ct``
        return [
            elementwise.unbroadcast(x.aval, ct) if is_undefined_primal(x) else None,
            elementwise.unbroadcast(y.aval, ct) if is_undefined_primal(y) else None,
        ]

    _check_catches(transpose_rules, elementwise.sub_p, dropped, "transpose")


def test_catches_a_wrong_jvp():
    jvp_of_add = jvp_rules[elementwise.add_p]  # d(x - y) taken as d(x + y)
    _check_catches(jvp_rules, elementwise.sub_p, jvp_of_add, "jvp")


def test_catches_a_batching_rule_that_ignores_the_batch_axis():
    rule = batching_rules[elementwise.sub_p]

    def first_axis_only(args, dims, **params):
        args = [a if d is None else np.moveaxis(np.asarray(a), d, 0)[:1].repeat(np.shape(a)[d], 0)
                for a, d in zip(args, dims, strict=True)]  # fmt: skip
        return rule(args, [None if d is None else 0 for d in dims], **params)

    _check_catches(batching_rules, elementwise.sub_p, first_axis_only, "batching")


def test_catches_a_wrong_lowering():
    _check_catches(lowering_rules, elementwise.sub_p, lambda ctx, x, y: hlo.add(x, y), "lowering")


def test_failures_shrink_to_a_small_case():
    cases = st.tuples(st.integers(0, 4), st.integers(0, 2**16)).map(
        lambda s: ((np.full((s[0] + 1,), 1.5, F32), np.ones(s[0] + 1, F32) * (s[1] % 7)), {})
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(lowering_rules, elementwise.sub_p, lambda ctx, x, y: hlo.add(x, y))
        with pytest.raises(RuleCheckError) as info:
            check_primitive(elementwise.sub_p, cases, max_examples=10)
    # The minimal case: one element, and the subtrahend 0 never shows the bug, so 1.
    assert "f32[1]" in str(info.value), str(info.value)
