"""modjax's own implementations do not trip a user's ``jax_numpy_rank_promotion='raise'``.

These functions broadcast internally; in JAX 0.10.2 each of them runs under 'raise'
(checked by a differential run), so here too: same result as under 'allow'.
"""

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import image, random
from modjax import scipy as jsp
from modjax.scipy.spatial.transform import Rotation, Slerp
from modjax.tracecore.config import numpy_rank_promotion

QUATS = np.array([[0.1, 0.2, 0.3, 0.9], [0.3, 0.1, 0.0, 0.9]], np.float32)
KEY = random.key(0)

CASES = {
    "resize_area": lambda: image.resize(jnp.arange(16.0).reshape(4, 4), (2, 2), "area"),
    "rotation_inv": lambda: Rotation.from_quat(QUATS).inv().as_quat(),
    "slerp": lambda: Slerp.init(jnp.array([0.0, 1.0]), Rotation.from_quat(QUATS))(
        jnp.array([0.2, 0.5])
    ).as_quat(),
    "stft": lambda: jsp.signal.stft(jnp.sin(jnp.arange(64.0)), nperseg=16)[2],
    "welch": lambda: jsp.signal.welch(jnp.sin(jnp.arange(64.0)), nperseg=16)[1],
    "owens_t": lambda: jsp.special.owens_t(jnp.array([0.5, 1.0, 2.0]), jnp.array([1.0, 0.3, 2.0])),
    "bessel_jn": lambda: jsp.special.bessel_jn(jnp.array([0.5, 1.0, 2.0]), v=2),
    "lpmn_values": lambda: jsp.special.lpmn_values(2, 2, jnp.array([0.5, -0.2]), False),
    "lu_batched": lambda: jsp.linalg.lu(jnp.stack([jnp.eye(3) + 1, jnp.eye(3) * 2 + 1])),
    "multivariate_normal_empty": lambda: random.multivariate_normal(
        KEY, jnp.zeros(3), jnp.eye(3), (0,)
    ),
    "multivariate_normal": lambda: random.multivariate_normal(
        KEY, jnp.zeros(3), jnp.eye(3) * 2, (2,)
    ),
}


@pytest.mark.filterwarnings("ignore:jax.scipy.special.lpmn_values is deprecated")
@pytest.mark.parametrize("name", list(CASES))
def test_runs_under_raise_as_under_allow(name):
    allowed = CASES[name]()
    with numpy_rank_promotion("raise"):
        raised = CASES[name]()
    for got, want in zip(np.atleast_1d(raised), np.atleast_1d(allowed), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_user_code_still_raises():
    with numpy_rank_promotion("raise"), pytest.raises(ValueError, match="rank_promotion"):
        jnp.ones((2, 3)) + jnp.ones(3)
