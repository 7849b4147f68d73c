"""Regression tests for differences from JAX found by running the same jnp calls on both.

Every expected value, dtype, weak type and exception class here was observed from
JAX 0.10.2 (x64 off) on the same call.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax.numpy as jnp


def _check(x, values, dtype, weak):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(values))
    assert x.dtype == np.dtype(dtype)
    assert x.weak_type is weak


@pytest.mark.parametrize(
    "fn, weak",
    [
        # A weak number's truth value is a weak bool; bools and strong inputs give strong ones.
        (lambda: jnp.logical_and(1, 0), True),
        (lambda: jnp.logical_or(1.0, 0), True),
        (lambda: jnp.logical_xor(jnp.array(1), 0), True),
        (lambda: jnp.logical_not(1), True),
        (lambda: jnp.logical_not(jnp.array(2.0)), True),
        (lambda: jnp.logical_and(jnp.array(True), jnp.array(0)), True),
        (lambda: jnp.logical_and(jnp.array(1.0), True), True),
        (lambda: jnp.logical_not(True), False),
        (lambda: jnp.logical_and(True, True), False),
        (lambda: jnp.logical_and(jnp.array([1, 0]), 2.0), False),
        (lambda: jnp.logical_not(jnp.array([1, 0]) + 1.0), False),
        (lambda: jnp.logical_and(jnp.array(1, jnp.int8), jnp.array(0, jnp.int8)), False),
    ],
)
def test_logical_ops_weak_type(fn, weak):
    out = fn()
    assert out.dtype == np.bool_
    assert out.weak_type is weak


def test_bincount_accepts_bool():
    _check(jnp.bincount(jnp.array([True, False])), [1, 1], "int32", False)
    _check(jnp.bincount(jnp.array([True, True]), length=3), [0, 2, 0], "int32", False)
    w = jnp.bincount(jnp.array([True, True]), weights=jnp.array([1.0, 2.0]))
    _check(w, [0.0, 3.0], "float32", False)


def test_einsum_path_default_is_auto():
    ones = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]
    assert jnp.einsum_path("ij,jk,kl->il", *ones)[0] == [(0, 1), (0, 1)]
    ones = [np.ones(3), np.ones((3, 4)), np.ones((4, 5))]
    assert jnp.einsum_path("i,ij,jk->k", *ones)[0] == [(0, 1), (0, 1)]


def test_grid_slices_take_zero_start_and_step_as_absent():
    _check(jnp.mgrid[0.0:3], [0, 1, 2], "int32", False)
    _check(jnp.mgrid[0.0:3:0.0], [0, 1, 2], "int32", False)
    _check(jnp.mgrid[0:1:0j], [0], "int32", False)
    _check(jnp.r_[0.0:3], [0, 1, 2], "int32", False)
    _check(jnp.mgrid[0.5:3], [0.5, 1.5, 2.5], "float32", False)
    _check(jnp.mgrid[0:3.0], [0.0, 1.0, 2.0], "float32", False)


def test_vsplit_splits_1d_and_split_errors_are_index_errors():
    parts = jnp.vsplit(jnp.arange(6), [2])
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3, 4, 5]]
    for fn in (
        lambda: jnp.vsplit(jnp.array(1), 1),
        lambda: jnp.hsplit(jnp.array(1), 1),
        lambda: jnp.dsplit(jnp.ones((2, 4)), 2),
    ):
        with pytest.raises(IndexError):
            fn()


def test_meshgrid_rejects_copy_false():
    with pytest.raises(ValueError, match="copy=True"):
        jnp.meshgrid(jnp.arange(2), copy=False)


def test_where_with_one_of_x_y_is_a_type_error():
    with pytest.raises(TypeError):
        jnp.where(jnp.array([0, 1]) > 0, 1)


def test_arange_steps_as_jax():
    # Narrow floats are stepped in float32 and then rounded.
    x = jnp.arange(0.0, 1.0, 0.3, dtype=jnp.bfloat16)
    assert np.asarray(x).astype(np.float32).tolist() == [0.0, 0.30078125, 0.6015625, 0.8984375]
    # Integer dtypes truncate fractional bounds and step.
    _check(jnp.arange(3, -2, -0.3, dtype=jnp.int32), [3] * 17, "int32", False)
    _check(jnp.arange(0.5, 3, dtype=jnp.int32), [0, 1, 2], "int32", False)
    with pytest.raises(TypeError):
        jnp.arange(5, dtype=bool)
    with pytest.raises(ZeroDivisionError):
        jnp.arange(0, 5, 0)
    with pytest.raises(ValueError):
        jnp.arange(0, 3, 1j)


def test_unravel_index_keeps_weak_type():
    for c in jnp.unravel_index(5, (3, 4)):
        _check(c, 1, "int32", True)
    for c in jnp.unravel_index(jnp.array([5]), (3, 4)):
        _check(c, [1], "int32", False)


def test_not_implemented_orders_and_bool_ix():
    with pytest.raises(NotImplementedError):
        jnp.ravel(jnp.arange(6), order="K")
    with pytest.raises(NotImplementedError):
        jnp.arange(6).flatten(order="K")
    with pytest.raises(NotImplementedError):
        jnp.ix_(jnp.array([True, False, True]))


def test_shape_ndim_size_of_lists_warn_and_size_takes_axis_tuples():
    with pytest.warns(DeprecationWarning, match="future JAX release"):
        assert jnp.shape([1, 2]) == (2,)
    with pytest.warns(DeprecationWarning):
        assert jnp.ndim([[1, 2]]) == 2
    with pytest.warns(DeprecationWarning):
        assert jnp.size([1, 2], 0) == 2
    x = jnp.ones((2, 3))
    assert jnp.size(x, axis=(0, 1)) == 6
    assert jnp.size(x, axis=()) == 1
    assert jnp.size(x, -1) == 3
    with pytest.raises(ValueError):
        jnp.size(x, (0, 0))


def test_empty_boolean_mask_selects_nothing():
    _check(jnp.arange(6)[jnp.array([], bool)], np.zeros(0, np.int32), "int32", False)
    assert jnp.arange(6).reshape(2, 3)[:, jnp.zeros((0,), bool)].shape == (2, 0)
    assert jnp.arange(6).reshape(2, 3)[jnp.zeros((0, 3), bool)].shape == (0,)
    _check(jnp.arange(6).at[jnp.array([], bool)].set(1), np.arange(6), "int32", False)
    with pytest.raises(IndexError):
        jnp.arange(6)[jnp.zeros(3, bool)]


@pytest.mark.parametrize(
    "fn",
    [
        lambda: jnp.clip(jnp.array([1 + 1j]), 0, 1),
        lambda: jnp.clip(jnp.array([1.0]), 0j, 1),
        lambda: jnp.clip(jnp.array([1.0]), None, 1j),
        lambda: jnp.clip(jnp.array([1 + 0j])),
        lambda: jnp.array([1 + 1j]).clip(0, 1),
    ],
)
def test_clip_refuses_complex(fn):
    with pytest.raises(ValueError, match="complex"):
        fn()


def test_split_takes_an_empty_float_index_array():
    # JAX 0.10.2: one piece, the whole array (lineax splits at np.cumsum([])[:-1]).
    (piece,) = jnp.split(jnp.arange(4.0), np.array([], dtype=np.float64))
    np.testing.assert_array_equal(piece, [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        jnp.split(jnp.arange(4.0), np.array([1.0]))
