"""Weak types of cotangents from vjp and linear_transpose, against JAX 0.10.2.

JAX's jaxprs convert a weakly typed constant operand of an op with a strongly typed
result (``2 * x``, ``x * jnp.asarray(2.0)``) before the op; modjax's ops may take it
directly, and their transposes multiply by the converted constant. The table was
measured with JAX 0.10.2 on CPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.autodiff import linear_transpose, vjp
from modjax.tracecore.core import to_aval

_W = jnp.asarray(2.0)  # a weakly typed array
FUNCTIONS = {
    "2*a": lambda a: 2 * a,
    "a*a": lambda a: a * a,
    "sin": jnp.sin,
    "neg": lambda a: -a,
    "sum": jnp.sum,
    "a/2": lambda a: a / 2.0,
    "1-a": lambda a: 1.0 - a,
    "a*w": lambda a: a * _W,
    "where": lambda a: jnp.where(True, a, 0.0),
    "maximum": lambda a: jnp.maximum(a, 0.5),
    "a**2": lambda a: a**2,
    "exp(2a)": lambda a: jnp.exp(2 * a),
    "astype": lambda a: a.astype(jnp.float16).astype(jnp.float32),
    "dot": lambda a: jnp.dot(a, a),
}
PRIMALS = {"f32": np.float32(2.0), "py": 2.0, "weak": _W}
COTANGENTS = {"ctf32": np.float32(1.0), "ctpy": 1.0}
# Column order of the table below; T: weakly typed, F: strongly typed, -: not linear.
COLUMNS = [
    (kind, primal, ct)
    for kind in ("lt", "vjp")
    for primal in ("f32", "py", "weak")
    for ct in ("ctf32", "ctpy")
]
JAX_WEAK = {
    "2*a": "FFFTFTFFFTFT",
    "a*a": "------FFFTFT",
    "sin": "------FFFTFT",
    "neg": "FTFTFTFTFTFT",
    "sum": "FTTTTTFTTTTT",
    "a/2": "FFFTFTFFFTFT",
    "1-a": "FTFTFTFTFTFT",
    "a*w": "FFFTFTFFFTFT",
    "where": "FTFTFTFTFTFT",
    "maximum": "------FFFTFT",
    "a**2": "------FFFTFT",
    "exp(2a)": "------FFFTFT",
    "astype": "FFTTTTFFTTTT",
    "dot": "------FFFTFT",
}
CASES = [
    (name, *column, flag)
    for name, flags in JAX_WEAK.items()
    for column, flag in zip(COLUMNS, flags, strict=True)
    if flag != "-"
]


@pytest.mark.parametrize("name,kind,primal,ct,flag", CASES)
def test_cotangent_weak_type_matches_jax(name, kind, primal, ct, flag):
    f, x, c = FUNCTIONS[name], PRIMALS[primal], COTANGENTS[ct]
    if kind == "vjp":
        (out,) = vjp(f, x)[1](c)
    else:
        (out,) = linear_transpose(f, x)(c)
    aval = to_aval(out)
    assert (aval.dtype, aval.weak_type) == (np.dtype(np.float32), flag == "T")


def test_cotangent_of_a_converted_weak_operand_is_weak():
    # (a * b, a) with a weak and b strong: JAX's a is converted for the product, so its
    # cotangent is converted back (weak); b's is the product of strong values.
    _, pullback = vjp(lambda a, b: (a * b, a), 2.0, np.float32(3.0))
    ct_a, ct_b = pullback((1.0, 1.0))
    assert (to_aval(ct_a).weak_type, to_aval(ct_b).weak_type) == (True, False)
    np.testing.assert_allclose([ct_a, ct_b], [4.0, 2.0])
