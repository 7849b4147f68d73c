"""modjax.scipy.spatial.transform: ``Rotation`` and ``Slerp`` against JAX 0.10.2.

``scipy_spatial_reference.json`` holds JAX 0.10.2's float64 answers (each checked against
scipy by the recording script, stored in the JSON under "recorded_with") for a few
rotations: a small angle, half turns, a zero scalar part, gimbal locks of ten Euler
sequences. Every answer is computed by one jitted program (one compile per dtype), then
``vmap`` over the Rotation pytree, derivatives, and JAX's errors.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.autodiff import grad
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.scipy.spatial.transform import Rotation, Slerp
from modjax.tracecore.config import enable_x64

# Compile-bound: the per-package wheel check imports this module but does not rerun it.
pytestmark = pytest.mark.slow

REF = json.loads(pathlib.Path(__file__).with_name("scipy_spatial_reference.json").read_text())
SEQS = ["xyz", "zyx", "xzx", "zxz", "XYZ", "ZYX", "XZX", "ZYZ", "yxz", "YXZ"]
KEYS = [0, 5, 3, 1]
INPUTS = ["quats", "vectors", "weights", "key_times", "times"]


def _answers(quats, vectors, weights, key_times, times, lock_quats):
    r = Rotation.from_quat(quats)
    rotvecs = r.as_rotvec()
    out = {
        "from_quat": r.quat,
        "as_matrix": r.as_matrix(),
        "from_matrix": Rotation.from_matrix(r.as_matrix()).quat,
        "as_rotvec": rotvecs,
        "as_rotvec_degrees": r.as_rotvec(degrees=True),
        "from_rotvec": Rotation.from_rotvec(rotvecs).quat,
        "as_mrp": r.as_mrp(),
        "from_mrp": Rotation.from_mrp(r.as_mrp()).quat,
        "magnitude": r.magnitude(),
        "canonical": r.as_quat(canonical=True),
        "canonical_neg": Rotation(-r.quat).as_quat(canonical=True),
        "scalar_first": r.as_quat(scalar_first=True),
        "inv": r.inv().quat,
        "compose": (r * r[::-1]).quat,
        "apply": r.apply(vectors),
        "apply_inverse": r.apply(vectors, inverse=True),
        "apply_one_vector": r.apply(vectors[0]),
        "apply_one_rotation": r[0].apply(vectors),
        "from_euler_degrees_z": Rotation.from_euler("z", jnp.array([90.0]), degrees=True).quat,
        "mean": r.mean(weights).as_quat(canonical=True),
        "slerp": Slerp.init(key_times, r[jnp.array(KEYS)])(times).as_matrix(),
    }
    for seq in SEQS:
        angles = r.as_euler(seq)
        out[f"as_euler_{seq}"] = angles
        out[f"from_euler_{seq}"] = Rotation.from_euler(seq, angles).quat
        out[f"lock_{seq}"] = Rotation.from_quat(lock_quats[seq]).as_euler(seq)
    return out


_compiled = jit(_answers)


def _inputs(dtype):
    args = [np.asarray(REF[name], dtype) for name in INPUTS]
    return [*args, {seq: np.asarray(REF[f"lock_quats_{seq}"], dtype) for seq in SEQS}]


@pytest.fixture(scope="module")
def answers64():
    with enable_x64(True):
        return {k: np.asarray(v) for k, v in _compiled(*_inputs(np.float64)).items()}


@pytest.fixture(scope="module")
def answers32():
    return {k: np.asarray(v) for k, v in _compiled(*_inputs(np.float32)).items()}


NOT_ANSWERS = {*INPUTS, "locks", "recorded_with"}
NAMES = sorted(k for k in REF if k not in NOT_ANSWERS and "lock_quats" not in k)


def _same_angles(got, want, atol):
    # pi and -pi are one angle: at a half turn rounding decides which one comes out.
    np.testing.assert_allclose(np.angle(np.exp(1j * (got - want))), 0, atol=atol)


@pytest.mark.parametrize("name", NAMES)
def test_float64_answers_are_jaxs(name, answers64):
    got, want = answers64[name], np.asarray(REF[name])
    assert got.dtype == np.float64 and got.shape == want.shape
    if "euler" in name or name.startswith("lock"):
        _same_angles(got, want, 1e-9)
    else:
        np.testing.assert_allclose(got, want, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_float32_keeps_its_dtype(name, answers32):
    got, want = answers32[name], np.asarray(REF[name])
    assert got.dtype == np.float32, name
    if name.startswith("lock"):
        return  # gimbal lock is decided within 1e-7 of the middle angle: float32 rounds past it
    if "euler" in name:
        _same_angles(got, want, 2e-3)
    else:
        np.testing.assert_allclose(got, want, atol=2e-3 if "degrees" not in name else 0.1)


def _pytree_checks(quats, vectors):
    r = Rotation(quats)
    slerp = Slerp.init(jnp.array([0.0, 1.0]), r[:2])
    return {
        "vmap_matrix": vmap(lambda rot: rot.as_matrix())(r),
        "inv": jit(lambda rot: rot.inv())(r),
        "vmap_apply": vmap(r[0].apply)(vectors),
        "slerp_half": slerp(0.5),
        "slerp_ends": slerp(jnp.array([0.0, 1.0])).as_matrix(),
    }


def test_rotation_is_a_pytree_under_vmap_and_jit():
    quats = np.asarray(REF["from_quat"], np.float32)  # unit quaternions
    vectors = np.asarray(REF["vectors"], np.float32)
    out = jit(_pytree_checks)(quats, vectors)
    matrices = np.asarray(REF["as_matrix"])
    np.testing.assert_allclose(out["vmap_matrix"], matrices, atol=1e-5)
    assert isinstance(out["inv"], Rotation)
    np.testing.assert_array_equal(out["inv"].quat, quats * np.array([-1, -1, -1, 1], np.float32))
    np.testing.assert_allclose(out["vmap_apply"], vectors @ matrices[0].T, atol=1e-5)
    assert isinstance(out["slerp_half"], Rotation) and out["slerp_half"].single
    np.testing.assert_allclose(out["slerp_ends"], matrices[:2], atol=1e-5)


def _conversions(rotvec, quat):
    return (
        Rotation.from_rotvec(rotvec).as_matrix(),
        Rotation.from_quat(quat).as_euler("zyx"),
        Rotation.from_quat(quat).as_rotvec(),
    )


def test_derivatives():
    with enable_x64(True):
        # Under jit each derivative program compiles once instead of op by op.
        v, q = np.array([0.3, -0.2, 0.5]), np.asarray(REF["quats"][0])
        check_grads(jit(_conversions), (v, q), order=1)
        # The angle of a rotation about z is its Euler z angle: d/dt = 1.
        dz = jit(grad(lambda t: Rotation.from_euler("z", t).as_euler("zyx")[0]))(0.4)
        np.testing.assert_allclose(dz, 1.0, atol=1e-12)


def _quarter_turn():
    r = Rotation.from_euler("x", jnp.float32(90), degrees=True)
    e = Rotation.identity()
    both = Rotation.concatenate([Rotation(r.quat[None]), Rotation(e.quat[None])])
    return e, (r * r.inv()).as_matrix(), r.apply(jnp.array([0.0, 1.0, 0.0])), both


def test_identity_and_composition():
    e, product, turned, both = jit(_quarter_turn)()
    assert e.single and e.quat.dtype == np.float32
    np.testing.assert_array_equal(e.quat, [0, 0, 0, 1])
    np.testing.assert_allclose(product, np.eye(3), atol=1e-6)
    np.testing.assert_allclose(turned, [0, 0, 1], atol=1e-6)
    assert len(both) == 2 and both[1].single


ERRORS = [
    (lambda: Rotation.identity(3), AssertionError, None),
    (lambda: Rotation.random(None), NotImplementedError, None),
    (lambda: len(Rotation.identity()), TypeError, r"Single rotation has no len\(\)"),
    (lambda: Rotation.identity()[0], TypeError, "Single rotation is not subscriptable"),
    (lambda: Rotation.identity().mean(), TypeError, r"Single rotation has no len\(\)"),
    (lambda: Rotation.from_euler("xyzx", np.zeros(4)), ValueError, "upto 3 characters"),
    (lambda: Rotation.from_euler("xYz", np.zeros(3)), ValueError, "Expected axes from `seq`"),
    (lambda: Rotation.from_euler("xxz", np.zeros(3)), ValueError, "consecutive axes"),
    (lambda: Rotation.from_euler("z", np.zeros(2)), ValueError, r"shape \(\.\.\., 1\)"),
    (lambda: Rotation.from_euler("z", [1.0]), TypeError, "atleast_1d requires ndarray"),
    (lambda: Rotation.identity().as_euler("xy"), ValueError, "Expected 3 axes, got xy"),
    (lambda: Rotation.from_quat(np.ones(3)), ValueError, r"`quat` to have shape \(\.\.\., 4\)"),
    (lambda: Rotation.from_matrix(np.eye(4)), ValueError, r"shape \(\.\.\., 3, 3\)"),
    (lambda: Rotation.identity().apply(np.ones(4)), ValueError, "`vectors`"),
    (
        lambda: Rotation(np.ones((2, 4), np.float32)).mean(np.ones((2, 2))),
        ValueError,
        "Expected `weights` to be 1 dimensional",
    ),
    (lambda: Slerp.init([0.0, 1.0], [1, 2]), TypeError, "must be a `Rotation` instance"),
    (lambda: Slerp.init([0.0, 1.0], Rotation.identity()), ValueError, "at least 2 rotations"),
    (
        lambda: Slerp.init([0.0, 1.0, 2.0], Rotation(np.ones((2, 4), np.float32))),
        ValueError,
        "got 2 rotations and 3 timestamps",
    ),
    (
        lambda: Slerp(*[np.zeros(2, np.float32)] * 2, Rotation(None), None)([[0.5]]),
        ValueError,
        "at most 1-dimensional",
    ),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    f, kind, message = ERRORS[case]
    with pytest.raises(kind, match=message):
        f()
