"""modjax.errors has JAX's exception classes, bases and situations (``jax.errors``).

Each test catches the error as a JAX user would: by the class ``jax.errors``
documents, or by the builtin base JAX gives it. The hierarchy below was read off
JAX 0.10.2 with::

    import inspect, jax.errors as E
    {n: [c.__name__ for c in o.__mro__[1:] if c.__name__ != "_JAXErrorMixin"]
     for n, o in vars(E).items() if inspect.isclass(o)}
"""

import numpy as np
import pytest

import modjax
import modjax.numpy as jnp
from modjax import errors

JAX_BASES = {
    "ConcretizationTypeError": ["JAXTypeError", "TypeError"],
    "InconclusiveDimensionOperation": ["Exception"],
    "JAXIndexError": ["IndexError", "LookupError"],
    "JAXTypeError": ["TypeError"],
    "JaxRuntimeError": ["RuntimeError"],
    "JaxprTypeError": ["TypeError"],
    "KeyReuseError": ["JAXTypeError", "TypeError"],
    "NonConcreteBooleanIndexError": ["JAXIndexError", "IndexError", "LookupError"],
    "TracerArrayConversionError": ["JAXTypeError", "TypeError"],
    "TracerBoolConversionError": ["ConcretizationTypeError", "JAXTypeError", "TypeError"],
    "TracerIntegerConversionError": ["JAXTypeError", "TypeError"],
    "UnexpectedTracerError": ["JAXTypeError", "TypeError"],
}


def test_errors_module_has_jax_classes_and_bases():
    assert sorted(errors.__all__) == sorted(JAX_BASES)
    for name, bases in JAX_BASES.items():
        mro = [c.__name__ for c in getattr(errors, name).__mro__[1:]]
        assert mro[: len(bases)] == bases, name


def test_int_of_tracer_is_a_concretization_error_not_the_integer_one():
    with pytest.raises(errors.ConcretizationTypeError) as info:
        modjax.jit(lambda a: int(a))(1.0)
    assert not isinstance(info.value, errors.TracerIntegerConversionError)


@pytest.mark.parametrize("use", [lambda a: [1, 2][a], lambda a: range(a)])
def test_index_of_tracer_is_the_integer_conversion_error(use):
    with pytest.raises(errors.TracerIntegerConversionError):
        modjax.jit(use)(1)


def test_bool_and_array_conversions():
    with pytest.raises(errors.TracerBoolConversionError):
        modjax.jit(lambda a: 1 if a > 0 else 0)(1.0)
    with pytest.raises(errors.TracerArrayConversionError):
        modjax.jit(lambda a: np.asarray(a))(1.0)


# A differentiated value with a known primal, under grad, jvp, linearize and vjp: as in
# JAX 0.10.2, Python control flow on it works, but it never becomes a float or a numpy
# array (its derivative would be dropped without a word).
_KNOWN_PRIMAL = {
    "bool": (lambda x: bool(x > 0), None),
    "int": (lambda x: int(x), None),
    "item": (lambda x: x.item(), None),
    "float": (lambda x: float(x), errors.ConcretizationTypeError),
    "complex": (lambda x: complex(x), errors.ConcretizationTypeError),
    "tolist": (lambda x: x.tolist(), errors.ConcretizationTypeError),
    "asarray": (lambda x: np.asarray(x), errors.TracerArrayConversionError),
    "np.sin": (lambda x: np.sin(x), errors.TracerArrayConversionError),
    "index": (lambda x: [0, 1][x], TypeError),
}
_DIFFERENTIATING = {
    "grad": lambda f: modjax.grad(f),
    "jvp": lambda f: lambda x: modjax.jvp(f, (x,), (x,)),
    "linearize": lambda f: lambda x: modjax.linearize(f, x)[0],
    "vjp": lambda f: lambda x: modjax.vjp(f, x)[0],
}


@pytest.mark.parametrize("transform", list(_DIFFERENTIATING))
@pytest.mark.parametrize("conversion", list(_KNOWN_PRIMAL))
def test_conversions_of_a_differentiated_known_value(conversion, transform):
    convert, error = _KNOWN_PRIMAL[conversion]
    f = _DIFFERENTIATING[transform](lambda x: (convert(x), x * 2.0)[1])
    if error is None:
        f(1.0)
    else:
        with pytest.raises(error):
            f(1.0)


def test_escaped_tracer_is_an_unexpected_tracer_error_and_a_type_error():
    saved = []
    modjax.jit(lambda a: saved.append(a) or a)(1.0)
    with pytest.raises(TypeError) as info:
        modjax.jit(lambda a: a + saved[0])(1.0)
    assert isinstance(info.value, errors.UnexpectedTracerError)
    assert isinstance(info.value, errors.JAXTypeError)


@pytest.mark.parametrize("index", [lambda a, m: a[m], lambda a, m: a.at[m].set(0.0)])
def test_traced_boolean_mask_is_a_non_concrete_boolean_index_error(index):
    x = jnp.arange(3.0)
    with pytest.raises(errors.NonConcreteBooleanIndexError) as info:
        modjax.jit(index)(x, x > 0)
    assert isinstance(info.value, IndexError) and isinstance(info.value, errors.JAXIndexError)


def test_xla_runtime_failures_are_jax_runtime_errors():
    # 16 TiB does not fit: XLA's RESOURCE_EXHAUSTED comes up as jaxlib's class.
    with pytest.raises(errors.JaxRuntimeError, match="RESOURCE_EXHAUSTED"):
        jnp.zeros((2**42,), jnp.float32).block_until_ready()
    x = jnp.ones(3)
    both = modjax.jit(lambda a, b: (a + 1, b + 1), donate_argnums=(0, 1))
    with pytest.raises(RuntimeError) as info:
        both(x, x)  # one buffer donated twice
    assert isinstance(info.value, errors.JaxRuntimeError)


def test_ill_typed_jaxpr_is_a_jaxpr_type_error():
    from modjax.tracecore import parse_jaxpr

    with pytest.raises(TypeError) as info:
        parse_jaxpr("{ lambda ; a:f32[3] b:i32[3]. let c:f32[3] = mul a b in (c,) }")
    assert isinstance(info.value, errors.JaxprTypeError)


def test_undecidable_symbolic_comparison_is_inconclusive():
    from modjax import export

    (a,) = export.symbolic_shape("a")
    assert a >= 1 and not a < 1 and a > 0  # dimension variables are at least 1, as in JAX
    with pytest.raises(errors.InconclusiveDimensionOperation, match="inconclusive"):
        bool(a >= 3)
    with pytest.raises(errors.InconclusiveDimensionOperation):
        bool(a < 2)


# Bad arguments to jnp functions: the builtin class JAX 0.10.2 raises (a differential run).
BAD_ARGUMENTS = [
    ("transpose repeated axis", lambda: jnp.transpose(jnp.ones((2, 3)), (0, 0)), TypeError),
    ("transpose missing axis", lambda: jnp.transpose(jnp.ones((2, 3)), (0,)), TypeError),
    ("take Python float", lambda: jnp.take(jnp.ones(3), 1.5), ValueError),
    ("take float array", lambda: jnp.take(jnp.ones(3), jnp.array([0.5])), ValueError),
    ("take numpy float", lambda: jnp.take(jnp.ones(3), np.float32(1)), ValueError),
    ("device_put to a string", lambda: modjax.device_put(jnp.ones(3), "cpu"), ValueError),
    ("argpartition of 0-d", lambda: jnp.argpartition(jnp.asarray(1.0), 0), ValueError),
    ("argpartition of a float", lambda: jnp.argpartition(1.0, 0), ValueError),
    ("argpartition of 0-d axis 0", lambda: jnp.argpartition(jnp.asarray(1), 0, 0), ValueError),
    ("partition of 0-d", lambda: jnp.partition(jnp.asarray(1.0), 0), ValueError),
    ("partition kth out of bounds", lambda: jnp.partition(jnp.ones(3), 5), ValueError),
]


@pytest.mark.parametrize("name,f,cls", BAD_ARGUMENTS, ids=[c[0] for c in BAD_ARGUMENTS])
def test_bad_arguments_raise_jax_classes(name, f, cls):
    with pytest.raises(cls) as info:
        f()
    assert type(info.value) is cls  # not a subclass of the other builtin
