"""``lax.approx_max_k``/``approx_min_k``: exact top-k on CPU (XLA's ApproxTopK fallback, as
JAX's), JAX's known answers (ties, NaN, signed zeros, ``aggregate_to_topk=False``), jaxpr
text, errors, and the JVP and vmap rules.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from modjax import lax
from modjax.autodiff import grad, jvp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr, parse_jaxpr

X = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8]], np.float32)


@given(hnp.arrays(np.float32, (3, 6), elements=st.integers(-4, 4).map(float)), st.integers(1, 6))
def test_exact_top_k(x, k):
    # which of tied elements comes first is XLA's choice (as in JAX: index order, except k=1)
    for fn, order in ((lax.approx_max_k, -1), (lax.approx_min_k, 1)):
        for values, indices in (fn(x, k), jit(fn, static_argnums=1)(x, k)):
            want = np.take_along_axis(x, np.argsort(order * x, axis=-1, kind="stable")[:, :k], -1)
            np.testing.assert_array_equal(np.asarray(values), want)
            indices = np.asarray(indices)
            np.testing.assert_array_equal(np.take_along_axis(x, indices, -1), want)
            assert all(len(set(row)) == k for row in indices.tolist())
            assert values.dtype == np.float32 and indices.dtype == np.int32


def test_known_answers_of_jax():
    values, indices = lax.approx_max_k(X, 3)
    np.testing.assert_array_equal(np.asarray(values), [[9, 6, 5], [8, 8, 8]])
    np.testing.assert_array_equal(np.asarray(indices), [[5, 7, 4], [3, 5, 7]])
    values, indices = lax.approx_max_k(X, 2, reduction_dimension=0)
    np.testing.assert_array_equal(
        np.asarray(indices), [[0, 1, 0, 1, 0, 0, 0, 1], [1, 0, 1, 0, 1, 1, 1, 0]]
    )
    xn = np.array([1.0, np.nan, 3.0, -np.inf, 2.0], np.float32)
    values, indices = lax.approx_max_k(xn, 2)
    assert np.isnan(values[0]) and list(np.asarray(indices)) == [1, 2]
    values, indices = lax.approx_min_k(xn, 2)
    assert list(np.asarray(values)) == [-np.inf, 1.0] and list(np.asarray(indices)) == [3, 0]
    assert list(np.asarray(lax.approx_max_k(np.array([-0.0, 0.0], np.float32), 1)[1])) == [1]
    assert list(np.asarray(lax.approx_min_k(np.array([0.0, -0.0], np.float32), 1)[1])) == [1]
    # not aggregated: XLA keeps all 8 here, sorted
    values, indices = lax.approx_max_k(X, 3, aggregate_to_topk=False)
    np.testing.assert_array_equal(np.asarray(indices)[0], [5, 7, 4, 2, 0, 6, 1, 3])
    assert isinstance(lax.approx_max_k(X, 1), list)
    assert list(np.asarray(lax.approx_max_k(np.zeros(6, np.float32), 3)[1])) == [0, 1, 2]
    assert list(np.asarray(lax.approx_max_k(np.zeros((3, 6), np.float32), 1)[1])) == [[5]] * 3


def test_jaxpr_text_is_jaxs_and_parses_back():
    text = str(
        make_jaxpr(lambda x: lax.approx_min_k(x, 3, recall_target=0.5, aggregate_to_topk=False))(X)
    )
    assert "b:f32[2,8] c:i32[2,8] = approx_top_k[" in text
    for line in (
        "aggregate_to_topk=False",
        "is_max_k=False",
        "k=3",
        "recall_target=0.5",
        "reduction_dimension=-1",
        "reduction_input_size_override=-1",
    ):
        assert line in text
    assert str(parse_jaxpr(text)) == text
    lowered = jit(lambda x: lax.approx_max_k(x, 3)).lower(X).as_text()
    assert "@ApproxTopK" in lowered and "is_fallback = true" in lowered


def test_errors():
    with pytest.raises(
        ValueError, match="k must be smaller than the size of reduction_dim 8, got 9"
    ):
        lax.approx_max_k(X, 9)
    with pytest.raises(ValueError, match="k must be positive, got 0"):
        lax.approx_max_k(X, 0)
    with pytest.raises(ValueError, match="operand must be a floating type"):
        lax.approx_max_k(X.astype(np.int32), 2)
    with pytest.raises(IndexError, match="reduction_dimension 2"):
        lax.approx_max_k(X, 2, reduction_dimension=2)
    with pytest.raises(ValueError, match="recall_target"):
        lax.approx_max_k(X, 2, recall_target=1.5)


def test_gradients_reach_the_chosen_elements():
    g = grad(lambda x: lax.approx_max_k(x, 3)[0].sum())(X)
    np.testing.assert_array_equal(
        np.asarray(g), [[0, 0, 0, 0, 1, 1, 0, 1], [0, 0, 0, 1, 0, 1, 0, 1]]
    )
    g = jit(grad(lambda x: (lax.approx_min_k(x, 2, reduction_dimension=0)[0] ** 2).sum()))(X)
    np.testing.assert_array_equal(np.asarray(g), 2 * X)
    _, (tangent, _) = jvp(lambda x: lax.approx_max_k(x, 2), (X,), (10 * X,))
    np.testing.assert_array_equal(np.asarray(tangent), [[90, 60], [80, 80]])


@pytest.mark.parametrize(("axis", "reduction_dimension"), [(0, -1), (1, 0), (2, 1), (0, 0)])
def test_vmap_matches_a_loop(axis, reduction_dimension):
    xs = np.stack([X, X[::-1] * 2, -X], axis=axis)
    fn = lambda x: lax.approx_max_k(x, 2, reduction_dimension=reduction_dimension)  # noqa: E731
    values, indices = vmap(fn, in_axes=axis)(xs)
    for i in range(3):
        v, j = fn(np.take(xs, i, axis=axis))
        np.testing.assert_array_equal(np.asarray(values[i]), np.asarray(v))
        np.testing.assert_array_equal(np.asarray(indices[i]), np.asarray(j))
