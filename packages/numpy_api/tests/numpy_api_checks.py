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


def offset_primitive(name: str):
    """Return a test primitive whose batching rule closes over an array.

    Batching a program that binds it gives the batched program a const (lane-ordered
    offsets added to the operand), which control-flow rules must hoist to operands.
    It has no impl and no lowering of its own: only its batched form runs.
    """
    from modjax.batching import batching_rules
    from modjax.numpy import add
    from modjax.tracecore.core import Primitive

    prim = Primitive(name)
    prim.def_abstract_eval(lambda x: x)

    def batching_rule(args, dims):
        (x,), (d,) = args, dims
        offsets = np.arange(np.prod(x.shape), dtype=np.float32).reshape(x.shape)
        return add(x, offsets), d

    batching_rules[prim] = batching_rule
    return prim
