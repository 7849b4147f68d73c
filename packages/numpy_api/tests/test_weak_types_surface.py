"""Weak types of jnp and jax.scipy results on weakly typed inputs, against JAX 0.10.2.

Each row was measured with JAX 0.10.2 on CPU: the dtype is float32 (int32 for the
integer row) and the weak type as listed.
"""

from __future__ import annotations

import pytest

import modjax.numpy as jnp
import modjax.scipy.special as sp
import modjax.scipy.stats as ss
from modjax.tracecore.core import to_aval

_W, _WV = jnp.asarray(2.0), jnp.full(3, 2.0)
CASES = [
    ("ones_like", lambda: jnp.ones_like(_W), True),
    ("zeros_like", lambda: jnp.zeros_like(_W), True),
    ("full_like", lambda: jnp.full_like(_W, 3), True),
    ("full_like vector", lambda: jnp.full_like(_WV, 3.0), True),
    ("empty_like", lambda: jnp.empty_like(_W), True),
    ("ones_like dtype", lambda: jnp.ones_like(_W, dtype=jnp.float32), False),
    ("zeros_like int", lambda: jnp.zeros_like(jnp.asarray(2)), True),
    ("ones_like shape", lambda: jnp.ones_like(_W, shape=(2,)), True),
    ("zeros_like Python float", lambda: jnp.zeros_like(2.0), True),
    ("ones_like strong", lambda: jnp.ones_like(jnp.ones(2)), False),
    ("norm.pdf", lambda: ss.norm.pdf(0.0), True),
    ("norm.logpdf", lambda: ss.norm.logpdf(0.0), True),
    ("norm.pdf loc scale", lambda: ss.norm.pdf(0.0, 1.0, 2.0), True),
    ("norm.pdf weak array", lambda: ss.norm.pdf(_W), True),
    ("norm.cdf", lambda: ss.norm.cdf(0.0), False),
    ("norm.sf", lambda: ss.norm.sf(0.0), False),
    ("norm.logcdf", lambda: ss.norm.logcdf(0.0), False),
    ("ndtr", lambda: sp.ndtr(0.5), False),
    ("log_ndtr", lambda: sp.log_ndtr(0.5), False),
    ("factorial", lambda: sp.factorial(0.5), True),
]


@pytest.mark.parametrize("name,f,weak", CASES, ids=[c[0] for c in CASES])
def test_weak_type_matches_jax(name, f, weak):
    assert to_aval(f()).weak_type is weak
