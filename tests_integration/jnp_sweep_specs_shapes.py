"""Specs of the shape, creation, product and einsum functions for the jnp sweeps.

Operands come from a small pool of shapes (``()``, ``(3,)``, ``(2, 3)``, ``(3, 2)``)
so that compiled programs are shared. Index data (split points, repeat counts,
roll shifts) is static unless JAX accepts it traced, in which case a spec passes it
as an operand. ``clip``, ``where``, ``select`` and ``piecewise`` are differentiated
away from their kinks: the operands lie in bands that the bounds or conditions never
cross within the finite-difference step.
"""

import numpy as np
from jnp_sweep_specs import add, bools, complexes, exclude, floats, ints

import modjax.numpy as jnp

S0, S1, S2, S2T = (), (3,), (2, 3), (3, 2)


def banded(*shape, bands=((-2.0, -1.5), (-0.5, 0.5), (1.5, 2.0))):
    """Make float64 values of ``shape``, each drawn from one of ``bands`` at random."""
    bands = np.asarray(bands, np.float64)

    def make(rng):
        picked = bands[rng.randint(0, len(bands), shape)]
        return np.asarray(rng.uniform(picked[..., 0], picked[..., 1]), np.float64)

    return make


def positives(*shape):
    """Make float64 values of ``shape`` in [0.5, 2] (logs and geometric steps)."""
    return floats(*shape, lo=0.5, hi=2.0)


def with_zero_ends(n):
    """Make a float64 vector of length ``n`` with zeros at both ends (``trim_zeros``)."""

    def make(rng):
        x = rng.uniform(0.5, 2.0, n)
        x[[0, -1]] = 0.0
        return x

    return make


# --- _manipulation ---------------------------------------------------------------------------

add("append", jnp.append, floats(*S2), floats(*S1), diff=(0, 1), order=1)
add("append[axis=0]", lambda a, b: jnp.append(a, b, axis=0), floats(*S2), floats(*S2), diff=(0, 1))
add("array_split", lambda a: jnp.array_split(a, 2, axis=1), floats(*S2), diff=(0,), order=1)
add("array_split[indices]", lambda a: jnp.array_split(a, [1, 2]), floats(*S2T))
add("astype[int32]", lambda a: jnp.astype(a, jnp.int32), floats(*S2, lo=-5, hi=5))
add("astype[float32]", lambda a: jnp.astype(a, jnp.float32), ints(*S2))
add("astype[complex64]", lambda a: jnp.astype(a, jnp.complex64), floats(*S1))
add("astype[same]", lambda a: jnp.astype(a, a.dtype), floats(*S2), diff=(0,))
add("atleast_1d", jnp.atleast_1d, floats(*S0), diff=(0,), order=1)
add("atleast_2d", lambda a, b: jnp.atleast_2d(a, b), floats(*S0), floats(*S1), diff=(0, 1))
add("atleast_3d", lambda a, b: jnp.atleast_3d(a, b), floats(*S1), floats(*S2), diff=(0, 1))
add(
    "block",
    lambda a, b, c, d: jnp.block([[a, b], [c, d]]),
    floats(*S2),
    floats(*S2),
    floats(*S2),
    floats(*S2),
    diff=(0, 3),
    order=1,
)
add("block[flat]", lambda a, b: jnp.block([a, b]), floats(*S1), floats(*S1))
add("broadcast_arrays", jnp.broadcast_arrays, floats(*S1), floats(*S2), diff=(0, 1))
add("broadcast_to", lambda a: jnp.broadcast_to(a, S2), floats(*S1), diff=(0,))
add("broadcast_to[scalar]", lambda a: jnp.broadcast_to(a, S1), floats(*S0))
add("clip", lambda a: jnp.clip(a, -1.0, 1.0), banded(*S2), diff=(0,))
add(
    "clip[arrays]",
    jnp.clip,
    banded(*S2),
    floats(*S1, lo=-1.2, hi=-0.8),
    floats(*S2, lo=0.8, hi=1.2),
    diff=(0, 1, 2),
)
add("clip[max_only]", lambda a, m: jnp.clip(a, max=m), banded(*S2), floats(*S0, lo=0.8, hi=1.2))
add("column_stack", lambda a, b: jnp.column_stack([a, b]), floats(*S1), floats(*S2T), diff=(0, 1))
add("concat", lambda a, b: jnp.concat([a, b], axis=1), floats(*S2), floats(*S2), diff=(0, 1))
add("concatenate", lambda a, b: jnp.concatenate([a, b]), floats(*S2), floats(*S2), diff=(0, 1))
add(
    "concatenate[axis=None]",
    lambda a, b: jnp.concatenate((a, b), axis=None),
    floats(*S2),
    floats(*S1),
)
add("concatenate[mixed]", lambda a, b: jnp.concatenate([a, b]), floats(*S1), ints(*S1))
add("copy", jnp.copy, floats(*S2), diff=(0,))
add("dsplit", lambda a: jnp.dsplit(a, 2), floats(2, 3, 2), diff=(0,), order=1)
add("dstack", lambda a, b: jnp.dstack([a, b]), floats(*S1), floats(*S1), diff=(0, 1))
add("dstack[2d]", lambda a, b: jnp.dstack((a, b)), floats(*S2), floats(*S2))
add("expand_dims", lambda a: jnp.expand_dims(a, (0, 2)), floats(*S2), diff=(0,))
add("expand_dims[neg]", lambda a: jnp.expand_dims(a, -1), floats(*S1))
add("flip", jnp.flip, floats(*S2), diff=(0,))
add("flip[axis=1]", lambda a: jnp.flip(a, 1), floats(*S2))
add("fliplr", jnp.fliplr, floats(*S2), diff=(0,))
add("flipud", jnp.flipud, floats(*S1))
add("hsplit", lambda a: jnp.hsplit(a, 3), floats(*S2), diff=(0,), order=1)
add("hsplit[1d]", lambda a: jnp.hsplit(a, [1]), floats(*S1))
add("hstack", lambda a, b: jnp.hstack([a, b]), floats(*S2), floats(*S2), diff=(0, 1))
add("hstack[1d]", lambda a, b: jnp.hstack([a, b]), floats(*S1), floats(*S0))
add("matrix_transpose", jnp.matrix_transpose, floats(*S2), diff=(0,))
add("moveaxis", lambda a: jnp.moveaxis(a, 0, -1), floats(2, 3, 2), diff=(0,))
add("moveaxis[multi]", lambda a: jnp.moveaxis(a, (0, 1), (1, 0)), floats(*S2))

PAD = ((1, 2), (2, 1))
add(
    "pad[constant]",
    lambda a, c: jnp.pad(a, PAD, constant_values=c),
    floats(*S2),
    floats(*S0),
    diff=(0, 1),
)
add("pad[int]", lambda a: jnp.pad(a, 1), ints(*S1))
for _mode in ("edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean", "median"):
    add(
        f"pad[{_mode}]",
        lambda a, mode=_mode: jnp.pad(a, PAD, mode=mode),
        floats(*S2),
        diff=(0,),
        order=1,
    )
add(
    "pad[reflect,odd]",
    lambda a: jnp.pad(a, 4, mode="reflect", reflect_type="odd"),
    floats(*S1),
    diff=(0,),
    order=1,
)
add(
    "pad[linear_ramp]",
    lambda a, e: jnp.pad(a, PAD, mode="linear_ramp", end_values=e),
    floats(*S2),
    floats(*S0),
    diff=(0, 1),
    order=1,
)
add("pad[empty]", lambda a: jnp.pad(a, PAD, mode="empty")[1:3, 2:5], floats(*S2))
add("pad[stat_length]", lambda a: jnp.pad(a, 2, mode="mean", stat_length=2), floats(*S1))
add("permute_dims", lambda a: jnp.permute_dims(a, (1, 0)), floats(*S2), diff=(0,))
add(
    "piecewise",
    lambda a: jnp.piecewise(a, [a < 0, a >= 0], [lambda v: 2 * v, lambda v: v**2]),
    floats(*S2, lo=0.2, hi=2.0, away_from_zero=True),
    diff=(0,),
)
add(
    "piecewise[constant]",
    lambda a, s: jnp.piecewise(a, [a < -1, a > 1], [lambda v, t: t * v, 1.0, -0.5], s),
    banded(*S1),
    floats(*S0),
    diff=(0, 1),
    order=1,
)
add("ravel", jnp.ravel, floats(*S2), diff=(0,))
add("ravel[F]", lambda a: jnp.ravel(a, order="F"), floats(*S2))
add("repeat", lambda a: jnp.repeat(a, 2), floats(*S2), diff=(0,))
add("repeat[axis]", lambda a: jnp.repeat(a, [1, 2], axis=0), floats(*S2), diff=(0,), order=1)
add(
    "repeat[traced]",
    lambda a, r: jnp.repeat(a, r, axis=1, total_repeat_length=6),
    floats(*S2),
    ints(*S1, lo=0, hi=3),
    diff=(0,),
    order=1,
)
add("reshape", lambda a: jnp.reshape(a, (3, -1)), floats(*S2), diff=(0,))
add("reshape[F]", lambda a: jnp.reshape(a, (3, 2), order="F"), floats(*S2), diff=(0,), order=1)
add("resize", lambda a: jnp.resize(a, (4, 2)), floats(*S2), diff=(0,), order=1)
add("resize[1d]", lambda a: jnp.resize(a, (2, 4)), floats(*S1))
add("roll", lambda a: jnp.roll(a, 1), floats(*S2), diff=(0,))
add("roll[axes]", lambda a: jnp.roll(a, (1, -1), axis=(0, 1)), floats(*S2))
add("roll[traced]", lambda a, s: jnp.roll(a, s, axis=1), floats(*S2), ints(), diff=(0,), order=1)
add("roll[traced,flat]", lambda a, s: jnp.roll(a, s), floats(*S2T), ints())
add("rollaxis", lambda a: jnp.rollaxis(a, 1), floats(*S2), diff=(0,))
for _k in (1, 2, 3):
    add(f"rot90[k={_k}]", lambda a, k=_k: jnp.rot90(a, k), floats(*S2), diff=(0,), order=1)
add("rot90[axes]", lambda a: jnp.rot90(a, axes=(1, 0)), floats(*S2T))
add("row_stack", lambda a, b: jnp.row_stack([a, b]), floats(*S1), floats(*S2), diff=(0, 1))
add(
    "select",
    lambda c1, c2, x, y, d: jnp.select([c1, c2], [x, y], d),
    bools(*S2),
    bools(*S2),
    floats(*S2),
    floats(*S1),
    floats(*S0),
    diff=(2, 3, 4),
)
add("select[int]", lambda c, x: jnp.select([c], [x]), bools(*S1), ints(*S1))
add("split", lambda a: jnp.split(a, 3, axis=1), floats(*S2), diff=(0,), order=1)
add("split[indices]", lambda a: jnp.split(a, [1]), floats(*S2T))
add("squeeze", jnp.squeeze, floats(1, 3), diff=(0,))
add("squeeze[axis]", lambda a: jnp.squeeze(a, axis=1), floats(3, 1))
add("stack", lambda a, b: jnp.stack([a, b]), floats(*S2), floats(*S2), diff=(0, 1))
add("stack[axis=-1]", lambda a, b: jnp.stack((a, b), axis=-1), floats(*S1), floats(*S1))
add("swapaxes", lambda a: jnp.swapaxes(a, 0, 1), floats(*S2), diff=(0,))
add("tile", lambda a: jnp.tile(a, (2, 1)), floats(*S2), diff=(0,))
add("tile[1d]", lambda a: jnp.tile(a, 2), floats(*S1))
add("tile[scalar]", lambda a: jnp.tile(a, (2, 2)), floats(*S0))
add("transpose", jnp.transpose, floats(*S2), diff=(0,))
add("transpose[axes]", lambda a: jnp.transpose(a, (1, 2, 0)), floats(2, 3, 2))
# The size of trim_zeros' result depends on the values, so JAX refuses to vmap it; it
# differentiates (eagerly) where its zeros stay exact under the finite-difference steps,
# which a constant mask ensures.
_ENDS = np.array([0.0, 1.0, 1.0, 1.0, 0.0])
add(
    "trim_zeros",
    lambda a: jnp.trim_zeros(a * _ENDS),
    with_zero_ends(5),
    diff=(0,),
    vmap=False,
    order=1,
)
add("unstack", jnp.unstack, floats(*S2), diff=(0,))
add("unstack[axis=1]", lambda a: jnp.unstack(a, axis=1), floats(*S2))
add("vsplit", lambda a: jnp.vsplit(a, 2), floats(*S2), diff=(0,), order=1)
add("vstack", lambda a, b: jnp.vstack([a, b]), floats(*S1), floats(*S2), diff=(0, 1))
add("where", jnp.where, bools(*S2), floats(*S2), floats(*S1), diff=(1, 2))
add("where[scalar]", lambda c, x: jnp.where(c, x, 0.0), bools(*S1), floats(*S0))
add("where[size]", lambda c: jnp.where(c, size=3, fill_value=-1), bools(*S2))
# ndim, shape and size read only the (static) shape: the results are constants that
# vmap broadcasts, as JAX's does; asarray makes them arrays of the default int type.
add("ndim", lambda a: jnp.asarray(jnp.ndim(a)), floats(*S2))
add("shape", lambda a: jnp.asarray(jnp.shape(a)), floats(*S2))
add("size", lambda a: jnp.asarray(jnp.size(a, 1)), floats(*S2))
exclude("takes shapes, not arrays", "broadcast_shapes")

# --- _creation -------------------------------------------------------------------------------

add("empty_like", jnp.empty_like, floats(*S2))
add("full_like", lambda a, v: jnp.full_like(a, v), floats(*S2), floats(*S0), diff=(1,))
add("full_like[shape]", lambda a, v: jnp.full_like(a, v, shape=(3,)), ints(*S2), ints())
add("ones_like", jnp.ones_like, floats(*S2))
add("zeros_like", lambda a: jnp.zeros_like(a, dtype=jnp.int32), floats(*S2))
add("array", jnp.array, floats(*S2), diff=(0,))
add("array[list]", lambda a, b: jnp.array([a, b]), floats(*S1), floats(*S1), diff=(0, 1))
add("array[ndmin]", lambda a: jnp.array(a, ndmin=3), floats(*S1))
add("asarray", jnp.asarray, floats(*S2), diff=(0,))
add("asarray[dtype]", lambda a: jnp.asarray(a, dtype=jnp.float32), ints(*S1))
add("full", lambda v: jnp.full(S2, v), floats(*S0), diff=(0,))
add("full[broadcast]", lambda v: jnp.full(S2, v), floats(*S1))
add("diag", jnp.diag, floats(*S1), diff=(0,))
add("diag[k=1]", lambda a: jnp.diag(a, 1), floats(*S2), diff=(0,))
add("diag[k=-1]", lambda a: jnp.diag(a, -1), floats(*S1))
add("diagflat", lambda a: jnp.diagflat(a, -1), floats(*S2), diff=(0,), order=1)
add("tril", jnp.tril, floats(*S2), diff=(0,))
add("tril[k=1]", lambda a: jnp.tril(a, 1), floats(*S2T))
add("triu", jnp.triu, floats(*S2T), diff=(0,))
add("triu[k=-1]", lambda a: jnp.triu(a, -1), floats(*S2))
add("vander", lambda a: jnp.vander(a, 4), floats(*S1), diff=(0,))
add("vander[increasing]", lambda a: jnp.vander(a, increasing=True), floats(*S1))
add("meshgrid", jnp.meshgrid, floats(*S1), floats(2), diff=(0, 1))
add(
    "meshgrid[ij,sparse]",
    lambda a, b: jnp.meshgrid(a, b, indexing="ij", sparse=True),
    floats(*S1),
    floats(*S1),
)
add("ix_", jnp.ix_, ints(*S1), ints(2))
add(
    "fromfunction",
    lambda s: jnp.fromfunction(lambda i, j: s * i + j**2, S2),
    floats(*S0),
    diff=(0,),
)
add("linspace", lambda a, b: jnp.linspace(a, b, 4), floats(*S0), floats(*S0), diff=(0, 1))
add(
    "linspace[vector,axis=1]",
    lambda a, b: jnp.linspace(a, b, 5, endpoint=False, axis=1),
    floats(*S1),
    floats(*S1),
    diff=(0, 1),
    order=1,
)
add("logspace", lambda a, b: jnp.logspace(a, b, 4), floats(*S0), floats(*S1), diff=(0, 1))
add(
    "geomspace",
    lambda a, b: jnp.geomspace(a, b, 4),
    positives(*S0),
    positives(*S1),
    diff=(0, 1),
    order=1,
)
exclude(
    "takes only static sizes or scalars that set the shape: nothing to batch",
    "arange",
    "empty",
    "eye",
    "identity",
    "indices",
    "ones",
    "tri",
    "zeros",
)
exclude(
    "returns integer indices set by static sizes (the _from variants read only the shape)",
    "diag_indices",
    "diag_indices_from",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
)

# --- _products -------------------------------------------------------------------------------

add("cross", jnp.cross, floats(*S1), floats(*S1), diff=(0, 1))
add("cross[broadcast]", jnp.cross, floats(*S2), floats(*S1), diff=(0, 1), order=1)
add("cross[axisa=0]", lambda a, b: jnp.cross(a, b, axisa=0), floats(*S2T), floats(*S1))
add("cross[2d]", jnp.cross, floats(2), floats(2))
add("diagonal", jnp.diagonal, floats(*S2), diff=(0,))
add("diagonal[offset]", lambda a: jnp.diagonal(a, -1), floats(*S2T), diff=(0,), order=1)
add(
    "diagonal[axes]",
    lambda a: jnp.diagonal(a, 1, axis1=2, axis2=0),
    floats(2, 3, 2),
)
add("dot", jnp.dot, floats(*S1), floats(*S1), diff=(0, 1))
add("dot[matrix]", jnp.dot, floats(*S2), floats(*S2T), diff=(0, 1))
add("dot[matvec]", jnp.dot, floats(*S2), floats(*S1))
add("dot[scalar]", jnp.dot, floats(*S0), floats(*S2), diff=(0, 1), order=1)
add("dot[int]", jnp.dot, ints(*S2), ints(*S1))
add("inner", jnp.inner, floats(*S2), floats(*S1), diff=(0, 1))
add("inner[matrices]", jnp.inner, floats(*S2), floats(*S2))
add("kron", jnp.kron, floats(*S2), floats(*S2T), diff=(0, 1), order=1)
add("kron[1d]", jnp.kron, floats(*S1), floats(*S2))
add("matmul", jnp.matmul, floats(*S2), floats(*S2T), diff=(0, 1))
add("matmul[vecmat]", jnp.matmul, floats(*S1), floats(*S2T), diff=(0, 1), order=1)
add("matmul[matvec]", jnp.matmul, floats(*S2), floats(*S1))
add("matmul[stacked]", jnp.matmul, floats(2, 2, 3), floats(*S2T))
add("matmul[complex]", jnp.matmul, complexes(*S2), floats(*S2T))
add("matvec", jnp.matvec, floats(*S2), floats(*S1), diff=(0, 1))
add("vecmat", jnp.vecmat, floats(*S1), floats(*S2T), diff=(0, 1))
add("vecmat[complex]", jnp.vecmat, complexes(*S1), complexes(*S2T))
add("outer", jnp.outer, floats(*S1), floats(*S2), diff=(0, 1))
add("tensordot", lambda a, b: jnp.tensordot(a, b, 1), floats(*S2), floats(*S2T), diff=(0, 1))
add(
    "tensordot[pairs]",
    lambda a, b: jnp.tensordot(a, b, ([0], [1])),
    floats(*S2),
    floats(*S2T),
    diff=(0, 1),
    order=1,
)
add("tensordot[axes=2]", jnp.tensordot, floats(*S2), floats(*S2))
add("tensordot[axes=0]", lambda a, b: jnp.tensordot(a, b, 0), floats(*S1), floats(*S2))
add("trace", jnp.trace, floats(*S2), diff=(0,))
add("trace[offset]", lambda a: jnp.trace(a, 1), floats(*S2))
add("trace[axes]", lambda a: jnp.trace(a, axis1=1, axis2=2), floats(2, 3, 2))
add("vdot", jnp.vdot, floats(*S2), floats(*S2), diff=(0, 1))
add("vdot[complex]", jnp.vdot, complexes(*S1), complexes(*S1), diff=(0, 1), order=1)
add("vecdot", jnp.vecdot, floats(*S2), floats(*S1), diff=(0, 1))
add("vecdot[axis=0]", lambda a, b: jnp.vecdot(a, b, axis=0), floats(*S2), floats(*S2))
add("vecdot[complex]", jnp.vecdot, complexes(*S1), complexes(*S1))

# --- _einsum ---------------------------------------------------------------------------------


def _einsum(subscripts):
    return lambda *operands: jnp.einsum(subscripts, *operands)


add("einsum[ij,jk]", _einsum("ij,jk->ik"), floats(*S2), floats(*S2T), diff=(0, 1))
add(
    "einsum[bij,bjk]",
    _einsum("bij,bjk->bik"),
    floats(2, 2, 3),
    floats(2, 3, 2),
    diff=(0, 1),
    order=1,
)
add("einsum[ii]", _einsum("ii"), floats(3, 3), diff=(0,))
add("einsum[ii->i]", _einsum("ii->i"), floats(3, 3))
add("einsum[i,j]", _einsum("i,j->ij"), floats(*S1), floats(2), diff=(0, 1))
add(
    "einsum[ij,jk,k]",
    _einsum("ij,jk,k->i"),
    floats(*S2),
    floats(*S2T),
    floats(2),
    diff=(0, 1, 2),
    order=1,
)
add("einsum[ij->]", _einsum("ij->"), floats(*S2), diff=(0,))
add("einsum[ellipsis]", _einsum("...j,jk"), floats(*S2), floats(*S2T))
add("einsum[implicit]", _einsum("ij,jk"), floats(*S2), ints(*S2T))
add("einsum[broadcast]", _einsum("ij,j->ij"), floats(*S2), floats(*S1))
exclude("returns a contraction path and a report, no arrays", "einsum_path")
