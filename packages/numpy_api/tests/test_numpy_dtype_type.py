"""jnp.dtype works as JAX's (which is np.dtype): a constructor, an isinstance check, a type."""

import typing

import ml_dtypes
import numpy as np
import pytest

import modjax.numpy as jnp


@pytest.mark.parametrize(
    ("like", "expected"),
    [
        ("bfloat16", np.dtype(ml_dtypes.bfloat16)),
        ("float32", np.dtype(np.float32)),
        (jnp.int8, np.dtype(np.int8)),
        (np.complex64, np.dtype(np.complex64)),
        (None, np.dtype(np.float64)),  # as np.dtype(None) and JAX's
    ],
)
def test_calling_it_gives_numpy_dtypes(like, expected):
    got = jnp.dtype(like)
    assert type(got) is type(expected) and got == expected


def test_arrays_give_their_dtype():
    assert jnp.dtype(jnp.ones(2, jnp.bfloat16)) == np.dtype(ml_dtypes.bfloat16)
    assert jnp.dtype(np.ones(2, np.int16)) == np.dtype(np.int16)


def test_it_is_a_type_for_isinstance_and_unions():
    assert isinstance(np.dtype("f4"), jnp.dtype) and isinstance(jnp.ones(1).dtype, jnp.dtype)
    assert not isinstance(jnp.float32, jnp.dtype) and not isinstance("float32", jnp.dtype)
    assert issubclass(type(np.dtype("i4")), jnp.dtype) and not issubclass(int, jnp.dtype)
    union = int | jnp.dtype
    assert isinstance(np.dtype("f2"), union) and jnp.dtype in typing.get_args(union)
