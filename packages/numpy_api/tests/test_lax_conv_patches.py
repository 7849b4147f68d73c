"""``lax.conv_general_dilated_patches`` and ``conv_general_dilated_local`` against answers
recorded from JAX 0.10.2 and against loops in numpy; jit, vmap, grad and errors."""

from __future__ import annotations

import numpy as np
import pytest

from modjax import lax
from modjax.autodiff import grad
from modjax.batching import vmap
from modjax.runtime import jit

X = np.arange(2 * 3 * 5 * 6, dtype=np.float32).reshape(2, 3, 5, 6) / 10
W = np.random.RandomState(0).standard_normal((4, 3 * 2 * 3, 5, 3)).astype(np.float32)


def test_patches_known_answers_of_jax():
    p = lax.conv_general_dilated_patches(X, (2, 3), (1, 2), "SAME")
    assert p.shape == (2, 18, 5, 3)
    np.testing.assert_allclose(float(np.asarray(p).sum()), 3929.400146484375, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(p)[1, 7, 2], [13.3, 13.5, 13.7], rtol=1e-6)
    nhwc = lax.conv_general_dilated_patches(
        X.transpose(0, 2, 3, 1), (2, 2), (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    assert nhwc.shape == (2, 4, 5, 12)
    np.testing.assert_allclose(
        np.asarray(nhwc)[0, 1, 2, :8], [0.8, 0.9, 1.4, 1.5, 3.8, 3.9, 4.4, 4.5], rtol=1e-6
    )


def test_patches_are_the_windows_channel_first():
    p = jit(lambda x: lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID"))(X)
    for c in range(3):
        for i in range(2):
            for j in range(2):
                np.testing.assert_array_equal(
                    p[:, c * 4 + i * 2 + j], X[:, c, i : i + 4, j : j + 5]
                )


def test_local_conv_known_answers_and_loop():
    out = lax.conv_general_dilated_local(X, W, (1, 2), "SAME", (2, 3))
    assert out.shape == (2, 4, 5, 3)
    np.testing.assert_allclose(
        np.asarray(out)[1, :, 2, 1], [85.9787, -6.2273, -19.7396, 91.8213], rtol=1e-4, atol=1e-4
    )
    patches = np.asarray(lax.conv_general_dilated_patches(X, (2, 3), (1, 2), "SAME"))
    want = np.einsum("nkhw,okhw->nohw", patches, W)
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=1e-4)
    g = grad(lambda x: lax.conv_general_dilated_local(x, W, (1, 2), "SAME", (2, 3)).sum())(X)
    np.testing.assert_allclose(
        np.asarray(g)[0, 0, 0],
        [1.8440889, 2.5673265, -3.3941689, -1.5853131, 3.5412247, 3.2522655],
        rtol=1e-5,
    )
    batched = vmap(lambda x: lax.conv_general_dilated_local(x[None], W, (1, 2), "SAME", (2, 3))[0])(
        X
    )
    np.testing.assert_allclose(np.asarray(batched), np.asarray(out), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Unsupported precision for conv_general_dilated_local"):
        lax.conv_general_dilated_local(X, W, (1, 2), "SAME", (2, 3), precision="BF16_BF16_F32")
