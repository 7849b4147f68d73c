"""Every rule of the lax primitives added for JAX 0.10's public surface, checked by
``modjax.testing.check_primitive`` (abstract eval, lowering, JVP, transpose, batching,
printing) over small hypothesis-drawn cases.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from modjax import lax
from modjax.testing import check_primitive

F32 = np.float32


def _ragged_case(seed):
    rng = np.random.RandomState(seed)
    lhs = rng.uniform(-2, 2, (4, 3)).astype(F32)
    rhs = rng.uniform(-2, 2, (2, 3, 2)).astype(F32)
    sizes = np.array(rng.randint(0, 3, 2), np.int32)
    numbers = lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    params = {
        "ragged_dot_dimension_numbers": numbers,
        "precision": None,
        "preferred_element_type": None,
    }
    return (lhs, rhs, sizes), params


def test_ragged_dot_general_rules():
    cases = st.integers(0, 2**16).map(_ragged_case)
    checked = check_primitive(
        lax.ragged_dot_general_p,
        cases,
        jvp_argnums=(0, 1),
        linear_argnums=[(0,), (1,)],
        max_examples=3,
    )
    assert checked == ("abstract_eval", "lowering", "jvp", "transpose", "batching", "printing")


def _top_k_case(seed):
    rng = np.random.RandomState(seed)
    x = rng.permutation(12).reshape(3, 4).astype(F32)  # distinct values: no ties for the JVP
    params = {
        "aggregate_to_topk": True,
        "is_max_k": bool(seed % 2),
        "k": 2,
        "recall_target": 0.95,
        "reduction_dimension": -1 if seed % 3 else 0,
        "reduction_input_size_override": -1,
    }
    return (x,), params


def test_approx_top_k_rules():
    cases = st.integers(0, 2**16).map(_top_k_case)
    checked = check_primitive(lax.approx_top_k_p, cases, max_examples=4)
    assert checked == ("abstract_eval", "lowering", "jvp", "batching", "printing")


def test_mulhi_rules():
    assert "batching" in check_primitive(lax.mulhi_p, max_examples=3)


def _scaled_dot_case(seed):
    rng = np.random.RandomState(seed)
    lhs = rng.uniform(-2, 2, (2, 8)).astype(F32)
    rhs = rng.uniform(-2, 2, (8, 3)).astype(F32)
    scales = (rng.uniform(0.5, 2, (2, 2)).astype(F32), rng.uniform(0.5, 2, (2, 3)).astype(F32))
    numbers = (((1,), (0,)), ((), ()))
    return (lhs, rhs, *scales), {
        "dimension_numbers": numbers,
        "preferred_element_type": np.dtype(F32),
    }


def test_scaled_dot_and_stage_rules():
    cases = st.integers(0, 2**16).map(_scaled_dot_case)
    assert check_primitive(lax.scaled_dot_p, cases, max_examples=2) == (
        "abstract_eval",
        "lowering",
        "batching",
        "printing",
    )
    assert "transpose" in check_primitive(lax.stage_p, max_examples=2)
