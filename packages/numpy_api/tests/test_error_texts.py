"""Error texts that JAX 0.10.2 users see, spelled as JAX spells them (recorded from JAX)."""

from __future__ import annotations

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import lax

X, M = np.ones(3, np.float32), np.ones((2, 3), np.float32)

CASES = [
    (
        lambda: jnp.asarray(X).reshape(4),
        TypeError,
        "cannot reshape array of shape (3,) (size 3) into shape 4 (size 4)",
    ),
    (
        lambda: jnp.pad(X, ((1, 1), (1, 1))),
        ValueError,
        "jnp.pad: pad_width with nd=1 has unsupported shape (2, 2). Valid shapes are (1, 2), "
        "(1, 2), (2,), (1,), or ().",
    ),
    (
        lambda: lax.add(X, M),
        TypeError,
        "add: arrays must have the same number of dimensions, got {1, 2}",
    ),
    (
        lambda: lax.reshape(M, (6,), dimensions=(0,)),
        TypeError,
        "reshape dimensions must be a permutation of operand dimensions, got dimensions (0,) "
        "for shape (2, 3).",
    ),
    (
        lambda: lax.pad(X, 0.0, [(1, 1)]),
        ValueError,
        "not enough values to unpack (expected 3, got 2)",
    ),
    (
        lambda: lax.scan(lambda c, v: (c, v), 0.0, (X, 3.0)),
        ValueError,
        "scan got value with no leading axis to scan over: 3.0.",
    ),
    (
        lambda: lax.scan(lambda c, v: c, 0.0, X),
        TypeError,
        "scan body output must be a pair, got ~float32[].",
    ),
    (
        lambda: jnp.einsum("ij,jk->ik", M, M),
        ValueError,
        "Size of label 'j' for operand 1 (3) does not match previous terms (2).",
    ),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_message_is_jaxs(case):
    fn, kind, message = CASES[case]
    with pytest.raises(kind) as info:
        fn()
    assert str(info.value).splitlines()[0] == message


def test_pad_width_of_shape_nd_1_is_refused_as_in_jax():
    with pytest.raises(ValueError, match=r"unsupported shape \(2, 1\)"):
        jnp.pad(M, [[1], [2]])
