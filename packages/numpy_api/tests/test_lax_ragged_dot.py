"""``lax.ragged_dot`` and ``ragged_dot_general`` in their three modes, against loops in
numpy, eagerly and under jit, with JAX's errors; JVP, transposes (every mode; JAX has the
non-contracting one only) and vmap over any operands' axes (JAX: all at axis 0 only).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff import grad, jvp
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr, parse_jaxpr

RNG = np.random.RandomState(0)
LHS = RNG.standard_normal((5, 4)).astype(np.float32)
RHS = RNG.standard_normal((3, 4, 2)).astype(np.float32)
GS = np.array([2, 0, 3], np.int32)
R = lax.RaggedDotDimensionNumbers


def _groups(sizes, n):
    """The group of each of ``n`` positions (-1 past the last group)."""
    ends = np.cumsum(sizes)
    return np.array(
        [int(np.searchsorted(ends, i, side="right")) if i < ends[-1] else -1 for i in range(n)]
    )


def ragged_dot_reference(lhs, rhs, sizes):
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.float64)
    for i, g in enumerate(_groups(sizes, lhs.shape[0])):
        if g >= 0:
            out[i] = lhs[i].astype(np.float64) @ rhs[g]
    return out


def both(fn, *args):
    return fn(*args), jit(fn)(*args)


@given(st.lists(st.integers(0, 4), min_size=3, max_size=3))
def test_ragged_dot_multiplies_each_row_group_by_its_matrix(sizes):
    gs = np.array(sizes, np.int32)  # sums past 5 cut the last groups; under 5 leave zero rows
    for out in both(lax.ragged_dot, LHS, RHS, gs):
        assert out.shape == (5, 2) and out.dtype == np.float32
        np.testing.assert_allclose(
            np.asarray(out), ragged_dot_reference(LHS, RHS, gs), rtol=1e-5, atol=1e-6
        )


def test_batched_group_sizes_with_batch_dimensions():
    # lhs [b, m, k], rhs [g, b, k, n], group_sizes [b, g]: each batch its own groups
    lhs = RNG.standard_normal((2, 5, 4)).astype(np.float32)
    rhs = RNG.standard_normal((3, 2, 4, 2)).astype(np.float32)
    gs = np.array([[1, 2, 2], [5, 0, 0]], np.int32)
    numbers = R((((2,), (2,)), ((0,), (1,))), (1,), (0,))
    for out in both(lambda a, b, c: lax.ragged_dot_general(a, b, c, numbers), lhs, rhs, gs):
        want = [ragged_dot_reference(lhs[i], rhs[:, i], gs[i]) for i in range(2)]
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-6)


def test_contracting_mode_gives_one_product_per_group():
    rhs = RNG.standard_normal((4, 2)).astype(np.float32)
    gs = np.array([1, 3], np.int32)
    numbers = R((((1,), (0,)), ((), ())), (1,), ())
    out = lax.ragged_dot_general(LHS, rhs, gs, numbers)
    assert out.shape == (2, 5, 2)
    np.testing.assert_allclose(np.asarray(out[0]), LHS[:, :1] @ rhs[:1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out[1]), LHS[:, 1:] @ rhs[1:], rtol=1e-5, atol=1e-6)


def test_batch_mode_is_dot_general():
    lhs = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    rhs = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    numbers = R((((2,), (1,)), ((0,), (0,))), (0,), ())
    out = lax.ragged_dot_general(lhs, rhs, np.array([1, 2], np.int32), numbers)
    np.testing.assert_allclose(np.asarray(out), lhs @ rhs, rtol=1e-5)


def test_dimension_numbers_are_hashable_tuples_and_print_as_jax():
    numbers = R([[[1], [1]], [[], []]], [0], [0])
    assert numbers == R((((1,), (1,)), ((), ())), (0,), (0,))
    assert hash(numbers) == hash(R((((1,), (1,)), ((), ())), (0,), (0,)))
    assert repr(numbers) == (
        "RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())), "
        "lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))"
    )
    text = str(make_jaxpr(lax.ragged_dot)(LHS, RHS, GS))
    assert f"ragged_dot_dimension_numbers={numbers!r}" in text
    assert str(parse_jaxpr(text)) == text


def test_errors_name_the_problem_as_jax_does():
    cases = [
        ((LHS, RHS, GS.astype(np.float32)), "group_sizes.dtype is subtype of np.integer"),
        ((LHS, RHS, GS[:2]), r"expected rhs group dimension size to be 2, got 3"),
        ((LHS, RHS, np.int32(2)), "expected rank of group_sizes to be >=1"),
    ]
    for args, message in cases:
        with pytest.raises(TypeError, match=message):
            lax.ragged_dot(*args)
    with pytest.raises(TypeError, match="exactly one rhs group dimension"):
        lax.ragged_dot_general(LHS, RHS[0], GS, R((((1,), (0,)), ((), ())), (0,), ()))
    with pytest.raises(TypeError, match="zero group dimensions in the rhs"):
        lax.ragged_dot_general(LHS, RHS[0], GS[:2], R((((1,), (0,)), ((), ())), (1,), (1,)))
    with pytest.raises(TypeError, match=r"expected group_sizes to have shape \(2, 3\)"):
        lax.ragged_dot_general(
            np.ones((2, 5, 4), np.float32),
            np.ones((3, 2, 4, 2), np.float32),
            np.ones((3, 3), np.int32),
            R((((2,), (2,)), ((0,), (1,))), (1,), (0,)),
        )
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(LHS, RHS, GS, group_offset=np.array([0], np.int32))


def test_precision_and_preferred_element_type():
    lhs, rhs = LHS.astype(np.float16), RHS.astype(np.float16)
    out = lax.ragged_dot(lhs, rhs, GS, preferred_element_type=np.float32)
    assert out.dtype == np.float32
    out = lax.ragged_dot(LHS, RHS, GS, precision="F16_F16_F16")
    want = ragged_dot_reference(LHS.astype(np.float16), RHS.astype(np.float16), GS)
    np.testing.assert_allclose(np.asarray(out), want, rtol=3e-3, atol=3e-3)
    assert "precision=F16_F16_F16" in str(
        make_jaxpr(lambda a: lax.ragged_dot(a, RHS, GS, precision="F16_F16_F16"))(LHS)
    )


def test_derivatives_of_the_noncontracting_mode():
    f = lambda a, b: lax.ragged_dot(a, b, GS)  # noqa: E731
    check_grads(f, (LHS, RHS), order=2, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)
    ga, gb = jit(grad(lambda a, b: (f(a, b) ** 2).sum(), argnums=(0, 1)))(LHS, RHS)
    assert ga.shape == LHS.shape and gb.shape == RHS.shape
    assert np.all(np.asarray(gb)[1] == 0)  # the empty group gets no gradient
    _, tangent = jvp(f, (LHS, RHS), (LHS, RHS))
    np.testing.assert_allclose(
        np.asarray(tangent), 2 * ragged_dot_reference(LHS, RHS, GS), rtol=1e-5, atol=1e-5
    )
    text = str(make_jaxpr(grad(lambda a, b: f(a, b).sum(), argnums=(0, 1)))(LHS, RHS))
    assert text.count("ragged_dot_general[") == 3  # as JAX: the transposes are ragged dots


def test_derivatives_of_the_contracting_and_batch_modes():
    rhs = RNG.standard_normal((4, 2)).astype(np.float32)
    contracting = R((((1,), (0,)), ((), ())), (1,), ())
    f = lambda a, b: lax.ragged_dot_general(a, b, np.array([1, 3], np.int32), contracting)  # noqa: E731
    check_grads(f, (LHS, rhs), order=1, modes=("rev",), atol=2e-2, rtol=2e-2)
    batch = R((((2,), (1,)), ((0,), (0,))), (0,), ())
    g = lambda a, b: lax.ragged_dot_general(a, b, np.array([1, 2], np.int32), batch)  # noqa: E731
    args = (
        RNG.standard_normal((3, 2, 4)).astype(np.float32),
        RNG.standard_normal((3, 4, 5)).astype(np.float32),
    )
    check_grads(g, args, order=1, modes=("rev",), atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize(
    "in_axes",
    [(0, 0, 0), (0, None, None), (None, 1, None), (1, 0, None), (None, None, 0), (1, None, 0)],
)
def test_vmap_over_any_operands_matches_a_loop(in_axes):
    size = 2
    lhs = RNG.standard_normal((size, 5, 4)).astype(np.float32)
    rhs = RNG.standard_normal((3, size, 4, 2)).astype(np.float32)
    gs = np.array([[2, 0, 3], [1, 1, 1]], np.int32)
    args = [
        np.moveaxis(lhs, 0, in_axes[0]) if in_axes[0] is not None else lhs[0],
        np.moveaxis(rhs, 1, in_axes[1]) if in_axes[1] is not None else rhs[:, 0],
        gs if in_axes[2] is not None else gs[0],
    ]
    out = vmap(lax.ragged_dot, in_axes=in_axes)(*args)
    for i in range(size):
        one = [
            a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes, strict=True)
        ]
        np.testing.assert_allclose(
            np.asarray(out[i]), ragged_dot_reference(*one), rtol=1e-5, atol=1e-5
        )


def test_vmap_of_the_contracting_mode_keeps_the_group_dimension_first():
    rhs = RNG.standard_normal((4, 2)).astype(np.float32)
    numbers = R((((1,), (0,)), ((), ())), (1,), ())
    lhs = np.stack([LHS, 2 * LHS])
    gs = np.array([1, 3], np.int32)
    out = vmap(lambda a: lax.ragged_dot_general(a, rhs, gs, numbers))(lhs)
    assert out.shape == (2, 2, 5, 2)
    np.testing.assert_allclose(
        np.asarray(out[1]), 2 * np.asarray(lax.ragged_dot_general(LHS, rhs, gs, numbers)), rtol=1e-5
    )
