"""Tests of the jaxpr printer (pretty.py) and the jaxpr text parser (parse.py)."""

from __future__ import annotations

import math
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.tracecore import core
from modjax.tracecore.abstract import MemorySpace, ShapedArray
from modjax.tracecore.call import call, call_p
from modjax.tracecore.core import Primitive
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    jaxpr_equal,
)
from modjax.tracecore.parse import (
    JaxprParseError,
    parse_jaxpr,
    parse_open_jaxpr,
    parse_param_value,
    parse_scalar,
    register_param_defaults,
    register_param_parser,
)
from modjax.tracecore.pretty import (
    format_param_value,
    format_scalar,
    pp_eqn,
    pp_jaxpr,
    register_aliased_jaxpr,
    register_param_order,
    register_param_printer,
    var_name,
)
from modjax.tracecore.source_info import Frame, SourceInfo
from modjax.tracecore.tracing import make_jaxpr

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)

# --- test primitives (numpy impls, abstract evals) -----------------------------------------


def _same(aval: ShapedArray) -> ShapedArray:
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type)


def _is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16


tsin_p = Primitive("tsin")
tsin_p.def_impl(lambda x: np.sin(x))
tsin_p.def_abstract_eval(_same)

tneg_p = Primitive("tneg")
tneg_p.def_impl(lambda x: np.negative(x))
tneg_p.def_abstract_eval(_same)


def _binary_abstract_eval(a: ShapedArray, b: ShapedArray) -> ShapedArray:
    if a.shape != b.shape and a.shape != () and b.shape != ():
        raise TypeError(f"shapes differ: {a} and {b}")
    shape = a.shape if a.shape != () else b.shape
    if a.weak_type and not b.weak_type:
        dtype = b.dtype
    elif (b.weak_type and not a.weak_type) or a.dtype == b.dtype:
        dtype = a.dtype
    else:
        raise TypeError(f"dtypes differ: {a} and {b}")
    return ShapedArray(shape, dtype, a.weak_type and b.weak_type)


def _binary_impl(ufunc):
    def impl(a, b):
        out = ufunc(a, b)
        return out

    return impl


tadd_p = Primitive("tadd")
tadd_p.def_impl(_binary_impl(np.add))
tadd_p.def_abstract_eval(_binary_abstract_eval)

tmul_p = Primitive("tmul")
tmul_p.def_impl(_binary_impl(np.multiply))
tmul_p.def_abstract_eval(_binary_abstract_eval)

# Multiple results: (x, -x, sin-ish of x) with a count param.
tsplit_p = Primitive("tsplit")
tsplit_p.multiple_results = True
tsplit_p.def_impl(lambda x, *, n: [x if i % 2 == 0 else np.negative(x) for i in range(n)])
tsplit_p.def_abstract_eval(lambda a, *, n: [_same(a)] * n)


# Params of many kinds: converts to new_dtype; the rest are carried along.
def _tcast_impl(x, *, new_dtype, axes, pad, name):
    return np.asarray(x).astype(new_dtype)


tcast_p = Primitive("tcast")
tcast_p.def_impl(_tcast_impl)
tcast_p.def_abstract_eval(lambda a, *, new_dtype, axes, pad, name: ShapedArray(a.shape, new_dtype))

# Identity with arbitrary params, for param round trips.
tparams_p = Primitive("tparams")
tparams_p.def_impl(lambda *xs, **_: xs[0])
tparams_p.def_abstract_eval(lambda *avals, **_: _same(avals[0]))

# A higher-order primitive with a tuple of branches (like cond): applies branch 0.
tswitch_p = Primitive("tswitch")
tswitch_p.multiple_results = True
tswitch_p.def_impl(lambda *args, branches: eval_jaxpr(branches[0].jaxpr, (), *args))
tswitch_p.def_abstract_eval(lambda *avals, branches: branches[0].out_avals)

PRIMS = {
    p.name: p for p in (tsin_p, tneg_p, tadd_p, tmul_p, tsplit_p, tcast_p, tparams_p, tswitch_p)
}
PRIMS["call"] = call_p


def tsin(x):
    return tsin_p.bind(x)


def tneg(x):
    return tneg_p.bind(x)


def tadd(x, y):
    return tadd_p.bind(x, y)


def tmul(x, y):
    return tmul_p.bind(x, y)


def tcast(x, new_dtype, axes=(0,), pad=None, name="hello"):
    return tcast_p.bind(x, new_dtype=np.dtype(new_dtype), axes=axes, pad=pad, name=name)


def parse(text, consts=(), check=True):
    return parse_jaxpr(text, consts=consts, primitives=PRIMS, check=check)


def assert_round_trip(cj: ClosedJaxpr, check: bool = True) -> ClosedJaxpr:
    text = str(cj)
    back = parse(text, consts=cj.consts, check=check)
    assert jaxpr_equal(back, cj), f"not equal after parsing:\n{text}\n---\n{back}"
    assert str(back) == text
    # The annotated text reads back too (comments are ignored).
    annotated = cj.pretty_print(source_info=True, name_stack=True)
    assert jaxpr_equal(parse(annotated, consts=cj.consts, check=check), cj)
    return back


def _literals(jaxpr: Jaxpr):
    for eqn in jaxpr.eqns:
        yield from (x for x in eqn.invars if isinstance(x, Literal))
        for value in eqn.params.values():
            subs = value if isinstance(value, tuple) else (value,)
            for sub in subs:
                if isinstance(sub, ClosedJaxpr):
                    yield from _literals(sub.jaxpr)
    yield from (x for x in jaxpr.outvars if isinstance(x, Literal))


def same_value(x, y) -> bool:
    if type(x) is not type(y):
        return False
    a, b = np.asarray(x), np.asarray(y)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or a.dtype == BF16:
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


# --- golden text ------------------------------------------------------------------------------


def test_golden_multiline_with_consts_literals_and_nested_call():
    c = np.ones(3, np.float32)

    def f(x, y):
        d = tsin(x)
        e = tmul(d, 2.0)
        g = call(lambda a, b: tmul(tsin(a), b), e, c, name="inner")
        k = tmul(y, np.float32(0.1))
        return g, k, 3

    cj = make_jaxpr(f)(np.ones(3, np.float32), np.float32(1))
    assert str(cj) == (
        "{ lambda a:f32[3]; b:f32[3] c:f32[]. let\n"
        "    d:f32[3] = tsin b\n"
        "    e:f32[3] = tmul d 2.0:~f32[]\n"
        "    f:f32[3] = call[\n"
        "      jaxpr={ lambda ; g:f32[3] h:f32[3]. let\n"
        "          i:f32[3] = tsin g\n"
        "          j:f32[3] = tmul i h\n"
        "        in (j,) }\n"
        "      name=inner\n"
        "    ] e a\n"
        "    k:f32[] = tmul c 0.1:f32[]\n"
        "  in (f, k, 3:~i32[]) }"
    )
    assert_round_trip(cj)


def test_golden_one_line_forms():
    cj = make_jaxpr(lambda a: tneg(tsin(a)))(np.float32(1))
    assert str(cj) == "{ lambda ; a:f32[]. let b:f32[] = tsin a; c:f32[] = tneg b in (c,) }"
    cj = make_jaxpr(lambda a: np.float32(0.0))(np.int32(1))
    assert str(cj) == "{ lambda ; a:i32[]. let  in (0.0:f32[],) }"
    cj = make_jaxpr(lambda a: (a, a, 1.0))(2.0)
    assert str(cj) == "{ lambda ; a:~f32[]. let  in (a, a, 1.0:~f32[]) }"
    cj = make_jaxpr(lambda: 1.5)()
    assert str(cj) == "{ lambda ; . let  in (1.5:~f32[],) }"
    for j in (cj, make_jaxpr(lambda a: (a, a, 1.0))(2.0)):
        assert_round_trip(j)


def test_golden_nested_one_line_and_params_inline():
    def f(x):
        y = tcast(x, ml_dtypes.bfloat16, axes=(0,), name="<lambda>")
        z = call(lambda v: tneg(v), y, name="neg")
        return z

    cj = make_jaxpr(f)(np.ones(3, np.float32))
    assert str(cj) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:bf16[3] = tcast[axes=(0,) name=<lambda> new_dtype=bfloat16 pad=None] a\n"
        "    c:bf16[3] = call[\n"
        "      jaxpr={ lambda ; d:bf16[3]. let e:bf16[3] = tneg d in (e,) }\n"
        "      name=neg\n"
        "    ] b\n"
        "  in (c,) }"
    )
    assert_round_trip(cj)


def _branches_jaxpr():
    a = Var(ShapedArray((), F32))

    def branch(prim):
        x = Var(ShapedArray((), F32))
        y = Var(ShapedArray((), F32))
        return ClosedJaxpr(Jaxpr([], [x], [y], [JaxprEqn(prim, [x], [y], {})]), ())

    out = Var(ShapedArray((), F32))
    eqn = JaxprEqn(tswitch_p, [a], [out], {"branches": (branch(tsin_p), branch(tneg_p))})
    return ClosedJaxpr(Jaxpr([], [a], [out], [eqn]), ())


def test_golden_tuple_of_jaxprs_param():
    cj = _branches_jaxpr()
    assert str(cj) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = tswitch[\n"
        "      branches=(\n"
        "        { lambda ; c:f32[]. let d:f32[] = tsin c in (d,) }\n"
        "        { lambda ; e:f32[]. let f:f32[] = tneg e in (f,) }\n"
        "      )\n"
        "    ] a\n"
        "  in (b,) }"
    )
    back = assert_round_trip(cj)
    assert isinstance(back.eqns[0].params["branches"], tuple)


def test_one_jaxpr_held_twice_binds_fresh_names_each_time():
    # A symmetric linear solve holds its matvec as vecmat too: the text must name
    # the second copy's variables afresh, as the parsed program (two copies) prints.
    a = Var(ShapedArray((), F32))
    x, y = Var(ShapedArray((), F32)), Var(ShapedArray((), F32))
    shared = ClosedJaxpr(Jaxpr([], [x], [y], [JaxprEqn(tsin_p, [x], [y], {})]), ())
    out = Var(ShapedArray((), F32))
    eqn = JaxprEqn(tswitch_p, [a], [out], {"branches": (shared, shared)})
    cj = ClosedJaxpr(Jaxpr([], [a], [out], [eqn]), ())
    assert str(cj) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = tswitch[\n"
        "      branches=(\n"
        "        { lambda ; c:f32[]. let d:f32[] = tsin c in (d,) }\n"
        "        { lambda ; e:f32[]. let f:f32[] = tsin e in (f,) }\n"
        "      )\n"
        "    ] a\n"
        "  in (b,) }"
    )
    assert_round_trip(cj)


def test_golden_drop_var_and_multiple_results():
    a = Var(ShapedArray((3,), F32))
    b, c = Var(ShapedArray((3,), F32)), DropVar(ShapedArray((3,), F32))
    eqn = JaxprEqn(tsplit_p, [a], [b, c], {"n": 2})
    cj = ClosedJaxpr(Jaxpr([], [a], [b, b], [eqn]), ())
    assert str(cj) == "{ lambda ; a:f32[3]. let b:f32[3] _:f32[3] = tsplit[n=2] a in (b, b) }"
    back = assert_round_trip(cj)
    assert isinstance(back.eqns[0].outvars[1], DropVar)
    assert back.jaxpr.outvars[0] is back.jaxpr.outvars[1]
    assert pp_eqn(eqn) == "a:f32[3] _:f32[3] = tsplit[n=2] b"
    assert repr(eqn) == pp_eqn(eqn)


def test_equation_without_outputs():
    a = Var(ShapedArray((2,), I32))
    eqn = JaxprEqn(tsplit_p, [a, Literal(1, ShapedArray((), I32, weak_type=True))], [], {"n": 0})
    cj = ClosedJaxpr(Jaxpr([], [a], [a], [eqn]), ())
    assert str(cj) == "{ lambda ; a:i32[2]. let tsplit[n=0] a 1:~i32[] in (a,) }"
    back = assert_round_trip(cj, check=False)  # tsplit takes one operand: raw syntax only
    assert back.eqns[0].outvars == [] and type(back.eqns[0].invars[1].val) is int


def test_golden_long_binders_wrap_and_long_params_break():
    cj = make_jaxpr(lambda *xs: tadd(xs[0], xs[-1]))(*[np.ones((100, 100), np.float32)] * 7)
    lines = str(cj).splitlines()
    assert lines[0] == ("{ lambda ; a:f32[100,100] b:f32[100,100] c:f32[100,100] d:f32[100,100]")
    assert lines[1] == "    e:f32[100,100] f:f32[100,100] g:f32[100,100]. let"
    assert lines[2] == "    h:f32[100,100] = tadd a g"
    assert all(len(line) <= 80 for line in lines)
    assert_round_trip(cj)

    label = "a_rather_long_label_" * 3
    cj = make_jaxpr(lambda x: tcast(x, np.int32, name=label))(np.ones(3, np.float32))
    assert str(cj) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:i32[3] = tcast[\n"
        "      axes=(0,)\n"
        f"      name={label}\n"
        "      new_dtype=int32\n"
        "      pad=None\n"
        "    ] a\n"
        "  in (b,) }"
    )
    assert_round_trip(cj)


def test_golden_source_info_comments_are_aligned():
    cj = make_jaxpr(lambda a: tneg(tsin(a)))(np.float32(1))
    e0, e1 = cj.eqns
    e0.source_info = SourceInfo(Frame("f.py", 3, "f"), ("jvp", "foo"))
    e1.source_info = SourceInfo(Frame("long/path/g.py", 10, "g"), ())
    assert cj.pretty_print(source_info=True, name_stack=True) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = tsin a # f.py:3 (f) [jvp/foo]\n"
        "    c:f32[] = tneg b # long/path/g.py:10 (g)\n"
        "  in (c,) }"
    )
    assert cj.pretty_print(name_stack=True) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = tsin a # [jvp/foo]\n"
        "    c:f32[] = tneg b\n"
        "  in (c,) }"
    )
    assert pp_jaxpr(cj, source_info=True).splitlines()[1] == "    b:f32[] = tsin a # f.py:3 (f)"
    assert_round_trip(cj)


def test_var_names():
    assert [var_name(i) for i in (0, 1, 25, 26, 27, 51, 52, 675, 676)] == [
        "a", "b", "z", "ba", "bb", "bz", "ca", "zz", "baa",
    ]  # fmt: skip


def test_long_chain_uses_names_in_and_inf():
    # Variable 221 is named 'in', like the keyword; the parser must tell them apart.
    def f(x):
        for _ in range(300):
            x = tneg(x)
        return x

    cj = make_jaxpr(f)(np.float32(1))
    text = str(cj)
    assert "    in:f32[] = tneg im\n" in text
    assert "= tneg in\n" in text
    assert_round_trip(cj)
    # 'in' as the last operand of a one-line jaxpr, and before a complex literal.
    back = parse("{ lambda ; in:c64[]. let out:c64[] = tadd in (1+2j):c64[] in (out, in) }")
    assert back.eqns[0].invars[1].val == np.complex64(1 + 2j)
    back = parse("{ lambda ; in:f32[]. let out:f32[] = tsin in in (out,) }")
    assert back.eqns[0].invars[0] is back.jaxpr.invars[0]


# --- literals and scalars ---------------------------------------------------------------------


def test_literal_values_print_exactly_and_keep_their_types():
    def f(x, b, h, c):
        return (
            tmul(x, np.float32(0.1)),
            tmul(x, 0.1),
            tmul(b, ml_dtypes.bfloat16(0.1)),
            tmul(h, np.float16(np.inf)),
            tmul(x, np.float32(np.nan)),
            tmul(x, -np.float32(np.inf)),
            tmul(c, np.complex64(1 + 2j)),
            tmul(c, 2j),
            tadd(np.int32(3), 7),
            tadd(True, np.bool_(False)),
        )

    cj = make_jaxpr(f)(np.float32(1), ml_dtypes.bfloat16(1), np.float16(1), np.complex64(1))
    text = str(cj)
    for piece in (
        "tmul a 0.1:f32[]",
        "tmul a 0.1:~f32[]",
        "tmul b 0.1:bf16[]",
        "tmul c inf:f16[]",
        "tmul a nan:f32[]",
        "tmul a -inf:f32[]",
        "tmul d (1+2j):c64[]",
        "tmul d 2j:~c64[]",
        "tadd 3:i32[] 7:~i32[]",
        "tadd True:bool[] False:bool[]",
    ):
        assert piece in text, piece
    back = assert_round_trip(cj)
    for original, parsed in zip(_literals(cj.jaxpr), _literals(back.jaxpr), strict=True):
        assert type(parsed.val) is (np.bool_ if type(original.val) is bool else type(original.val))
        assert same_value(np.asarray(parsed.val), np.asarray(original.val))


FLOAT_DTYPES = [
    np.dtype(t)
    for t in (
        np.float16,
        ml_dtypes.bfloat16,
        ml_dtypes.float8_e4m3fn,
        ml_dtypes.float8_e5m2,
        ml_dtypes.float8_e4m3fnuz,
        ml_dtypes.float8_e8m0fnu,
        ml_dtypes.float8_e3m4,
    )
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
def test_every_small_float_prints_shortest_round_trip(dtype):
    bits = np.arange(
        2 ** (8 * dtype.itemsize), dtype=np.uint8 if dtype.itemsize == 1 else np.uint16
    )
    for value in bits.view(dtype):
        text = format_scalar(value, dtype)
        back = parse_scalar(text, dtype)
        assert type(back) is type(value)
        if math.isnan(float(value)):
            assert text == "nan" and math.isnan(float(back))
        else:
            assert np.asarray(back).view(bits.dtype) == np.asarray(value).view(bits.dtype), text
            if len(text.replace("-", "").replace(".", "").rstrip("0")) > 1 and "e" not in text:
                # Shortest: dropping the last digit no longer gives the value back.
                shorter = f"{float(value):.{max(1, _significant(text) - 1)}g}"
                with np.errstate(over="ignore"):
                    assert dtype.type(shorter) != value or _significant(shorter) >= _significant(
                        text
                    )


def _significant(text: str) -> int:
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0").rstrip("0")
    return max(1, len(mantissa))


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=examples(300), deadline=None)
def test_float32_scalars_round_trip(bits):
    value = np.array(bits, np.uint32).view(np.float32)[()]
    text = format_scalar(value, np.float32)
    back = parse_scalar(text, np.float32)
    assert type(back) is np.float32
    assert math.isnan(value) or back.view(np.uint32) == value.view(np.uint32)
    cvalue = np.complex64(complex(value, -value))
    back = parse_scalar(format_scalar(cvalue, np.complex64), np.complex64)
    assert same_value(back, cvalue)


def test_scalar_text_examples():
    assert format_scalar(np.float32(0.1), np.float32) == "0.1"
    assert format_scalar(ml_dtypes.bfloat16(0.1), BF16) == "0.1"
    assert format_scalar(np.float32(1e20), np.float32) == "1e+20"
    assert format_scalar(np.float64(0.1), np.float64) == "0.1"
    assert format_scalar(np.complex64(complex(-0.0, -1)), np.complex64) == "(-0-1j)"
    assert format_scalar(np.int8(-5), np.int8) == "-5"
    assert format_scalar(ml_dtypes.int4(-3), ml_dtypes.int4) == "-3"
    assert parse_scalar("0.10000000149011612", np.float32) == np.float32(0.1)  # JAX's text
    assert parse_scalar("2", np.float32, weak_type=True) == 2.0
    assert type(parse_scalar("2", np.float32, weak_type=True)) is float
    assert type(parse_scalar("2", np.int32, weak_type=True)) is int
    assert type(parse_scalar("(1+2j)", np.complex64, weak_type=True)) is complex
    assert type(parse_scalar("7", ml_dtypes.int4)) is ml_dtypes.int4
    with pytest.raises(ValueError, match="out of range"):
        parse_scalar("300", np.int8)
    with pytest.raises(ValueError):
        parse_scalar("yes", np.bool_)


# --- params -----------------------------------------------------------------------------------


def test_param_value_text():
    assert format_param_value((0,)) == "(0,)"
    assert format_param_value((0, 1)) == "(0, 1)"
    assert format_param_value(()) == "()"
    assert format_param_value([1, "a"]) == "[1, 'a']"
    assert format_param_value(np.dtype(np.float32)) == "float32"
    assert format_param_value(ml_dtypes.bfloat16) == "bfloat16"
    assert format_param_value(None) == "None"
    assert format_param_value("<lambda>") == "<lambda>"
    assert format_param_value("float32") == "'float32'"
    assert format_param_value("3") == "'3'"
    assert format_param_value("a b") == "'a b'"
    assert format_param_value("inf") == "'inf'"
    assert format_param_value("") == "''"
    assert format_param_value(float("-inf")) == "-inf"
    assert format_param_value(np.float32(0.1)) == "float32(0.1)"
    assert format_param_value(np.arange(4, dtype=np.int32).reshape(2, 2)) == (
        "array([[0, 1], [2, 3]], dtype=int32)"
    )
    assert format_param_value(np.zeros((0, 3), BF16)) == "array([], shape=(0, 3), dtype=bfloat16)"
    assert parse_param_value("<lambda>") == "<lambda>"
    assert parse_param_value("hi {}") == "hi {}"
    assert parse_param_value("(float32, int8)") == (np.dtype(np.float32), np.dtype(np.int8))
    assert parse_param_value("PyTreeDef(((*,), {}))") == "PyTreeDef(((*,), {}))"
    assert parse_param_value("(nan+nanj)") != parse_param_value("(nan+nanj)")  # a complex nan


_PARAM_DTYPES = st.sampled_from([np.dtype(t) for t in (np.float32, BF16, np.int8, np.bool_)])
_SCALAR_PARAMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["float32", "<lambda>", "None", "a=b", "x # y", "it's", "f(x)", "]", "\n"]),
    _PARAM_DTYPES,
    st.tuples(_PARAM_DTYPES, st.floats(-100, 100, width=32)).map(
        lambda p: p[0].type(int(p[1]) if p[0] == np.int8 else p[1])
    ),
    st.lists(st.floats(width=32), max_size=4).map(lambda v: np.array(v, BF16)),
    st.lists(st.integers(-5, 5), max_size=6).map(lambda v: np.array(v, np.int32).reshape(-1, 1)),
)
_PARAM_VALUES = st.recursive(
    _SCALAR_PARAMS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    ),
    max_leaves=6,
)


_PARAM_NAMES = st.sampled_from(
    ["a", "n", "axes", "_", "in", "let", "lambda", "x1", "name", "jaxpr"]
)


@given(st.dictionaries(_PARAM_NAMES, _PARAM_VALUES))
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_params_round_trip(params):
    x = np.ones(2, np.float32)
    cj = make_jaxpr(lambda *a: tparams_p.bind(*a, **params))(x)
    back = parse(str(cj))
    assert jaxpr_equal(back, cj), str(cj)
    assert str(back) == str(cj)
    for key, value in params.items():
        parsed = back.eqns[0].params[key]
        if isinstance(value, np.generic | np.ndarray):
            assert type(parsed) is type(value) and parsed.dtype == value.dtype


class Window:
    """A param value of the test's own type, with a registered printer and parser."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __eq__(self, other):
        return isinstance(other, Window) and (self.lo, self.hi) == (other.lo, other.hi)

    def __hash__(self):
        return hash((self.lo, self.hi))


twindow_p = Primitive("twindow")
twindow_p.def_impl(lambda x, **_: x)
twindow_p.def_abstract_eval(lambda a, **_: _same(a))
register_param_printer(twindow_p, "window", lambda w: f"<{w.lo} .. {w.hi}>")
register_param_parser(twindow_p, "window", lambda s: Window(*map(int, s.strip("<>").split(" .. "))))
register_param_parser(twindow_p, "body", parse_open_jaxpr)


def test_registered_param_printer_and_parser_compose():
    inner = make_jaxpr(lambda v: tsin(v))(np.float32(1)).jaxpr  # an open Jaxpr param
    cj = make_jaxpr(lambda x: twindow_p.bind(x, window=Window(2, 5), body=inner, k=1))(
        np.float32(1)
    )
    text = str(cj)
    assert "window=<2 .. 5>" in text and "body={ lambda ; c:f32[]." in text
    back = parse_jaxpr(text, primitives={**PRIMS, "twindow": twindow_p})
    assert jaxpr_equal(back, cj)
    assert back.eqns[0].params["window"] == Window(2, 5)
    assert isinstance(back.eqns[0].params["body"], Jaxpr)
    with pytest.raises(ValueError, match=r"line 1, column \d+: cannot read param 'window'"):
        parse_jaxpr(
            "{ lambda ; a:f32[]. let b:f32[] = twindow[window=<x .. 1>] a in (b,) }",
            primitives={"twindow": twindow_p},
        )


tnamed_call_p = Primitive("tnamed_call")
tnamed_call_p.multiple_results = True
tnamed_call_p.def_impl(lambda *args, body, **_: eval_jaxpr(body.jaxpr, body.consts, *args))
tnamed_call_p.def_abstract_eval(lambda *avals, body, **_: body.out_avals)
register_param_order(tnamed_call_p, ("name",))
register_aliased_jaxpr(tnamed_call_p, "body")
register_param_printer(
    tnamed_call_p, "flags", lambda flags: format_param_value(flags) if any(flags) else None
)
register_param_defaults(tnamed_call_p, lambda n: {"flags": (False,) * n})


def _named_call(fn, *args, flags=None):
    body = make_jaxpr(fn)(*args)
    flags = (False,) * len(args) if flags is None else flags
    return tnamed_call_p.bind(*args, body=body, flags=flags, name=fn.__name__)


def test_aliased_jaxpr_takes_the_equation_names_and_defaults_read_back():
    def twice(u, v):
        return [tadd(u, v), u, tsin(u)]

    def outer(x, y):
        a, b, _ = _named_call(twice, tsin(x), y)
        (c,) = _named_call(lambda w: [tneg(w)], a, flags=(True,))
        (d,) = _named_call(lambda w, z: [w], b, b)  # one operand twice: a fresh name
        return [tmul(c, d)]

    cj = make_jaxpr(outer)(np.float32(1), np.float32(2))
    prims = {**PRIMS, "tnamed_call": tnamed_call_p}
    text = pp_jaxpr(cj)
    assert text == (
        "{ lambda ; a:f32[] b:f32[]. let\n"
        "    c:f32[] = tsin a\n"
        "    d:f32[] e:f32[] _:f32[] = tnamed_call[\n"
        "      name=twice\n"
        "      body={ lambda ; c:f32[] b:f32[]. let\n"
        "          d:f32[] = tadd c b\n"
        "          f:f32[] = tsin c\n"
        "        in (d, c, f) }\n"
        "    ] c b\n"
        "    g:f32[] = tnamed_call[\n"
        "      name=<lambda>\n"
        "      body={ lambda ; d:f32[]. let g:f32[] = tneg d in (g,) }\n"
        "      flags=(True,)\n"
        "    ] d\n"
        "    h:f32[] = tnamed_call[\n"
        "      name=<lambda>\n"
        "      body={ lambda ; e:f32[] i:f32[]. let  in (e,) }\n"
        "    ] e e\n"
        "    j:f32[] = tmul g h\n"
        "  in (j,) }"
    )
    back = parse_jaxpr(text, primitives=prims)
    assert pp_jaxpr(back) == text
    assert [eqn.params["flags"] for eqn in back.eqns[1:4]] == [
        (False, False),
        (True,),
        (False, False),
    ]
    args = (np.float32(0.5), np.float32(2.0))
    np.testing.assert_array_equal(
        eval_jaxpr(back.jaxpr, back.consts, *args), eval_jaxpr(cj.jaxpr, cj.consts, *args)
    )


# --- random programs ----------------------------------------------------------------------------

_DTYPES = [np.dtype(t) for t in (np.float32, ml_dtypes.bfloat16, np.float16, np.int32, np.uint8)]
_SHAPES = [(), (3,), (2, 3)]


def _random_scalar(data, dtype, weak):
    if weak:
        if _is_float(dtype):
            return data.draw(st.sampled_from([0.1, -2.5, 1e-3, 3.0, float("inf")]))
        return data.draw(st.integers(0, 9))
    if _is_float(dtype):
        return dtype.type(data.draw(st.sampled_from([0.1, -2.5, 1e-3, 3.0, float("nan")])))
    return dtype.type(data.draw(st.integers(0, 9)))


def _random_body(data, pool, depth, n_ops, const_pool):
    """Apply random primitives to the traced values in ``pool``; return the outputs."""
    for _ in range(n_ops):
        kind = data.draw(
            st.sampled_from(["unary", "binary", "literal", "cast", "split", "call", "const"])
        )
        x = data.draw(st.sampled_from(pool))
        if kind == "unary":
            pool.append(tsin(x) if _is_float(x.dtype) else tneg(x))
        elif kind == "binary":
            same = [y for y in pool if y.shape == x.shape and y.dtype == x.dtype]
            pool.append(
                data.draw(st.sampled_from([tadd, tmul]))(x, data.draw(st.sampled_from(same)))
            )
        elif kind == "literal":
            weak = data.draw(st.booleans()) or x.shape != ()
            if x.weak_type and not weak:
                continue
            lit = _random_scalar(data, np.dtype(x.dtype), weak)
            pool.append(tmul(lit, x) if data.draw(st.booleans()) else tadd(x, lit))
        elif kind == "cast":
            dtype = data.draw(st.sampled_from(_DTYPES))
            name = data.draw(st.sampled_from(["hello", "<lambda>", "int32", "a b", ""]))
            pool.append(tcast(x, dtype, axes=tuple(range(len(x.shape))), name=name))
        elif kind == "split":
            outs = tsplit_p.bind(x, n=data.draw(st.integers(1, 3)))
            pool.extend(outs[: data.draw(st.integers(0, len(outs)))])
        elif kind == "call" and depth < 2:
            args = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))

            def inner(*xs):
                outs = _random_body(data, list(xs), depth + 1, data.draw(st.integers(0, 3)), [])
                return [
                    data.draw(st.sampled_from(outs)) for _ in range(data.draw(st.integers(1, 2)))
                ]

            pool.extend(call(inner, *args))
        elif kind == "const" and const_pool:
            c = data.draw(st.sampled_from(const_pool))  # a closed-over array: a constvar
            pool.append(tadd(x, c) if c.shape == x.shape and c.dtype == x.dtype else tneg(c))
    return pool


@given(st.data())
@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_programs_round_trip_and_evaluate_the_same(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    n_args = data.draw(st.integers(1, 3))
    args = []
    for _ in range(n_args):
        dtype = data.draw(st.sampled_from(_DTYPES))
        shape = data.draw(st.sampled_from(_SHAPES))
        if data.draw(st.integers(0, 5)) == 0:
            args.append(data.draw(st.sampled_from([1.5, -2.0, 3])))  # weakly typed argument
        else:
            args.append((rng.standard_normal(shape) * 4).astype(dtype))
    consts = [
        (rng.standard_normal(np.shape(a)) * 4).astype(a.dtype)
        for a in args
        if isinstance(a, np.ndarray) and data.draw(st.booleans())
    ]

    def f(*xs):
        pool = _random_body(data, list(xs), 0, data.draw(st.integers(0, 8)), consts)
        outs = [data.draw(st.sampled_from(pool)) for _ in range(data.draw(st.integers(1, 3)))]
        if data.draw(st.booleans()):
            outs.append(data.draw(st.sampled_from([3, 0.5, np.float32(2.0)])))
        return outs

    cj = make_jaxpr(f)(*args)
    back = assert_round_trip(cj)
    for original, parsed in zip(_literals(cj.jaxpr), _literals(back.jaxpr), strict=True):
        assert type(parsed.val) is (np.bool_ if type(original.val) is bool else type(original.val))
    with np.errstate(all="ignore"):
        want = eval_jaxpr(cj.jaxpr, cj.consts, *args)
        got = eval_jaxpr(back.jaxpr, back.consts, *args)
    assert len(want) == len(got)
    for w, g in zip(want, got, strict=True):
        assert same_value(g, w), (w, g)


def test_unused_outputs_become_drop_vars_and_round_trip():
    cj = make_jaxpr(lambda x: tsplit_p.bind(x, n=3)[1])(np.ones(2, np.float32))
    eqn = cj.eqns[0]
    eqn.outvars = [DropVar(v.aval) if i != 1 else v for i, v in enumerate(eqn.outvars)]
    text = str(cj)
    assert "_:f32[2] b:f32[2] _:f32[2] = tsplit[n=3] a" in text
    assert_round_trip(cj)


# --- JAX's own text -----------------------------------------------------------------------------

JAX_TEXT = """\
{ lambda a:f32[3]; b:f32[3] c:f32[]. let
    d:f32[3] = sin b
    e:f32[3] = mul d 2.0:f32[]
    f:f32[3] = jit[
      name=<lambda>
      jaxpr={ lambda ; c:f32[] e:f32[3]. let f:f32[3] = mul e c in (f,) }
    ] c e
    g:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    h:f32[3] = add b a
    i:f32[3] = jit[
      name=sort
      jaxpr={ lambda ; h:f32[3]. let
          i:f32[3] = sort[dimension=0 is_stable=True num_keys=1] h
        in (i,) }
    ] h
    j:f32[3] k:f32[3] = sort[dimension=0 is_stable=True num_keys=1] i i
  in (f, g, 3:i32[], i, k) }
"""


@pytest.fixture
def jax_named_primitives():
    names = ["sin", "mul", "jit", "reduce_sum", "add", "sort"]
    prims = {}
    for name in names:
        prims[name] = Primitive(name)
        core.primitives_by_name[name].remove(prims[name])  # keep the global registry clean
        if not core.primitives_by_name[name]:
            del core.primitives_by_name[name]
    prims["sort"].multiple_results = True
    prims["jit"].multiple_results = True
    return prims


def test_parses_jax_text(jax_named_primitives):
    prims = jax_named_primitives
    # The stand-in primitives have no abstract evaluation: read the raw syntax.
    cj = parse_jaxpr(JAX_TEXT, consts=[np.ones(3, np.float32)], primitives=prims, check=False)
    eqns = cj.eqns
    assert [e.primitive for e in eqns] == [
        prims[n] for n in "sin mul jit reduce_sum add jit sort".split()
    ]
    assert eqns[1].invars[1].val == np.float32(2.0) and not eqns[1].invars[1].aval.weak_type
    assert eqns[2].params["name"] == "<lambda>"
    inner = eqns[2].params["jaxpr"]
    assert isinstance(inner, ClosedJaxpr) and len(inner.jaxpr.invars) == 2
    assert eqns[3].params == {"axes": (0,), "out_sharding": None}
    assert eqns[6].params == {"dimension": 0, "is_stable": True, "num_keys": 1}
    assert cj.jaxpr.outvars[2].val == np.int32(3)
    # Scoping: the outer 'h' and the inner 'h' are different variables.
    assert eqns[5].params["jaxpr"].jaxpr.invars[0] is not eqns[4].outvars[0]
    assert eqns[5].invars[0] is eqns[4].outvars[0]
    assert cj.jaxpr.outvars[3] is eqns[5].outvars[0]
    # Printing it again gives JAX's layout (no weak types in JAX's text).
    assert str(cj).splitlines()[:3] == JAX_TEXT.splitlines()[:3]


def test_tolerates_whitespace_comments_and_separators():
    text = """
        # a comment line
        {lambda ;a : f32[ 3 ]   b:~f32[].let   # after let
              c:f32[3] = tmul a b ;   d:f32[3]=tsin c   # comment
          e:f32[3]
            f:f32[3] = tsplit[
                n = 2   # a comment inside params
            ] d
        in ( e ,
           f, 2.0:~f32[]
        ) }  # trailing
    """
    cj = parse(text)
    assert [e.primitive for e in cj.eqns] == [tmul_p, tsin_p, tsplit_p]
    assert cj.eqns[2].params == {"n": 2}
    assert cj.jaxpr.invars[1].aval == ShapedArray((), F32, weak_type=True)
    assert str(cj) == (
        "{ lambda ; a:f32[3] b:~f32[]. let\n"
        "    c:f32[3] = tmul a b\n"
        "    d:f32[3] = tsin c\n"
        "    e:f32[3] f:f32[3] = tsplit[n=2] d\n"
        "  in (e, f, 2.0:~f32[]) }"
    )


def test_memory_spaces_in_types_read_back():
    # JAX 0.10.2 prints a value in host memory as f32<host>[8] (a weak one ~f32<host>[]);
    # the parser reads the space back into the type, and the text prints the same again.
    text = (
        "{ lambda ; a:f32<host>[3] b:~f32<host>[] c:f32[3]. let\n"
        "    d:f32<host>[3] = tmul a b\n"
        "  in (d, c) }"
    )
    cj = parse(text, check=False)
    host = MemorySpace.Host
    assert cj.jaxpr.invars[0].aval == ShapedArray((3,), F32, memory_space=host)
    assert cj.jaxpr.invars[1].aval == ShapedArray((), F32, weak_type=True, memory_space=host)
    assert cj.jaxpr.invars[2].aval.memory_space is MemorySpace.Device
    assert cj.eqns[0].outvars[0].aval.memory_space is host
    assert str(cj) == text
    with pytest.raises(JaxprParseError, match=r"unknown dtype 'q7'"):
        parse("{ lambda ; a:q7<host>[]. let  in (a,) }")


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", r"line 1, column 1: empty text"),
        (
            "{ lambda ; a:f32[]. let b:f32[] = nope a in (b,) }",
            r"column 35: unknown primitive 'nope'",
        ),
        ("{ lambda ; a:f32[]. let b:f32[] = tsin z in (b,) }", r"undefined variable 'z'"),
        ("{ lambda ; a:q7[]. let  in (a,) }", r"column 14: unknown dtype 'q7'"),
        (
            "{ lambda ; a:f32[]. let\n  b:f32[] = tsin a\n  in (c,) }",
            r"line 3, column 7: undefined",
        ),
        ("{ lambda ; a:f32[]. let b:f32[] = tsin a in (b,) } extra", r"unexpected text after"),
        ("{ lambda ; a:f32[]. let b:f32[] = tsin a", r"ends before its 'in"),
        ("{ lambda ; a:f32[]. let b:f32[] c:f32[] = tsin a in (b,) }", r"single result"),
        ("{ lambda ; a:f32[]. let b:f32[] = tadd a 1.5:f32[2] in (b,) }", r"must be a scalar"),
        ("{ lambda ; a:i8[]. let b:i8[] = tadd a 1000:i8[] in (b,) }", r"bad literal '1000'"),
        ("{ lambda ; a:f32[]. let b:f32[] = tadd a x1:f32[] in (b,) }", r"bad literal 'x1'"),
        ("{ lambda ; a:f32[]. let b:f32[] = tsplit[n=1 n=2] a in (b,) }", r"given twice"),
        ("{ lambda ; a:f32[]. let b:f32[] = tsplit[n=(1] a in (b,) }", r"not closed|unbalanced"),
        ("{ lambda ; a:f32[]. let b:f32[] = tsplit[n='1] a in (b,) }", r"unterminated string"),
        ("{ lambda ; a:f32[] let  in (a,) }", r"expected a binder 'name:type' or '\.'"),
        ("{ lambda ; a:f32[3. let  in (a,) }", r"expected ',' or '\]' in a shape"),
        ("{ lambda ; a:f32[]. let  in a }", r"expected '\(' and the jaxpr's outputs"),
        ("{ lambda ; a:f32[]. let b:f32[] = tsin a }", r"expected 'in \(\.\.\.\)' before"),
        (
            "{ lambda ; a:f32[]. let b:f32[] = call[jaxpr={ lambda ; . let  in (a,) }] in (b,) }",
            r"undefined variable 'a'",  # nested jaxprs are closed
        ),
        (
            "{ lambda ; a:f32[]. let\n"
            "  b:f32[] = call[jaxpr={ lambda c:f32[]; . let  in (c,) }]\n in (b,) }",
            r"line 2, column \d+: the jaxpr in param 'jaxpr' has constvars",
        ),
    ],
)
def test_errors_give_line_column_and_excerpt(text, message):
    with pytest.raises(ValueError, match=message) as info:
        parse(text)
    assert isinstance(info.value, JaxprParseError)
    if text:
        lines = str(info.value).splitlines()
        assert lines[-1].strip() == "^" and lines[-2].strip()  # excerpt and caret


def test_error_excerpt_points_at_the_problem():
    with pytest.raises(ValueError) as info:
        parse("{ lambda ; a:f32[]. let b:f32[] = nope a in (b,) }")
    _, excerpt, caret = str(info.value).splitlines()
    assert excerpt[caret.index("^")] == "n" and excerpt[caret.index("^") :].startswith("nope")


def test_consts_must_be_given():
    cj = make_jaxpr(lambda x: tadd(x, np.ones(3, np.float32)))(np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"1 constvars \(f32\[3\]\) but 0 consts.*not part of"):
        parse(str(cj))
    assert jaxpr_equal(parse(str(cj), consts=cj.consts), cj)


def test_primitive_lookup_through_the_registry():
    unique = Primitive("pp_test_unique_prim")
    unique.def_abstract_eval(_same)
    text = "{ lambda ; a:f32[]. let b:f32[] = pp_test_unique_prim a in (b,) }"
    assert parse_jaxpr(text).eqns[0].primitive is unique
    twin = Primitive("pp_test_unique_prim")
    try:
        with pytest.raises(ValueError, match=r"2 different primitives are named.*primitives="):
            parse_jaxpr(text)
        found = parse_jaxpr(text, primitives={"pp_test_unique_prim": twin}, check=False)
        assert found.eqns[0].primitive is twin  # (twin has no abstract evaluation)
    finally:
        del core.primitives_by_name["pp_test_unique_prim"]
    with pytest.raises(ValueError, match="not in the primitives= given"):
        parse_jaxpr(text, primitives={})


def test_only_text_is_accepted():
    with pytest.raises(TypeError):
        parse_jaxpr(make_jaxpr(lambda x: x)(1.0))


def test_text_printing_does_not_depend_on_variable_identity():
    cj = make_jaxpr(lambda a: tneg(tsin(a)))(np.float32(1))
    assert re.fullmatch(r"\{ lambda ; a:f32\[\]\. let .* in \(c,\) \}", str(cj))
    assert str(cj) == str(make_jaxpr(lambda a: tneg(tsin(a)))(np.float32(1)))


def test_primitive_names_with_dashes_round_trip():
    dashed = Primitive("test-dashed-op")
    dashed.def_abstract_eval(lambda x: x)
    dashed.def_impl(lambda x: x)
    closed = make_jaxpr(dashed.bind)(np.ones(2, np.float32))
    parsed = parse_jaxpr(str(closed), primitives={"test-dashed-op": dashed})
    assert jaxpr_equal(parsed, closed)
