"""make_jaxpr, eval_jaxpr, the tracer protocol and nesting of traces."""

import collections
import inspect

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis_profiles import examples
from tracecore_test_prims import BINARY, NUMPY, UNARY, add_p, mul_p, operators, sin_p, sumdiff_p

from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray, ShapeDtypeStruct
from modjax.tracecore.call import call, call_p
from modjax.tracecore.evaluation import eval_jaxpr, jaxpr_as_fun
from modjax.tracecore.jaxpr import Literal
from modjax.tracecore.tracing import make_jaxpr

f32 = np.dtype("float32")


def test_make_jaxpr_records_equations_and_types():
    closed = make_jaxpr(lambda x, y: mul_p.bind(sin_p.bind(x), y))(np.ones(3, f32), 2.0)
    jaxpr = closed.jaxpr
    assert [e.primitive for e in jaxpr.eqns] == [sin_p, mul_p]
    assert jaxpr.in_avals == [ShapedArray((3,), f32), ShapedArray((), f32, weak_type=True)]
    assert jaxpr.out_avals == [ShapedArray((3,), f32)]
    assert closed.consts == []


def test_python_scalars_become_weak_literals_and_arrays_become_consts():
    big = np.arange(4, dtype=f32)
    closed = make_jaxpr(lambda x: add_p.bind(mul_p.bind(x, 2.0), big))(np.ones(4, f32))
    mul_eqn, add_eqn = closed.jaxpr.eqns
    literal = mul_eqn.invars[1]
    assert isinstance(literal, Literal) and literal.val == 2.0 and type(literal.val) is float
    assert literal.aval == ShapedArray((), f32, weak_type=True)
    assert add_eqn.invars[1] is closed.jaxpr.constvars[0]
    assert closed.consts[0] is big


def test_the_same_closed_over_array_is_one_constvar():
    c = np.ones(3, f32)
    closed = make_jaxpr(lambda x: add_p.bind(add_p.bind(x, c), c))(np.ones(3, f32))
    assert len(closed.jaxpr.constvars) == 1


def test_numpy_scalars_become_strong_literals():
    closed = make_jaxpr(lambda x: mul_p.bind(x, np.float32(3)))(np.ones(2, f32))
    literal = closed.jaxpr.eqns[0].invars[1]
    assert isinstance(literal.val, np.float32) and not literal.aval.weak_type


def test_pytree_inputs_outputs_and_kwargs():
    Point = collections.namedtuple("Point", "x y")

    def f(p, scale, *, shift):
        return {"out": [add_p.bind(mul_p.bind(p.x, scale), shift), p.y], "none": None}

    args = (Point(np.ones(2, f32), np.zeros(3, f32)), np.float32(2))
    closed, shape = make_jaxpr(f, return_shape=True)(*args, shift=np.ones(2, f32))
    assert len(closed.jaxpr.invars) == 4
    assert shape["out"][0] == ShapeDtypeStruct((2,), f32)
    assert shape["out"][1] == ShapeDtypeStruct((3,), f32)
    assert shape["none"] is None
    out = eval_jaxpr(
        closed.jaxpr, closed.consts, np.ones(2, f32), np.zeros(3, f32), 2.0, np.ones(2)
    )
    np.testing.assert_allclose(out[0], [3.0, 3.0])


def test_static_argnums_are_passed_through():
    def f(x, n):
        for _ in range(n):
            x = sin_p.bind(x)
        return x

    assert len(make_jaxpr(f, static_argnums=1)(np.ones(2, f32), 3).jaxpr.eqns) == 3
    assert len(make_jaxpr(f, static_argnums=(-1,))(np.ones(2, f32), 2).jaxpr.eqns) == 2
    with pytest.raises(ValueError, match="static_argnums"):
        make_jaxpr(f, static_argnums=5)(np.ones(2, f32), 2)


def test_shape_dtype_struct_arguments():
    closed = make_jaxpr(sin_p.bind)(ShapeDtypeStruct((2, 3), np.float16))
    assert closed.jaxpr.in_avals == [ShapedArray((2, 3), np.dtype("float16"))]


def test_multiple_results_primitive():
    closed = make_jaxpr(lambda x, y: sumdiff_p.bind(x, y))(np.ones(2, f32), np.ones(2, f32))
    assert len(closed.jaxpr.eqns[0].outvars) == 2
    out = jaxpr_as_fun(closed)(np.array([3.0, 1.0], f32), np.array([1.0, 1.0], f32))
    np.testing.assert_allclose(out[0], [4.0, 2.0])
    np.testing.assert_allclose(out[1], [2.0, 0.0])


def test_outputs_may_be_inputs_or_constants():
    closed = make_jaxpr(lambda x: (x, 3, x))(np.ones(2, f32))
    assert closed.jaxpr.outvars[0] is closed.jaxpr.invars[0]
    assert isinstance(closed.jaxpr.outvars[1], Literal)
    assert eval_jaxpr(closed.jaxpr, closed.consts, 5.0)[1] == 3


@st.composite
def programs(draw):
    """A random straight-line program over the test primitives, as a list of steps."""
    n_inputs = draw(st.integers(1, 3))
    steps = []
    for _ in range(draw(st.integers(0, 8))):
        n_values = n_inputs + len(steps)
        if draw(st.booleans()):
            steps.append((draw(st.sampled_from(sorted(UNARY))), draw(st.integers(0, n_values - 1))))
        else:
            other = draw(st.one_of(st.integers(0, n_values - 1), st.floats(-2, 2, width=32)))
            steps.append(
                (draw(st.sampled_from(sorted(BINARY))), draw(st.integers(0, n_values - 1)), other)
            )
    outputs = draw(st.lists(st.integers(0, n_inputs + len(steps) - 1), min_size=1, max_size=3))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    return n_inputs, steps, outputs, shape


def run_program(program, args, table):
    n_inputs, steps, outputs, _ = program
    values = list(args)
    for name, *operands in steps:
        resolved = [values[o] if isinstance(o, int) else o for o in operands]
        values.append(table[name](*resolved))
    return [values[i] for i in outputs]


@settings(max_examples=examples(60), deadline=None)
@given(programs(), st.randoms(use_true_random=False))
def test_trace_then_eval_equals_numpy(program, rng):
    n_inputs, _, _, shape = program
    args = [np.asarray(rng.uniform(-1, 1), f32) * np.ones(shape, f32) for _ in range(n_inputs)]
    prims = {name: p.bind for name, p in {**UNARY, **BINARY}.items()}
    closed = make_jaxpr(lambda *xs: run_program(program, xs, prims))(*args)
    got = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    want = run_program(program, args, NUMPY)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w, f32), rtol=1e-6, atol=1e-6)


def test_call_is_one_equation_and_evaluates():
    def inner(a, b):
        return mul_p.bind(sin_p.bind(a), b)

    closed = make_jaxpr(lambda x: call(inner, x, x))(np.ones(3, f32))
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is call_p and eqn.params["name"] == "inner"
    assert [e.primitive for e in eqn.params["jaxpr"].jaxpr.eqns] == [sin_p, mul_p]
    x = np.linspace(0, 1, 3, dtype=f32)
    np.testing.assert_allclose(jaxpr_as_fun(closed)(x)[0], np.sin(x) * x, rtol=1e-6)
    np.testing.assert_allclose(call(inner, x, x), np.sin(x) * x, rtol=1e-6)


def test_call_closing_over_an_outer_tracer_passes_it_as_an_operand():
    def f(x):
        return call(lambda y: mul_p.bind(x, y), 2.0)

    closed = make_jaxpr(f)(np.ones(3, f32))
    (eqn,) = closed.jaxpr.eqns
    assert eqn.invars[0] is closed.jaxpr.invars[0]
    assert eqn.params["jaxpr"].consts == []
    np.testing.assert_allclose(jaxpr_as_fun(closed)(np.full(3, 3.0, f32))[0], [6.0] * 3)


def test_nested_make_jaxpr_captures_outer_tracer_as_const():
    inner_jaxprs = []

    def outer(x):
        inner = make_jaxpr(lambda y: add_p.bind(x, y))(1.0)
        inner_jaxprs.append(inner)
        return sin_p.bind(x)

    make_jaxpr(outer)(np.ones(2, f32))
    (inner,) = inner_jaxprs
    assert len(inner.consts) == 1 and isinstance(inner.consts[0], core.Tracer)


# --- the tracer protocol --------------------------------------------------------------


def test_tracer_operators_come_from_the_table():
    with operators():
        closed = make_jaxpr(lambda x, y: -(x * y + 1.0) - 2.0 * x)(np.ones(2, f32), np.ones(2, f32))
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert names == ["test_mul", "test_add", "test_neg", "test_mul", "test_sub"]


def test_unregistered_operators_raise_type_error():
    def f(x):
        return x @ x

    # Another package in the same process (modjax.numpy) may have filled the table.
    saved = dict(core.tracer_operators)
    core.tracer_operators.clear()
    try:
        with pytest.raises(TypeError, match="unsupported operand"):
            make_jaxpr(f)(np.ones(2, f32))
        with pytest.raises(TypeError, match="__getitem__"):
            make_jaxpr(lambda x: x[0])(np.ones(2, f32))
    finally:
        core.tracer_operators.update(saved)


def test_operator_listeners_see_every_change_of_the_table():
    # An array type of a higher layer installs registered operators as its own methods;
    # it hears of registrations and of any other change (tests restore the table whole).
    seen = []
    saved = dict(core.tracer_operators)
    core.operator_listeners.append(lambda name, fn: seen.append((name, fn)))
    add = lambda a, b: "add"  # noqa: E731
    try:
        core.register_tracer_operator("__add__", add)
        assert seen[-1] == ("__add__", add)
        core.tracer_operators.pop("__add__")
        assert seen[-1] == ("__add__", None)
        core.tracer_operators.update({"__sub__": add})
        assert seen[-1] == ("__sub__", add)
        core.tracer_operators.clear()
        assert ("__sub__", None) in seen and not core.tracer_operators
    finally:
        core.operator_listeners.pop()
        core.tracer_operators.clear()
        core.tracer_operators.update(saved)


def test_tracer_attributes_and_shape_properties():
    seen = {}

    def f(x):
        seen.update(shape=x.shape, dtype=x.dtype, ndim=x.ndim, size=x.size, len=len(x))
        return x.double

    saved = dict(core.tracer_attributes)
    core.register_tracer_attribute("double", lambda t: add_p.bind(t, t))
    try:
        closed = make_jaxpr(f)(np.ones((2, 3), f32))
    finally:
        core.tracer_attributes.clear()
        core.tracer_attributes.update(saved)
    assert seen == {"shape": (2, 3), "dtype": f32, "ndim": 2, "size": 6, "len": 2}
    assert closed.jaxpr.eqns[0].primitive is add_p
    with pytest.raises(AttributeError, match="JaxprTracer has no attribute nothing"):
        make_jaxpr(lambda x: x.nothing)(np.ones(2, f32))


def test_tracers_are_unhashable():
    with pytest.raises(TypeError):
        make_jaxpr(lambda x: {x: 1})(1.0)


_PAGE = "\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors."


@pytest.mark.parametrize(
    ("convert", "error", "head"),
    [
        (bool, core.TracerBoolConversionError, "Attempted boolean conversion of traced array"),
        (int, core.ConcretizationTypeError, "The problem arose with the `int` function."),
        (float, core.ConcretizationTypeError, "try using `x.astype(float)`"),
        (np.asarray, core.TracerArrayConversionError, "The numpy.ndarray conversion method"),
    ],
)
def test_concretization_errors_have_jax_text(convert, error, head):
    def f(x):
        return convert(sin_p.bind(x))

    with pytest.raises(error) as info:
        make_jaxpr(f)(np.float32(1))
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    assert head in message and "traced array with shape float32[]" in message
    # JAX's origin line: the function, where it is defined, what traced it, and the
    # argument the value depends on (found through the sin equation).
    assert "The error occurred while tracing the function f at " in message
    assert "test_tracing.py:" in message and " for make_jaxpr. " in message
    assert "because it depends on the value of the argument x." in message
    assert message.endswith(_PAGE + error.__name__)


def test_index_of_tracer_error_is_jax_text():
    with pytest.raises(core.TracerIntegerConversionError) as info:
        make_jaxpr(lambda i: [0, 1][i])(np.int32(1))
    assert str(info.value).startswith(
        "The __index__() method was called on traced array with shape int32[]\n"
    )
    # A float tracer is refused before JAX's tracer error, as NumPy refuses the index.
    with pytest.raises(TypeError, match="Only integer scalar arrays can be converted"):
        make_jaxpr(lambda x: [0, 1][x])(np.float32(1))


def test_concretization_error_names_every_argument_the_value_depends_on():
    def f(a, b, c):
        return int(add_p.bind(sin_p.bind(a), sin_p.bind(c))), b

    with pytest.raises(core.ConcretizationTypeError) as info:
        make_jaxpr(f)(np.float32(1), np.float32(2), np.float32(3))
    assert "depends on the values of the arguments a and c." in str(info.value)


def test_conversions_of_non_scalar_tracers_raise_numpy_errors():
    with pytest.raises(ValueError, match="truth value of an array with more than one"):
        make_jaxpr(lambda x: bool(x))(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="truth value of an empty array"):
        make_jaxpr(lambda x: bool(x))(np.ones(0, np.float32))
    with pytest.raises(TypeError, match="Only scalar arrays can be converted to Python scalars"):
        make_jaxpr(lambda x: int(x))(np.ones(2, np.float32))


def test_bool_of_tracer_is_a_concretization_error_naming_the_argument():
    def f(x):
        if x:
            return x
        return x

    with pytest.raises(core.ConcretizationTypeError, match="the value of the argument x\\."):
        make_jaxpr(f)(1.0)


def test_traced_shape_error_is_jax_text():
    from modjax.tracecore.abstract import canonicalize_shape

    def f(n):
        canonicalize_shape((n, 2))

    with pytest.raises(TypeError) as info:
        make_jaxpr(f)(np.int32(3))
    message = str(info.value)
    assert message.startswith(
        "Shapes must be 1D sequences of concrete values of integer type, got "
        "(JitTracer(int32[]), 2).\nIf using `jit`, try using `static_argnums` or applying "
        "`jit` to smaller subfunctions.\nThe error occurred while tracing the function f at "
    )
    assert message.endswith("depends on the value of the argument n.")


def test_leaked_tracer_is_reported():
    leaked = []
    make_jaxpr(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(
        core.UnexpectedTracerError, match="to escape the scope of the transformation"
    ):
        sin_p.bind(leaked[0])
    with pytest.raises(core.UnexpectedTracerError):
        make_jaxpr(lambda y: add_p.bind(y, leaked[0]))(1.0)


def test_eval_trace_runs_impls_on_concrete_values():
    assert core.current_trace() is core.eval_trace
    np.testing.assert_allclose(sin_p.bind(np.float32(0.5)), np.sin(np.float32(0.5)))


def test_missing_rules_are_named():
    bare = core.Primitive("bare_test_prim")
    with pytest.raises(NotImplementedError, match="bare_test_prim"):
        bare.bind(1.0)
    with pytest.raises(NotImplementedError, match="bare_test_prim"):
        make_jaxpr(bare.bind)(1.0)


def test_tracer_interchange_dunders_show_the_array_api_signatures():
    params = inspect.signature(core.Tracer.__dlpack__).parameters
    assert list(params) == ["self", "stream", "max_version", "dl_device", "copy"]
    assert list(inspect.signature(core.Tracer.__array_namespace__).parameters) == [
        "self",
        "api_version",
    ]
    assert list(inspect.signature(core.Tracer.__dlpack_device__).parameters) == ["self"]


def test_opaque_trace_state_tells_whether_the_trace_is_the_same():
    outside = core.get_opaque_trace_state("flax")
    assert outside == core.get_opaque_trace_state() and hash(outside) == hash(
        core.get_opaque_trace_state()
    )
    seen = []

    def f(x):
        inside = core.get_opaque_trace_state()
        seen.append((inside == outside, inside == core.get_opaque_trace_state()))
        return x

    make_jaxpr(f)(np.ones(2, f32))
    assert seen == [(False, True)]
    assert outside != object()


def test_every_kind_of_aval_is_an_abstract_value():
    from modjax.tracecore import AbstractValue
    from modjax.tracecore.state import AbstractRef
    from modjax.tracecore.tokens import abstract_token

    aval = ShapedArray((2,), np.dtype(f32))
    for value in (aval, abstract_token, AbstractRef(aval)):
        assert isinstance(value, AbstractValue), value
    assert not isinstance(np.ones(2), AbstractValue)
