"""Comparison helpers shared by modjax.numpy's test modules."""

from __future__ import annotations

import numpy as np

from modjax.runtime import jit


def check(got, want, dtype=None, tol=1e-5):
    """Assert ``got`` equals numpy's ``want`` (close for inexact values), in ``dtype`` if given."""
    got, want = np.asarray(got), np.asarray(want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def both(fn, *args):
    """Return ``fn(*args)`` eagerly and under jit."""
    return fn(*args), jit(fn)(*args)
