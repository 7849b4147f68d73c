"""jax.example_libraries.stax: layers and combinators give JAX 0.10.2's shapes,
parameters and outputs (``stax_reference.json``, recorded by the same networks)."""

import json
from pathlib import Path

import numpy as np
import pytest

from modjax import random
from modjax.example_libraries import stax
from modjax.runtime import jit
from modjax.tracecore.tree_util import tree_leaves

REFERENCE = json.loads((Path(__file__).parent / "stax_reference.json").read_text())["nets"]
INPUTS = {
    "convnet": (2, 8, 8, 3),
    "branches": (3, 6),
    "transpose": (2, 4, 5, 3),
    "conv1d_transpose": (2, 5, 2),
}


def networks():
    return {
        "convnet": stax.serial(
            stax.Conv(4, (3, 3), padding="SAME"),
            stax.BatchNorm(),
            stax.Relu,
            stax.MaxPool((2, 2), strides=(2, 2)),
            stax.Conv(3, (2, 2)),
            stax.Elu,
            stax.AvgPool((2, 2), padding="SAME"),
            stax.SumPool((1, 2)),
            stax.Flatten,
            stax.Dense(5),
            stax.LogSoftmax,
        ),
        "branches": stax.serial(
            stax.FanOut(3),
            stax.parallel(stax.Dense(4), stax.serial(stax.Dense(4), stax.Tanh), stax.Identity),
            stax.FanInConcat(),
            stax.Dense(2),
            stax.Gelu,
            stax.Softplus,
        ),
        "transpose": stax.serial(
            stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"),
            stax.Sigmoid,
            stax.GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 3, (2, 2)),
            stax.Selu,
        ),
        "conv1d_transpose": stax.serial(
            stax.Conv1DTranspose(3, (3,), strides=(2,)), stax.LeakyRelu, stax.Softmax
        ),
    }


@pytest.mark.parametrize("name", INPUTS)
def test_network_matches_jax(name):
    init_fun, apply_fun = networks()[name]
    shape, params = init_fun(random.key(1), INPUTS[name])
    want = REFERENCE[name]
    assert [int(d) for d in shape] == want["out_shape"]
    leaves = tree_leaves(params)
    assert len(leaves) == len(want["params"])
    for got, ref in zip(leaves, want["params"], strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)
    x = np.sin(np.arange(np.prod(INPUTS[name]), dtype=np.float32)).reshape(INPUTS[name])
    out = jit(apply_fun)(params, x)
    assert out.shape == tuple(want["out_shape"])
    np.testing.assert_allclose(out, want["out"], rtol=2e-5, atol=2e-6)


def test_dropout_and_shape_dependent():
    init_fun, apply_fun = stax.Dropout(0.5)
    shape, params = init_fun(random.key(0), (4, 100))
    x = np.ones((4, 100), np.float32)
    out = np.asarray(apply_fun(params, x, rng=random.key(3)))
    assert shape == (4, 100) and set(np.unique(out)) <= {0.0, 2.0} and 0 < out.mean() < 2
    with pytest.raises(ValueError, match="PRNG key"):
        apply_fun(params, x)
    assert stax.Dropout(0.5, mode="test")[1](params, x, rng=random.key(3)) is x
    layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    out_shape, params = layer[0](random.key(0), (3, 4))
    assert out_shape == (3, 8) and layer[1](params, np.ones((3, 4), np.float32)).shape == (3, 8)
