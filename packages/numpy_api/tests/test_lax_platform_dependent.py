"""``lax.platform_dependent`` picks the CPU branch (or the default) eagerly, under jit, grad
and vmap, with JAX's jaxpr (``platform_index`` and a ``cond``) and errors."""

from __future__ import annotations

import numpy as np
import pytest

from modjax import lax
from modjax.autodiff import grad
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

X = np.arange(3.0, dtype=np.float32)


def f(x):
    return lax.platform_dependent(x, cpu=lambda x: x * 2, default=lambda x: x + 1)


def g(x):
    return lax.platform_dependent(x, tpu=lambda x: x * 2, default=lambda x: x + 1)


def test_the_cpu_branch_or_the_default_runs():
    for fn in (f, jit(f)):
        np.testing.assert_array_equal(fn(X), X * 2)
    for fn in (g, jit(g)):
        np.testing.assert_array_equal(fn(X), X + 1)
    # several platforms may share a branch; extra arguments are passed through
    h = lambda x, y: lax.platform_dependent(x, y, cpu=lambda a, b: a * b, cuda=lambda a, b: a)  # noqa: E731
    np.testing.assert_array_equal(jit(h)(X, 3.0), X * 3)


def test_jaxpr_is_a_platform_index_and_a_cond():
    text = str(make_jaxpr(f)(X))
    assert "b:i32[] = platform_index[platforms=(('cpu',), None)]" in text
    assert "cond[" in text and "] b a" in text
    shared = make_jaxpr(lambda x: lax.platform_dependent(x, cpu=abs, tpu=abs))(X)
    assert "platforms=(('cpu', 'tpu'),)" in str(shared)


def test_transformations_go_through_the_cond():
    np.testing.assert_array_equal(grad(lambda x: f(x).sum())(X), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(vmap(f)(X), X * 2)
    np.testing.assert_array_equal(jit(vmap(g))(X), X + 1)


def test_errors():
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm' for lax.platform_dependent"):
        lax.platform_dependent(X, gpu=lambda x: x)
    with pytest.raises(TypeError, match="the 'cpu' branch must be a callable"):
        lax.platform_dependent(X, cpu=1)
    with pytest.raises(TypeError, match="the 'default' branch must be a callable"):
        lax.platform_dependent(X, cpu=abs, default=1)
    message = r"not found for platform cpu"
    with pytest.raises(NotImplementedError, match=message):
        lax.platform_dependent(X, cuda=lambda x: x * 2, rocm=lambda x: x * 3)
    with pytest.raises(NotImplementedError, match=message):
        jit(lambda x: lax.platform_dependent(x, tpu=abs))(X)
