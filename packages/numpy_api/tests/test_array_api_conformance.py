"""Conformance of modjax.numpy with the Python Array API standard, revision 2023.12.

Written from the standard's text: every name of the main namespace (constants,
creation, data-type, elementwise, indexing, inspection, linear algebra,
manipulation, searching, set, sorting, statistical and utility functions), each
function's signature (a call that the standard allows, with its positional-only
and keyword-only parameters, must bind), the meaning of the standard's
keywords on small inputs (checked against numpy), the type promotion table,
the array object's attributes and methods, and the special cases the standard
gives for elementwise functions on signed zeros, infinities and NaNs.

Where JAX deliberately deviates from the standard, the case is marked
``xfail(strict=True)`` with the reason; names not implemented yet are marked
the same way, so the gaps stay visible (and listed in the package README).
The ``linalg`` and ``fft`` extensions are tested elsewhere.
"""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np
import pytest

import modjax.numpy as xp
from modjax.numpy import _array_methods
from modjax.runtime import Array, jit
from modjax.tracecore.config import enable_x64


@pytest.fixture(autouse=True, scope="module")
def _array_methods_registered():
    """Register this package's Array methods for the module (the conftest restores tables)."""
    _array_methods.register_array_methods()


# Names of the standard that modjax.numpy does not have yet (their tests xfail strictly).
NOT_IMPLEMENTED: frozenset[str] = frozenset()


def _xfail_missing(name: str, *values, marks=()):
    marks = list(marks)
    if name in NOT_IMPLEMENTED:
        marks.append(pytest.mark.xfail(strict=True, reason=f"{name}: not implemented yet"))
    return pytest.param(*values, marks=marks, id=str(values[0]) if len(values) > 1 else None)


# --- names ---------------------------------------------------------------------------------------

CONSTANTS = ["e", "inf", "nan", "newaxis", "pi"]
DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
UNARY = (
    "abs acos acosh asin asinh atan atanh bitwise_invert ceil conj cos cosh exp expm1 floor "
    "imag isfinite isinf isnan log log1p log2 log10 logical_not negative positive real round "
    "sign signbit sin sinh square sqrt tan tanh trunc"
).split()
BINARY = (
    "add atan2 bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor "
    "copysign divide equal floor_divide greater greater_equal hypot less less_equal logaddexp "
    "logical_and logical_or logical_xor maximum minimum multiply not_equal pow remainder subtract"
).split()

# Every function of the main namespace with its signature, as the standard writes it.
SIGNATURES = [
    # creation
    "arange(start, /, stop=None, step=1, *, dtype=None, device=None)",
    "asarray(obj, /, *, dtype=None, device=None, copy=None)",
    "empty(shape, *, dtype=None, device=None)",
    "empty_like(x, /, *, dtype=None, device=None)",
    "eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None)",
    "from_dlpack(x, /, *, device=None, copy=None)",
    "full(shape, fill_value, *, dtype=None, device=None)",
    "full_like(x, /, fill_value, *, dtype=None, device=None)",
    "linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True)",
    "meshgrid(*arrays, indexing='xy')",
    "ones(shape, *, dtype=None, device=None)",
    "ones_like(x, /, *, dtype=None, device=None)",
    "tril(x, /, *, k=0)",
    "triu(x, /, *, k=0)",
    "zeros(shape, *, dtype=None, device=None)",
    "zeros_like(x, /, *, dtype=None, device=None)",
    # data types
    "astype(x, dtype, /, *, copy=True, device=None)",
    "can_cast(from_, to, /)",
    "finfo(type, /)",
    "iinfo(type, /)",
    "isdtype(dtype, kind)",
    "result_type(*arrays_and_dtypes)",
    # elementwise
    *[f"{name}(x, /)" for name in UNARY],
    *[f"{name}(x1, x2, /)" for name in BINARY],
    "clip(x, /, min=None, max=None)",
    # indexing
    "take(x, indices, /, *, axis=None)",
    # inspection
    "__array_namespace_info__()",
    # linear algebra
    "matmul(x1, x2, /)",
    "matrix_transpose(x, /)",
    "tensordot(x1, x2, /, *, axes=2)",
    "vecdot(x1, x2, /, *, axis=-1)",
    # manipulation
    "broadcast_arrays(*arrays)",
    "broadcast_to(x, /, shape)",
    "concat(arrays, /, *, axis=0)",
    "expand_dims(x, /, *, axis=0)",
    "flip(x, /, *, axis=None)",
    "moveaxis(x, source, destination, /)",
    "permute_dims(x, /, axes)",
    "repeat(x, repeats, /, *, axis=None)",
    "reshape(x, /, shape, *, copy=None)",
    "roll(x, /, shift, *, axis=None)",
    "squeeze(x, /, axis)",
    "stack(arrays, /, *, axis=0)",
    "tile(x, repetitions, /)",
    "unstack(x, /, *, axis=0)",
    # searching
    "argmax(x, /, *, axis=None, keepdims=False)",
    "argmin(x, /, *, axis=None, keepdims=False)",
    "nonzero(x, /)",
    "searchsorted(x1, x2, /, *, side='left', sorter=None)",
    "where(condition, x1, x2, /)",
    # set
    "unique_all(x, /)",
    "unique_counts(x, /)",
    "unique_inverse(x, /)",
    "unique_values(x, /)",
    # sorting
    "argsort(x, /, *, axis=-1, descending=False, stable=True)",
    "sort(x, /, *, axis=-1, descending=False, stable=True)",
    # statistical
    "cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False)",
    "max(x, /, *, axis=None, keepdims=False)",
    "mean(x, /, *, axis=None, keepdims=False)",
    "min(x, /, *, axis=None, keepdims=False)",
    "prod(x, /, *, axis=None, dtype=None, keepdims=False)",
    "std(x, /, *, axis=None, correction=0.0, keepdims=False)",
    "sum(x, /, *, axis=None, dtype=None, keepdims=False)",
    "var(x, /, *, axis=None, correction=0.0, keepdims=False)",
    # utility
    "all(x, /, *, axis=None, keepdims=False)",
    "any(x, /, *, axis=None, keepdims=False)",
]
FUNCTIONS = [text.split("(")[0] for text in SIGNATURES]
NAMES = [*CONSTANTS, *DTYPES, *FUNCTIONS, "__array_api_version__"]

# The 2024.12 revision's new functions (JAX 0.10 advertises 2024.12): only their presence.
NAMES_2024 = [
    "count_nonzero",
    "cumulative_prod",
    "diff",
    "nextafter",
    "reciprocal",
    "take_along_axis",
]

# Calls the standard allows that JAX (and so modjax) refuses on purpose.
JAX_SIGNATURE_DEVIATIONS = {
    ("expand_dims", "required"): "JAX requires axis (the standard defaults it to 0)",
}
# Calls JAX accepts and modjax does not yet.
SIGNATURE_GAPS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("name", [_xfail_missing(n, n) for n in NAMES])
def test_name_exists(name):
    assert hasattr(xp, name), f"modjax.numpy.{name} is missing"


@pytest.mark.parametrize("name", NAMES_2024)
def test_2024_names_exist(name):
    assert hasattr(xp, name), f"modjax.numpy.{name} (Array API 2024.12) is missing"


def test_constants():
    assert xp.e == math.e and xp.pi == math.pi
    assert xp.inf == math.inf and math.isnan(xp.nan)
    assert xp.newaxis is None
    assert isinstance(xp.e, float) and isinstance(xp.inf, float)


def test_version_and_namespace():
    assert xp.__array_api_version__ == "2023.12"
    x = xp.ones(3)
    assert x.__array_namespace__() is xp
    for version in (None, "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=version) is xp
    with pytest.raises(ValueError, match="2021.01"):
        x.__array_namespace__(api_version="2021.01")
    with pytest.raises(TypeError):
        x.__array_namespace__("2023.12")  # api_version is keyword-only


# --- signatures ----------------------------------------------------------------------------------

_ARG = object()  # a placeholder argument: only binding is checked here


def _standard_signature(text: str) -> inspect.Signature:
    namespace: dict = {}
    exec(f"def {text}: pass", namespace)  # noqa: S102 - our own table of signatures
    return inspect.signature(namespace[text.split("(")[0]])


def _standard_call(sig: inspect.Signature, mode: str) -> tuple[list, dict]:
    """Arguments of one call the standard allows.

    ``required``: only required parameters, positionally; ``positional``: every
    parameter that may be positional is, the keyword-only ones by keyword;
    ``keyword``: every parameter that may be a keyword is one.
    """
    args, kwargs = [], {}
    for p in sig.parameters.values():
        optional = p.default is not inspect.Parameter.empty
        if p.kind is p.VAR_POSITIONAL:
            args += [_ARG, _ARG]
        elif mode == "required" and optional:
            continue
        elif p.kind is p.POSITIONAL_ONLY or (
            p.kind is p.POSITIONAL_OR_KEYWORD and mode in ("required", "positional")
        ):
            args.append(_ARG)
        else:
            kwargs[p.name] = _ARG
    return args, kwargs


def _signature_params():
    for text in SIGNATURES:
        name = text.split("(")[0]
        for mode in ("required", "positional", "keyword"):
            marks = []
            reason = JAX_SIGNATURE_DEVIATIONS.get((name, mode)) or SIGNATURE_GAPS.get((name, mode))
            if reason is not None:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield _xfail_missing(name, f"{name}-{mode}", text, mode, marks=marks)


@pytest.mark.parametrize("case, text, mode", _signature_params())
def test_signature_accepts_standard_call(case, text, mode):
    name = text.split("(")[0]
    args, kwargs = _standard_call(_standard_signature(text), mode)
    ours = inspect.signature(getattr(xp, name))
    try:
        ours.bind(*args, **kwargs)
    except TypeError as err:
        pytest.fail(f"modjax.numpy.{name}{ours} refuses the standard's call {text} ({mode}): {err}")


def test_namespace_info_signatures():
    info = xp.__array_namespace_info__()
    for method, text in [
        ("capabilities", "capabilities()"),
        ("default_device", "default_device()"),
        ("default_dtypes", "default_dtypes(*, device=None)"),
        ("dtypes", "dtypes(*, device=None, kind=None)"),
        ("devices", "devices()"),
    ]:
        ours = inspect.signature(getattr(info, method))
        for mode in ("required", "keyword"):
            args, kwargs = _standard_call(_standard_signature(text), mode)
            ours.bind(*args, **kwargs)


# --- inspection -----------------------------------------------------------------------------------


def test_namespace_info():
    info = xp.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is False and caps["data-dependent shapes"] is False
    assert info.default_device() is None
    devices = info.devices()
    assert None in devices and xp.ones(1).device in devices
    assert info.default_dtypes() == {
        "real floating": np.dtype("float32"),
        "complex floating": np.dtype("complex64"),
        "integral": np.dtype("int32"),
        "indexing": np.dtype("int32"),
    }
    names = set(info.dtypes())
    assert names == {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32"} | {
        "float32",
        "complex64",
    }
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32"} | {
        "uint8",
        "uint16",
        "uint32",
    }
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64"}
    assert set(info.dtypes(kind="real floating", device=info.devices()[1])) == {"float32"}
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="quaternion")
    with enable_x64(True):
        assert info.default_dtypes()["indexing"] == np.dtype("int64")
        assert {"int64", "uint64", "float64", "complex128"} <= set(info.dtypes())


# --- data types and promotion ---------------------------------------------------------------------


@pytest.mark.parametrize("name", [_xfail_missing(n, n) for n in DTYPES])
def test_dtype_objects(name):
    dt = getattr(xp, name)
    assert np.dtype(dt) == np.dtype(name)
    with enable_x64(True):
        x = xp.zeros(2, dtype=dt)
        assert x.dtype == dt and x.dtype == np.dtype(name)


_I = ["int8", "int16", "int32", "int64"]
_U = ["uint8", "uint16", "uint32", "uint64"]


def _promotion_table():
    """The standard's promotion table, pairs of one kind and mixed signed/unsigned integers."""
    table = {("bool", "bool"): "bool"}
    for group in (_I, _U, ["float32", "float64"], ["complex64", "complex128"]):
        for i, a in enumerate(group):
            for b in group[i:]:
                table[a, b] = b
    for i, s in enumerate(_I):
        for j, u in enumerate(_U[:3]):
            table[s, u] = _I[max(i, j + 1)]
    table.update(
        {
            ("float32", "complex64"): "complex64",
            ("float32", "complex128"): "complex128",
            ("float64", "complex64"): "complex128",
            ("float64", "complex128"): "complex128",
        }
    )
    return table


@pytest.mark.parametrize("pair, expected", sorted(_promotion_table().items()))
def test_type_promotion_table(pair, expected):
    a, b = pair
    with enable_x64(True):
        assert xp.result_type(np.dtype(a), np.dtype(b)) == np.dtype(expected)
        assert xp.result_type(np.dtype(b), np.dtype(a)) == np.dtype(expected)


def test_type_promotion_of_arrays_and_python_scalars():
    i8, u8 = xp.ones(2, dtype=xp.int8), xp.ones(2, dtype=xp.uint8)
    assert (i8 + u8).dtype == np.dtype("int16")
    assert (i8 * 3).dtype == np.dtype("int8")
    assert (xp.ones(2, dtype=xp.float16) + 1.0).dtype == np.dtype("float16")
    assert (xp.ones(2, dtype=xp.bool) & True).dtype == np.dtype("bool")
    assert (xp.ones(2, dtype=xp.float32) * 1j).dtype == np.dtype("complex64")


def test_data_type_functions():
    assert xp.can_cast(xp.int8, xp.int16) and not xp.can_cast(xp.float32, xp.int32)
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps
    assert xp.finfo(xp.float32).bits == 32 and xp.finfo(xp.float32).dtype == np.float32
    assert xp.finfo(xp.ones(1, dtype=xp.complex64)).dtype == np.float32
    assert xp.iinfo(xp.int8).min == -128 and xp.iinfo(xp.uint8).max == 255
    assert xp.iinfo(xp.zeros(1, dtype=xp.int16)).bits == 16
    assert xp.isdtype(xp.float32, "real floating") and not xp.isdtype(xp.int8, "real floating")
    assert xp.isdtype(xp.uint8, ("bool", "unsigned integer"))
    assert xp.isdtype(xp.complex64, "numeric") and not xp.isdtype(xp.bool, "numeric")
    assert xp.isdtype(xp.int32, xp.int32) and not xp.isdtype(xp.int32, xp.int16)
    assert xp.result_type(xp.ones(1, dtype=xp.int8), xp.int16, xp.uint8) == np.dtype("int16")
    x = xp.ones(3, dtype=xp.float32)
    assert xp.astype(x, xp.int8).dtype == np.dtype("int8")
    assert xp.astype(x, xp.float32, copy=False).dtype == np.dtype("float32")
    assert xp.astype(x, xp.int16, copy=True, device=x.device).dtype == np.dtype("int16")


# --- the standard's keywords, on small inputs -----------------------------------------------------

A = np.array([[3.0, -1.0, 2.0], [0.5, 4.0, -2.0]], np.float32)
V = np.array([3, 1, 2, 3, 1], np.int32)


def _close(got, expected):
    if isinstance(expected, tuple):
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            _close(g, e)
        return
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, expected)


def _unique_all(x):
    values, index, inverse, counts = np.unique(x, True, True, True)
    return values, index, inverse, counts


KEYWORD_CALLS = {
    "arange": (lambda: xp.arange(1, stop=7, step=2, dtype=xp.int16), np.arange(1, 7, 2)),
    "asarray": (lambda: xp.asarray([1, 2], dtype=xp.float32, copy=True), np.array([1.0, 2.0])),
    "empty": (lambda: xp.empty((2, 0), dtype=xp.int8).shape, (2, 0)),
    "eye": (lambda: xp.eye(2, 3, k=1, dtype=xp.int8), np.eye(2, 3, k=1)),
    "full": (lambda: xp.full((2,), 7, dtype=xp.int8), np.full(2, 7)),
    "full_like": (lambda: xp.full_like(A, fill_value=2, dtype=xp.int8), np.full((2, 3), 2)),
    "linspace": (
        lambda: xp.linspace(0, 1, num=4, endpoint=False, dtype=xp.float32),
        np.linspace(0, 1, 4, endpoint=False),
    ),
    "meshgrid": (
        lambda: tuple(xp.meshgrid(xp.arange(2), xp.arange(3), indexing="ij")),
        tuple(np.meshgrid(np.arange(2), np.arange(3), indexing="ij")),
    ),
    "ones_like": (lambda: xp.ones_like(A, dtype=xp.int8), np.ones((2, 3))),
    "tril": (lambda: xp.tril(A, k=-1), np.tril(A, -1)),
    "triu": (lambda: xp.triu(A, k=1), np.triu(A, 1)),
    "zeros_like": (lambda: xp.zeros_like(A, dtype=xp.bool), np.zeros((2, 3), bool)),
    "clip": (lambda: xp.clip(A, min=0.0, max=2.5), np.clip(A, 0, 2.5)),
    "clip_min_only": (lambda: xp.clip(A, min=1.0), np.maximum(A, 1)),
    "take": (lambda: xp.take(A, xp.asarray([2, 0]), axis=1), np.take(A, [2, 0], axis=1)),
    "matmul": (lambda: xp.matmul(A, A.T), A @ A.T),
    "matrix_transpose": (lambda: xp.matrix_transpose(A[None]), np.swapaxes(A[None], -1, -2)),
    "tensordot": (lambda: xp.tensordot(A, A.T, axes=1), np.tensordot(A, A.T, axes=1)),
    "tensordot_pairs": (
        lambda: xp.tensordot(A, A, axes=([1], [1])),
        np.tensordot(A, A, axes=([1], [1])),
    ),
    "vecdot": (lambda: xp.vecdot(A, A, axis=0), np.sum(A * A, axis=0)),
    "broadcast_to": (lambda: xp.broadcast_to(A[0], shape=(2, 3)), np.broadcast_to(A[0], (2, 3))),
    "concat": (lambda: xp.concat([A, A], axis=1), np.concatenate([A, A], 1)),
    "concat_none": (lambda: xp.concat([A, A], axis=None), np.concatenate([A.ravel(), A.ravel()])),
    "expand_dims": (lambda: xp.expand_dims(A, axis=-1), A[..., None]),
    "flip": (lambda: xp.flip(A, axis=1), A[:, ::-1]),
    "flip_all": (lambda: xp.flip(A), A[::-1, ::-1]),
    "moveaxis": (lambda: xp.moveaxis(A[None], 0, 2), np.moveaxis(A[None], 0, 2)),
    "permute_dims": (lambda: xp.permute_dims(A, axes=(1, 0)), A.T),
    "repeat": (lambda: xp.repeat(A, 2, axis=0), np.repeat(A, 2, axis=0)),
    "reshape": (lambda: xp.reshape(A, shape=(3, -1), copy=None), A.reshape(3, 2)),
    "roll": (lambda: xp.roll(A, shift=1, axis=1), np.roll(A, 1, axis=1)),
    "roll_tuple": (
        lambda: xp.roll(A, shift=(1, -1), axis=(0, 1)),
        np.roll(A, (1, -1), axis=(0, 1)),
    ),
    "squeeze": (lambda: xp.squeeze(A[None], axis=0), A),
    "stack": (lambda: xp.stack([A, A], axis=-1), np.stack([A, A], -1)),
    "tile": (lambda: xp.tile(A, (2, 1)), np.tile(A, (2, 1))),
    "unstack": (lambda: tuple(xp.unstack(A, axis=1)), tuple(A[:, i] for i in range(3))),
    "argmax": (lambda: xp.argmax(A, axis=1, keepdims=True), np.argmax(A, 1)[:, None]),
    "argmin": (lambda: xp.argmin(A, axis=None), np.argmin(A)),
    "nonzero": (lambda: tuple(xp.nonzero(A > 1)), np.nonzero(A > 1)),
    "searchsorted": (
        lambda: xp.searchsorted(xp.asarray([1.0, 2, 2, 3]), A, side="right"),
        np.searchsorted([1.0, 2, 2, 3], A, side="right"),
    ),
    "searchsorted_sorter": (
        lambda: xp.searchsorted(xp.asarray([3.0, 1, 2]), A, sorter=xp.asarray([1, 2, 0])),
        np.searchsorted([3.0, 1, 2], A, sorter=[1, 2, 0]),
    ),
    "where": (lambda: xp.where(A > 0, A, 0.0), np.where(A > 0, A, 0)),
    "unique_all": (lambda: tuple(xp.unique_all(V)), _unique_all(V)),
    "unique_counts": (lambda: tuple(xp.unique_counts(V)), np.unique(V, return_counts=True)),
    "unique_inverse": (lambda: tuple(xp.unique_inverse(V)), np.unique(V, return_inverse=True)),
    "unique_values": (lambda: xp.unique_values(V), np.unique(V)),
    "argsort": (
        lambda: xp.argsort(V, axis=-1, descending=True, stable=True),
        np.array([0, 3, 2, 1, 4]),
    ),
    "sort": (lambda: xp.sort(A, axis=0, descending=True), -np.sort(-A, axis=0)),
    "cumulative_sum": (
        lambda: xp.cumulative_sum(A, axis=1, include_initial=True),
        np.concatenate([np.zeros((2, 1)), np.cumsum(A, 1)], 1),
    ),
    "cumulative_sum_dtype": (
        lambda: xp.cumulative_sum(xp.asarray(V), dtype=xp.float32),
        np.cumsum(V).astype(np.float32),
    ),
    "max": (lambda: xp.max(A, axis=(0, 1), keepdims=True), A.max(keepdims=True)),
    "mean": (lambda: xp.mean(A, axis=0, keepdims=False), A.mean(0)),
    "min": (lambda: xp.min(A, axis=1), A.min(1)),
    "prod": (lambda: xp.prod(A, axis=0, dtype=xp.float32, keepdims=True), A.prod(0, keepdims=True)),
    "std": (
        lambda: xp.std(A, axis=1, correction=1, keepdims=True),
        A.std(1, ddof=1, keepdims=True),
    ),
    "sum": (lambda: xp.sum(V, dtype=xp.int8, keepdims=True), np.array([10], np.int8)),
    "var": (lambda: xp.var(A, correction=0.5), A.var(ddof=0.5)),
    "all": (lambda: xp.all(A > -3, axis=0, keepdims=True), np.all(A > -3, 0, keepdims=True)),
    "any": (lambda: xp.any(A > 3, axis=1), np.any(A > 3, 1)),
}


def _function_of_case(case: str) -> str:
    return next(f for f in sorted(FUNCTIONS, key=len, reverse=True) if case.startswith(f))


@pytest.mark.parametrize("case", [_xfail_missing(_function_of_case(c), c) for c in KEYWORD_CALLS])
def test_standard_keywords(case):
    call, expected = KEYWORD_CALLS[case]
    _close(call(), expected)


def test_unique_results_have_standard_field_names():
    res = xp.unique_all(V)
    assert [f for f in ("values", "indices", "inverse_indices", "counts") if hasattr(res, f)] == [
        "values",
        "indices",
        "inverse_indices",
        "counts",
    ]
    assert hasattr(xp.unique_counts(V), "counts") and hasattr(xp.unique_counts(V), "values")
    inv = xp.unique_inverse(V)
    assert hasattr(inv, "values") and hasattr(inv, "inverse_indices")


# --- elementwise special cases --------------------------------------------------------------------
# From the "Special cases" sections of the standard's elementwise functions, for
# real-valued floating-point inputs (float32 here), then a few complex ones.
# ``expected`` is a value, or a tuple of values any of which the standard allows;
# zeros are compared with their sign, NaNs as NaN.

NAN, INF, PZ, NZ, PI = math.nan, math.inf, 0.0, -0.0, math.pi
NINF, NNAN = -math.inf, -math.nan  # NNAN: a NaN with its sign bit set

# begin special cases
SPECIAL_CASES = {
    "abs": [((NAN,), NAN), ((NZ,), PZ), ((NINF,), INF), ((INF,), INF), ((-2.5,), 2.5)],
    "acos": [((NAN,), NAN), ((2.0,), NAN), ((-2.0,), NAN), ((1.0,), PZ)],
    "acosh": [((NAN,), NAN), ((0.5,), NAN), ((1.0,), PZ), ((INF,), INF)],
    "add": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((INF, NINF), NAN),
        ((NINF, INF), NAN),
        ((INF, INF), INF),
        ((NINF, NINF), NINF),
        ((INF, 1.0), INF),
        ((NINF, 1.0), NINF),
        ((1.0, INF), INF),
        ((1.0, NINF), NINF),
        ((NZ, NZ), NZ),
        ((NZ, PZ), PZ),
        ((PZ, NZ), PZ),
        ((PZ, PZ), PZ),
        ((PZ, 2.5), 2.5),
        ((NZ, 2.5), 2.5),
        ((2.5, PZ), 2.5),
        ((2.5, NZ), 2.5),
        ((2.5, -2.5), PZ),
    ],
    "asin": [((NAN,), NAN), ((2.0,), NAN), ((-2.0,), NAN), ((PZ,), PZ), ((NZ,), NZ)],
    "asinh": [((NAN,), NAN), ((PZ,), PZ), ((NZ,), NZ), ((INF,), INF), ((NINF,), NINF)],
    "atan": [((NAN,), NAN), ((PZ,), PZ), ((NZ,), NZ), ((INF,), PI / 2), ((NINF,), -PI / 2)],
    "atan2": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((1.0, PZ), PI / 2),
        ((1.0, NZ), PI / 2),
        ((PZ, 1.0), PZ),
        ((PZ, PZ), PZ),
        ((PZ, NZ), PI),
        ((PZ, -1.0), PI),
        ((NZ, 1.0), NZ),
        ((NZ, PZ), NZ),
        ((NZ, NZ), -PI),
        ((NZ, -1.0), -PI),
        ((-1.0, PZ), -PI / 2),
        ((-1.0, NZ), -PI / 2),
        ((1.0, INF), PZ),
        ((1.0, NINF), PI),
        ((-1.0, INF), NZ),
        ((-1.0, NINF), -PI),
        ((INF, 1.0), PI / 2),
        ((NINF, 1.0), -PI / 2),
        ((INF, INF), PI / 4),
        ((INF, NINF), 3 * PI / 4),
        ((NINF, INF), -PI / 4),
        ((NINF, NINF), -3 * PI / 4),
    ],
    "atanh": [
        ((NAN,), NAN),
        ((-2.0,), NAN),
        ((2.0,), NAN),
        ((-1.0,), NINF),
        ((1.0,), INF),
        ((PZ,), PZ),
        ((NZ,), NZ),
    ],
    "ceil": [
        ((NAN,), NAN),
        ((INF,), INF),
        ((NINF,), NINF),
        ((PZ,), PZ),
        ((NZ,), NZ),
        ((3.0,), 3.0),
    ],
    "copysign": [
        ((1.5, -2.0), -1.5),
        ((1.5, NZ), -1.5),
        ((-1.5, PZ), 1.5),
        ((-1.5, 2.0), 1.5),
        ((INF, -1.0), NINF),
        ((PZ, -1.0), NZ),
        ((NZ, 1.0), PZ),
        ((NAN, 1.0), NAN),
        ((2.0, NNAN), -2.0),
        ((-2.0, NAN), 2.0),
    ],
    "cos": [((NAN,), NAN), ((PZ,), 1.0), ((NZ,), 1.0), ((INF,), NAN), ((NINF,), NAN)],
    "cosh": [((NAN,), NAN), ((PZ,), 1.0), ((NZ,), 1.0), ((INF,), INF), ((NINF,), INF)],
    "divide": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((INF, INF), NAN),
        ((NINF, INF), NAN),
        ((PZ, PZ), NAN),
        ((NZ, PZ), NAN),
        ((PZ, 2.0), PZ),
        ((NZ, 2.0), NZ),
        ((PZ, -2.0), NZ),
        ((NZ, -2.0), PZ),
        ((2.0, PZ), INF),
        ((2.0, NZ), NINF),
        ((-2.0, PZ), NINF),
        ((-2.0, NZ), INF),
        ((INF, 2.0), INF),
        ((INF, -2.0), NINF),
        ((NINF, 2.0), NINF),
        ((NINF, -2.0), INF),
        ((2.0, INF), PZ),
        ((2.0, NINF), NZ),
        ((-2.0, INF), NZ),
        ((-2.0, NINF), PZ),
        ((3.0, 2.0), 1.5),
        ((3.0, -2.0), -1.5),
    ],
    "equal": [
        ((NAN, 1.0), False),
        ((1.0, NAN), False),
        ((NAN, NAN), False),
        ((INF, INF), True),
        ((NINF, NINF), True),
        ((NINF, INF), False),
        ((NZ, PZ), True),
        ((PZ, NZ), True),
        ((2.5, 2.5), True),
    ],
    "exp": [((NAN,), NAN), ((PZ,), 1.0), ((NZ,), 1.0), ((INF,), INF), ((NINF,), PZ)],
    "expm1": [((NAN,), NAN), ((PZ,), PZ), ((NZ,), NZ), ((INF,), INF), ((NINF,), -1.0)],
    "floor": [
        ((NAN,), NAN),
        ((INF,), INF),
        ((NINF,), NINF),
        ((PZ,), PZ),
        ((NZ,), NZ),
        ((3.0,), 3.0),
    ],
    "floor_divide": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((INF, INF), NAN),
        ((NINF, INF), NAN),
        ((PZ, PZ), NAN),
        ((NZ, NZ), NAN),
        ((PZ, 2.0), PZ),
        ((NZ, 2.0), NZ),
        ((PZ, -2.0), NZ),
        ((NZ, -2.0), PZ),
        ((2.0, PZ), INF),
        ((2.0, NZ), NINF),
        ((-2.0, PZ), NINF),
        ((-2.0, NZ), INF),
        ((INF, 2.0), INF),
        ((INF, -2.0), NINF),
        ((NINF, 2.0), NINF),
        ((NINF, -2.0), INF),
        ((2.0, INF), PZ),
        ((2.0, NINF), (NZ, -1.0)),  # the standard allows Python's -1.0
        ((-2.0, INF), (NZ, -1.0)),
        ((-2.0, NINF), PZ),
        ((7.0, 2.0), 3.0),
        ((7.0, -2.0), -4.0),
        ((-7.0, 2.0), -4.0),
    ],
    "greater": [((NAN, 1.0), False), ((1.0, NAN), False), ((INF, 1.0), True), ((PZ, NZ), False)],
    "greater_equal": [((NAN, 1.0), False), ((NAN, NAN), False), ((NZ, PZ), True)],
    "hypot": [
        ((INF, NAN), INF),
        ((NAN, NINF), INF),
        ((NINF, 1.0), INF),
        ((1.0, INF), INF),
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((PZ, -3.0), 3.0),
        ((NZ, 3.0), 3.0),
        ((-3.0, NZ), 3.0),
        ((PZ, NZ), PZ),
        ((3.0, 4.0), 5.0),
    ],
    "isfinite": [((NAN,), False), ((INF,), False), ((NINF,), False), ((1.0,), True), ((NZ,), True)],
    "isinf": [((INF,), True), ((NINF,), True), ((NAN,), False), ((1.0,), False)],
    "isnan": [((NAN,), True), ((NNAN,), True), ((INF,), False), ((1.0,), False)],
    "less": [((NAN, 1.0), False), ((1.0, NAN), False), ((NINF, 1.0), True), ((NZ, PZ), False)],
    "less_equal": [((NAN, 1.0), False), ((NAN, NAN), False), ((PZ, NZ), True)],
    "log": [
        ((NAN,), NAN),
        ((-1.0,), NAN),
        ((PZ,), NINF),
        ((NZ,), NINF),
        ((1.0,), PZ),
        ((INF,), INF),
    ],
    "log1p": [
        ((NAN,), NAN),
        ((-2.0,), NAN),
        ((-1.0,), NINF),
        ((NZ,), NZ),
        ((PZ,), PZ),
        ((INF,), INF),
    ],
    "log2": [
        ((NAN,), NAN),
        ((-1.0,), NAN),
        ((PZ,), NINF),
        ((NZ,), NINF),
        ((1.0,), PZ),
        ((INF,), INF),
    ],
    "log10": [
        ((NAN,), NAN),
        ((-1.0,), NAN),
        ((PZ,), NINF),
        ((NZ,), NINF),
        ((1.0,), PZ),
        ((INF,), INF),
    ],
    "logaddexp": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((INF, 1.0), INF),
        ((1.0, INF), INF),
        ((INF, NINF), INF),
        ((NINF, INF), INF),
    ],
    "maximum": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((NAN, NAN), NAN),
        ((PZ, NZ), (PZ, NZ)),
        ((NINF, 1.0), 1.0),
    ],
    "minimum": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((NAN, NAN), NAN),
        ((PZ, NZ), (PZ, NZ)),
        ((INF, 1.0), 1.0),
    ],
    "multiply": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((INF, PZ), NAN),
        ((NINF, NZ), NAN),
        ((PZ, INF), NAN),
        ((NZ, NINF), NAN),
        ((PZ, NZ), NZ),
        ((NZ, NZ), PZ),
        ((NZ, 2.0), NZ),
        ((INF, INF), INF),
        ((INF, NINF), NINF),
        ((NINF, NINF), INF),
        ((INF, -2.0), NINF),
        ((NINF, 2.0), NINF),
        ((2.0, NINF), NINF),
        ((-2.0, NINF), INF),
    ],
    "not_equal": [
        ((NAN, 1.0), True),
        ((1.0, NAN), True),
        ((NAN, NAN), True),
        ((PZ, NZ), False),
        ((INF, INF), False),
    ],
    "pow": [
        ((2.0, NAN), NAN),
        ((NAN, PZ), 1.0),
        ((NAN, NZ), 1.0),
        ((NAN, 2.0), NAN),
        ((1.0, NAN), 1.0),
        ((1.0, INF), 1.0),
        ((2.0, INF), INF),
        ((-2.0, INF), INF),
        ((2.0, NINF), PZ),
        ((-1.0, INF), 1.0),
        ((-1.0, NINF), 1.0),
        ((0.5, INF), PZ),
        ((-0.5, INF), PZ),
        ((0.5, NINF), INF),
        ((INF, 2.0), INF),
        ((INF, -2.0), PZ),
        ((NINF, 3.0), NINF),
        ((NINF, 2.0), INF),
        ((NINF, 2.5), INF),
        ((NINF, -3.0), NZ),
        ((NINF, -2.0), PZ),
        ((PZ, 2.0), PZ),
        ((PZ, -2.0), INF),
        ((NZ, 3.0), NZ),
        ((NZ, 2.0), PZ),
        ((NZ, -3.0), NINF),
        ((NZ, -2.0), INF),
        ((-2.0, 0.5), NAN),
        ((-8.0, 1.0 / 3.0), NAN),
        ((-2.0, 3.0), -8.0),
    ],
    "remainder": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((INF, INF), NAN),
        ((NINF, INF), NAN),
        ((PZ, PZ), NAN),
        ((NZ, NZ), NAN),
        ((PZ, 2.0), PZ),
        ((NZ, 2.0), PZ),
        ((PZ, -2.0), NZ),
        ((NZ, -2.0), NZ),
        ((2.0, PZ), NAN),
        ((2.0, NZ), NAN),
        ((-2.0, PZ), NAN),
        ((INF, 2.0), NAN),
        ((NINF, -2.0), NAN),
        ((2.0, INF), 2.0),
        ((2.0, NINF), NINF),
        ((-2.0, INF), INF),
        ((-2.0, NINF), -2.0),
        ((7.0, 3.0), 1.0),
        ((-7.0, 3.0), 2.0),
        ((7.0, -3.0), -2.0),
        ((-7.0, -3.0), -1.0),
        ((6.0, -3.0), NZ),
    ],
    "round": [
        ((NAN,), NAN),
        ((INF,), INF),
        ((NINF,), NINF),
        ((PZ,), PZ),
        ((NZ,), NZ),
        ((0.5,), PZ),
        ((1.5,), 2.0),
        ((2.5,), 2.0),
        ((-0.5,), NZ),
        ((-1.5,), -2.0),
        ((-2.5,), -2.0),
        ((3.5,), 4.0),
        ((2.4,), 2.0),
    ],
    "sign": [
        ((NAN,), NAN),
        ((NZ,), (PZ, NZ)),
        ((PZ,), (PZ, NZ)),
        ((-3.0,), -1.0),
        ((3.0,), 1.0),
        ((NINF,), -1.0),
        ((INF,), 1.0),
    ],
    "signbit": [
        ((PZ,), False),
        ((NZ,), True),
        ((INF,), False),
        ((NINF,), True),
        ((2.0,), False),
        ((-2.0,), True),
        ((NAN,), False),
        ((NNAN,), True),
    ],
    "sin": [((NAN,), NAN), ((PZ,), PZ), ((NZ,), NZ), ((INF,), NAN), ((NINF,), NAN)],
    "sinh": [((NAN,), NAN), ((PZ,), PZ), ((NZ,), NZ), ((INF,), INF), ((NINF,), NINF)],
    "sqrt": [((NAN,), NAN), ((-1.0,), NAN), ((PZ,), PZ), ((NZ,), NZ), ((INF,), INF), ((4.0,), 2.0)],
    "subtract": [
        ((NAN, 1.0), NAN),
        ((1.0, NAN), NAN),
        ((INF, INF), NAN),
        ((NINF, NINF), NAN),
        ((INF, NINF), INF),
        ((NINF, INF), NINF),
        ((INF, 1.0), INF),
        ((1.0, INF), NINF),
        ((PZ, PZ), PZ),
        ((NZ, PZ), NZ),
        ((PZ, NZ), PZ),
        ((NZ, NZ), PZ),
        ((2.5, 2.5), PZ),
    ],
    "tan": [((NAN,), NAN), ((PZ,), PZ), ((NZ,), NZ), ((INF,), NAN), ((NINF,), NAN)],
    "tanh": [((NAN,), NAN), ((PZ,), PZ), ((NZ,), NZ), ((INF,), 1.0), ((NINF,), -1.0)],
    "trunc": [
        ((NAN,), NAN),
        ((INF,), INF),
        ((NINF,), NINF),
        ((PZ,), PZ),
        ((NZ,), NZ),
        ((3.0,), 3.0),
    ],
}

# Complex inputs: (real, imag) pairs in, (real, imag) pairs or booleans out.
COMPLEX_SPECIAL_CASES = {
    "abs": [
        (((INF, NAN),), INF),
        (((NAN, NINF),), INF),
        (((NAN, 1.0),), NAN),
        (((NZ, NZ),), PZ),
        (((3.0, -4.0),), 5.0),
    ],
    "conj": [(((PZ, PZ),), (PZ, NZ)), (((1.0, NZ),), (1.0, PZ)), (((NAN, 2.0),), (NAN, -2.0))],
    "real": [(((NZ, 3.0),), NZ), (((INF, NAN),), INF)],
    "imag": [(((3.0, NZ),), NZ), (((NAN, NINF),), NINF)],
    "isnan": [(((NAN, PZ),), True), (((PZ, NAN),), True), (((INF, 1.0),), False)],
    "isinf": [(((INF, NAN),), True), (((NAN, NINF),), True), (((NAN, 1.0),), False)],
    "isfinite": [(((INF, PZ),), False), (((1.0, NAN),), False), (((1.0, -2.0),), True)],
    "exp": [
        (((PZ, PZ),), (1.0, PZ)),
        (((NZ, PZ),), (1.0, PZ)),
        (((NINF, PZ),), (PZ, PZ)),
        (((INF, PZ),), (INF, PZ)),
        (((NAN, PZ),), (NAN, PZ)),
    ],
    "log": [
        (((NZ, PZ),), (NINF, PI)),
        (((PZ, PZ),), (NINF, PZ)),
        (((1.0, INF),), (INF, PI / 2)),
        (((NINF, 1.0),), (INF, PI)),
        (((INF, 1.0),), (INF, PZ)),
        (((NAN, NAN),), (NAN, NAN)),
    ],
    "sqrt": [
        (((PZ, PZ),), (PZ, PZ)),
        (((NZ, PZ),), (PZ, PZ)),
        (((3.0, INF),), (INF, INF)),
        (((NAN, INF),), (INF, INF)),
        (((INF, 1.0),), (INF, PZ)),
        (((NINF, 1.0),), (PZ, INF)),
    ],
}
# end special cases

# Special cases where JAX 0.10 (and so modjax) gives another answer than the standard.
_FLOOR_DIVIDE_ZERO = "JAX's floor_divide loses the sign of a zero quotient"
_FLOOR_DIVIDE_INF = "JAX's floor_divide of an infinite x1 by a finite x2 is NaN"
_REMAINDER_ZERO = "JAX's remainder gives a zero result the sign of x1, not of x2"
JAX_SPECIAL_CASE_DEVIATIONS: dict[str, str] = {
    "floor_divide(-0,2)": _FLOOR_DIVIDE_ZERO,
    "floor_divide(-0,-2)": _FLOOR_DIVIDE_ZERO,
    "floor_divide(-2,-inf)": _FLOOR_DIVIDE_ZERO,
    "floor_divide(+inf,2)": _FLOOR_DIVIDE_INF,
    "floor_divide(+inf,-2)": _FLOOR_DIVIDE_INF,
    "floor_divide(-inf,2)": _FLOOR_DIVIDE_INF,
    "floor_divide(-inf,-2)": _FLOOR_DIVIDE_INF,
    "remainder(-0,2)": _REMAINDER_ZERO,
    "remainder(+0,-2)": _REMAINDER_ZERO,
    "remainder(6,-3)": _REMAINDER_ZERO,
    "abs[c]((+inf,nan))": "JAX's abs of a complex with an infinite part and a NaN part is NaN",
    "abs[c]((nan,-inf))": "JAX's abs of a complex with an infinite part and a NaN part is NaN",
    "sqrt[c]((nan,+inf))": "JAX's complex sqrt of NaN + inf j is NaN + NaN j",
}
# Special cases that JAX meets and modjax does not yet.
SPECIAL_CASE_GAPS: dict[str, str] = {}


def _fmt(v) -> str:
    if isinstance(v, tuple):
        return "(" + ",".join(_fmt(a) for a in v) + ")"
    if isinstance(v, bool):
        return str(v)
    if math.isnan(v):
        return "-nan" if math.copysign(1, v) < 0 else "nan"
    if v == 0:
        return "-0" if math.copysign(1, v) < 0 else "+0"
    if math.isinf(v):
        return "+inf" if v > 0 else "-inf"
    return f"{v:g}"


def _case_id(name: str, args, complex_: bool) -> str:
    inner = ",".join(_fmt(a) for a in args)
    return f"{name}[c]({inner})" if complex_ else f"{name}({inner})"


def _special_params():
    for complex_, table in ((False, SPECIAL_CASES), (True, COMPLEX_SPECIAL_CASES)):
        for name, cases in table.items():
            for i, (args, expected) in enumerate(cases):
                case = _case_id(name, args, complex_)
                marks = []
                reason = (
                    JAX_SPECIAL_CASE_DEVIATIONS.get(case)
                    or SPECIAL_CASE_GAPS.get(case)
                    or SPECIAL_CASE_GAPS.get(case.split("(")[0])
                )
                if reason is not None:
                    marks.append(pytest.mark.xfail(strict=True, reason=reason))
                yield _xfail_missing(name, case, name, complex_, i, expected, marks=marks)


@functools.cache
def _special_results(name: str, complex_: bool) -> np.ndarray:
    """Evaluate ``name`` on all its special-case inputs in one call (one compilation)."""
    cases = (COMPLEX_SPECIAL_CASES if complex_ else SPECIAL_CASES)[name]
    columns = list(zip(*(args for args, _ in cases), strict=True))
    if complex_:
        arrays = [np.array([complex(*v) for v in col], np.complex64) for col in columns]
        for arr, col in zip(arrays, columns, strict=True):  # keep the signs of zeros and NaNs
            arr.real = np.array([v[0] for v in col], np.float32)
            arr.imag = np.array([v[1] for v in col], np.float32)
    else:
        arrays = [np.array(col, np.float32) for col in columns]
    return np.asarray(getattr(xp, name)(*[xp.asarray(a) for a in arrays]))


def _matches(got, expected) -> bool:
    if isinstance(expected, bool):
        return bool(got) == expected and np.asarray(got).dtype == np.bool_
    got = float(got)
    if math.isnan(expected):
        return math.isnan(got)
    if expected == 0 or math.isinf(expected):
        return got == expected and math.copysign(1, got) == math.copysign(1, expected)
    return math.isclose(got, expected, rel_tol=1e-6)


@pytest.mark.parametrize("case, name, complex_, index, expected", _special_params())
def test_special_case(case, name, complex_, index, expected):
    got = _special_results(name, complex_)[index]
    if complex_ and isinstance(expected, tuple):
        ok = _matches(got.real, expected[0]) and _matches(got.imag, expected[1])
    elif isinstance(expected, tuple):
        ok = any(_matches(got, e) for e in expected)
    else:
        ok = _matches(got, expected)
    assert ok, f"{case}: got {got!r}, the standard says {_fmt(expected)}"


@pytest.mark.parametrize("name", [_xfail_missing(n, n) for n in ["sqrt", "atan2", "remainder"]])
def test_special_cases_hold_under_jit(name):
    cases = SPECIAL_CASES[name]
    columns = [np.array(col, np.float32) for col in zip(*(a for a, _ in cases), strict=True)]
    jitted = np.asarray(jit(getattr(xp, name))(*columns))
    np.testing.assert_array_equal(jitted, _special_results(name, False))
    assert (np.signbit(jitted) == np.signbit(_special_results(name, False))).all()


def test_integer_results_of_rounding_functions_keep_the_dtype():
    x = xp.asarray([-3, 0, 7], dtype=xp.int16)
    for fn in (xp.ceil, xp.floor, xp.round, xp.trunc):
        out = fn(x)
        assert out.dtype == np.dtype("int16")
        np.testing.assert_array_equal(np.asarray(out), [-3, 0, 7])


# --- the array object -----------------------------------------------------------------------------

ARRAY_ATTRIBUTES = ["dtype", "device", "mT", "ndim", "shape", "size", "T"]
ARRAY_METHODS = (
    "__abs__ __add__ __and__ __array_namespace__ __bool__ __complex__ __dlpack__ "
    "__dlpack_device__ __eq__ __float__ __floordiv__ __ge__ __getitem__ __gt__ __index__ "
    "__int__ __invert__ __le__ __lshift__ __lt__ __matmul__ __mod__ __mul__ __ne__ __neg__ "
    "__or__ __pos__ __pow__ __rshift__ __setitem__ __sub__ __truediv__ __xor__ to_device "
    "__radd__ __rand__ __rfloordiv__ __rlshift__ __rmatmul__ __rmod__ __rmul__ __ror__ "
    "__rpow__ __rrshift__ __rsub__ __rtruediv__ __rxor__"
).split()


@pytest.mark.parametrize("name", ARRAY_ATTRIBUTES + ARRAY_METHODS)
def test_array_object_has(name):
    x = xp.ones((2, 3))
    assert isinstance(x, Array)
    assert hasattr(x, name)

    def traced(v):
        if name != "device":  # tracers have no device, as in JAX
            assert hasattr(v, name)
        return v

    jit(traced)(x)


def test_array_attributes():
    x = xp.ones((2, 3), dtype=xp.int8)
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == xp.int8
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert xp.ones((4, 2, 3)).mT.shape == (4, 3, 2)
    assert x.device == xp.__array_namespace_info__().devices()[1]
    assert x.to_device(x.device).device == x.device
