"""Regression tests from a differential sweep of jax.numpy's core (reductions, cumulative
sums, unique, products, manipulation) against JAX 0.10.2.

Every expected value, dtype and exception class here was observed from JAX 0.10.2
(x64 off) on the same call.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.runtime import jit

NAN = float("nan")
X = [[3.0, 1.0, NAN, 4.0], [2.0, 7.0, 1.0, 8.0], [5.0, 5.0, 5.0, 5.0]]
W = [[1.0, 2.0, 3.0, 0.5], [0.0, 1.0, 2.0, 3.0], [1.0, -1.0, 1.0, 1.0]]
X_CLEAN = [[3.0, 1.0, 0.0, 4.0], [2.0, 7.0, 1.0, 8.0], [5.0, 6.0, 5.0, 4.0]]

# (function, NaN data and a negative weight?, axis, keepdims, JAX's shape, JAX's values):
# the NaN rows take q = [0, 0.3, 1] with weights W, the clean rows q = 0.4 with |W|.
WEIGHTED = [
    ("quantile", True, None, False, (3,), [NAN, NAN, NAN]),
    ("quantile", False, None, False, (), 1.0),
    ("quantile", True, None, True, (3, 1, 1), [[[NAN]], [[NAN]], [[NAN]]]),
    ("quantile", False, None, True, (1, 1), [[1.0]]),
    ("quantile", True, 1, False, (3, 3), [[NAN, 1.0, NAN], [NAN, 1.0, NAN], [NAN, 8.0, NAN]]),
    ("quantile", False, 1, False, (3,), [0.0, 7.0, 5.0]),
    (
        "quantile",
        True,
        1,
        True,
        (3, 3, 1),
        [[[NAN], [1.0], [NAN]], [[NAN], [1.0], [NAN]], [[NAN], [8.0], [NAN]]],
    ),
    ("quantile", False, 1, True, (3, 1), [[0.0], [7.0], [5.0]]),
    (
        "quantile",
        True,
        0,
        False,
        (3, 4),
        [[2.0, NAN, NAN, 4.0], [3.0, NAN, NAN, 5.0], [5.0, NAN, NAN, 8.0]],
    ),
    ("quantile", False, 0, False, (4,), [3.0, 1.0, 0.0, 8.0]),
    (
        "quantile",
        True,
        0,
        True,
        (3, 1, 4),
        [[[2.0, NAN, NAN, 4.0]], [[3.0, NAN, NAN, 5.0]], [[5.0, NAN, NAN, 8.0]]],
    ),
    ("quantile", False, 0, True, (1, 4), [[3.0, 1.0, 0.0, 8.0]]),
    ("quantile", True, (0, 1), False, (3,), [NAN, NAN, NAN]),
    ("quantile", False, (0, 1), False, (), 1.0),
    ("quantile", True, (0, 1), True, (3, 1, 1), [[[NAN]], [[NAN]], [[NAN]]]),
    ("quantile", False, (0, 1), True, (1, 1), [[1.0]]),
    ("nanquantile", True, None, False, (3,), [NAN, NAN, NAN]),
    ("nanquantile", False, None, False, (), 1.0),
    ("nanquantile", True, None, True, (3, 1, 1), [[[NAN]], [[NAN]], [[NAN]]]),
    ("nanquantile", False, None, True, (1, 1), [[1.0]]),
    ("nanquantile", True, 1, False, (3, 3), [[1.0, 1.0, NAN], [1.0, 1.0, NAN], [4.0, 8.0, NAN]]),
    ("nanquantile", False, 1, False, (3,), [0.0, 7.0, 5.0]),
    (
        "nanquantile",
        True,
        1,
        True,
        (3, 3, 1),
        [[[1.0], [1.0], [NAN]], [[1.0], [1.0], [NAN]], [[4.0], [8.0], [NAN]]],
    ),
    ("nanquantile", False, 1, True, (3, 1), [[0.0], [7.0], [5.0]]),
    (
        "nanquantile",
        True,
        0,
        False,
        (3, 4),
        [[2.0, NAN, 1.0, 4.0], [3.0, NAN, 1.0, 5.0], [5.0, NAN, 5.0, 8.0]],
    ),
    ("nanquantile", False, 0, False, (4,), [3.0, 1.0, 0.0, 8.0]),
    (
        "nanquantile",
        True,
        0,
        True,
        (3, 1, 4),
        [[[2.0, NAN, 1.0, 4.0]], [[3.0, NAN, 1.0, 5.0]], [[5.0, NAN, 5.0, 8.0]]],
    ),
    ("nanquantile", False, 0, True, (1, 4), [[3.0, 1.0, 0.0, 8.0]]),
    ("nanquantile", True, (0, 1), False, (3,), [NAN, NAN, NAN]),
    ("nanquantile", False, (0, 1), False, (), 1.0),
    ("nanquantile", True, (0, 1), True, (3, 1, 1), [[[NAN]], [[NAN]], [[NAN]]]),
    ("nanquantile", False, (0, 1), True, (1, 1), [[1.0]]),
]


@pytest.mark.parametrize(("name", "with_nan", "axis", "keepdims", "shape", "values"), WEIGHTED)
def test_weighted_inverted_cdf_quantiles_match_jax(name, with_nan, axis, keepdims, shape, values):
    f = getattr(jnp, name)
    if with_nan:
        out = f(
            jnp.asarray(X),
            jnp.asarray([0.0, 0.3, 1.0]),
            axis=axis,
            keepdims=keepdims,
            weights=jnp.asarray(W),
            method="inverted_cdf",
        )
    else:
        out = f(
            jnp.asarray(X_CLEAN),
            0.4,
            axis=axis,
            keepdims=keepdims,
            weights=jnp.abs(jnp.asarray(W)),
            method="inverted_cdf",
        )
    assert out.dtype == np.float32 and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), np.asarray(values, np.float32))


def test_weighted_quantile_reduced_axis_weights_percentile_and_jit():
    out = jnp.quantile(
        jnp.asarray(X_CLEAN),
        jnp.asarray([0.2, 0.7]),
        axis=1,
        weights=jnp.asarray([1.0, 2.0, 3.0, 4.0]),
        method="inverted_cdf",
    )
    np.testing.assert_array_equal(np.asarray(out), [[0.0, 1.0, 4.0], [4.0, 8.0, 5.0]])
    # Integer data and weights promote to float32, as in JAX.
    out = jnp.percentile(
        jnp.asarray([3, 1, 2, 9]), 50, weights=jnp.asarray([1, 2, 3, 4]), method="inverted_cdf"
    )
    assert out.dtype == np.float32 and float(out) == 2.0
    f = jit(lambda a, w: jnp.nanpercentile(a, 40.0, axis=1, weights=w, method="inverted_cdf"))
    np.testing.assert_array_equal(
        np.asarray(f(jnp.asarray(X_CLEAN), jnp.abs(jnp.asarray(W)))), [0.0, 7.0, 5.0]
    )


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"weights": np.ones(4), "method": "inverted_cdf"}, ValueError),  # axis None: full shape
        ({"axis": 1, "weights": np.ones(3), "method": "inverted_cdf"}, ValueError),
        ({"weights": np.ones((3, 4), np.complex64), "method": "inverted_cdf"}, ValueError),
        ({"weights": np.ones((3, 4))}, NotImplementedError),  # only inverted_cdf is weighted
        ({"weights": np.ones((3, 4)), "method": "hazen"}, ValueError),
    ],
)
def test_weighted_quantile_errors_match_jax(kwargs, error):
    with pytest.raises(error):
        jnp.quantile(jnp.asarray(X), 0.5, **kwargs)


def test_array_api_unique_functions_keep_nans_distinct():
    x = jnp.asarray([3.0, NAN, 1.0, NAN, 1.0])
    values, indices, inverse, counts = jnp.unique_all(x)
    np.testing.assert_array_equal(np.asarray(values), [1.0, 3.0, NAN, NAN])
    np.testing.assert_array_equal(np.asarray(indices), [2, 0, 1, 3])
    np.testing.assert_array_equal(np.asarray(inverse), [1, 2, 0, 3, 0])
    np.testing.assert_array_equal(np.asarray(counts), [2, 1, 1, 1])
    np.testing.assert_array_equal(np.asarray(jnp.unique_values(x)), [1.0, 3.0, NAN, NAN])
    np.testing.assert_array_equal(np.asarray(jnp.unique_counts(x).counts), [2, 1, 1, 1])
    np.testing.assert_array_equal(
        np.asarray(jnp.unique_inverse(x).inverse_indices), [1, 2, 0, 3, 0]
    )
    # jnp.unique itself still merges NaNs by default.
    assert jnp.unique(x).shape == (3,)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "float32"])
def test_cumulative_with_bool_dtype_gives_bool(name, dtype):
    a = jnp.asarray([[-1, 1, 0], [2, 0, -3]]).astype(dtype)
    out = getattr(jnp, name)(a, axis=1, dtype=bool)
    assert out.dtype == np.bool_
    # Each element counts as its truth, so -1 and 1 do not cancel.
    expected = {"cumsum": [[1, 1, 1], [1, 1, 1]], "cumprod": [[1, 1, 0], [1, 0, 0]]}
    np.testing.assert_array_equal(np.asarray(out), expected[name.replace("nan", "")])


@pytest.mark.parametrize(
    ("dtype", "sum_dtype", "prod_dtype"),
    [
        ("bool", "int32", "int32"),
        ("int8", "int32", "int8"),
        ("uint8", "uint32", "uint8"),
        ("float16", "float16", "float16"),
    ],
)
def test_cumulative_sum_widens_but_cumulative_prod_keeps_small_ints(dtype, sum_dtype, prod_dtype):
    a = jnp.asarray([[1, 2, 0], [2, 1, 3]]).astype(dtype)
    assert jnp.cumulative_sum(a, axis=1).dtype == np.dtype(sum_dtype)
    out = jnp.cumulative_prod(a, axis=1, include_initial=True)
    assert out.dtype == np.dtype(prod_dtype) and out.shape == (2, 4)
    assert jnp.cumulative_prod(a, axis=1, dtype=bool).dtype == np.bool_


def test_tensordot_negative_int_axes_is_an_outer_product():
    a, b = jnp.arange(6.0).reshape(2, 3), jnp.arange(12.0).reshape(3, 4)
    out = jnp.tensordot(a, b, -1)
    assert out.shape == (2, 3, 3, 4)
    np.testing.assert_array_equal(np.asarray(out), np.multiply.outer(np.asarray(a), np.asarray(b)))
    with pytest.raises(TypeError):
        jnp.tensordot(a, b, 3)


def test_moveaxis_repeated_axis_is_a_type_error():
    with pytest.raises(TypeError):
        jnp.moveaxis(jnp.ones((2, 3)), (0, 0), (1, 0))


@pytest.mark.parametrize(
    ("a1", "a2", "expected"),
    [
        ([1.0, 2.0, 3.0], [], [0.0, 0.0, 0.0]),
        ([], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]),
        ([], [], [0.0]),
        ([5.0], [], [0.0]),
    ],
)
def test_polymul_treats_an_empty_polynomial_as_zero(a1, a2, expected):
    out = jnp.polymul(np.asarray(a1, np.float32), np.asarray(a2, np.float32))
    np.testing.assert_array_equal(np.asarray(out), expected)
    out = jnp.polymul(
        np.asarray(a1, np.float32), np.asarray(a2, np.float32), trim_leading_zeros=True
    )
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize(
    ("u", "v", "quotient", "remainder"),
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0], []),
        ([1.0, 2.0, 3.0], [1.0, 1.0], [1.0, 1.0], [2.0]),
        ([0.0, 0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [0.0, 0.0], [1.0, 2.0]),
    ],
)
def test_polydiv_trim_leading_zeros_trims_the_remainder(u, v, quotient, remainder):
    q, r = jnp.polydiv(
        np.asarray(u, np.float32), np.asarray(v, np.float32), trim_leading_zeros=True
    )
    np.testing.assert_array_equal(np.asarray(q), quotient)
    np.testing.assert_array_equal(np.asarray(r), remainder)
    # Untrimmed, the remainder keeps u's length.
    _, r = jnp.polydiv(np.asarray(u, np.float32), np.asarray(v, np.float32))
    assert r.shape == (len(u),)
