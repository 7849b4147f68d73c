"""jax.core's public names and the deprecated ones JAX 0.10 still serves."""

import warnings

import numpy as np
import pytest

import modjax
import modjax.core as core
import modjax.extend.core
import modjax.numpy as jnp


def _deprecated(name):
    with pytest.warns(DeprecationWarning, match=f"jax.core.{name} is deprecated"):
        return getattr(core, name)


def test_public_aliases_and_abstract_value():
    assert isinstance(modjax.typeof(jnp.ones(2)), core.AbstractValue)
    assert core.ParamDict.__origin__ is dict
    assert core.Atom.__args__ == (modjax.extend.core.Var, modjax.extend.core.Literal)
    assert core.max_dim(3, 5) == 5 and core.min_dim(np.int32(3), 5) == 3


def test_eval_context_computes_eagerly_inside_jit():
    seen = []

    def f(x):
        with core.eval_context():
            seen.append(type(jnp.sin(1.0)).__name__)
        return x

    modjax.jit(f)(1.0)
    assert seen == ["ArrayImpl"]


def test_deprecated_predicates_on_values_and_tracers():
    is_concrete = _deprecated("is_concrete")
    is_constant_dim = _deprecated("is_constant_dim")
    is_constant_shape = _deprecated("is_constant_shape")
    seen = []

    def f(x):
        seen.append((is_concrete(x), is_constant_dim(x.shape[0]), is_constant_shape(x.shape)))
        return x

    modjax.jit(f)(np.ones(3))
    assert seen == [(False, True, True)]
    assert is_concrete(jnp.ones(2)) and is_concrete(1.0)


def test_concretization_function_error_refuses_tracers():
    to_int = _deprecated("concretization_function_error")(int)
    assert to_int(np.int32(4)) == 4
    with pytest.raises(modjax.errors.ConcretizationTypeError, match="`int` function"):
        modjax.jit(lambda x: to_int(x))(1.0)


def test_deprecated_names_point_to_their_new_homes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert core.find_top_trace is modjax.extend.core.find_top_trace
        assert core.JaxprTypeError is modjax.errors.JaxprTypeError
        assert core.DropVar is modjax.extend.core.DropVar
    with pytest.raises(NotImplementedError, match="jax.core.trace_ctx"):
        _deprecated("trace_ctx").trace  # noqa: B018
    with pytest.raises(AttributeError, match="no_such_name"):
        core.no_such_name  # noqa: B018
