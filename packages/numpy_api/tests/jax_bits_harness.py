"""What the bit-exact sweeps against JAX 0.10.2 share: frameworks, runs, records, checks.

A sweep (``*_jax_bits_sweep_gen.py``) lists cases; run with a Python that has JAX, from
outside the repository, it records JAX's answers in a JSON table beside itself
(``write_reference``); its test (``test_*_jax_bits_sweep.py``) runs the same cases on
modjax and compares (``check_record``). A result is recorded by its dtype, shape, weak
type and raw bytes (hex), a key array by its key data, an error by its class and
message: equal records mean equal bits. Neither library is imported by name: modjax's
tests never import jax, and numpy_api's tests not the modjax metapackage.
"""

from __future__ import annotations

import importlib
import math
import pathlib
import types
from collections.abc import Callable

import numpy as np
from cpu_kind import load_reference, save_reference

# jax's submodules the cases reach through a framework's attributes.
_JAX_SUBMODULES = (
    "numpy.linalg",
    "numpy.fft",
    "lax.linalg",
    "scipy.linalg",
    "scipy.fft",
    "scipy.special",
    "scipy.stats",
    "scipy.signal",
    "scipy.ndimage",
    "scipy.interpolate",
    "scipy.integrate",
    "random",
)


def rand(shape, dtype=np.float32, seed=0, scale=1.0):
    """Standard normal values of ``dtype`` (integers: rounded, times 3; complex: both parts)
    from numpy's legacy ``RandomState``, whose streams are stable."""
    r = np.random.RandomState(seed)
    x = r.standard_normal(shape) * scale
    if np.dtype(dtype).kind == "c":
        x = x + 1j * r.standard_normal(shape) * scale
    if np.dtype(dtype).kind in "iu":
        x = np.round(3 * x)
    if np.dtype(dtype).kind == "b":
        x = x > 0
    return x.astype(dtype)


def uniform(shape, dtype=np.float32, seed=0, low=0.0, high=1.0):
    """Uniform values in ``[low, high)`` of ``dtype`` from numpy's legacy ``RandomState``."""
    r = np.random.RandomState(seed)
    return (low + (high - low) * r.random_sample(shape)).astype(dtype)


def framework(name: str) -> types.SimpleNamespace:
    """jax's or modjax's modules and transformations, under the same attribute names.

    ``jnp``, ``lax``, ``la`` (numpy.linalg), ``lla`` (lax.linalg), ``sla`` (scipy.linalg),
    ``fft``, ``sfft`` (scipy.fft), ``S`` (scipy), ``random``, ``jit``, ``grad``, ``jvp``,
    ``vjp``, ``vmap`` and ``enable_x64``; modjax's come from its own layers.
    """
    if name == "jax":
        jax = importlib.import_module("jax")
        for sub in _JAX_SUBMODULES:
            importlib.import_module(f"jax.{sub}")
        return types.SimpleNamespace(
            jnp=jax.numpy,
            lax=jax.lax,
            la=jax.numpy.linalg,
            lla=jax.lax.linalg,
            sla=jax.scipy.linalg,
            fft=jax.numpy.fft,
            sfft=jax.scipy.fft,
            S=jax.scipy,
            random=jax.random,
            jit=jax.jit,
            grad=jax.grad,
            jvp=jax.jvp,
            vjp=jax.vjp,
            vmap=jax.vmap,
            enable_x64=jax.enable_x64,
        )
    mod = importlib.import_module
    scipy = mod("modjax.scipy")
    for sub in _JAX_SUBMODULES:
        if sub.startswith("scipy."):
            mod(f"modjax.{sub}")
    autodiff = mod("modjax.autodiff")
    return types.SimpleNamespace(
        jnp=mod("modjax.numpy"),
        lax=mod("modjax.lax"),
        la=mod("modjax.numpy.linalg"),
        lla=mod("modjax.lax.linalg"),
        sla=mod("modjax.scipy.linalg"),
        fft=mod("modjax.numpy.fft"),
        sfft=mod("modjax.scipy.fft"),
        S=scipy,
        random=mod("modjax.random"),
        jit=mod("modjax.runtime").jit,
        grad=autodiff.grad,
        jvp=autodiff.jvp,
        vjp=autodiff.vjp,
        vmap=mod("modjax.batching").vmap,
        enable_x64=mod("modjax.tracecore.config").enable_x64,
    )


def describe(F, x) -> dict:
    """A JSON description of a result, bit for bit (a key array by its key data)."""
    if isinstance(x, tuple | list):
        return {"items": [describe(F, i) for i in x]}
    if str(getattr(x, "dtype", "")).startswith("key<"):
        record = describe(F, F.random.key_data(x))
        record["key"] = str(x.dtype)
        return record
    a = np.asarray(x)
    weak = getattr(x, "weak_type", None)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "weak": weak, "hex": a.tobytes().hex()}


def attempt(F, thunk: Callable[[], object]) -> dict:
    """The description of ``thunk()``'s result, or of the error it raised."""
    try:
        return describe(F, thunk())
    except Exception as err:  # noqa: BLE001  (the error is the answer)
        return {"error": [type(err).__name__, str(err)]}


def _leaves(args, kwargs):
    """The numpy arrays among the arguments (jit's operands) and how to put them back."""
    leaves = []

    def mark(v):
        if isinstance(v, np.ndarray | np.generic):
            leaves.append(v)
            return ("leaf", len(leaves) - 1)
        return ("static", v)

    spec_a = [mark(a) for a in args]
    spec_k = {k: mark(v) for k, v in kwargs.items()}

    def rebuild(values):
        def put(s):
            return values[s[1]] if s[0] == "leaf" else s[1]

        return [put(s) for s in spec_a], {k: put(s) for k, s in spec_k.items()}

    return leaves, rebuild


def run_eager_and_jit(F, c: dict, subject: object = None) -> dict:
    """Run case ``c`` (``fn(subject, *args, **kwargs)``, ``subject`` the framework unless
    given) eagerly on its numpy inputs and, if the case allows, jitted with the arrays
    among them as arguments (closed-over constants would be folded by XLA in JAX)."""
    fn, args, kwargs = c["fn"], c["args"], c["kwargs"]
    subject = F if subject is None else subject
    with F.enable_x64(c["x64"]):
        record = {"eager": attempt(F, lambda: fn(subject, *args, **kwargs))}
        if c["jit"]:
            leaves, rebuild = _leaves(args, kwargs)

            def program(*values):
                a, k = rebuild(values)
                return fn(subject, *a, **k)

            record["jit"] = attempt(F, lambda: F.jit(program)(*leaves))
    return record


def _assert_within_ulps(expected: dict, actual: dict, ulps: int, where: str) -> None:
    e = np.frombuffer(bytes.fromhex(expected["hex"]), np.dtype(expected["dtype"]))
    a = np.frombuffer(bytes.fromhex(actual["hex"]), np.dtype(actual["dtype"]))
    eps = np.finfo(e.dtype).eps
    scale = np.max(np.abs(e), initial=1.0)
    np.testing.assert_allclose(a, e, rtol=ulps * eps, atol=ulps * eps * scale, err_msg=where)


def check_record(expected: dict, actual: dict, where: str, ulps: int = 0) -> None:
    """Assert that a case's record on modjax is JAX's: bits, dtypes, weak types, errors
    (values within ``ulps`` units in the last place where that is given)."""
    if "error" in expected:
        assert "error" in actual, (where, actual)
        name, message = expected["error"]
        got_name, got_message = actual["error"]
        assert got_name == name, (where, actual["error"])
        assert got_message == message, where
        return
    assert "error" not in actual, (where, actual["error"])
    if "items" in expected:
        assert len(actual.get("items", ())) == len(expected["items"]), where
        for i, (e, a) in enumerate(zip(expected["items"], actual["items"], strict=True)):
            check_record(e, a, f"{where}[{i}]", ulps)
        return
    for key in ("dtype", "shape", "weak", "key"):
        assert actual.get(key) == expected.get(key), (where, key, actual.get(key))
    if ulps and actual["hex"] != expected["hex"]:
        _assert_within_ulps(expected, actual, ulps, where)
    else:
        assert actual["hex"] == expected["hex"], (where, "bits differ")


def check_case(table: dict, F, c: dict, run: Callable[[object, dict], dict], ulps: int = 0) -> None:
    """Run case ``c`` on modjax (framework ``F``) and compare every mode with JAX's record."""
    expected = table[c["name"]]
    actual = run(F, c)
    assert sorted(actual) == sorted(expected)
    for mode in expected:
        check_record(expected[mode], actual[mode], f"{c['name']}/{mode}", ulps)


def read_reference(path: pathlib.Path) -> dict:
    """The recorded results of a sweep, by case name."""
    return load_reference(path)["results"]


def write_reference(
    path: pathlib.Path, cases: list[dict], run: Callable[[object, dict], dict], script: str
) -> None:
    """Run every case with JAX and write the table of results to ``path``."""
    jax_framework = framework("jax")
    results = {c["name"]: run(jax_framework, c) for c in cases}
    assert len(results) == len(cases), "case names must be unique"
    table = {
        "jax_version": importlib.import_module("jax").__version__,
        "recorded_with": f"{script} (beside the table)",
        "results": results,
    }
    written = save_reference(path, table)
    size = math.ceil(written.stat().st_size / 1024)
    print(f"{len(results)} cases written to {written} ({size} KiB)")
