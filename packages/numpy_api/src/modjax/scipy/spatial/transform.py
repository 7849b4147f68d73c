"""Rotations in 3-D as unit quaternions (the counterpart of ``jax.scipy.spatial.transform``).

``Rotation`` stores a quaternion ``(x, y, z, w)``, scalar last as in scipy; a
batch of rotations is one ``[..., 4]`` array. Every conversion below acts on the
trailing axis, so batches need no ``vmap`` (JAX writes each for one rotation and
vectorizes it; the formulas are scipy's). ``Rotation`` and ``Slerp`` are
NamedTuples, hence pytrees: they pass through ``jit``, ``vmap`` and ``grad``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import modjax.numpy as jnp

__all__ = ["Rotation", "Slerp"]

_AXES = {"x": 0, "y": 1, "z": 2}


def _check_trailing(name: str, x, shape: tuple[int, ...]):
    if x.ndim < len(shape) or tuple(x.shape[x.ndim - len(shape) :]) != shape:
        dims = ", ".join(map(str, shape))
        raise ValueError(f"Expected `{name}` to have shape (..., {dims}), got {x.shape}")


def _inexact(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.result_type(float))


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalize(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """The quaternion of rotation ``q`` followed by ``p`` (Hamilton product ``p q``)."""
    pv, pw = p[..., :3], p[..., 3:]
    qv, qw = q[..., :3], q[..., 3:]
    v = pw * qv + qw * pv + jnp.cross(pv, qv)
    w = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
    return jnp.concatenate([v, w], axis=-1)


def _as_matrix(q):
    x, y, z, w = (q[..., i] for i in range(4))
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [
        [xx - yy - zz + ww, 2 * (xy - zw), 2 * (xz + yw)],
        [2 * (xy + zw), -xx + yy - zz + ww, 2 * (yz - xw)],
        [2 * (xz - yw), 2 * (yz + xw), -xx - yy + zz + ww],
    ]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m):
    """Shepperd's method: build the quaternion from its largest component, then normalize."""
    d = [m[..., i, i] for i in range(3)]
    trace = d[0] + d[1] + d[2]
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        c = [None] * 4
        c[i] = 1 - trace + 2 * d[i]
        c[j] = m[..., j, i] + m[..., i, j]
        c[k] = m[..., k, i] + m[..., i, k]
        c[3] = m[..., k, j] - m[..., j, k]
        candidates.append(jnp.stack(c, axis=-1))
    candidates.append(
        jnp.stack(
            [
                m[..., 2, 1] - m[..., 1, 2],
                m[..., 0, 2] - m[..., 2, 0],
                m[..., 1, 0] - m[..., 0, 1],
                1 + trace,
            ],
            axis=-1,
        )
    )
    choice = jnp.argmax(jnp.stack([*d, trace], axis=-1), axis=-1)
    picked = jnp.take_along_axis(jnp.stack(candidates, axis=-2), choice[..., None, None], axis=-2)
    return _normalize(picked[..., 0, :])


def _from_rotvec(r, degrees):
    r = jnp.where(degrees, jnp.deg2rad(r), r)
    angle = _norm(r)
    a2 = angle * angle
    # sin(angle / 2) / angle, by its Taylor series near 0 where the quotient loses precision.
    scale = jnp.where(angle <= 1e-3, 0.5 - a2 / 48 + a2 * a2 / 3840, jnp.sin(angle / 2) / angle)
    return jnp.concatenate([scale[..., None] * r, jnp.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(q, degrees):
    q = jnp.where(q[..., 3:] < 0, -q, q)  # w >= 0: an angle in [0, pi]
    angle = 2 * jnp.arctan2(_norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    scale = jnp.where(angle <= 1e-3, 2 + a2 / 12 + 7 * a2 * a2 / 2880, angle / jnp.sin(angle / 2))
    scale = jnp.where(degrees, jnp.rad2deg(scale), scale)
    return scale[..., None] * q[..., :3]


def _from_mrp(p):
    s = jnp.sum(p * p, axis=-1, keepdims=True) + 1
    return jnp.concatenate([2 * p, 2 - s], axis=-1) / s


def _as_mrp(q):
    sign = jnp.where(q[..., 3:] < 0, -1.0, 1.0)
    return sign * q[..., :3] / (1 + sign * q[..., 3:])


def _canonical(q):
    """``q`` or ``-q`` (one rotation): the one whose first nonzero of w, x, y, z is positive."""
    neg, zero = q < 0, q == 0
    flip = neg[..., 3] | (
        zero[..., 3] & (neg[..., 0] | (zero[..., 0] & (neg[..., 1] | (zero[..., 1] & neg[..., 2]))))
    )
    return jnp.where(flip[..., None], -q, q)


def _elementary(axis: int, angle):
    half = angle / 2
    parts = [jnp.zeros_like(half)] * 3 + [jnp.cos(half)]
    parts[axis] = jnp.sin(half)
    return jnp.stack(parts, axis=-1)


def _parse_seq(seq: str, lengths: Sequence[int]) -> tuple[list[int], bool]:
    if len(seq) not in lengths:
        if lengths == (3,):
            raise ValueError(f"Expected 3 axes, got {seq}.")
        raise ValueError(
            f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}"
        )
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    if not intrinsic and re.match(r"^[xyz]{1,3}$", seq) is None:
        raise ValueError(
            f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}"
        )
    if any(a == b for a, b in zip(seq, seq[1:], strict=False)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return [_AXES[c] for c in seq.lower()], intrinsic


def _as_euler(q, axes: list[int], extrinsic: bool, degrees):
    """Euler angles by the quaternion method of Bernardes & Viollet (2022), as scipy."""
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2  # +1 for an even permutation of xyz, else -1
    qi, qj, qk, qw = q[..., i], q[..., j], q[..., k] * sign, q[..., 3]
    if symmetric:
        a, b, c, d = qw, qi, qj, qk
    else:
        a, b, c, d = qw - qj, qi + qk, qj + qw, qk - qi
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    # Gimbal lock (middle angle 0 or pi): the third angle is set to 0, as scipy does.
    at_zero = jnp.abs(middle) <= eps
    locked = at_zero | (jnp.abs(middle - np.pi) <= eps)
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    locked_first = jnp.where(at_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    zero = jnp.zeros_like(middle)
    angles = [locked_first, middle, zero]
    first, third = (0, 2) if extrinsic else (2, 0)
    angles[first] = jnp.where(locked, angles[first], half_sum - half_diff)
    angles[third] = jnp.where(locked, angles[third], half_sum + half_diff)
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    out = (jnp.stack(angles, axis=-1) + np.pi) % (2 * np.pi) - np.pi
    return jnp.where(degrees, jnp.rad2deg(out), out)


class Rotation(NamedTuple):
    """A rotation, or a batch of them, in 3-D (jax.scipy.spatial.transform.Rotation).

    Build one with the ``from_*`` class methods (``from_quat`` normalizes;
    ``Rotation(quat)`` takes the unit quaternion as it is); ``r * s`` applies ``s``
    then ``r``; ``r.apply(v)`` rotates vectors.
    """

    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """Return the rotations of ``rotations`` as one batch (Rotation.concatenate)."""
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False) -> Rotation:
        """Build rotations from Euler angles about the axes of ``seq`` (Rotation.from_euler).

        Lowercase ``seq`` (``"xyz"``) rotates about fixed axes (extrinsic), uppercase
        (``"XYZ"``) about the moving body's (intrinsic); ``angles`` has one entry per
        axis in its last dimension.
        """
        axes, intrinsic = _parse_seq(seq, (1, 2, 3))
        angles = jnp.atleast_1d(angles)
        if angles.shape[-1] != len(axes):
            raise ValueError(
                f"Expected angles of shape (..., {len(axes)}) for seq {seq!r}, got {angles.shape}"
            )
        angles = _inexact(angles)
        angles = jnp.where(degrees, jnp.deg2rad(angles), angles)
        quat = _elementary(axes[0], angles[..., 0])
        for n, axis in enumerate(axes[1:], 1):
            step = _elementary(axis, angles[..., n])
            quat = _compose(quat, step) if intrinsic else _compose(step, quat)
        return cls(quat)

    @classmethod
    def from_matrix(cls, matrix) -> Rotation:
        """Build rotations from ``[..., 3, 3]`` rotation matrices (Rotation.from_matrix)."""
        matrix = _inexact(matrix)
        _check_trailing("matrix", matrix, (3, 3))
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp) -> Rotation:
        """Build rotations from ``[..., 3]`` modified Rodrigues parameters (Rotation.from_mrp)."""
        mrp = _inexact(mrp)
        _check_trailing("mrp", mrp, (3,))
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat) -> Rotation:
        """Build rotations from ``[..., 4]`` quaternions ``(x, y, z, w)``, normalized.

        (Rotation.from_quat.)
        """
        quat = _inexact(quat)
        _check_trailing("quat", quat, (4,))
        return cls(_normalize(quat))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False) -> Rotation:
        """Build rotations from ``[..., 3]`` rotation vectors: axis times angle (from_rotvec)."""
        rotvec = _inexact(rotvec)
        _check_trailing("rotvec", rotvec, (3,))
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float) -> Rotation:
        """Return the identity rotation (Rotation.identity); ``num`` must be None, as in JAX."""
        if num is not None:
            raise AssertionError("Rotation.identity: num must be None")  # JAX asserts it
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key, num: int | None = None) -> Rotation:
        """Raise NotImplementedError, as jax.scipy.spatial.transform.Rotation.random does."""
        raise NotImplementedError()

    def __getitem__(self, indexer) -> Rotation:  # type: ignore[override]
        """Return the rotations of the batch at ``indexer``."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        """Return the number of rotations of a batch (a single rotation has no len)."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> Rotation:  # type: ignore[override]
        """Return the composition: ``other`` first, then ``self``."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """Rotate ``[..., 3]`` vectors (by the inverse rotation if ``inverse``) (Rotation.apply).

        Batches of rotations and of vectors broadcast against each other.
        """
        vectors = jnp.asarray(vectors)
        _check_trailing("vectors", vectors, (3,))
        matrix = self.as_matrix()
        matrix = jnp.where(inverse, jnp.swapaxes(matrix, -1, -2), matrix)
        return jnp.matmul(matrix, vectors[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False):
        """Return the Euler angles about the three axes of ``seq`` (Rotation.as_euler).

        The middle angle is in ``[0, pi]`` (symmetric sequences such as ``"zxz"``) or
        ``[-pi/2, pi/2]``, the others in ``[-pi, pi)``; at gimbal lock the third is 0.
        """
        axes, intrinsic = _parse_seq(seq, (3,))
        return _as_euler(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self):
        """Return the ``[..., 3, 3]`` rotation matrices (Rotation.as_matrix)."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Return the modified Rodrigues parameters, of norm at most 1 (Rotation.as_mrp)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False):
        """Return the rotation vectors: axis times angle in ``[0, pi]`` (Rotation.as_rotvec)."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """Return the quaternions, ``(x, y, z, w)`` or with ``scalar_first`` ``(w, x, y, z)``.

        (Rotation.as_quat.) ``canonical`` picks, of ``q`` and ``-q``, the one with
        ``w > 0`` (or, where ``w == 0``, the first nonzero of x, y, z positive).
        """
        quat = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """Return the inverse rotations (Rotation.inv)."""
        return Rotation(jnp.concatenate([-self.quat[..., :3], self.quat[..., 3:]], axis=-1))

    def magnitude(self):
        """Return the rotation angles in radians, in ``[0, pi]`` (Rotation.magnitude)."""
        return 2 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights=None) -> Rotation:
        """Return the (weighted) mean of a batch of rotations (Rotation.mean).

        The mean minimizes the weighted sum of squared chordal distances: the
        eigenvector of ``sum_i w_i q_i q_i^T`` with the largest eigenvalue.
        """
        dtype = self.quat.dtype
        if weights is None:
            w = jnp.ones(self.quat.shape[0], dtype=dtype)
        else:
            w = jnp.asarray(weights, dtype=dtype)
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError(
                "Expected `weights` to have number of values equal to number of rotations, "
                f"got {w.shape[0]} values and {len(self)} rotations."
            )
        k = (w[None, :] * self.quat.T) @ self.quat
        _, vectors = jnp.linalg.eigh(k)
        return Rotation(vectors[:, -1])

    @property
    def single(self) -> bool:
        """Whether this is one rotation (a ``[4]`` quaternion) rather than a batch."""
        return self.quat.ndim == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations (jax.scipy.spatial.transform.Slerp).

    Build it with ``Slerp.init(times, rotations)``; calling it at ``times`` returns
    the rotations there, turning at constant angular speed between key rotations.
    """

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times, rotations: Rotation) -> Slerp:
        """Return the interpolator through ``rotations`` at increasing ``times`` (Slerp)."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(
                f"Expected times to be specified in a 1 dimensional array, got {times.ndim} "
                "dimensions."
            )
        if times.shape[0] != len(rotations):
            raise ValueError(
                "Expected number of rotations to be equal to number of timestamps given, got "
                f"{len(rotations)} rotations and {times.shape[0]} timestamps."
            )
        # Times are not checked for increasing order: that would need concrete values.
        starts = Rotation(rotations.quat[:-1])
        steps = (starts.inv() * Rotation(rotations.quat[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts, rotvecs=steps)

    def __call__(self, times) -> Rotation:
        """Return the interpolated rotations at ``times`` (a scalar or a 1-d array)."""
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        scalar = t.ndim == 0
        t = jnp.atleast_1d(t)
        # Times outside the keys extrapolate along the first or last interval, as JAX.
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return result[0] if scalar else result
