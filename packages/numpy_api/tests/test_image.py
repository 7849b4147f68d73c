"""jimage.resize and scale_and_translate against values recorded from JAX 0.10.2
(``image_reference.json``, recording script inside)."""

import json
from pathlib import Path

import numpy as np
import pytest

import modjax.image as jimage
import modjax.numpy as jnp
from modjax.autodiff import grad
from modjax.runtime import jit

REFERENCE = json.loads((Path(__file__).parent / "image_reference.json").read_text())
IMAGE = np.asarray(REFERENCE["image"], np.float32)


def _run(image, case):
    if case["fn"] == "resize":
        return jimage.resize(image, case["shape"], case["method"], antialias=case["antialias"])
    return jimage.scale_and_translate(
        image,
        case["shape"],
        (0, 1),
        jnp.asarray(case["scale"]),
        jnp.asarray(case["translation"]),
        case["method"],
    )


@pytest.fixture(scope="module")
def outputs():
    """Every case in one compiled program (one compile instead of one per case)."""
    return jit(lambda image: [_run(image, case) for case in REFERENCE["cases"]])(IMAGE)


@pytest.mark.parametrize(
    "index",
    range(len(REFERENCE["cases"])),
    ids=[
        f"{c['fn']}-{c['method']}-{c['antialias']}-{'x'.join(map(str, c['shape']))}"
        for c in REFERENCE["cases"]
    ],
)
def test_matches_jax(outputs, index):
    case, out = REFERENCE["cases"][index], outputs[index]
    assert out.shape == tuple(case["shape"]) and out.dtype == np.float32
    np.testing.assert_allclose(out, case["out"], rtol=2e-5, atol=2e-5)


def test_eager_call_equals_the_jitted_one(outputs):
    case = REFERENCE["cases"][3]
    np.testing.assert_allclose(_run(IMAGE, case), outputs[3], rtol=1e-6, atol=1e-6)


def test_integer_images_become_float_and_nearest_keeps_dtype():
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = jimage.resize(ints, (4, 5), "linear")
    assert str(out.dtype) == REFERENCE["int_linear"]["dtype"]
    np.testing.assert_allclose(out, REFERENCE["int_linear"]["out"], rtol=1e-6)
    assert jimage.resize(ints, (4, 6), jimage.ResizeMethod.NEAREST).dtype == np.int32


def test_under_jit_grad_and_errors():
    f = jit(lambda x: jimage.resize(x, (3, 9, 2), "linear").sum())
    np.testing.assert_allclose(f(IMAGE), jimage.resize(IMAGE, (3, 9, 2), "linear").sum(), rtol=1e-6)
    g = jit(
        grad(
            lambda s: jimage.scale_and_translate(
                IMAGE, (5, 5, 2), (0, 1), s, jnp.zeros(2), "linear"
            ).sum()
        )
    )(jnp.array([1.2, 0.8]))
    assert g.shape == (2,) and np.all(np.isfinite(g))
    with pytest.raises(ValueError, match="Unknown resize method"):
        jimage.resize(IMAGE, (3, 9, 2), "bogus")
    with pytest.raises(ValueError, match="shape must have length"):
        jimage.resize(IMAGE, (3, 9), "linear")
    assert jimage.ResizeMethod.from_string("bilinear") is jimage.ResizeMethod.LINEAR
