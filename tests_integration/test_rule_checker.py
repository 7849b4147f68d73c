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

from modjax.autodiff import Zero, instantiate_zeros, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.lax import bits, elementwise, indexing
from modjax.lowering import hlo, lowering_rules
from modjax.testing import MODES, RuleCheckError, check_primitive, default_cases, rules_of
from modjax.tracecore import dtypes
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
    assert "float32[1]" in str(info.value), str(info.value)


def _complex_operands(params):
    def case(seed):
        rng = np.random.RandomState(seed)
        z = rng.uniform(-2, 2, (2, 3)) + 1j * rng.uniform(-2, 2, (2, 3))
        return (np.asarray(z, np.complex64),), params

    return st.integers(0, 2**16).map(case)


def _real_pairs(seed):
    (x, y), _ = _pairs(seed)
    return (x, y), {}


@pytest.mark.parametrize(
    "prim, cases",
    [
        (bits.imag_p, _complex_operands({})),
        (bits.real_p, _complex_operands({})),
        (bits.conj_p, _complex_operands({"input_dtype": np.dtype(np.complex64)})),
        (bits.complex_p, SUB_CASES),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_complex_transposes_pass_under_the_real_pairing(prim, cases):
    # Linear over the reals only: imag's transpose (ct -> -i ct) is one for
    # Re(sum(ct * J v)), not for the complex bilinear pairing sum(ct * J v).
    assert "transpose" in check_primitive(prim, cases, modes=("transpose",), max_examples=2)


def test_integer_operands_are_held_constant_in_jvp_and_transpose():
    # dynamic_slice's integer start indices named among the perturbed and linear
    # operands: they are left out (no tangents, no cotangents), not looked up.
    slices = [((np.arange(6, dtype=F32).reshape(2, 3), np.int32(1), np.int32(0)),
               {"slice_sizes": (1, 2)})]  # fmt: skip
    checked = check_primitive(
        indexing.dynamic_slice_p, slices, linear_argnums=[(0, 1, 2)], jvp_argnums=(0, 1, 2)
    )
    assert {"jvp", "transpose"} <= set(checked)


def test_jvp_argnums_hold_the_other_operands_constant():
    seen = []

    def right_in_x_only(primals, tangents):  # d(x - y) = dx - 2 dy: wrong in y
        seen.append(type(tangents[1]))
        x, y = primals
        tx, ty = (instantiate_zeros(t) for t in tangents)
        out = elementwise.sub_p.bind(x, y)
        return out, elementwise.sub_p.bind(tx, elementwise.add_p.bind(ty, ty))

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(jvp_rules, elementwise.sub_p, right_in_x_only)
        assert "jvp" in check_primitive(
            elementwise.sub_p, SUB_CASES, modes=("jvp",), jvp_argnums=(0,), max_examples=2
        )
        assert seen and all(t is Zero for t in seen)  # y is a constant: a symbolic zero
        with pytest.raises(RuleCheckError, match="operands \\[1\\] perturbed") as info:
            check_primitive(
                elementwise.sub_p, SUB_CASES, modes=("jvp",), jvp_argnums=(-1,), max_examples=2
            )
    assert info.value.rule == "jvp"
    with pytest.raises(ValueError, match="jvp_argnums 2 is not an operand of 2"):
        check_primitive(elementwise.sub_p, SUB_CASES, jvp_argnums=(2,), max_examples=1)


def _narrow(dtype):
    def case(seed):
        (x, _), _ = _pairs(seed)
        return (x.astype(dtype),), {}

    return st.integers(0, 2**16).map(case)


@pytest.mark.parametrize("dtype", [np.float16, dtypes.bfloat16])
def test_narrow_floats_get_looser_tolerances(dtype):
    assert check_primitive(elementwise.sin_p, _narrow(dtype), max_examples=2)
    # An f32 operand rounded to a narrow result: the result's dtype sets the tolerance.
    to_narrow = {"new_dtype": np.dtype(dtype), "weak_type": False}
    cases = st.integers(0, 2**16).map(lambda s: ((_pairs(s)[0][0],), to_narrow))
    assert "jvp" in check_primitive(
        elementwise.convert_element_type_p, cases, modes=("jvp", "transpose"), max_examples=2
    )


def test_batch_argnums_keep_the_other_operands_unbatched():
    rule = batching_rules[elementwise.sub_p]

    def refuses_a_batched_subtrahend(args, dims, **params):
        if dims[1] is not None:
            raise NotImplementedError("sub over a batched subtrahend")
        return rule(args, dims, **params)

    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(batching_rules, elementwise.sub_p, refuses_a_batched_subtrahend)
        modes = ("batching",)
        assert check_primitive(
            elementwise.sub_p, SUB_CASES, modes=modes, batch_argnums=(0,), max_examples=4
        )
        with pytest.raises(RuleCheckError, match="batched subtrahend"):
            check_primitive(elementwise.sub_p, SUB_CASES, modes=modes, max_examples=10)
