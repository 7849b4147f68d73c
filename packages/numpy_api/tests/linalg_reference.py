"""Known answers of jax.numpy.linalg, jax.scipy.linalg and jax.lax.linalg (JAX 0.10.2).

``CASES`` lists calls by name: the function (a dotted path under ``jax`` or
``modjax``), its arguments as input specs and its keyword arguments. Inputs
are rebuilt from the specs with numpy's legacy ``RandomState`` (whose streams
numpy keeps stable), so the same code builds them for JAX, when the table is
recorded by ``linalg_jax_reference_gen.py``, and for modjax in the tests.
``linalg_jax_reference.json`` holds, per case, the structure of JAX's result
(tuple, list or named tuple), each array's shape, dtype, weak type and
values, or the exception's class and message, and any FutureWarning.
"""

from __future__ import annotations

import importlib
import pathlib
import types
import warnings

import numpy as np
from cpu_kind import load_reference

REFERENCE = pathlib.Path(__file__).with_name("linalg_jax_reference.json")


# --- inputs -----------------------------------------------------------------------------------


def _random(shape, dtype, seed):
    r = np.random.RandomState(seed)
    x = r.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * r.standard_normal(shape)
    if np.dtype(dtype).kind in "iu":
        x = np.round(3 * x)
    return x.astype(dtype)


def _hermitian(shape, dtype, seed):
    x = _random(shape, dtype, seed)
    return ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dtype)


def _positive_definite(shape, dtype, seed):
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    b = _random(shape, wide, seed)
    a = b @ np.conj(np.swapaxes(b, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return (np.round(a) if np.dtype(dtype).kind in "iu" else a).astype(dtype)


def _general(shape, dtype, seed):
    return (_random(shape, dtype, seed) + shape[-1] * np.eye(shape[-1])).astype(dtype)


_MAKERS = {
    "rand": _random,
    "herm": _hermitian,
    "hpd": _positive_definite,
    "gen": _general,
    "triu": lambda shape, dtype, seed: np.triu(_general(shape, dtype, seed)),
}


def _weak_matrix(lax, values):
    """A weakly typed float matrix of ``values``: selects between Python-scalar fills."""
    values = np.asarray(values, np.float64)
    shape = values.shape
    rows = lax.broadcasted_iota(np.int32, shape, 0)
    cols = lax.broadcasted_iota(np.int32, shape, 1)
    out = lax.full(shape, 0.0)
    for (i, j), v in np.ndenumerate(values):
        hit = lax.bitwise_and(lax.eq(rows, np.int32(i)), lax.eq(cols, np.int32(j)))
        out = lax.select(hit, lax.full(shape, float(v)), out)
    return out


def build(J, spec):
    """Return the input ``spec`` stands for, built with the framework ``J`` (jax or modjax).

    A spec is a JSON value: ``[maker, shape, dtype, seed]`` for an array made by
    one of ``_MAKERS``; a list of specs; ``{"array": values, "dtype": name}``; ``{"weak": values}``
    for a weakly typed matrix; ``{"key": seed}`` for ``random.key(seed)``;
    ``{"tuple": [specs]}``; anything else is passed as it is.
    """
    if isinstance(spec, list):
        if spec and isinstance(spec[0], str) and spec[0] in _MAKERS:
            maker, shape, dtype, seed = spec
            return _MAKERS[maker](tuple(shape), np.dtype(dtype), seed)
        return [build(J, s) for s in spec]
    if isinstance(spec, dict):
        if "array" in spec:
            return np.asarray(spec["array"], dtype=spec["dtype"])
        if "weak" in spec:
            return _weak_matrix(importlib.import_module(f"{J.__name__}.lax"), spec["weak"])
        if "key" in spec:
            return importlib.import_module(f"{J.__name__}.random").key(spec["key"])
        if "tuple" in spec:
            return tuple(build(J, s) for s in spec["tuple"])
    return spec


def _function(J, path):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(f"{J.__name__}.{module}"), name)


# --- results ----------------------------------------------------------------------------------


def describe(x):
    """A JSON description of a result: containers, arrays (values as floats) and scalars."""
    if isinstance(x, tuple | list):
        d = {"kind": type(x).__name__, "items": [describe(i) for i in x]}
        if hasattr(x, "_fields"):
            d["fields"] = list(x._fields)
        return d
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        a = np.asarray(x)
        weak = getattr(x, "weak_type", None)
        d = {"shape": list(a.shape), "dtype": str(a.dtype), "weak": weak}
        d["re"] = np.real(a).astype(float).ravel().tolist()
        if a.dtype.kind == "c":
            d["im"] = np.imag(a).astype(float).ravel().tolist()
        return d
    return {"kind": "py:" + type(x).__name__, "value": repr(x)}


def modjax_framework():
    """Return what ``run`` and ``check`` use of modjax: its name and ``enable_x64``.

    numpy_api's tests may not import the modjax metapackage (the layering rule).
    """
    from modjax.tracecore.config import enable_x64

    return types.SimpleNamespace(__name__="modjax", enable_x64=enable_x64)


def run(J, case):
    """Call ``case`` with ``J``; return its JSON record (result or error, and warnings)."""
    fun = _function(J, case["fun"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with J.enable_x64(case.get("x64", False)):  # the inputs too: weak ones are built
            args = [build(J, a) for a in case.get("args", [])]
            kwargs = {k: build(J, v) for k, v in case.get("kwargs", {}).items()}
            try:
                record = {"result": describe(fun(*args, **kwargs))}
            except Exception as err:  # noqa: BLE001  (the error is the answer)
                record = {"error": [type(err).__name__, str(err)]}
                classes = [c.__name__ for c in type(err).__mro__]
    future = [str(w.message) for w in caught if w.category is FutureWarning]
    if future:
        record["warnings"] = future
    return (record, classes) if "error" in record else (record, [])


def _tolerance(dtype: str) -> float:
    return 1e-12 if dtype in ("float64", "complex128") else 2e-5


def assert_same(expected, actual, where="result"):
    """Assert that modjax's description ``actual`` matches JAX's ``expected``."""
    if "items" in expected:
        assert actual.get("kind") == expected["kind"], (where, actual.get("kind"))
        assert actual.get("fields") == expected.get("fields"), where
        assert len(actual["items"]) == len(expected["items"]), where
        for i, (e, a) in enumerate(zip(expected["items"], actual["items"], strict=True)):
            assert_same(e, a, f"{where}[{i}]")
        return
    if "shape" not in expected:
        assert actual == expected, where
        return
    for key in ("shape", "dtype", "weak"):
        assert actual[key] == expected[key], (where, key, actual[key], expected[key])
    want = np.asarray(expected["re"]) + 1j * np.asarray(expected.get("im", 0.0))
    got = np.asarray(actual["re"]) + 1j * np.asarray(actual.get("im", 0.0))
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0, atol=_tolerance(expected["dtype"]) * scale)


def check(J, case, expected):
    """Run ``case`` with modjax ``J`` and compare it with JAX's record ``expected``."""
    actual, classes = run(J, case)
    if "error" in expected:
        assert "error" in actual, (case["name"], actual)
        name, message = expected["error"]
        # modjax may raise a subclass (its lowering errors are also the rule's class).
        assert name in classes, (case["name"], actual["error"])
        assert actual["error"][1] == message, case["name"]
    else:
        assert "result" in actual, (case["name"], actual)
        assert_same(expected["result"], actual["result"])
    assert actual.get("warnings") == expected.get("warnings"), case["name"]


def table(prefix: str):
    """The recorded cases of the functions under ``prefix`` (``numpy.``, ``scipy.``, ``lax.``)."""
    data = load_reference(REFERENCE)
    return [(c, data["results"][c["name"]]) for c in CASES if c["fun"].startswith(prefix)]


# --- the cases --------------------------------------------------------------------------------

F32, C64, I32 = "float32", "complex64", "int32"
_D = {"array": [1.0, 2.0, 3.0, 4.0], "dtype": F32}
_E = {"array": [0.5, -1.0, 0.25], "dtype": F32}
_WEAK = {"weak": [[3.5, 0.5, 0.5], [0.5, 3.5, 0.5], [0.5, 0.5, 3.5]]}


def _case(name, fun, *args, x64=False, **kwargs):
    # Names are unique across the three namespaces: "numpy.eigh_weak", "lax.eigh_weak".
    name = f"{fun.split('.')[0]}.{name}"
    return {"name": name, "fun": fun, "args": list(args), "kwargs": kwargs, "x64": x64}


NP, SP, LAX = "numpy.linalg.", "scipy.linalg.", "lax.linalg."
CASES = [
    # jnp.linalg.solve: jnp.vectorize's shape errors.
    _case("solve_scalar_b", NP + "solve", ["gen", [3, 3], F32, 0], {"array": 1.0, "dtype": F32}),
    _case("solve_rect", NP + "solve", ["rand", [3, 2], F32, 0], ["rand", [3], F32, 1]),
    _case("solve_rows", NP + "solve", ["gen", [3, 3], F32, 0], ["rand", [4], F32, 1]),
    _case("solve_rows2", NP + "solve", ["gen", [3, 3], F32, 0], ["rand", [4, 2], F32, 1]),
    _case("solve_batch", NP + "solve", ["gen", [2, 3, 3], F32, 0], ["rand", [3, 3, 2], F32, 1]),
    _case("solve_weak", NP + "solve", _WEAK, ["rand", [3], F32, 1]),
    _case("vector_norm_int0", NP + "vector_norm", ["rand", [4], I32, 0], ord=0),
    _case(
        "vector_norm_bool0", NP + "vector_norm", {"array": [True, False], "dtype": "bool"}, ord=0
    ),
    _case("trace_1d", NP + "trace", ["rand", [3], F32, 0]),
    _case("multi_dot_rows", NP + "multi_dot", [{"array": [[0.0, 1.0], [2.0, 3.0]], "dtype": F32}]),
    _case("multi_dot_one", NP + "multi_dot", [["rand", [3, 3], F32, 0]]),
    _case("cholesky_weak", NP + "cholesky", _WEAK),
    _case("eigh_weak", NP + "eigh", _WEAK),
    _case("svd_weak", NP + "svd", _WEAK),
    _case("qr_weak", NP + "qr", _WEAK),
    _case("cond_weak", NP + "cond", _WEAK),
    _case("lstsq_weak", NP + "lstsq", _WEAK, ["rand", [3], F32, 1]),
    # jax.scipy.linalg
    _case("eigh_symmetrizes", SP + "eigh", ["rand", [3, 3], C64, 0]),
    _case("eigh_upper", SP + "eigh", ["rand", [3, 3], F32, 0], lower=False),
    _case("lu_complex", SP + "lu", ["rand", [3, 3], C64, 0]),
    _case("lu_complex_permute_l", SP + "lu", ["rand", [3, 2], C64, 0], permute_l=True),
    _case(
        "lu_solve_trans",
        SP + "lu_solve",
        {"tuple": [["gen", [3, 3], F32, 0], {"array": [0, 1, 2], "dtype": I32}]},
        ["rand", [3], F32, 1],
        trans=3,
    ),
    _case(
        "lu_solve_rows",
        SP + "lu_solve",
        {"tuple": [["gen", [3, 3], F32, 0], {"array": [0, 1, 2], "dtype": I32}]},
        ["rand", [4], F32, 1],
    ),
    _case(
        "lu_solve_batched_vectors",
        SP + "lu_solve",
        {"tuple": [["gen", [2, 3, 3], F32, 0], {"array": [[0, 1, 2], [2, 1, 2]], "dtype": I32}]},
        ["rand", [2, 3], F32, 1],
    ),
    _case(
        "cho_solve_rows",
        SP + "cho_solve",
        {"tuple": [["hpd", [3, 3], F32, 0], True]},
        ["rand", [4], F32, 1],
    ),
    _case(
        "cho_solve_batched_vectors",
        SP + "cho_solve",
        {"tuple": [["hpd", [2, 3, 3], F32, 0], False]},
        ["rand", [2, 3], F32, 1],
    ),
    _case(
        "solve_triangular_rows",
        SP + "solve_triangular",
        ["triu", [3, 3], F32, 0],
        ["rand", [4, 2], F32, 1],
    ),
    _case(
        "solve_triangular_batched_vectors",
        SP + "solve_triangular",
        ["triu", [2, 3, 3], F32, 0],
        ["rand", [2, 3], F32, 1],
    ),
    _case(
        "solve_pos_batched",
        SP + "solve",
        ["hpd", [2, 3, 3], F32, 0],
        ["rand", [2, 3, 2], F32, 1],
        assume_a="pos",
    ),
    _case(
        "solve_pos_shapes",
        SP + "solve",
        ["hpd", [3, 3], F32, 0],
        ["rand", [2, 3, 2], F32, 1],
        assume_a="pos",
    ),
    _case("solve_pos_weak", SP + "solve", _WEAK, ["rand", [3], F32, 1], assume_a="pos"),
    _case("polar_qdwh", SP + "polar", ["rand", [3, 3], F32, 15]),
    _case("polar_qdwh_tall", SP + "polar", ["rand", [4, 3], F32, 15]),
    _case("polar_qdwh_left_wide", SP + "polar", ["rand", [2, 3], C64, 15], side="left"),
    _case("polar_qdwh_left_square", SP + "polar", ["rand", [3, 3], F32, 15], side="left"),
    _case("polar_qdwh_int", SP + "polar", ["rand", [3, 3], I32, 15]),
    _case("polar_svd_left", SP + "polar", ["rand", [3, 3], F32, 15], side="left", method="svd"),
    _case("block_diag_scalars", SP + "block_diag", 1, 2.0),
    _case("block_diag_3d", SP + "block_diag", ["rand", [2, 2, 2], F32, 0]),
    _case("sqrtm_batch", SP + "sqrtm", ["hpd", [2, 3, 3], F32, 0]),
    _case("rsf2csf_empty", SP + "rsf2csf", ["rand", [0, 0], F32, 0], ["rand", [0, 0], F32, 0]),
    _case("rsf2csf_weak", SP + "rsf2csf", _WEAK, _WEAK),
    _case("hessenberg_weak", SP + "hessenberg", _WEAK, calc_q=True),
    _case("eigh_tridiagonal_vectors", SP + "eigh_tridiagonal", _D, _E),
    _case(
        "eigh_tridiagonal_select", SP + "eigh_tridiagonal", _D, _E, select="i", select_range=(1, 2)
    ),
    _case("eigh_tridiagonal_key", SP + "eigh_tridiagonal", _D, _E, key={"key": 3}),
    _case(
        "eigh_tridiagonal_complex",
        SP + "eigh_tridiagonal",
        {"array": [1.0, 2.0, 3.0, 4.0], "dtype": C64},
        {"array": [0.5 + 0.5j, -1.0 - 1.0j, 0.25 + 0.25j], "dtype": C64},
    ),
    _case(
        "eigh_tridiagonal_clustered",
        SP + "eigh_tridiagonal",
        {"array": [1.0, 1.0, 1.0, 1.0], "dtype": F32},
        {"array": [1e-9, 0.0, 1e-9], "dtype": F32},
    ),
    _case(
        "eigh_tridiagonal_degenerate",
        SP + "eigh_tridiagonal",
        {"array": [1.0, 1.0, 2.0, 2.0, 2.0], "dtype": F32},
        {"array": [0.0, 0.0, 0.0, 0.0], "dtype": F32},
    ),
    _case(
        "eigh_tridiagonal_larger",
        SP + "eigh_tridiagonal",
        {"array": (np.arange(12) % 5).tolist(), "dtype": F32},
        {"array": [1.0] * 11, "dtype": F32},
    ),
    _case(
        "eigh_tridiagonal_n2",
        SP + "eigh_tridiagonal",
        {"array": [1.0, 2.0], "dtype": F32},
        {"array": [0.5], "dtype": F32},
    ),
    _case(
        "eigh_tridiagonal_f64",
        SP + "eigh_tridiagonal",
        {"array": [1.0, 2.0, 3.0, 4.0], "dtype": "float64"},
        {"array": [0.5, -1.0, 0.25], "dtype": "float64"},
        x64=True,
    ),
    _case(
        "eigh_tridiagonal_bad_e",
        SP + "eigh_tridiagonal",
        _D,
        {"array": [0.5, -1.0], "dtype": F32},
        eigvals_only=True,
    ),
    # jax.lax.linalg
    _case("cholesky_int", LAX + "cholesky", ["hpd", [3, 3], I32, 0]),
    _case(
        "cholesky_bool",
        LAX + "cholesky",
        {"array": np.eye(3, dtype=bool).tolist(), "dtype": "bool"},
    ),
    _case(
        "cholesky_int_unsymmetrized",
        LAX + "cholesky",
        ["hpd", [3, 3], I32, 0],
        symmetrize_input=False,
    ),
    _case("eigh_int", LAX + "eigh", ["herm", [3, 3], I32, 0]),
    _case("eigh_bool", LAX + "eigh", {"array": np.eye(3, dtype=bool).tolist(), "dtype": "bool"}),
    _case("lu_int", LAX + "lu", ["rand", [3, 3], I32, 0]),
    _case("schur_int", LAX + "schur", ["rand", [3, 3], I32, 0]),
    _case(
        "schur_without_vectors",
        LAX + "schur",
        ["rand", [3, 3], F32, 2],
        compute_schur_vectors=False,
    ),
    _case("lu_weak", LAX + "lu", _WEAK),
    _case("svd_weak", LAX + "svd", _WEAK),
    _case("triangular_solve_weak", LAX + "triangular_solve", _WEAK, _WEAK),
    _case("cholesky_weak", LAX + "cholesky", _WEAK),
    _case("eigh_weak", LAX + "eigh", _WEAK),
]
assert len({case["name"] for case in CASES}) == len(CASES)
