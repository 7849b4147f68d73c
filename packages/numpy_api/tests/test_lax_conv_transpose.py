"""lax.conv_transpose and the convolution shape helpers against JAX 0.10.2
(``conv_transpose_reference.json``, recording script inside)."""

import json
from pathlib import Path

import numpy as np
import pytest

from modjax import lax
from modjax.runtime import jit

REFERENCE = json.loads((Path(__file__).parent / "conv_transpose_reference.json").read_text())
OPERANDS = {
    kind: tuple(np.asarray(REFERENCE[name + kind[0]], np.float32) for name in ("x", "k"))
    for kind in ("2d", "1d")
}


def _padding(p):
    return p if isinstance(p, str) else tuple(tuple(pair) for pair in p)


def _run(case, x, k):
    dilation = case["rhs_dilation"]
    return lax.conv_transpose(
        x,
        k,
        tuple(case["strides"]),
        _padding(case["padding"]),
        rhs_dilation=None if dilation is None else tuple(dilation),
        transpose_kernel=case["transpose_kernel"],
        use_consistent_padding=case["use_consistent_padding"],
    )


@pytest.fixture(scope="module")
def outputs():
    """Every case in one compiled program."""
    cases = REFERENCE["cases"]
    operands = [OPERANDS[c["kind"]] for c in cases]
    return jit(lambda ops: [_run(c, *xk) for c, xk in zip(cases, ops, strict=True)])(operands)


@pytest.mark.parametrize("index", range(len(REFERENCE["cases"])))
def test_conv_transpose_matches_jax(outputs, index):
    want = np.asarray(REFERENCE["cases"][index]["out"], np.float32)
    assert outputs[index].shape == want.shape
    np.testing.assert_allclose(outputs[index], want, rtol=1e-5, atol=1e-5)


def test_shape_helpers_match_jax():
    shapes = REFERENCE["shapes"]
    dn = ("NHWC", "HWIO", "NHWC")
    got = {
        "conv_shape_tuple": lax.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (2, 1), "SAME"),
        "conv_general_shape_tuple": lax.conv_general_shape_tuple(
            (1, 8, 9, 3), (3, 2, 3, 4), (2, 2), "VALID", dn
        ),
        "conv_transpose_shape_tuple": lax.conv_transpose_shape_tuple(
            (1, 8, 9, 3), (3, 2, 3, 4), (2, 2), "SAME", dn
        ),
        "conv_general_permutations": lax.conv_general_permutations(dn),
        "reduce_window_shape_tuple": lax.reduce_window_shape_tuple(
            (1, 8, 9, 3),
            (1, 2, 3, 1),
            (1, 2, 2, 1),
            ((0, 0), (1, 1), (0, 1), (0, 0)),
            (1, 2, 1, 1),
        ),
    }
    assert {k: np.asarray(v).tolist() for k, v in got.items()} == shapes
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_permutations(("NHWC", "HWII", "NHWC"))
    with pytest.raises(ValueError, match="Invalid padding mode"):
        lax.conv_transpose(*OPERANDS["1d"], (2,), "FULL", use_consistent_padding=True)
