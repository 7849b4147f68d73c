"""check_jaxpr: well-formed jaxprs pass; each kind of ill-formed one is reported precisely."""

from __future__ import annotations

import hypothesis.strategies as st
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis_profiles import examples
from tracecore_test_prims import add_p, cos_p, mul_p, sin_p, sumdiff_p

from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.call import call, call_p
from modjax.tracecore.check import JaxprTypeError, check_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from modjax.tracecore.tracing import make_jaxpr

f32 = np.dtype("float32")
i32 = np.dtype("int32")
X = np.linspace(-1.0, 1.0, 3).astype(f32)
VEC = ShapedArray((3,), f32)


def chain(x):
    return cos_p.bind(sin_p.bind(x))


def raises(jaxpr, *fragments):
    """Check ``check_jaxpr`` fails and its message has every fragment; return the message."""
    with pytest.raises(JaxprTypeError) as info:
        check_jaxpr(jaxpr)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in:\n{message}"
    return message


# --- well-formed jaxprs pass --------------------------------------------------------------


def test_traced_jaxprs_pass():
    const = np.arange(3, dtype=f32)

    def f(x, y):
        a, b = sumdiff_p.bind(x, const)
        (c,) = call(lambda u, v: [mul_p.bind(sin_p.bind(u), v)], a, y)
        return [add_p.bind(c, 2.0), b, 1.0, x]

    closed = make_jaxpr(f)(X, X)
    check_jaxpr(closed)
    check_jaxpr(closed.jaxpr)
    assert issubclass(JaxprTypeError, TypeError)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(["sin", "cos", "add", "mul", "sumdiff", "call"]), max_size=8))
def test_generated_programs_pass_and_every_corruption_is_caught(ops):
    def f(x, y):
        env = [x, y]
        for op in ops:
            a, b = env[-1], env[-2]
            if op == "sin":
                env.append(sin_p.bind(a))
            elif op == "cos":
                env.append(cos_p.bind(a))
            elif op == "add":
                env.append(add_p.bind(a, b))
            elif op == "mul":
                env.append(mul_p.bind(a, 3.0))
            elif op == "sumdiff":
                env.extend(sumdiff_p.bind(a, b))
            else:
                env.extend(call(lambda u: [sin_p.bind(u), u], a))
        return [env[-1]]

    closed = make_jaxpr(f)(X, X)
    check_jaxpr(closed)
    jaxpr = closed.jaxpr
    for i, eqn in enumerate(jaxpr.eqns):
        # A wrong declared type of each result.
        outvars = list(eqn.outvars)
        outvars[0] = Var(ShapedArray((4,), f32))
        bad = jaxpr.replace(eqns=[*jaxpr.eqns[:i], eqn.replace(outvars=outvars)])
        raises(bad, f"in equation {i}", "declared float32[4]")
        # Each equation moved before the one defining its first operand.
        producers = [j for j, e in enumerate(jaxpr.eqns[:i]) if eqn.invars[0] in e.outvars]
        if producers:
            eqns = list(jaxpr.eqns)
            eqns.insert(producers[0], eqns.pop(i))
            raises(jaxpr.replace(eqns=eqns), "is not defined")
        # Each equation rebinding a variable that is already defined.
        rebound = eqn.replace(outvars=[jaxpr.invars[0], *eqn.outvars[1:]])
        eqns = [*jaxpr.eqns[:i], rebound, *jaxpr.eqns[i + 1 :]]
        raises(jaxpr.replace(eqns=eqns, outvars=[]), "already defined")


# --- each kind of error, with its message -------------------------------------------------


def test_wrong_output_type_names_equation_source_and_types():
    closed = make_jaxpr(chain)(X)
    sin_eqn, cos_eqn = closed.jaxpr.eqns
    bad_out = Var(ShapedArray((4,), f32))
    bad_eqn = sin_eqn.replace(outvars=[bad_out])
    bad = closed.jaxpr.replace(eqns=[bad_eqn, cos_eqn.replace(invars=[bad_out])])
    message = raises(
        bad,
        "output 0 of 'test_sin' is declared float32[4]",
        "its operands gives float32[3]",
        "in equation 0",
        repr(bad_eqn),
        "test_check.py",
        "(chain)",
    )
    assert str(sin_eqn.source_info) in message


def test_weak_type_mismatch_is_an_error():
    closed = make_jaxpr(chain)(X)
    sin_eqn, cos_eqn = closed.jaxpr.eqns
    weak = Var(ShapedArray((3,), f32, weak_type=True))
    bad = closed.jaxpr.replace(
        eqns=[sin_eqn.replace(outvars=[weak]), cos_eqn.replace(invars=[weak])]
    )
    raises(bad, "declared float32[3] (weak type) but", "gives float32[3]\n", "in equation 0")


def test_use_before_definition():
    closed = make_jaxpr(chain)(X)
    sin_eqn, cos_eqn = closed.jaxpr.eqns
    bad = closed.jaxpr.replace(eqns=[cos_eqn, sin_eqn])
    raises(bad, "operand 0 (a variable of type float32[3]) is not defined", "in equation 0")
    foreign = Var(VEC)
    bad = closed.jaxpr.replace(eqns=[sin_eqn.replace(invars=[foreign]), cos_eqn])
    raises(bad, "is not defined", repr(bad.eqns[0]))


def test_double_definition():
    closed = make_jaxpr(chain)(X)
    sin_eqn, cos_eqn = closed.jaxpr.eqns
    bad = closed.jaxpr.replace(eqns=[sin_eqn, cos_eqn.replace(outvars=sin_eqn.outvars)])
    raises(bad, "output 0 (a variable of type float32[3]) is already defined", "in equation 1")
    x = closed.jaxpr.invars[0]
    raises(closed.jaxpr.replace(invars=[x, x]), "invar 1", "already defined")
    raises(closed.jaxpr.replace(constvars=[x]), "invar 0", "already defined")


def test_undefined_jaxpr_output():
    closed = make_jaxpr(chain)(X)
    raises(closed.jaxpr.replace(outvars=[Var(VEC)]), "output 0 of the jaxpr", "is not defined")


def test_drop_vars():
    x, y = Var(VEC), Var(VEC)
    dropped = DropVar(VEC)
    ok = Jaxpr([], [x], [y], [JaxprEqn(sumdiff_p, [x, x], [y, dropped], {})])
    check_jaxpr(ok)
    bad = Jaxpr([], [x], [dropped], [JaxprEqn(sumdiff_p, [x, x], [y, dropped], {})])
    raises(bad, "output 0 of the jaxpr reads a DropVar")
    raises(Jaxpr([], [dropped], [], []), "invar 0 is a DropVar")


def test_literal_values_must_fit_their_types():
    x, y = Var(VEC), Var(VEC)

    def with_literal(lit):
        return Jaxpr([], [x], [y], [JaxprEqn(mul_p, [x, lit], [y], {})])

    check_jaxpr(with_literal(Literal(2.0, ShapedArray((), f32, weak_type=True))))
    check_jaxpr(with_literal(Literal(np.float32(2.0), ShapedArray((), f32))))
    raises(
        with_literal(Literal(1.5, ShapedArray((), i32, weak_type=True))),
        "operand 1 is the literal 1.5",
        "a Python float cannot have dtype int32",
        "in equation 0",
    )
    raises(
        with_literal(Literal(np.float32(2.0), ShapedArray((3,), f32))),
        "the value has type float32[]",
    )
    raises(with_literal(Literal(np.int32(2), ShapedArray((), f32))), "the value has type int32[]")
    bf16 = ShapedArray((), np.dtype(ml_dtypes.bfloat16), weak_type=True)
    b, c = Var(bf16), Var(bf16)
    check_jaxpr(Jaxpr([], [b], [c], [JaxprEqn(mul_p, [b, Literal(2.0, bf16)], [c], {})]))
    raises(
        Jaxpr([], [b], [c], [JaxprEqn(mul_p, [b, Literal(True, bf16)], [c], {})]),
        "a Python bool cannot have dtype bfloat16",
    )
    i8 = ShapedArray((), np.dtype("int8"))
    a, b = Var(i8), Var(i8)
    bad = Jaxpr([], [a], [b], [JaxprEqn(add_p, [a, Literal(300, i8)], [b], {})])
    raises(bad, "300 is out of range for int8")


def test_wrong_number_of_results():
    x, y = Var(VEC), Var(VEC)
    raises(
        Jaxpr([], [x], [y], [JaxprEqn(sumdiff_p, [x, x], [y], {})]),
        "'test_sumdiff' produces 2 outputs but the equation binds 1",
    )


def test_abstract_eval_rejection_is_a_type_error():
    inner = make_jaxpr(lambda u: [sin_p.bind(u)])(X)
    x, y = Var(ShapedArray((4,), f32)), Var(VEC)
    bad = Jaxpr([], [x], [y], [JaxprEqn(call_p, [x], [y], {"jaxpr": inner, "name": "f"})])
    raises(bad, "'call' rejects operands (float32[4])", "operand 0 has type float32[4]")


def test_errors_in_nested_jaxprs_are_reported_with_their_context():
    closed = make_jaxpr(lambda x: call(chain, x))(X)
    (call_eqn,) = closed.jaxpr.eqns
    inner = call_eqn.params["jaxpr"]
    sin_eqn, cos_eqn = inner.jaxpr.eqns
    broken_inner = inner.replace(jaxpr=inner.jaxpr.replace(eqns=[cos_eqn, sin_eqn]))
    bad_call = call_eqn.replace(params={**call_eqn.params, "jaxpr": broken_inner})
    raises(
        closed.replace(jaxpr=closed.jaxpr.replace(eqns=[bad_call])),
        "operand 0 (a variable of type float32[3]) is not defined",
        f"in equation 0: {cos_eqn!r}",
        "in the params of equation 0: ",
        "name=chain",
    )


def test_closed_jaxpr_consts_must_match_constvars():
    const = np.ones(3, f32)
    closed = make_jaxpr(lambda x: add_p.bind(x, const))(X)
    check_jaxpr(closed)
    closed.consts.append(const)  # corrupt it behind the constructor's back
    raises(closed, "closed jaxpr has 2 consts for 1 constvars")
    wrong = ClosedJaxpr(closed.jaxpr, [np.ones(4, f32)])
    raises(wrong, "const 0 of the closed jaxpr has type float32[4]", "declared float32[3]")
    # The same checks reach a closed jaxpr held by an equation.
    x, y = Var(VEC), Var(VEC)
    held = Jaxpr([], [x], [y], [JaxprEqn(call_p, [x], [y], {"jaxpr": wrong, "name": "f"})])
    raises(held, "const 0 of the closed jaxpr", "in the params of equation 0: ")


def test_non_jaxprs_are_rejected():
    with pytest.raises(JaxprTypeError, match="expected a Jaxpr or ClosedJaxpr"):
        check_jaxpr("{ lambda ; . let in () }")
