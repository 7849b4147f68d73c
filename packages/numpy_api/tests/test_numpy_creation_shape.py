"""modjax.numpy creation and shape manipulation against numpy, eagerly and under jit.

Result dtypes are checked against a table recorded from JAX 0.10.2 (x64 off).
Shapes and dtypes come from small pools so compiled programs are shared.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.core import ConcretizationTypeError

BF16 = np.dtype(ml_dtypes.bfloat16)
SHAPES = [(), (0,), (4,), (2, 3), (2, 0, 3), (1, 3, 1), (2, 1, 4)]
DTYPES = ["float32", "int8", "bool", "bfloat16", "uint8"]


def rand(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 6, size=shape).astype(dtype)
    return rng.uniform(-5, 5, shape).astype(dtype)


def wide(x):
    x = np.asarray(x)
    return x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == BF16 else x


def assert_same(got, expected, dtype=None, tol=0.0):
    """Compare an Array (or a list/tuple of them) with numpy's result, shapes and values."""
    if isinstance(expected, list | tuple):
        assert isinstance(got, list | tuple) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e, dtype, tol)
        return
    got_np = np.asarray(got)
    assert got_np.shape == np.shape(expected), (got_np.shape, np.shape(expected))
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    if tol:
        np.testing.assert_allclose(wide(got_np), wide(expected), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(wide(got_np), wide(expected))


def eager_and_jit(fn, *args):
    """Return ``fn(*args)`` eagerly and under jit (array arguments traced)."""
    return fn(*args), jit(fn)(*args)


# --- result dtypes (recorded from JAX 0.10.2; "*" is a weak type) ------------------------------

JAX_DTYPES = {
    "linspace_i8": (lambda: jnp.linspace(jnp.int8(0), jnp.int8(10), 5), "float32"),
    "linspace_int_dtype": (lambda: jnp.linspace(0, 10, 5, dtype=int), "int32"),
    "linspace_f16": (lambda: jnp.linspace(jnp.float16(0), 1, 5), "float16"),
    "logspace": (lambda: jnp.logspace(0, 2, 3), "float32"),
    "geomspace": (lambda: jnp.geomspace(1, 100, 3), "float32"),
    "arange_f": (lambda: jnp.arange(0.5, 3), "float32"),
    "arange_i": (lambda: jnp.arange(1, 7, 2), "int32"),
    "arange_i8": (lambda: jnp.arange(jnp.int8(3)), "int8"),
    "arange_dtype": (lambda: jnp.arange(3, dtype=jnp.float16), "float16"),
    "eye": (lambda: jnp.eye(3, 4, 1), "float32"),
    "eye_int": (lambda: jnp.eye(2, dtype=int), "int32"),
    "identity": (lambda: jnp.identity(2, jnp.bfloat16), "bfloat16"),
    "tri": (lambda: jnp.tri(3, 2, -1), "float32"),
    "tri_int": (lambda: jnp.tri(3, dtype=jnp.int8), "int8"),
    "tril_i8": (lambda: jnp.tril(jnp.ones((2, 3), jnp.int8)), "int8"),
    "meshgrid": (
        lambda: jnp.meshgrid(jnp.ones(2, jnp.int8), jnp.ones(3, jnp.float16))[1],
        "float16",
    ),
    "diag": (lambda: jnp.diag(jnp.ones(3, jnp.uint8), -1), "uint8"),
    "diagflat": (lambda: jnp.diagflat(jnp.ones((2, 2), jnp.bool_)), "bool"),
    "indices": (lambda: jnp.indices((2, 3)), "int32"),
    "indices_dtype": (lambda: jnp.indices((2, 3), dtype=jnp.int8), "int8"),
    "fromfunction": (lambda: jnp.fromfunction(lambda i, j: i + j, (2, 3)), "float32"),
    "fromfunction_int": (lambda: jnp.fromfunction(lambda i, j: i + j, (2, 3), dtype=int), "int32"),
    "mgrid": (lambda: jnp.mgrid[0:3, 0:2], "int32"),
    "mgrid_complex": (lambda: jnp.mgrid[0:1:3j], "float32"),
    "mgrid_float": (lambda: jnp.mgrid[0:1:0.25], "float32"),
    "vander_i8": (lambda: jnp.vander(jnp.ones(3, jnp.int8)), "int8"),
    "vander_f16": (lambda: jnp.vander(jnp.ones(3, jnp.float16), 2), "float16"),
    "full_weak": (lambda: jnp.full((2,), 3), "int32*"),
    "full_like_shape": (lambda: jnp.full_like(jnp.ones(3, jnp.int8), 2.5, shape=(2,)), "int8"),
    "zeros_like_dtype": (
        lambda: jnp.zeros_like(jnp.ones(3, jnp.int8), dtype=jnp.float16),
        "float16",
    ),
    "array_ndmin": (lambda: jnp.array(1.0, ndmin=2), "float32*"),
    "concat_i8_u8": (
        lambda: jnp.concatenate([jnp.ones(2, jnp.int8), jnp.ones(2, jnp.uint8)]),
        "int16",
    ),
    "stack_weak": (lambda: jnp.stack([1.0, 2.0]), "float32*"),
    "hstack_mixed": (
        lambda: jnp.hstack([jnp.ones(2, jnp.float16), jnp.ones(2, jnp.int32)]),
        "float16",
    ),
    "where_weak": (lambda: jnp.where(True, 1, 2.0), "float32*"),
    "where_i8_py": (lambda: jnp.where(True, jnp.ones(2, jnp.int8), 2), "int8"),
    "select": (lambda: jnp.select([jnp.array([True, False])], [jnp.ones(2, jnp.int8)], 5), "int8"),
    "clip_i8_float": (lambda: jnp.clip(jnp.ones(3, jnp.int8), 0.5, 1.5), "float32*"),
    "clip_i8_i32": (lambda: jnp.clip(jnp.ones(3, jnp.int8), jnp.int32(1)), "int32"),
    "pad_i8": (lambda: jnp.pad(jnp.ones(3, jnp.int8), 1, constant_values=2.7), "int8"),
    "pad_mean_i8": (lambda: jnp.pad(jnp.ones(3, jnp.int8), 1, mode="mean"), "int8"),
    "repeat_bool": (lambda: jnp.repeat(jnp.ones(3, bool), 2), "bool"),
    "tile_bf16": (lambda: jnp.tile(jnp.ones(3, jnp.bfloat16), 2), "bfloat16"),
    "atleast_weak": (lambda: jnp.atleast_2d(1.0), "float32*"),
    "broadcast_arrays_weak": (lambda: jnp.broadcast_arrays(jnp.ones(3), 1.0)[1], "float32*"),
    "piecewise_int": (
        lambda: jnp.piecewise(jnp.arange(4), [jnp.arange(4) < 2], [lambda v: v * 1.5, 7]),
        "int32",
    ),
    "resize_u8": (lambda: jnp.resize(jnp.ones(3, jnp.uint8), (2, 2)), "uint8"),
}


@pytest.mark.parametrize("name", list(JAX_DTYPES))
def test_result_dtypes_match_jax(name):
    fn, expected = JAX_DTYPES[name]
    (out,) = make_jaxpr(fn)().out_avals  # abstract: no compilation
    assert out.dtype.name + ("*" if out.weak_type else "") == expected


# --- creation -------------------------------------------------------------------------------

CREATION = [
    ("linspace", lambda: jnp.linspace(0, 1, 7), lambda: np.linspace(0, 1, 7)),
    (
        "linspace_noend",
        lambda: jnp.linspace(-2, 3, 4, endpoint=False),
        lambda: np.linspace(-2, 3, 4, endpoint=False),
    ),
    (
        "linspace_arrays",
        lambda: jnp.linspace(np.array([0.0, 1.0]), np.array([[2.0], [4.0]]), 3, axis=-1),
        lambda: np.linspace(np.array([0.0, 1.0]), np.array([[2.0], [4.0]]), 3, axis=-1),
    ),
    (
        "linspace_axis1",
        lambda: jnp.linspace(np.zeros(2), 1.0, 3, axis=1),
        lambda: np.linspace(np.zeros(2), 1.0, 3, axis=1),
    ),
    (
        "linspace_int",
        lambda: jnp.linspace(-3, 10, 5, dtype=int),
        lambda: np.linspace(-3, 10, 5).astype(np.float64).__floordiv__(1),
    ),
    ("linspace_one", lambda: jnp.linspace(2, 5, 1), lambda: np.linspace(2, 5, 1)),
    ("linspace_zero", lambda: jnp.linspace(2, 5, 0), lambda: np.linspace(2, 5, 0)),
    ("logspace", lambda: jnp.logspace(0, 3, 4), lambda: np.logspace(0, 3, 4)),
    (
        "logspace_base",
        lambda: jnp.logspace(1, 4, 4, base=2.0, endpoint=False),
        lambda: np.logspace(1, 4, 4, base=2.0, endpoint=False),
    ),
    ("geomspace", lambda: jnp.geomspace(1, 1000, 4), lambda: np.geomspace(1, 1000, 4)),
    ("geomspace_neg", lambda: jnp.geomspace(-1, -16, 5), lambda: np.geomspace(-1, -16, 5)),
    ("arange_stop", lambda: jnp.arange(5), lambda: np.arange(5)),
    ("arange_float", lambda: jnp.arange(0.5, 3), lambda: np.arange(0.5, 3)),
    ("arange_step", lambda: jnp.arange(10, 1, -3), lambda: np.arange(10, 1, -3)),
    ("arange_fstep", lambda: jnp.arange(-3.5, 3, 0.7), lambda: np.arange(-3.5, 3, 0.7)),
    ("arange_empty", lambda: jnp.arange(3, 1), lambda: np.arange(3, 1)),
    ("eye", lambda: jnp.eye(3, 5, 2), lambda: np.eye(3, 5, 2)),
    ("eye_neg", lambda: jnp.eye(4, 2, -1), lambda: np.eye(4, 2, -1)),
    ("identity", lambda: jnp.identity(3, int), lambda: np.identity(3, int)),
    ("tri", lambda: jnp.tri(3, 4, 1), lambda: np.tri(3, 4, 1)),
    (
        "tril",
        lambda: jnp.tril(np.arange(24).reshape(2, 3, 4), -1),
        lambda: np.tril(np.arange(24).reshape(2, 3, 4), -1),
    ),
    (
        "triu",
        lambda: jnp.triu(np.arange(12).reshape(3, 4), 1),
        lambda: np.triu(np.arange(12).reshape(3, 4), 1),
    ),
    (
        "meshgrid_xy",
        lambda: jnp.meshgrid(np.arange(3), np.arange(2.0), np.arange(4)),
        lambda: np.meshgrid(np.arange(3), np.arange(2.0), np.arange(4)),
    ),
    (
        "meshgrid_ij_sparse",
        lambda: jnp.meshgrid(np.arange(3), np.arange(2), indexing="ij", sparse=True),
        lambda: np.meshgrid(np.arange(3), np.arange(2), indexing="ij", sparse=True),
    ),
    ("diag_build", lambda: jnp.diag(np.arange(1, 4), 1), lambda: np.diag(np.arange(1, 4), 1)),
    ("diag_build_neg", lambda: jnp.diag(np.arange(1, 4), -2), lambda: np.diag(np.arange(1, 4), -2)),
    (
        "diag_extract",
        lambda: jnp.diag(np.arange(12).reshape(3, 4), -1),
        lambda: np.diag(np.arange(12).reshape(3, 4), -1),
    ),
    (
        "diagflat",
        lambda: jnp.diagflat(np.arange(4).reshape(2, 2), 1),
        lambda: np.diagflat(np.arange(4).reshape(2, 2), 1),
    ),
    ("indices", lambda: jnp.indices((2, 3)), lambda: np.indices((2, 3))),
    (
        "indices_sparse",
        lambda: jnp.indices((2, 3), sparse=True),
        lambda: np.indices((2, 3), sparse=True),
    ),
    (
        "fromfunction",
        lambda: jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
        lambda: np.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
    ),
    ("mgrid", lambda: jnp.mgrid[0:3, 1:5:2], lambda: np.mgrid[0:3, 1:5:2]),
    ("mgrid_complex", lambda: jnp.mgrid[0:1:5j], lambda: np.mgrid[0:1:5j]),
    ("ogrid", lambda: jnp.ogrid[0:3, 0:2], lambda: np.ogrid[0:3, 0:2]),
    ("vander", lambda: jnp.vander(np.array([1, 2, 3])), lambda: np.vander(np.array([1, 2, 3]))),
    (
        "vander_inc",
        lambda: jnp.vander(np.array([0.5, -2.0]), 4, increasing=True),
        lambda: np.vander(np.array([0.5, -2.0]), 4, increasing=True),
    ),
    ("zeros", lambda: jnp.zeros((2, 0, 3), jnp.int8), lambda: np.zeros((2, 0, 3), np.int8)),
    ("full_array", lambda: jnp.full((2, 3), np.arange(3)), lambda: np.full((2, 3), np.arange(3))),
    (
        "full_like",
        lambda: jnp.full_like(np.ones((2, 2)), 7, shape=(3,)),
        lambda: np.full_like(np.ones((2, 2)), 7, shape=(3,)),
    ),
    (
        "array_nested",
        lambda: jnp.array([jnp.ones(2), np.zeros(2)], ndmin=3),
        lambda: np.array([np.ones(2), np.zeros(2)], ndmin=3),
    ),
]


CREATION += [
    ("tril_indices", lambda: jnp.tril_indices(3, 1, 4), lambda: np.tril_indices(3, 1, 4)),
    ("triu_indices", lambda: jnp.triu_indices(4, -1), lambda: np.triu_indices(4, -1)),
    (
        "tril_indices_from",
        lambda: jnp.tril_indices_from(np.ones((2, 5))),
        lambda: np.tril_indices_from(np.ones((2, 5))),
    ),
    (
        "triu_indices_from",
        lambda: jnp.triu_indices_from(np.ones((3, 2)), 1),
        lambda: np.triu_indices_from(np.ones((3, 2)), 1),
    ),
    ("diag_indices", lambda: jnp.diag_indices(3, 3), lambda: np.diag_indices(3, 3)),
    (
        "diag_indices_from",
        lambda: jnp.diag_indices_from(np.ones((2, 2))),
        lambda: np.diag_indices_from(np.ones((2, 2))),
    ),
    (
        "ix_",
        lambda: jnp.ix_(np.arange(2), np.array([3, 1, 0])),
        lambda: np.ix_(np.arange(2), np.array([3, 1, 0])),
    ),
    (
        "block",
        lambda: jnp.block([[np.ones((2, 2)), np.zeros((2, 1))], [np.arange(3.0)]]),
        lambda: np.block([[np.ones((2, 2)), np.zeros((2, 1))], [np.arange(3.0)]]),
    ),
    ("block_flat", lambda: jnp.block([np.ones(2), 3.0]), lambda: np.block([np.ones(2), 3.0])),
    (
        "block_3d",
        lambda: jnp.block([[[np.ones((1, 2, 2))], [np.zeros((1, 1, 2))]]]),
        lambda: np.block([[[np.ones((1, 2, 2))], [np.zeros((1, 1, 2))]]]),
    ),
]


@pytest.mark.parametrize("name,got,expected", CREATION, ids=[c[0] for c in CREATION])
def test_creation_matches_numpy(name, got, expected):
    out, ref = got(), expected()
    if isinstance(ref, list | tuple):
        for o, r in zip(out, ref, strict=True):
            assert_same(o, np.asarray(r), tol=1e-6)
    else:
        assert_same(out, np.asarray(ref), tol=1e-6 if np.asarray(ref).dtype.kind == "f" else 0)


@given(data=st.data())
def test_linspace_with_traced_bounds(data):
    start = data.draw(st.sampled_from([np.float32(-2.5), np.array([0.0, 1.0], np.float32)]))
    stop = data.draw(st.sampled_from([np.float32(4.0), np.array([[3.0], [-1.0]], np.float32)]))
    num = data.draw(st.sampled_from([0, 1, 5]))
    endpoint = data.draw(st.booleans())
    axis = data.draw(st.sampled_from([0, -1]))
    expected, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, axis=axis)

    def fn(a, b):
        return jnp.linspace(a, b, num, endpoint=endpoint, retstep=True, axis=axis)

    out, got_step = jit(fn)(start, stop)
    assert out.dtype == np.float32
    assert_same(out, expected, tol=1e-5)
    if num > (1 if endpoint else 0):
        np.testing.assert_allclose(np.asarray(got_step), step, rtol=1e-6)
    eager, _ = fn(jnp.asarray(start), jnp.asarray(stop))
    assert_same(eager, expected, tol=1e-5)


# Values recorded from JAX 0.10.2: the sequences are computed on the device in the
# computation dtype, start * (1 - t) + stop * t, so they are not numpy's roundings
# (geomspace's ends are not exact either).
SEQUENCES_FROM_JAX = [
    (
        lambda: jnp.linspace(0, 1, 7, endpoint=False),
        [
            0.0,
            0.1428571492433548,
            0.2857142984867096,
            0.4285714626312256,
            0.5714285969734192,
            0.7142857313156128,
            0.8571429252624512,
        ],
    ),
    (
        lambda: jnp.linspace(1, 100, 6),
        [1.0, 20.799999237060547, 40.599998474121094, 60.400001525878906, 80.19999694824219, 100.0],
    ),
    (lambda: jnp.logspace(0, 3, 4), [1.0, 10.0, 100.0, 1000.0]),
    (lambda: jnp.geomspace(1, 1000, 4), [1.0, 10.00000286102295, 100.00005340576172, 1000.0]),
    (
        lambda: jnp.geomspace(-2, -50, 5),
        [-2.0, -4.4721360206604, -10.0, -22.360681533813477, -50.00000762939453],
    ),
    (lambda: jnp.linspace(2, 9, 5, dtype=jnp.bfloat16), [2.0, 3.75, 5.5, 7.25, 9.0]),
]


@pytest.mark.parametrize(("make", "expected"), SEQUENCES_FROM_JAX)
def test_sequences_are_jaxs_bits(make, expected):
    # Eagerly only: under a jit of constants XLA folds them at compile time, in JAX too.
    assert np.asarray(make(), np.float32).tolist() == expected


def test_sequences_are_named_jit_programs():
    text = str(make_jaxpr(lambda a: jnp.geomspace(a, 1.0, 5))(2.0))
    assert all(f"name={n}" in text for n in ("_geomspace", "_logspace", "_linspace"))


def test_creation_details_from_jax():
    assert jnp.linspace(0, 10, 5, dtype=int).tolist() == [0, 2, 5, 7, 10]
    out, step = jnp.linspace(0, 1, 1, retstep=True)
    assert out.tolist() == [0.0] and np.isnan(float(step))
    assert jnp.arange(0, 1, 0.1).tolist()[-1] == np.float32(0.90000004)  # start + step * i
    assert jnp.pad(jnp.arange(6).reshape(2, 3), 1, constant_values=2.7)[0].tolist() == [2] * 5
    with pytest.raises(ConcretizationTypeError):
        jit(lambda n: jnp.arange(n))(3)
    with pytest.raises(ValueError, match="at least 2D"):
        jnp.tril(jnp.ones(3))
    with pytest.raises(ValueError, match="1d or 2d"):
        jnp.diag(jnp.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="indexing"):
        jnp.meshgrid(jnp.ones(2), indexing="xx")
    assert np.isnan(np.asarray(jnp.geomspace(0, 1, 3))).all()  # JAX: NaNs, not numpy's error
    with pytest.raises(ValueError):
        jnp.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        jnp.vander(jnp.ones(3, bool))
    nested = jit(lambda v: jnp.array([v, v * 2], ndmin=3))(np.arange(2.0, dtype=np.float32))
    assert nested.shape == (1, 2, 2) and nested.tolist() == [[[0.0, 1.0], [0.0, 2.0]]]
    x = jnp.ones(3)
    assert jnp.asarray(x) is x and jnp.array(x) is not x
    with pytest.raises(ValueError, match="depths"):
        jnp.block([[1.0], 2.0])
    with pytest.raises(TypeError, match="tuple"):
        jnp.block((1.0, 2.0))


@pytest.mark.parametrize("k", [-(2**70), -(2**40), -4, -1, 0, 2, 3, 2**40, np.int64(2**62)])
def test_eye_any_integer_offset(k):
    # JAX 0.10.2: an offset beyond the matrix (even one past int64) gives zeros.
    expected = np.eye(3, 4, int(max(-4, min(int(k), 5))))
    np.testing.assert_array_equal(np.asarray(jnp.eye(3, 4, k)), expected)


def test_eye_array_offsets_and_errors():
    expected = np.eye(3, 3, -1)
    np.testing.assert_array_equal(np.asarray(jnp.eye(3, k=jnp.asarray(-1))), expected)
    np.testing.assert_array_equal(np.asarray(jit(lambda k: jnp.eye(3, k=k))(-1)), expected)
    huge = jnp.asarray(np.int32(-(2**31)))  # clamped, so adding it to the row index cannot wrap
    assert not np.asarray(jnp.eye(2, k=huge)).any()
    assert np.asarray(jnp.eye(2, k=np.uint8(1))).tolist() == [[0.0, 1.0], [0.0, 0.0]]
    assert jnp.eye(0, 2**40).shape == (0, 2**40)
    # JAX 0.10.2 raises ValueError for a k that is not a scalar integer (True is an int).
    for bad in (1.0, 1.5, np.array([1]), jnp.asarray(True), jnp.asarray(1.0), jnp.ones(2, int)):
        with pytest.raises(ValueError, match="k must be a scalar integer"):
            jnp.eye(2, k=bad)
    assert jnp.eye(2, k=True).tolist() == [[0.0, 1.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match="negative dimensions"):
        jnp.eye(-1)
    with pytest.raises(ValueError, match="negative dimensions"):
        jnp.eye(3, -2)
    with pytest.raises(TypeError, match="N must be a concrete integer"):
        jnp.eye(3.0)


@pytest.mark.parametrize(
    "fill,dtype",
    [(False, "bool"), (True, "bool"), (0, "int32"), (1.5, "float32"), (2j, "complex64")]
    + [(np.bool_(True), "bool")],
)
def test_full_scalar_shape_makes_an_array(fill, dtype):
    # A bool fill once came back as the Python bool itself (lax took it for an array).
    out = jnp.full((), fill)
    assert type(out) is type(jnp.zeros(())) and out.shape == ()
    assert out.item() == fill and out.dtype == dtype


# --- shape manipulation, generated ----------------------------------------------------------


def draw_array(data, shapes=SHAPES, dtypes=DTYPES):
    shape = data.draw(st.sampled_from(shapes), label="shape")
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    return rand(rng, shape, dtype)


def draw_axis(data, ndim, allow_none=False):
    choices = list(range(-ndim, ndim)) + ([None] if allow_none else [])
    return data.draw(st.sampled_from(choices), label="axis") if choices else None


def check_unary(data, jfn, nfn, x):
    expected = nfn(x)
    for got in eager_and_jit(jfn, x):
        assert_same(
            got, expected, dtype=x.dtype if not isinstance(expected, list | tuple) else None
        )


@given(data=st.data())
def test_reshape_ravel_transpose(data):
    x = draw_array(data)
    order = data.draw(st.sampled_from(["C", "F"]))
    new = data.draw(st.sampled_from([(-1,), (x.size,), (1, -1), (-1, 1)]))
    check_unary(
        data,
        lambda a: jnp.reshape(a, new, order=order),
        lambda a: np.reshape(a, new, order=order),
        x,
    )
    check_unary(data, lambda a: jnp.ravel(a, order), lambda a: np.ravel(a, order), x)
    perm = tuple(data.draw(st.permutations(range(x.ndim))))
    check_unary(data, lambda a: jnp.transpose(a, perm), lambda a: np.transpose(a, perm), x)
    check_unary(data, lambda a: jnp.permute_dims(a, perm), lambda a: np.transpose(a, perm), x)


@given(data=st.data())
def test_axis_movers(data):
    x = draw_array(data, shapes=[s for s in SHAPES if len(s) >= 2])
    n = x.ndim
    a, b = draw_axis(data, n), draw_axis(data, n)
    check_unary(data, lambda v: jnp.swapaxes(v, a, b), lambda v: np.swapaxes(v, a, b), x)
    check_unary(data, lambda v: jnp.moveaxis(v, a, b), lambda v: np.moveaxis(v, a, b), x)
    check_unary(data, lambda v: jnp.rollaxis(v, a, 1), lambda v: np.rollaxis(v, a, 1), x)
    check_unary(data, jnp.matrix_transpose, lambda v: np.swapaxes(v, -1, -2), x)
    check_unary(
        data,
        lambda v: jnp.moveaxis(v, (0, 1), (-1, 0)),
        lambda v: np.moveaxis(v, (0, 1), (-1, 0)),
        x,
    )


@given(data=st.data())
def test_squeeze_expand_dims_atleast(data):
    x = draw_array(data)
    check_unary(data, jnp.squeeze, np.squeeze, x)
    ones = tuple(i for i, d in enumerate(x.shape) if d == 1)
    if ones:
        check_unary(data, lambda v: jnp.squeeze(v, ones[-1]), lambda v: np.squeeze(v, ones[-1]), x)
    axes = data.draw(st.sampled_from([0, -1, (0, -1), (1, 0)]))
    check_unary(data, lambda v: jnp.expand_dims(v, axes), lambda v: np.expand_dims(v, axes), x)
    for j, n in (
        (jnp.atleast_1d, np.atleast_1d),
        (jnp.atleast_2d, np.atleast_2d),
        (jnp.atleast_3d, np.atleast_3d),
    ):
        check_unary(data, j, n, x)


@given(data=st.data())
def test_broadcasting_functions(data):
    x = draw_array(data, shapes=[(), (3,), (2, 1), (1, 3)])
    target = data.draw(st.sampled_from([(2, 3), (4, 2, 3)]))
    check_unary(
        data, lambda v: jnp.broadcast_to(v, target), lambda v: np.broadcast_to(v, target), x
    )
    y = np.ones((2, 1, 1), x.dtype)
    expected = np.broadcast_arrays(x, y)
    for got in eager_and_jit(jnp.broadcast_arrays, x, y):
        assert_same(got, expected)
    assert jnp.broadcast_shapes(x.shape, (2, 1, 1), ()) == np.broadcast_shapes(
        x.shape, (2, 1, 1), ()
    )


@given(data=st.data())
def test_joining(data):
    shape = data.draw(st.sampled_from([(3,), (2, 3), (2, 0, 3), (1, 3, 2)]))
    dtypes = [data.draw(st.sampled_from(DTYPES), label=f"dtype{i}") for i in range(3)]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    xs = [rand(rng, shape, d) for d in dtypes]
    expected_dtype = jnp.result_type(*xs)
    axis = draw_axis(data, len(shape), allow_none=True)
    cases = [
        (lambda *a: jnp.concatenate(a, axis=axis), lambda *a: np.concatenate(a, axis=axis)),
        (lambda *a: jnp.concat(a, axis=axis), lambda *a: np.concatenate(a, axis=axis)),
        (lambda *a: jnp.stack(a, axis=axis or 0), lambda *a: np.stack(a, axis=axis or 0)),
        (lambda *a: jnp.hstack(a), lambda *a: np.hstack(a)),
        (lambda *a: jnp.vstack(a), lambda *a: np.vstack(a)),
        (lambda *a: jnp.dstack(a), lambda *a: np.dstack(a)),
        (lambda *a: jnp.column_stack(a), lambda *a: np.column_stack(a)),
    ]
    for jfn, nfn in cases:
        expected = nfn(*[x.astype(expected_dtype) for x in xs])
        for got in eager_and_jit(jfn, *xs):
            assert_same(got, expected, dtype=expected_dtype)
    pair_dtype = jnp.result_type(xs[0], xs[1])
    expected = np.append(xs[0].astype(pair_dtype), xs[1].astype(pair_dtype), axis=axis)
    for got in eager_and_jit(lambda a, b: jnp.append(a, b, axis=axis), xs[0], xs[1]):
        assert_same(got, expected, dtype=pair_dtype)


@given(data=st.data())
def test_splitting(data):
    x = draw_array(data, shapes=[(6,), (4, 6), (2, 6, 3), (0, 6)])
    axis = draw_axis(data, x.ndim)
    n = x.shape[axis]
    sections = data.draw(st.sampled_from([1, 2, 3, [1, 4], [2, -1, 9], np.array([0, 3])]))
    array_sections = data.draw(st.sampled_from([1, 4, 5]))
    cases = [
        (
            lambda v: jnp.array_split(v, array_sections, axis),
            lambda v: np.array_split(v, array_sections, axis),
        )
    ]
    if not isinstance(sections, int) or n % sections == 0:
        cases.append(
            (lambda v: jnp.split(v, sections, axis), lambda v: np.split(v, sections, axis))
        )
    if x.ndim >= 2 and x.shape[1] % 2 == 0:
        cases.append((lambda v: jnp.hsplit(v, 2), lambda v: np.hsplit(v, 2)))
    if x.ndim >= 3:
        cases.append((lambda v: jnp.dsplit(v, [1]), lambda v: np.dsplit(v, [1])))
    if x.ndim >= 2:
        cases.append((lambda v: jnp.vsplit(v, [1]), lambda v: np.vsplit(v, [1])))
    cases.append((lambda v: jnp.unstack(v, axis=axis), lambda v: tuple(np.moveaxis(v, axis, 0))))
    for jfn, nfn in cases:
        expected = nfn(x)
        for got in eager_and_jit(jfn, x):
            assert_same(got, list(expected) if isinstance(got, list) else tuple(expected))
    with pytest.raises(ValueError, match="equal division"):
        jnp.split(np.arange(5), 2)


@given(data=st.data())
def test_tile_repeat_resize(data):
    x = draw_array(data, shapes=[(), (3,), (2, 3), (0, 2)])
    reps = data.draw(st.sampled_from([2, (2, 1), (1, 0, 2), (3,)]))
    check_unary(data, lambda v: jnp.tile(v, reps), lambda v: np.tile(v, reps), x)
    axis = draw_axis(data, x.ndim, allow_none=True)
    length = x.size if axis is None else x.shape[axis]
    count = data.draw(st.sampled_from([0, 1, 3]))
    check_unary(data, lambda v: jnp.repeat(v, count, axis), lambda v: np.repeat(v, count, axis), x)
    per_element = np.arange(length) % 3
    check_unary(
        data,
        lambda v: jnp.repeat(v, per_element, axis),
        lambda v: np.repeat(v, per_element, axis),
        x,
    )
    new_shape = data.draw(st.sampled_from([(5,), (2, 4), (0,)]))
    expected = np.resize(x, new_shape) if x.size else np.zeros(new_shape, x.dtype)
    for got in eager_and_jit(lambda v: jnp.resize(v, new_shape), x):
        assert_same(got, expected, dtype=x.dtype)


def test_repeat_with_traced_counts():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    counts = np.array([2, 0, 3])
    fn = jit(lambda v, r: jnp.repeat(v, r, axis=1, total_repeat_length=5))
    assert_same(fn(x, counts), np.repeat(x, counts, axis=1))
    short = jit(lambda v, r: jnp.repeat(v, r, axis=1, total_repeat_length=7))(x, counts)
    assert_same(short, np.repeat(x, [2, 0, 5], axis=1))  # the last element fills the rest
    cut = jnp.repeat(jnp.arange(3), 2, total_repeat_length=4)
    assert cut.tolist() == [0, 0, 1, 1]
    # Concrete counts fill with the axis' last element too, not the last repeated one (JAX).
    for r, expected in (
        ([3, 0, 0], [0, 0, 0, 2, 2]),
        ([0, 0, 0], [2] * 5),
        ([0, 1, 0], [1, 2, 2, 2, 2]),
    ):
        eager = jnp.repeat(jnp.arange(3), np.array(r), total_repeat_length=5)
        traced = jit(lambda v, c: jnp.repeat(v, c, total_repeat_length=5))(
            jnp.arange(3), np.array(r)
        )
        assert eager.tolist() == traced.tolist() == expected, r
    with pytest.raises(ConcretizationTypeError):
        jit(lambda v, r: jnp.repeat(v, r))(x, counts)


@given(data=st.data())
def test_flip_roll_rot90(data):
    x = draw_array(data, shapes=[(4,), (2, 3), (2, 0, 3), (3, 1, 4)])
    axis = draw_axis(data, x.ndim, allow_none=True)
    check_unary(data, lambda v: jnp.flip(v, axis), lambda v: np.flip(v, axis), x)
    if x.ndim >= 2:
        check_unary(data, jnp.fliplr, np.fliplr, x)
    check_unary(data, jnp.flipud, np.flipud, x)
    shift = data.draw(st.sampled_from([0, 1, -2, 7]))
    check_unary(data, lambda v: jnp.roll(v, shift, axis), lambda v: np.roll(v, shift, axis), x)
    if x.ndim >= 2:
        check_unary(
            data, lambda v: jnp.roll(v, (1, -2), (0, 1)), lambda v: np.roll(v, (1, -2), (0, 1)), x
        )
        k = data.draw(st.sampled_from([-1, 0, 1, 2, 3, 5]))
        axes = data.draw(st.sampled_from([(0, 1), (1, 0), (-1, 0)]))
        check_unary(data, lambda v: jnp.rot90(v, k, axes), lambda v: np.rot90(v, k, axes), x)
    # a traced shift
    traced = jit(lambda v, s: jnp.roll(v, s, axis))(x, np.int32(shift))
    assert_same(traced, np.roll(x, shift, axis))


PAD_MODES = [
    ("constant", {}),
    ("constant", {"constant_values": ((1, 2), (3, 4))}),
    ("empty", {}),
    ("edge", {}),
    ("wrap", {}),
    ("reflect", {}),
    ("reflect", {"reflect_type": "odd"}),
    ("symmetric", {}),
    ("symmetric", {"reflect_type": "odd"}),
    ("linear_ramp", {"end_values": ((5, -3), (1, 2))}),
    ("maximum", {}),
    ("minimum", {"stat_length": 2}),
    ("mean", {}),
    ("mean", {"stat_length": ((1, 2), (3, 1))}),
]


@pytest.mark.parametrize(
    "mode,kwargs", PAD_MODES, ids=[f"{m}{i}" for i, (m, _) in enumerate(PAD_MODES)]
)
@given(data=st.data())
def test_pad_matches_numpy(mode, kwargs, data):
    shape = data.draw(st.sampled_from([(3, 4), (1, 5), (2, 2)]))
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    width = data.draw(st.sampled_from([1, (2, 0), ((0, 4), (3, 1)), ((7, 5), (1, 6))]))
    x = rand(np.random.default_rng(data.draw(st.integers(0, 2**16))), shape, dtype)
    expected = np.pad(x, width, mode=mode, **kwargs)
    if mode == "empty":
        expected = np.pad(x, width)  # modjax (like JAX) fills with zeros
    float_math = mode in ("linear_ramp", "mean") or kwargs.get("reflect_type") == "odd"
    tol = 1e-5 if float_math and dtype == "float32" else 0
    if mode == "linear_ramp" and dtype == "int32":
        tol = 1  # an integer ramp rounds down a float ramp (JAX's values), numpy steps exactly
    assert_same(jit(lambda v: jnp.pad(v, width, mode=mode, **kwargs))(x), expected, x.dtype, tol)
    # eagerly: one fixed padding per mode, so the many small eager programs compile once
    x = rand(np.random.default_rng(0), (3, 4), dtype)
    width = ((2, 1), (0, 3))
    expected = np.pad(x, width, mode=mode if mode != "empty" else "constant", **kwargs)
    assert_same(jnp.pad(x, width, mode=mode, **kwargs), expected, dtype=x.dtype, tol=tol)


def test_pad_median_callable_and_errors():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def fill(vector, width, iaxis, kwargs):
        value = kwargs.get("value", 0)
        left = jnp.full((width[0],), value, vector.dtype)
        return jnp.concatenate([left, vector[width[0] :]])

    def fill_np(vector, width, iaxis, kwargs):
        vector[: width[0]] = kwargs.get("value", 0)

    got = jnp.pad(x, 1, mode=fill, value=7)
    assert_same(got, np.pad(x, 1, mode=fill_np, value=7))
    assert_same(jnp.pad(x, 2, mode="median"), np.pad(x, 2, mode="median"))
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(x, -1)
    with pytest.raises(NotImplementedError, match="foo"):
        jnp.pad(x, 1, mode="foo")
    with pytest.raises(ValueError, match="unsupported keyword"):
        jnp.pad(x, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match="empty axis"):
        jnp.pad(np.ones((0, 2)), 1, mode="edge")
    assert jnp.pad(np.ones((0, 2)), ((0, 0), (1, 1)), mode="edge").shape == (0, 4)


# --- selection ------------------------------------------------------------------------------


@given(data=st.data())
def test_where_select_clip_piecewise(data):
    x = draw_array(data, shapes=[(4,), (2, 3), (0, 3)], dtypes=["float32", "int8", "uint8"])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    cond = rng.random(x.shape) < 0.5
    dtype = x.dtype
    for got in eager_and_jit(lambda c, v: jnp.where(c, v, 0), cond, x):
        assert_same(got, np.where(cond, x, dtype.type(0)), dtype=dtype)
    conds = [x > 1, x < 3]
    choices = [x, x * 2]
    for got in eager_and_jit(lambda a, b, v: jnp.select([a, b], [v, v * 2], 1), *conds, x):
        assert_same(
            got, np.select(conds, [c.astype(dtype) for c in choices], 1).astype(dtype), dtype=dtype
        )
    lo, hi = data.draw(st.sampled_from([(1, 3), (None, 2), (0, None)]))
    for got in eager_and_jit(lambda v: jnp.clip(v, lo, hi), x):
        assert_same(got, np.clip(x, lo, hi).astype(dtype), dtype=dtype)
    assert_same(jnp.clip(x, min=lo, max=hi), np.clip(x, lo, hi).astype(dtype))
    with pytest.raises(TypeError, match="a_min"):  # numpy's old names, gone in JAX 0.10
        jnp.clip(x, a_min=lo)
    with pytest.raises(ValueError, match="No input was provided to the clip function"):
        jnp.clip()
    funcs = [lambda v: v * 2, lambda v: v + 1, 7]
    expected = np.piecewise(x, [x < 2, x > 0], funcs)
    for got in eager_and_jit(lambda v: jnp.piecewise(v, [v < 2, v > 0], funcs), x):
        assert_same(got, expected, dtype=dtype)


def test_selection_details():
    assert jnp.trim_zeros(jnp.array([0, 0, 1, 0, 2, 0])).tolist() == [1, 0, 2]
    assert jnp.trim_zeros(jnp.array([0, 1, 0]), "f").tolist() == [1, 0]
    assert jnp.trim_zeros(jnp.array([0, 0])).tolist() == []
    # N-d arrays and axis, as JAX 0.10.2 answers.
    m = np.zeros((4, 5), np.float32)
    m[1:3, 1:4] = 1
    assert jnp.trim_zeros(m).shape == (2, 3) and jnp.trim_zeros(m, "f").shape == (3, 4)
    assert jnp.trim_zeros(m, axis=0).shape == (2, 5)
    assert jnp.trim_zeros(m, "fb", -1).shape == (4, 3)
    assert jnp.trim_zeros(m, "").shape == (4, 5)
    assert jnp.trim_zeros(np.zeros((3, 3))).shape == (0, 0)
    assert jnp.trim_zeros(jnp.array(3.0)).shape == ()
    with pytest.raises(ConcretizationTypeError):
        jit(jnp.trim_zeros)(jnp.array([0, 1, 0]))
    with pytest.raises(ValueError, match="length equal"):
        jnp.select([jnp.array([True])], [jnp.ones(1), jnp.ones(1)])
    with pytest.raises(ValueError, match="non-empty"):
        jnp.select([], [])
    with pytest.raises(TypeError, match="where requires ndarray"):  # as JAX 0.10.2
        jnp.where(jnp.ones(2), 1)


def test_shape_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(TypeError, match="cannot reshape"):
        jnp.reshape(x, (4, 2))
    with pytest.raises(NotImplementedError):
        jnp.reshape(x, (3, 2), order="A")
    with pytest.raises(ValueError, match="two-dimensional"):
        jnp.matrix_transpose(jnp.ones(3))
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.expand_dims(x, (0, 0))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.expand_dims(x, 5)
    with pytest.raises(ValueError, match="squeeze"):
        jnp.squeeze(x, 0)
    with pytest.raises(ValueError, match="Axes must be different"):
        jnp.rot90(x, 1, (0, 0))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.broadcast_shapes((2, 1), (3, 4))
    with pytest.raises(ValueError, match="Zero-dimensional"):
        jnp.concatenate([1.0, jnp.ones(2)])
    with pytest.raises(ValueError, match="same shape"):
        jnp.stack([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(ValueError, match="negative"):
        jnp.repeat(jnp.ones(3), -1)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.fliplr(jnp.ones(3))


def test_tri_defaults_to_float32_even_under_x64():
    # JAX 0.10.2's default, unlike eye's and numpy's float64.
    from modjax.tracecore.config import enable_x64

    with enable_x64(True):
        assert jnp.tri(2, 3, k=1).dtype == np.float32
        assert jnp.tri(2, dtype=int).dtype == np.int64
        assert jnp.eye(2).dtype == np.float64
    np.testing.assert_array_equal(jnp.tri(2, 3, k=1), np.tri(2, 3, k=1))


def _ADD_ONE(x):  # noqa: N802 - a constant of the table below
    return x + 1


@pytest.mark.parametrize(
    "f",
    [
        jnp.asarray,
        jnp.array,
        lambda x: jnp.reshape(x, ()),
        lambda x: x.astype(np.float32),
        _ADD_ONE,
    ],
    ids=["asarray", "array", "reshape", "astype", "add"],
)
def test_values_being_differentiated_come_out_of_jnp_as_arrays(f):
    # As JAX 0.10.2, whose jnp functions are jitted: at Python floats and numpy scalars,
    # eager jvp gives Arrays, and grad's primals inside are Arrays (equinox's
    # checkpointed loops read their .shape); staged, nothing more is bound.
    from modjax.autodiff import grad, jvp
    from modjax.runtime import Array

    seen = []
    for x in (1.0, np.float32(1.0)):
        primal, tangent = jvp(f, (x,), (x,))
        assert type(primal) is Array and type(tangent) is Array
        grad(lambda v: (seen.append(type(f(v).primal)), v * 1.0)[1])(x)
    assert seen == [Array, Array]
    if f in (jnp.asarray, jnp.array):  # these bind nothing, staged under jvp too
        assert not make_jaxpr(lambda v: jvp(f, (v,), (v,)))(1.0).jaxpr.eqns
