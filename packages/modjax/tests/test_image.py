"""jax.image.resize and scale_and_translate against values recorded from JAX 0.10.2
(``image_reference.json``, recording script inside)."""

import json
from pathlib import Path

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp

REFERENCE = json.loads((Path(__file__).parent / "image_reference.json").read_text())
IMAGE = np.asarray(REFERENCE["image"], np.float32)


def _run(image, case):
    if case["fn"] == "resize":
        return jax.image.resize(image, case["shape"], case["method"], antialias=case["antialias"])
    return jax.image.scale_and_translate(
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
    return jax.jit(lambda image: [_run(image, case) for case in REFERENCE["cases"]])(IMAGE)


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
    out = jax.image.resize(ints, (4, 5), "linear")
    assert str(out.dtype) == REFERENCE["int_linear"]["dtype"]
    np.testing.assert_allclose(out, REFERENCE["int_linear"]["out"], rtol=1e-6)
    assert jax.image.resize(ints, (4, 6), jax.image.ResizeMethod.NEAREST).dtype == np.int32


def test_under_jit_grad_and_errors():
    f = jax.jit(lambda x: jax.image.resize(x, (3, 9, 2), "linear").sum())
    np.testing.assert_allclose(
        f(IMAGE), jax.image.resize(IMAGE, (3, 9, 2), "linear").sum(), rtol=1e-6
    )
    grad = jax.jit(
        jax.grad(
            lambda s: jax.image.scale_and_translate(
                IMAGE, (5, 5, 2), (0, 1), s, jnp.zeros(2), "linear"
            ).sum()
        )
    )(jnp.array([1.2, 0.8]))
    assert grad.shape == (2,) and np.all(np.isfinite(grad))
    with pytest.raises(ValueError, match="Unknown resize method"):
        jax.image.resize(IMAGE, (3, 9, 2), "bogus")
    with pytest.raises(ValueError, match="shape must have length"):
        jax.image.resize(IMAGE, (3, 9), "linear")
    assert jax.image.ResizeMethod.from_string("bilinear") is jax.image.ResizeMethod.LINEAR
