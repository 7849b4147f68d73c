"""Regenerate scipy_sparse_linalg_reference.json: JAX 0.10.2's answers of its sparse solvers.

Run with a Python where jax is installed (modjax's tests never import it):
``python scipy_sparse_linalg_reference_gen.py``. Each case holds its inputs
and JAX's result, so the test rebuilds nothing from seeds. Small ``maxiter``
values stop the solvers after a few steps, so the recorded values are
intermediate iterates and compare the iterations themselves, not only the
converged solutions. Complex arrays are stored as ``[real, imag]`` pairs.
"""

import importlib
import json
import pathlib

import numpy as np

jax = importlib.import_module("jax")  # not a static import: modjax's sources never import jax
jax.config.update("jax_enable_x64", True)
jnp = importlib.import_module("jax.numpy")
sparse = importlib.import_module("jax.scipy.sparse.linalg")

rng = np.random.default_rng(7)
DTYPES = {"float32": np.float32, "float64": np.float64, "complex128": np.complex128}


def encode(a):
    a = np.asarray(a)
    if np.iscomplexobj(a):
        return {"re": a.real.tolist(), "im": a.imag.tolist()}
    return a.tolist()


def short(a):
    """Round inputs to 3 decimals: exact to rebuild from JSON, and a smaller file."""
    return np.round(a, 3)


def spd(n, dtype):
    """A Hermitian positive definite matrix with eigenvalues in [1, 20]."""
    z = rng.normal(size=(n, n))
    if np.iscomplexobj(np.zeros((), dtype)):
        z = z + 1j * rng.normal(size=(n, n))
    q, _ = np.linalg.qr(z)
    a = short((q * np.geomspace(1, 20, n)) @ q.conj().T)
    return ((a + a.conj().T) / 2).astype(dtype)


def general(n, dtype):
    """A nonsymmetric, well-conditioned matrix (diagonally dominated)."""
    a = 3 * np.eye(n) + rng.normal(size=(n, n)) / np.sqrt(n)
    if np.iscomplexobj(np.zeros((), dtype)):
        a = a + 1j * rng.normal(size=(n, n)) / np.sqrt(n)
    return short(a).astype(dtype)


def vector(n, dtype):
    v = rng.normal(size=n)
    if np.iscomplexobj(np.zeros((), dtype)):
        v = v + 1j * rng.normal(size=n)
    return short(v).astype(dtype)


SOLVERS = {
    "cg": (sparse.cg, spd, {}),
    "bicgstab": (sparse.bicgstab, general, {}),
    "gmres_batched": (sparse.gmres, general, {"restart": 3, "solve_method": "batched"}),
    "gmres_incremental": (sparse.gmres, general, {"restart": 3, "solve_method": "incremental"}),
}

iterates = []
for name, (solver, matrix, extra) in SOLVERS.items():
    for dtype_name, dtype in DTYPES.items():
        n = 6
        A, b, x0 = matrix(n, dtype), vector(n, dtype), vector(n, dtype)
        # A Jacobi preconditioner: the inverse of A's diagonal, as a matrix.
        M = short(np.diag(1 / np.diag(A))).astype(dtype)
        results = []
        for maxiter in (1, 2, 3, None):
            for precondition in (False, True):
                for start in (False, True):
                    x, _ = solver(
                        A,
                        b,
                        x0 if start else None,
                        M=M if precondition else None,
                        maxiter=maxiter,
                        **extra,
                    )
                    results.append(
                        {"maxiter": maxiter, "M": precondition, "x0": start, "x": encode(x)}
                    )
        iterates.append(
            {
                "solver": name,
                "dtype": dtype_name,
                "A": encode(A),
                "b": encode(b),
                "x0": encode(x0),
                "M": encode(M),
                "results": results,
            }
        )

# Tolerances: tol relative to |b|, atol absolute; with tol=0 only atol stops.
tolerances = []
for name, (solver, matrix, extra) in SOLVERS.items():
    A, b = matrix(8, np.float64), vector(8, np.float64)
    results = []
    for tol, atol in ((1e-2, 0.0), (0.0, 1e-1), (1e-3, 1e-1), (1e-12, 0.0)):
        x, _ = solver(A, b, tol=tol, atol=atol, **extra)
        results.append({"tol": tol, "atol": atol, "x": encode(x)})
    tolerances.append({"solver": name, "A": encode(A), "b": encode(b), "results": results})


# A pytree b with a function A: the blocks {"u": 3, "v": (2, 2)} of a 7-vector.
def blocks_to_vector(t):
    return jnp.concatenate([t["u"], t["v"].reshape(-1)])


def vector_to_blocks(v):
    return {"u": v[:3], "v": v[3:].reshape(2, 2)}


trees = []
for name, (solver, matrix, extra) in SOLVERS.items():
    A = matrix(7, np.float64)
    b = vector_to_blocks(vector(7, np.float64))
    for maxiter in (2, None):
        x, _ = solver(
            lambda t, A=A: vector_to_blocks(A @ blocks_to_vector(t)), b, maxiter=maxiter, **extra
        )
        trees.append(
            {
                "solver": name,
                "A": encode(A),
                "b": {k: encode(v) for k, v in b.items()},
                "maxiter": maxiter,
                "x": {k: encode(v) for k, v in x.items()},
            }
        )

# Gradients of a loss of the solution with respect to A's entries and b (implicit).
grads = []
for name, (solver, matrix, extra) in SOLVERS.items():
    A, b, w = matrix(5, np.float64), vector(5, np.float64), vector(5, np.float64)

    def loss(A, b, solver=solver, extra=extra, w=w):
        x, _ = solver(lambda v: A @ v, b, tol=1e-12, **extra)
        return jnp.sum(w * x) + jnp.sum(jnp.sin(x) ** 2)

    gA, gb = jax.grad(loss, argnums=(0, 1))(A, b)
    grads.append(
        {
            "solver": name,
            "A": encode(A),
            "b": encode(b),
            "w": encode(w),
            "loss": float(loss(A, b)),
            "grad_A": encode(gA),
            "grad_b": encode(gb),
        }
    )

out = {
    "jax_version": jax.__version__,
    "solvers": {name: extra for name, (_, _, extra) in SOLVERS.items()},
    "iterates": iterates,
    "tolerances": tolerances,
    "trees": trees,
    "grads": grads,
}
path = pathlib.Path(__file__).with_name("scipy_sparse_linalg_reference.json")
path.write_text(json.dumps(out) + "\n")
print(path, path.stat().st_size)
