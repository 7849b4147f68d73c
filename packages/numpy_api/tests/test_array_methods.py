"""The methods and properties of Arrays and tracers registered by ``_array_methods``.

Each method is checked eagerly and under ``jit`` against numpy; then the
protocols: ``__format__``, iteration and scalar conversions, the Array API's
``__array_namespace__``, and DLPack round trips with numpy in both directions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.numpy import _array_methods
from modjax.runtime import Array, devices, jit
from modjax.tracecore.config import enable_x64
from modjax.tracecore.core import ConcretizationTypeError, TracerIntegerConversionError


@pytest.fixture(autouse=True, scope="module")
def _array_methods_registered():
    """Register this package's Array methods for the module (the conftest restores tables)."""
    _array_methods.register_array_methods()


X = np.array([[3.0, -1.5, 2.0, 0.0], [0.5, 4.0, -2.0, 1.0], [7.0, 0.0, -0.5, 2.5]], np.float32)
C = (X + 1j * X[::-1]).astype(np.complex64)
XI = np.array([[0, 1, 2, 1], [2, 0, 1, 0], [1, 1, 0, 2]], np.int32)


def _both(fn, *args):
    """``fn(*args)`` eagerly on Arrays and under jit, as numpy arrays."""
    eager = fn(*[jnp.asarray(a) for a in args])
    jitted = jit(fn)(*args)
    return eager, jitted


def _check(got, expected):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _check(g, e)
        return
    expected = np.asarray(expected)
    got_np = np.asarray(got)
    assert got_np.shape == expected.shape, (got_np.shape, expected.shape)
    assert got_np.dtype == expected.dtype, (got_np.dtype, expected.dtype)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got_np, expected, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got_np, expected)


# method call, numpy reference, input
METHODS = {
    "cumsum": (lambda x: x.cumsum(axis=1), lambda x: np.cumsum(x, 1), X),
    "cumsum_dtype": (
        lambda x: x.cumsum(dtype=jnp.float32),
        lambda x: np.cumsum(x, dtype=np.float32),
        XI,
    ),
    "cumprod": (lambda x: x.cumprod(axis=0), lambda x: np.cumprod(x, 0), X),
    "ptp": (lambda x: x.ptp(axis=0, keepdims=True), lambda x: np.ptp(x, 0, keepdims=True), X),
    "round": (lambda x: x.round(1), lambda x: np.round(x, 1), X / 7),
    "sort": (lambda x: x.sort(axis=0), lambda x: np.sort(x, 0), X),
    "sort_descending": (lambda x: x.sort(descending=True), lambda x: -np.sort(-x), X),
    "argsort": (lambda x: x.argsort(), lambda x: np.argsort(x, kind="stable").astype(np.int32), X),
    "argsort_none": (
        lambda x: x.argsort(axis=None),
        lambda x: np.argsort(x, None, kind="stable").astype(np.int32),
        XI,
    ),
    "nonzero_size": (
        lambda x: x.nonzero(size=4, fill_value=-1),
        lambda x: tuple(
            np.pad(i[:4], (0, 4 - len(i[:4])), constant_values=-1).astype(np.int32)
            for i in np.nonzero(x)
        ),
        XI,
    ),
    "take": (lambda x: x.take(jnp.asarray([3, 0]), axis=1), lambda x: np.take(x, [3, 0], 1), X),
    "repeat": (lambda x: x.repeat(2, axis=0), lambda x: np.repeat(x, 2, 0), X),
    "diagonal": (lambda x: x.diagonal(offset=1), lambda x: np.diagonal(x, 1), X),
    "trace": (lambda x: x.trace(), lambda x: np.trace(x).astype(np.float32), X),
    "searchsorted": (
        lambda x: jnp.asarray([0.0, 1.0, 3.0]).searchsorted(x, side="right"),
        lambda x: np.searchsorted([0.0, 1.0, 3.0], x, side="right").astype(np.int32),
        X,
    ),
    "copy": (lambda x: x.copy(), lambda x: x.copy(), X),
    "conj": (lambda x: x.conj(), np.conj, C),
    "conjugate": (lambda x: x.conjugate(), np.conjugate, C),
    "conj_real": (lambda x: x.conj(), np.conj, X),
    "real": (lambda x: x.real, np.real, C),
    "imag": (lambda x: x.imag, np.imag, C),
    "real_of_real": (lambda x: x.real, np.real, XI),
    "imag_of_real": (lambda x: x.imag, np.imag, X),
    "choose": (
        # mode="raise" needs concrete indices, so jit would refuse it (as in JAX)
        lambda x: x.choose([jnp.zeros(4, jnp.int32), jnp.arange(4), jnp.full(4, 9)], mode="clip"),
        lambda x: np.choose(
            x,
            [np.zeros(4, np.int32), np.arange(4, dtype=np.int32), np.full(4, 9, np.int32)],
            mode="clip",
        ),
        XI,
    ),
    "compress": (
        lambda x: x.compress(jnp.asarray([True, False, True]), axis=0),
        lambda x: np.compress([True, False, True], x, axis=0),
        X,
    ),
    "view": (lambda x: x.view(jnp.int32), lambda x: x.view(np.int32), X),
    "view_narrower": (lambda x: x.view(jnp.uint16), lambda x: x.view(np.uint16), X),
    "view_wider": (lambda x: x.view(jnp.int16), lambda x: x.view(np.int16), X.view(np.uint8)),
    "view_bool": (
        lambda x: (x > 0).view(jnp.uint8),
        lambda x: (x > 0).view(np.uint8),
        X,
    ),
    "byteswap": (lambda x: x.byteswap(), lambda x: x.byteswap(), X),
    "byteswap_int": (lambda x: x.byteswap(), lambda x: x.byteswap(), XI),
}


@pytest.mark.parametrize("case", list(METHODS))
def test_method_matches_numpy_eagerly_and_under_jit(case):
    method, reference, x = METHODS[case]
    expected = reference(x)
    eager, jitted = _both(method, x)
    _check(eager, expected)
    _check(jitted, expected)


def test_dir_lists_the_methods():
    names = dir(jnp.ones(3))
    assert {"sum", "reshape", "at", "astype", "T", "mT", "format", "sharding"} <= set(names)
    assert names == sorted(names)


def test_methods_of_0d_and_empty_arrays():
    s = jnp.asarray(np.float32(2.5))
    assert s.cumsum().shape == (1,)
    assert float(s.round()) == 2.0
    assert s.nbytes == 4 and s.itemsize == 4
    e = jnp.zeros((0, 3), jnp.int8)
    assert e.cumsum(axis=0).shape == (0, 3)
    assert e.sort(axis=0).shape == (0, 3)
    assert e.nbytes == 0 and e.itemsize == 1
    assert e.real.shape == (0, 3) and e.real.dtype == np.int8


@given(
    shape=st.sampled_from([(), (0,), (3,), (2, 3)]),
    dtype=st.sampled_from([np.float32, np.int32, np.complex64, np.bool_]),
)
def test_nbytes_itemsize_real_imag_match_numpy_on_arrays_and_tracers(shape, dtype):
    x = (np.arange(math.prod(shape)).reshape(shape) % 3).astype(dtype)
    a = jnp.asarray(x)
    seen = {}

    def f(v):
        seen.update(nbytes=v.nbytes, itemsize=v.itemsize, size=v.size, ndim=v.ndim)
        return v.real, v.imag

    real, imag = jit(f)(x)
    assert seen == {"nbytes": x.nbytes, "itemsize": x.itemsize, "size": x.size, "ndim": x.ndim}
    assert (a.nbytes, a.itemsize) == (x.nbytes, x.itemsize)
    if dtype is np.bool_:
        expected_real, expected_imag = x, np.zeros_like(x)
    else:
        expected_real, expected_imag = np.real(x), np.imag(x)
    _check(real, expected_real)
    _check(imag, expected_imag)
    _check(a.real, expected_real)


def test_methods_missing_from_the_namespace_name_the_function(monkeypatch):
    monkeypatch.delattr(jnp, "ptp")
    x = jnp.ones(3)
    with pytest.raises(AttributeError, match=r"modjax\.numpy\.ptp is not implemented yet"):
        x.ptp()
    assert not hasattr(x, "ptp")


def test_item_and_tolist():
    x = jnp.asarray(X)
    assert x.item(5) == float(X.flat[5]) and x.tolist() == X.tolist()
    assert jnp.asarray(np.int8(3)).item() == 3 and isinstance(jnp.asarray(True).item(), bool)

    def traced(v):
        for call in (v.item, v.tolist):
            with pytest.raises(ConcretizationTypeError, match=r"(item|tolist)\(\) method"):
                call()
        return v

    jit(traced)(X)


def test_to_device_and_device():
    x = jnp.asarray(X)
    dev = devices()[0]
    y = x.to_device(dev)
    assert y.device == dev and y.committed
    np.testing.assert_array_equal(np.asarray(y), X)
    with pytest.raises(NotImplementedError, match="stream"):
        x.to_device(dev, stream=1)

    def traced(v):
        with pytest.raises(AttributeError, match="device"):
            v.device  # noqa: B018 - tracers have no device, as in JAX
        return v.to_device(dev) * 2

    np.testing.assert_array_equal(np.asarray(jit(traced)(X)), X * 2)


def test_view_errors_and_flat():
    with pytest.raises(ValueError, match="0-d"):
        jnp.float32(1).view(jnp.uint16)
    with pytest.raises(ValueError, match="multiple of 2"):
        jnp.arange(3, dtype=jnp.uint8).view(jnp.int16)
    with pytest.raises(NotImplementedError, match="complex"):
        jnp.asarray(C).view(jnp.float32)
    assert jnp.asarray(X).view() is not None
    with pytest.raises(NotImplementedError, match="flat"):
        jnp.asarray(X).flat  # noqa: B018


# --- __array_namespace__ --------------------------------------------------------------------------


def test_array_namespace_on_arrays_and_tracers():
    x = jnp.asarray(X)
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2023.12") is jnp
    with pytest.raises(ValueError, match="2099.12"):
        x.__array_namespace__(api_version="2099.12")

    def traced(v):
        assert v.__array_namespace__() is jnp
        return v

    jit(traced)(X)


# --- __format__, iteration, conversions ----------------------------------------------------------


@pytest.mark.parametrize(
    "value, dtype, spec",
    [
        (1.5, np.float32, ".3f"),
        (1.5, np.float32, ""),
        (-2.25, np.float16, "+.1e"),
        (1.5, "bfloat16", ".2f"),
        (5, np.int32, "03d"),
        (200, np.uint8, "x"),
        (True, np.bool_, ""),
        (1 + 2j, np.complex64, ".1f"),
    ],
)
def test_format_of_0d_arrays_matches_numpy_scalars(value, dtype, spec):
    dt = jnp.dtype(dtype)
    x = jnp.asarray(value, dtype=dt)
    assert format(x, spec) == format(np.asarray(value, dt)[()], spec)
    assert f"{x:{spec}}" == format(np.asarray(value, dt)[()], spec)


def test_format_of_nd_arrays_and_tracers():
    x = jnp.asarray(X)
    assert format(x, "") == str(X)
    with pytest.raises(TypeError, match="format"):
        format(x, ".2f")

    def traced(v):
        assert format(v, "") == str(v)
        with pytest.raises(TypeError, match="format"):
            format(v[0, 0], ".2f")
        return v

    jit(traced)(X)


def test_len_and_iter_on_arrays_and_tracers():
    x = jnp.asarray(X)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(isinstance(r, Array) for r in rows)
    np.testing.assert_array_equal(np.asarray(rows[2]), X[2])
    for bad in (lambda: len(jnp.float32(1)), lambda: iter(jnp.float32(1))):
        with pytest.raises(TypeError):
            bad()
    assert list(jnp.zeros((0, 2))) == []

    def traced(v):
        assert len(v) == 3
        return sum(list(v))

    np.testing.assert_allclose(np.asarray(jit(traced)(X)), X.sum(0))


def test_scalar_conversions_of_arrays():
    assert bool(jnp.asarray([1.0])) is True and bool(jnp.asarray(0)) is False
    assert int(jnp.asarray(3.7)) == 3 and float(jnp.asarray(2)) == 2.0
    assert complex(jnp.asarray(1 + 2j, dtype=jnp.complex64)) == 1 + 2j
    assert [10, 20, 30][jnp.asarray(2)] == 30
    with pytest.raises(ValueError, match="ambiguous"):
        bool(jnp.asarray(X))
    with pytest.raises(ValueError, match="empty"):
        bool(jnp.zeros(0))
    with pytest.raises(TypeError):
        int(jnp.asarray(X))
    with pytest.raises(TypeError, match="index"):
        [1, 2][jnp.asarray(1.0)]
    with pytest.raises(TypeError, match="index"):
        [1, 2][jnp.asarray([1])]


def test_scalar_conversions_of_tracers_raise_concretization_errors():
    def traced(v):
        s = v[0, 0]
        with pytest.raises(ConcretizationTypeError):
            bool(s)
        with pytest.raises(ConcretizationTypeError) as info:
            int(s)  # JAX: int() is a ConcretizationTypeError, __index__ the integer one
        assert not isinstance(info.value, TracerIntegerConversionError)
        with pytest.raises(TracerIntegerConversionError):
            [1, 2][s.astype(jnp.int32)]
        with pytest.raises(ConcretizationTypeError):
            float(s)
        with pytest.raises(ConcretizationTypeError):
            complex(s)
        return v

    jit(traced)(X)


# --- DLPack ---------------------------------------------------------------------------------------

DLPACK_DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.uint8,
    np.uint16,
    np.uint32,
    np.float16,
    np.float32,
    np.complex64,
]
DLPACK_DTYPES_X64 = [np.int64, np.uint64, np.float64, np.complex128]
SHAPES = [(), (0,), (5,), (2, 3), (3, 0, 2), (2, 1, 4)]


def _sample(shape, dtype):
    values = np.arange(math.prod(shape)).reshape(shape) * 7 % 11 - 3
    return np.asarray(values.astype(dtype) if np.dtype(dtype).kind != "b" else values > 0)


@given(shape=st.sampled_from(SHAPES), dtype=st.sampled_from(DLPACK_DTYPES))
def test_dlpack_round_trips_with_numpy(shape, dtype):
    host = _sample(shape, dtype)
    ours = jnp.from_dlpack(host)
    assert isinstance(ours, Array) and ours.dtype == host.dtype and ours.shape == host.shape
    np.testing.assert_array_equal(np.asarray(ours), host)
    back = np.from_dlpack(ours)
    assert back.dtype == host.dtype and back.shape == host.shape
    np.testing.assert_array_equal(back, host)
    computed = jnp.asarray(host) if host.dtype.kind == "b" else jnp.asarray(host) + 0
    np.testing.assert_array_equal(np.from_dlpack(computed), host)


@pytest.mark.parametrize("dtype", DLPACK_DTYPES_X64)
def test_dlpack_of_64_bit_types(dtype):
    host = _sample((2, 3), dtype)
    narrow = jnp.from_dlpack(host)  # x64 off: canonicalized, as jnp.asarray does
    assert narrow.dtype.kind == host.dtype.kind
    assert narrow.dtype.itemsize == host.dtype.itemsize // 2
    np.testing.assert_array_equal(np.asarray(narrow), host.astype(narrow.dtype))
    with enable_x64(True):
        wide = jnp.from_dlpack(host)
        assert wide.dtype == host.dtype
        np.testing.assert_array_equal(np.from_dlpack(wide), host)


def test_dlpack_of_strided_numpy_arrays():
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in (host.T, host[::2, 1::3], host[1:, ::2].T, host[:0, ::2]):
        np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(view)), view)
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(host.T, copy=True)), host.T)
    with pytest.raises(BufferError, match="compact"):
        jnp.from_dlpack(host[::2, 1::3], copy=False)  # JAX cannot import it at all


def test_dlpack_copies_are_independent():
    host = np.arange(16, dtype=np.float32)
    copied = jnp.from_dlpack(host, copy=True)
    host[0] = 100.0
    assert float(copied[0]) == 0.0
    x = jnp.arange(4.0)
    for copy in (True, False, None):
        exported = np.from_dlpack(x, copy=copy)
        assert not exported.flags.writeable  # numpy marks DLPack imports read-only, as for JAX
        np.testing.assert_array_equal(exported, [0.0, 1.0, 2.0, 3.0])


def test_dlpack_device_and_placement():
    x = jnp.asarray(X)
    dev = devices()[0]
    assert tuple(x.__dlpack_device__()) == (1, dev.local_hardware_id)  # kDLCPU
    assert x.__dlpack_device__()[0] == np.asarray(X).__dlpack_device__()[0]
    y = jnp.from_dlpack(X, device=dev)
    assert y.device == dev and y.committed
    np.testing.assert_array_equal(np.asarray(y), X)
    capsule = x.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=None)
    assert type(capsule).__name__ == "PyCapsule"
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(capsule)), X)  # beyond JAX


def test_from_dlpack_of_modjax_arrays():
    x = jnp.asarray(X) * 2
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(x)), X * 2)
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(x, copy=True)), X * 2)


def test_dlpack_errors():
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1.0, 2.0])
    with pytest.raises(BufferError, match="int4"):
        jnp.asarray([1, 2], dtype=jnp.int4).__dlpack__()
    with pytest.raises(BufferError, match="0.5"):
        jnp.ones(2).__dlpack__(max_version=(0, 4))
    gone = jnp.arange(3.0)
    gone.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        np.from_dlpack(gone)

    def traced(v):
        with pytest.raises(ConcretizationTypeError, match="__dlpack__"):
            v.__dlpack__()
        with pytest.raises(ConcretizationTypeError, match="__dlpack_device__"):
            v.__dlpack_device__()
        with pytest.raises(ConcretizationTypeError):
            np.from_dlpack(v)
        return v

    jit(traced)(X)
