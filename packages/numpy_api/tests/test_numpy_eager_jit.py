"""Eager calls of composite modjax.numpy functions on device Arrays (``_eager_jit``).

Such a call runs one compiled program per signature; a signature whose trace needs
values falls back to op by op. Both paths must give what the plain function gives.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.numpy._eager_jit import compiled_on_arrays
from modjax.runtime import Array, compile_cache

X = np.array([[0.5, -1.0, 2.0], [0.0, 3.0, -0.5]], np.float32)


def test_a_repeated_call_compiles_nothing_new():
    x = jnp.asarray(X)
    first = jnp.interp(x, jnp.asarray([-1.0, 0.0, 1.0]), jnp.asarray([0.0, 2.0, 1.0]))
    stats = dict(compile_cache.stats)
    again = jnp.interp(x, jnp.asarray([-1.0, 0.0, 1.0]), jnp.asarray([0.0, 2.0, 1.0]))
    assert compile_cache.stats == stats
    np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
    expected = np.interp(X, [-1.0, 0.0, 1.0], [0.0, 2.0, 1.0])
    np.testing.assert_allclose(np.asarray(first), expected, rtol=1e-6)


def test_signatures_that_need_values_run_op_by_op():
    x = jnp.asarray(X)
    for _ in range(2):  # the second call takes the remembered fallback
        rows, cols = jnp.where(x > 0)
        np.testing.assert_array_equal(np.asarray(rows), np.nonzero(X > 0)[0])
        np.testing.assert_array_equal(np.asarray(cols), np.nonzero(X > 0)[1])
        np.testing.assert_array_equal(np.asarray(jnp.unique(x)), np.unique(X))
        counts = jnp.bincount(jnp.asarray(np.array([0, 2, 2], np.int32)))
        np.testing.assert_array_equal(np.asarray(counts), [1, 0, 2])
    # with size= the same functions trace
    padded = jnp.unique(x, size=8, fill_value=-9.0)
    assert padded.shape == (8,) and float(padded[-1]) == -9.0


def test_keywords_statics_and_positional_only_parameters():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, max=1.0)), np.clip(X, None, 1.0))
    np.testing.assert_array_equal(np.asarray(jnp.where(x > 0, x, 0.0)), np.where(X > 0, X, 0.0))
    out = jnp.pad(x, 1, mode="constant", constant_values=7.0)
    np.testing.assert_array_equal(np.asarray(out), np.pad(X, 1, constant_values=7.0))
    with pytest.raises(TypeError):
        jnp.where(x > 0, x, 0.0, 1)  # too many positional arguments, as the plain function
    with pytest.raises(TypeError):
        jnp.roll(x, 1, axis=0, bogus=True)


def test_weak_types_and_results_match_the_plain_function():
    weak = jnp.asarray(2.0)  # weakly typed float32
    strong = jnp.ones(3, jnp.float16)
    for fn, args in ((jnp.roll, (weak, 1)), (jnp.clip, (weak, 0, 1)), (jnp.clip, (strong, 0, 1))):
        got, want = fn(*args), fn.__wrapped__(*args)  # compiled, and op by op
        assert isinstance(got, Array) and (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert jnp.clip(weak, 0, 1).weak_type


def test_functions_with_star_args_are_refused():
    with pytest.raises(TypeError, match=r"\*args"):
        compiled_on_arrays(lambda *xs: xs)


def test_an_array_and_a_python_number_give_the_plain_functions_results():
    # ``x > 0`` and ``x * 2`` run the ufunc's compiled program with the number as a
    # weakly typed operand: a new number compiles nothing, and the result is the
    # plain (op by op) function's, dtype and weak type included.
    x, i = jnp.asarray(X), jnp.asarray(np.arange(6, dtype=np.int32))
    c = jnp.asarray(np.array([1 + 2j, 2 - 1j], np.complex64))
    cases = [
        (jnp.greater, (x, 0)), (jnp.greater, (0.5, x)), (jnp.multiply._func, (x, 2.5)),
        (jnp.subtract._func, (3, i)), (jnp.divide, (i, 2)), (jnp.add._func, (i, 1.5)),
        (jnp.less, (c, 1.0)), (jnp.multiply._func, (c, 2)),
        (jnp.add._func, (jnp.ones(3, jnp.int8), 1000)),  # wraps to -23, as in JAX
    ]  # fmt: skip
    for fn, args in cases:
        got, want = fn(*args), fn.__wrapped__(*args)
        assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), (fn, args)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    x * 2.0, 7 - x
    stats = dict(compile_cache.stats)
    np.testing.assert_array_equal(np.asarray(x * 3.0), X * 3)
    np.testing.assert_array_equal(np.asarray(5 - x), 5 - X)
    assert compile_cache.stats == stats
    with pytest.raises(OverflowError):
        i + 2**31  # the plain function's check, before any program runs


def test_an_argument_given_twice_raises_as_the_plain_function():
    # positionally and by keyword: JAX's TypeError, never one of the two values silently
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match="multiple values"):
        jnp.sum(x, axis=0, a=x * 2)
    with pytest.raises(TypeError, match="multiple values"):
        jnp.roll(x, 1, shift=2)
    with pytest.raises(TypeError):
        jnp.sum(x, axis=0, bogus=1)
    np.testing.assert_array_equal(np.asarray(jnp.sum(x, 0, keepdims=True)), X.sum(0, keepdims=True))
    np.testing.assert_array_equal(np.asarray(jnp.median(x, axis=None)), np.median(X))
