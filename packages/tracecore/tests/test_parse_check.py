"""parse_jaxpr type-checks what it reads; errors name the line and column; check=False opts out."""

import numpy as np
import pytest

from modjax.tracecore import JaxprParseError, JaxprTypeError, Primitive, parse_jaxpr
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.parse import parse_open_jaxpr


def _strict_binary(x, y):
    if x.dtype != y.dtype or x.shape != y.shape:
        raise TypeError(f"smul needs equal types, got {x.str_short()} and {y.str_short()}")
    return ShapedArray(x.shape, x.dtype)


smul_p = Primitive("parse_check_smul")
smul_p.def_abstract_eval(_strict_binary)
smul_p.def_impl(np.multiply)
call_p = Primitive("parse_check_call")
call_p.multiple_results = True
call_p.def_abstract_eval(lambda *avals, jaxpr: jaxpr.out_avals)
PRIMS = {"smul": smul_p, "call": call_p}


def parse(text, **kw):
    return parse_jaxpr(text, primitives=PRIMS, **kw)


GOOD = "{ lambda ; a:f32[3] b:f32[3]. let\n    c:f32[3] = smul a b\n  in (c,) }"

BAD = {
    "i32 operand into an f32 smul": (
        "{ lambda ; a:f32[3] b:i32[3]. let\n    c:f32[3] = smul a b\n  in (c,) }",
        "line 2, column 5",
        "equal types",
    ),
    "declared output type differs": (
        "{ lambda ; a:f32[3] b:f32[3]. let\n    c:f32[4] = smul a b\n  in (c,) }",
        "line 2, column 5",
        "declared float32[4]",
    ),
    "one operand": (
        "{ lambda ; a:f32[3]. let\n    c:f32[3] = smul a\n  in (c,) }",
        "line 2, column 5",
        "rejects operands (float32[3])",
    ),
    "unknown param": (
        "{ lambda ; a:f32[3] b:f32[3]. let\n    c:f32[3] = smul[foo=1] a b\n  in (c,) }",
        "line 2, column 5",
        "foo",
    ),
    "absurd shape": (
        "{ lambda ; a:f32[99999999999,99999999999]. let\n  in (a,) }",
        "line 1, column 12",
        "do not fit in int64",
    ),
    "ill-typed nested jaxpr": (
        "{ lambda ; a:f32[3]. let\n"
        "    c:f32[3] = call[jaxpr={ lambda ; x:f32[3]. let\n"
        "        y:f32[3] = smul x\n"
        "      in (y,) }] a\n"
        "  in (c,) }",
        "line 3, column 9",
        "rejects operands",
    ),
}


def test_well_typed_text_is_read():
    closed = parse(GOOD)
    x = np.ones(3, np.float32)
    np.testing.assert_allclose(eval_jaxpr(closed.jaxpr, [], x, 2 * x)[0], 2.0)


@pytest.mark.parametrize("case", sorted(BAD))
def test_ill_typed_text_raises_naming_line_and_column(case):
    text, where, what = BAD[case]
    with pytest.raises(JaxprTypeError) as info:
        parse(text)
    message = str(info.value)
    assert message.startswith(where) and what in message, message
    assert isinstance(info.value, TypeError) and not isinstance(info.value, JaxprParseError)
    parse(text, check=False)  # the raw syntax is fine: the opt-out reads it


def test_open_jaxprs_are_checked_too():
    text, _, _ = BAD["one operand"]
    with pytest.raises(JaxprTypeError, match="line 2, column 5"):
        parse_open_jaxpr(text, PRIMS)
    assert len(parse_open_jaxpr(text, PRIMS, check=False).eqns) == 1


def test_syntax_errors_stay_parse_errors():
    with pytest.raises(JaxprParseError, match="line 1"):
        parse("{ lambda ; a:f32[-3]. let in (a,) }")


def test_extended_dtype_names_registered_by_a_family_parse_back():
    from modjax.tracecore import dtypes

    class Tagged(dtypes.ExtendedDType):
        def __init__(self, tag):
            self.tag = tag
            self.name = f"tagged<{tag}>"

        def __eq__(self, other):
            return isinstance(other, Tagged) and other.tag == self.tag

        def __hash__(self):
            return hash(self.tag)

    def from_tag(tag):
        if tag not in ("a", "b"):
            raise ValueError(f"no tag {tag}")
        return Tagged(tag)

    dtypes.register_extended_dtype_name("tagged", from_tag)
    text = "{ lambda ; x:tagged<a>[3] y:tagged<b>[]. let  in (y, x) }"
    closed = parse_jaxpr(text)
    assert [v.aval for v in closed.jaxpr.invars] == [
        ShapedArray((3,), Tagged("a")),
        ShapedArray((), Tagged("b")),
    ]
    assert dtypes.dtype_from_short_name("tagged<b>") == Tagged("b")
    with pytest.raises(JaxprParseError, match="unknown dtype 'tagged<c>'"):
        parse_jaxpr("{ lambda ; x:tagged<c>[3]. let  in (x,) }")
    with pytest.raises(JaxprParseError, match="unknown dtype 'other<a>'"):
        parse_jaxpr("{ lambda ; x:other<a>[3]. let  in (x,) }")
