"""Explicit 64-bit dtypes with x64 off: truncated with JAX's UserWarning, where JAX warns.

``EXPECTED`` was recorded from JAX 0.10.2 (x64 off) with the script kept as text in
``x64_warnings_recording.json`` (modjax's tests never import jax): for each call, the
function its warning names ("" for none, None for no warning).
modjax names the function the user called where JAX's message names a helper it
happens to call (``empty_like`` says ``ones_like`` in JAX, ``nansum`` says ``nanprod``,
``nn.one_hot`` says ``astype``, ``fromfunction`` says ``arange``, ``lax.full_like``
says ``dtype``), warns once where JAX warns twice (``sum``, ``prod`` also warn from
``convert_element_type``), and does not warn in ``jnp.result_type``, which JAX does.
"""

from __future__ import annotations

import linecache
import warnings

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import lax, nn, random
from modjax.runtime import jit
from modjax.tracecore import dtypes
from modjax.tracecore.config import enable_x64

KEY = random.key(0)
X = jnp.ones(3)

# name: (call, the function JAX's warning names: "" none named, None no warning)
EXPECTED = {
    "array": (lambda: jnp.array(1, dtype=jnp.int64), "array"),
    "array_np": (lambda: jnp.array(1, dtype=np.int64), "array"),
    "array_str": (lambda: jnp.array(1, dtype="int64"), "array"),
    "array_list": (lambda: jnp.array([1, 2], dtype="int64"), "array"),
    "array_float": (lambda: jnp.array(1, dtype=float), None),
    "array_int": (lambda: jnp.array(1, dtype=int), None),
    "array_float64_data": (lambda: jnp.array(np.ones(2, np.float64)), None),
    "asarray": (lambda: jnp.asarray(1, dtype="float64"), "asarray"),
    "asarray_float64_data": (lambda: jnp.asarray(np.ones(2)), None),
    "float64()": (lambda: jnp.float64(1), "asarray"),
    "int64()": (lambda: jnp.int64(1), "asarray"),
    "zeros": (lambda: jnp.zeros(2, dtype="float64"), "zeros"),
    "zeros_np": (lambda: jnp.zeros(2, dtype=np.float64), "zeros"),
    "zeros_jnp": (lambda: jnp.zeros(2, dtype=jnp.float64), "zeros"),
    "zeros_c128": (lambda: jnp.zeros(2, dtype="complex128"), "zeros"),
    "zeros_u64": (lambda: jnp.zeros(2, dtype="uint64"), "zeros"),
    "zeros_float": (lambda: jnp.zeros(2, dtype=float), None),
    "zeros_complex": (lambda: jnp.zeros(2, dtype=complex), None),
    "ones": (lambda: jnp.ones(2, dtype="float64"), "ones"),
    "empty": (lambda: jnp.empty(2, dtype="float64"), "empty"),
    "full": (lambda: jnp.full(2, 1, dtype="float64"), "full"),
    "zeros_like": (lambda: jnp.zeros_like(X, dtype="float64"), "zeros_like"),
    "ones_like": (lambda: jnp.ones_like(X, dtype="float64"), "ones_like"),
    "full_like": (lambda: jnp.full_like(X, 1, dtype="float64"), "full_like"),
    "empty_like": (lambda: jnp.empty_like(X, dtype="float64"), "empty_like"),
    "arange": (lambda: jnp.arange(3, dtype="int64"), "arange"),
    "arange_float": (lambda: jnp.arange(3.0), None),
    "linspace": (lambda: jnp.linspace(0, 1, 3, dtype="float64"), "linspace"),
    "logspace": (lambda: jnp.logspace(0, 1, 3, dtype="float64"), "logspace"),
    "geomspace": (lambda: jnp.geomspace(1, 2, 3, dtype="float64"), "geomspace"),
    "eye": (lambda: jnp.eye(2, dtype="float64"), "eye"),
    "identity": (lambda: jnp.identity(2, dtype="float64"), "identity"),
    "tri": (lambda: jnp.tri(2, dtype="float64"), "tri"),
    "indices": (lambda: jnp.indices((2,), dtype="int64"), "indices"),
    "fromfunction": (lambda: jnp.fromfunction(lambda i: i, (2,), dtype="float64"), "fromfunction"),
    "astype": (lambda: X.astype("float64"), "astype"),
    "jnp.astype": (lambda: jnp.astype(X, "float64"), "astype"),
    "sum": (lambda: jnp.sum(X, dtype="float64"), "sum"),
    "prod": (lambda: jnp.prod(X, dtype="float64"), "prod"),
    "nansum": (lambda: jnp.nansum(X, dtype="float64"), "nansum"),
    "mean": (lambda: jnp.mean(X, dtype="float64"), "mean"),
    "var": (lambda: jnp.var(X, dtype="float64"), "var"),
    "std": (lambda: jnp.std(X, dtype="float64"), "std"),
    "cumsum": (lambda: jnp.cumsum(X, dtype="float64"), "cumsum"),
    "cumprod": (lambda: jnp.cumprod(X, dtype="float64"), "cumprod"),
    "trace": (lambda: jnp.trace(jnp.eye(2), dtype="float64"), "trace"),
    # The method shares jnp.sum's traces, and JAX (as modjax) warns when a call traces,
    # not when it hits the cache: JAX's recording ran "sum" just before, so x.sum did not
    # warn there. A shape of its own makes the trace (and its warning) not depend on
    # which test ran first.
    "x.sum": (lambda: jnp.ones(7).sum(dtype="float64"), "sum"),
    "dot": (lambda: jnp.dot(X, X, preferred_element_type="float64"), "dot"),
    "matmul": (lambda: jnp.matmul(X, X, preferred_element_type="float64"), "matmul"),
    "einsum": (lambda: jnp.einsum("i,i", X, X, preferred_element_type="float64"), "einsum"),
    "convert_element_type": (
        lambda: lax.convert_element_type(X, "float64"),
        "convert_element_type",
    ),
    "convert_element_type_np": (
        lambda: lax.convert_element_type(X, np.int64),
        "convert_element_type",
    ),
    "lax.full": (lambda: lax.full((2,), 1, dtype="float64"), "full"),
    "lax.iota": (lambda: lax.iota("int64", 3), "broadcasted_iota"),
    "lax.broadcasted_iota": (lambda: lax.broadcasted_iota("int64", (3,), 0), "broadcasted_iota"),
    "lax.full_like": (lambda: lax.full_like(X, 1, dtype="float64"), "full_like"),
    "lax.bitcast": (lambda: lax.bitcast_convert_type(X, "int32"), None),
    "random.uniform": (lambda: random.uniform(KEY, (2,), dtype="float64"), ""),
    "random.normal": (lambda: random.normal(KEY, (2,), dtype="float64"), ""),
    "random.randint": (lambda: random.randint(KEY, (2,), 0, 3, dtype="int64"), ""),
    "random.bits": (lambda: random.bits(KEY, (2,), dtype="uint64"), ""),
    "random.exponential": (lambda: random.exponential(KEY, (2,), dtype="float64"), ""),
    "random.bernoulli": (lambda: random.bernoulli(KEY, 0.5, (2,)), None),
    "random.permutation": (lambda: random.permutation(KEY, 3), None),
    "nn.one_hot": (lambda: nn.one_hot(jnp.arange(2), 3, dtype="float64"), "one_hot"),
    "argmax": (lambda: jnp.argmax(X), None),
    "count_nonzero": (lambda: jnp.count_nonzero(X), None),
    "promote_types": (lambda: jnp.promote_types("float64", "float32"), None),
    "finfo": (lambda: jnp.finfo("float64"), None),
    "iinfo": (lambda: jnp.iinfo("int64"), None),
    "dtype": (lambda: jnp.dtype("float64"), None),
    "isdtype": (lambda: jnp.isdtype("float64", "real floating"), None),
    "can_cast": (lambda: jnp.can_cast("float64", "float32"), None),
    "jit_zeros": (lambda: jit(lambda: jnp.zeros(2, dtype="float64"))(), "zeros"),
}


def _truncation_warnings(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if "Explicitly requested dtype" in str(w.message)]


@pytest.mark.parametrize("name", list(EXPECTED))
def test_explicit_64_bit_dtype_warns_where_jax_does(name):
    call, fun_name = EXPECTED[name]
    caught = _truncation_warnings(call)
    if fun_name is None:
        assert caught == []
        return
    assert len(caught) == 1, [str(w.message) for w in caught]
    (warning,) = caught
    assert warning.category is UserWarning
    requested = f" requested in {fun_name}" if fun_name else ""
    message = str(warning.message)
    truncated = {"float64": "float32", "int64": "int32", "uint64": "uint32"}
    wide = next(w for w in ("uint64", "int64", "float64", "complex128") if w in message)
    narrow = truncated.get(wide, "complex64")
    assert message.startswith(
        f"Explicitly requested dtype {wide}{requested} is not available, and will be "
        f"truncated to dtype {narrow}. To enable more dtypes, set the jax_enable_x64 "
        "configuration option"
    ), message


def test_warning_names_the_users_line_and_result_is_truncated():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = jnp.zeros(2, dtype="float64")  # the line the warning must name
    (warning,) = caught
    assert warning.filename == __file__
    assert "jnp.zeros(2, dtype=" in linecache.getline(__file__, warning.lineno)
    assert out.dtype == np.float32
    with pytest.warns(UserWarning, match="requested in array"):
        assert jnp.array(1, dtype=jnp.int64).dtype == np.int32


def test_no_warning_with_x64_on():
    with enable_x64(True):
        for name in ("array", "zeros", "astype", "random.uniform", "convert_element_type"):
            assert _truncation_warnings(EXPECTED[name][0]) == []
        assert jnp.zeros(2, dtype="float64").dtype == np.float64


def test_modjax_internal_calls_never_warn():
    # Functions whose implementations widen or pick dtypes themselves: none may
    # warn a user who asked for no 64-bit dtype.
    ints = jnp.arange(6, dtype=jnp.int8).reshape(2, 3)
    calls = [
        lambda: jnp.mean(ints),
        lambda: jnp.var(ints, axis=0),
        lambda: jnp.sum(ints),
        lambda: jnp.cumsum(ints),
        lambda: jnp.linspace(0, 1, 5),
        lambda: jnp.logspace(0, 1, 5),
        lambda: jnp.histogram(X, bins=3),
        lambda: jnp.argsort(X),
        lambda: jnp.unique(ints, size=6),
        lambda: jnp.percentile(X, 50.0),
        lambda: jnp.fft.fftfreq(4),
        lambda: jnp.linalg.norm(X),
        lambda: jnp.round(X, 2),
        lambda: random.normal(KEY, (3,)),
        lambda: random.randint(KEY, (3,), 0, 10),
        lambda: random.choice(KEY, 5, (2,)),
        lambda: random.permutation(KEY, 4),
        lambda: random.gamma(KEY, 2.0, (2,)),
        lambda: random.poisson(KEY, 2.0, (2,)),
        lambda: nn.softmax(X),
        lambda: nn.one_hot(jnp.arange(3), 3),
        lambda: jit(lambda v: jnp.sort(v) @ v)(X),
    ]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="Explicitly requested dtype")
        for call in calls:
            call()


def test_check_and_canonicalize_user_dtype():
    check = dtypes.check_and_canonicalize_user_dtype
    assert check(float) == np.float32 and check(int) == np.int32 and check(bool) == np.bool_
    assert check("bfloat16") == np.dtype(dtypes.bfloat16)
    with pytest.raises(TypeError, match="only supports number and bool dtypes"):
        check("U3", "zeros")
    with pytest.raises(ValueError, match="dtype=arr.dtype"):
        check(X)
    with pytest.warns(UserWarning, match="requested in f is not available"):
        assert check("complex128", "f") == np.complex64
