"""jax.typing."""

import typing

import numpy as np

import modjax.numpy as jnp


def test_typing_names_accept_arrays_and_dtypes():
    from modjax.typing import ArrayLike, DTypeLike

    assert isinstance(jnp.ones(2), ArrayLike) and isinstance(np.ones(2), ArrayLike)
    assert isinstance(1.0, ArrayLike) and not isinstance("x", ArrayLike)
    assert {str, np.dtype} <= set(typing.get_args(DTypeLike))
