"""Linear algebra under ``jit``: solves and every decomposition, side by side with JAX.

    python benchmarks/linalg_bench.py [--rounds N] [--jax-python PATH] [--blas-threads N]

Programs, each jitted and timed per call once compiled, with the same code on
both sides:

* solve: a 512x512 SPD system with 8 right-hand sides by Cholesky and two
  triangular solves (``lax.linalg.cholesky`` + ``triangular_solve``);
* jnp.linalg.solve: the same system by LU (``getrf``, a row gather, two
  triangular solves), what ``jnp.linalg.solve`` runs;
* svd: singular values and vectors of a 256x256 matrix (``full_matrices=False``);
* eigh: eigenvalues and vectors of a 256x256 symmetric matrix;
* qr, cholesky, lu, eig: ``lax.linalg``'s decompositions of a 256x256 matrix
  (SPD for cholesky; eig computes both sets of eigenvectors).

All in float32. Both sides lower these to the same jaxlib LAPACK kernels
(``lapack_sgesdd_ffi``, ``ssyevd``, ``sgeqrf`` + ``sorgqr``, ``spotrf``,
``sgetrf``, ``sgeev``), which call the OpenBLAS that scipy bundles; so the
children run with ``OPENBLAS_NUM_THREADS=1`` (``--blas-threads``) unless the
environment sets it. On a machine shared with other work, OpenBLAS's threads
spin waiting for each other and a 256x256 ``svd`` takes anywhere from 7 ms to
over a second, on either side, whichever library calls it; one thread measures
what the libraries themselves add. Each round measures, per program, the best wall time of
``REPEAT`` calls (results ready) and the process CPU time per call (all
threads; less sensitive to other processes on a shared machine). Both sides run
in child processes, modjax with this interpreter and JAX with one that can
import ``jax`` (``--jax-python`` or ``MODJAX_BENCH_JAX_PYTHON``); they
alternate for ``--rounds`` rounds and each figure is the median over the
rounds, printed with its range. Target: no slower than JAX. Prints figures
only, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys

from jax_side import jax_python, measure_jax, median_of_rounds, print_figures

REPEAT = 50

# The same program for both sides; ``lib`` is ``jax`` or ``modjax``.
CODE = r"""
import json, sys, time, timeit
import numpy as np
lib_name, repeat = sys.argv[1], int(sys.argv[2])
if lib_name == "jax":
    import jax as lib
else:
    import modjax as lib
linalg = lib.lax.linalg

rng = np.random.default_rng(0)
g = rng.standard_normal((512, 512)).astype(np.float32)
spd = lib.device_put(g @ g.T / 512 + np.eye(512, dtype=np.float32))
rhs = lib.device_put(rng.standard_normal((512, 8)).astype(np.float32))
m = lib.device_put(rng.standard_normal((256, 256)).astype(np.float32))
s = rng.standard_normal((256, 256)).astype(np.float32)
sym = lib.device_put(s + s.T)
spd256 = lib.device_put(s @ s.T / 256 + np.eye(256, dtype=np.float32))

def solve(a, b):
    l = linalg.cholesky(a)
    y = linalg.triangular_solve(l, b, left_side=True, lower=True)
    return linalg.triangular_solve(l, y, left_side=True, lower=True, transpose_a=True)

cases = {
    "solve_ms": (solve, (spd, rhs)),
    "lu_solve_ms": (lib.numpy.linalg.solve, (spd, rhs)),
    "svd_ms": (lambda x: linalg.svd(x, full_matrices=False), (m,)),
    "eigh_ms": (linalg.eigh, (sym,)),
    "qr_ms": (linalg.qr, (m,)),
    "cholesky_ms": (linalg.cholesky, (spd256,)),
    "lu_ms": (linalg.lu, (m,)),
    "eig_ms": (linalg.eig, (m,)),
}
out = {}
for name, (fun, args) in cases.items():
    f = lib.jit(fun)
    lib.block_until_ready(f(*args))
    cpu = time.process_time()
    out[name] = min(
        timeit.repeat(lambda: lib.block_until_ready(f(*args)), number=1, repeat=repeat)) * 1e3
    out[name.replace("_ms", "_cpu_ms")] = (time.process_time() - cpu) / repeat * 1e3
out["version"] = lib.__version__
print(json.dumps(out))
"""

FIGURES = (
    ("solve_ms", "solve (cholesky) 512, 8 rhs"),
    ("lu_solve_ms", "jnp.linalg.solve 512, 8 rhs"),
    ("svd_ms", "svd 256x256"),
    ("eigh_ms", "eigh 256x256"),
    ("qr_ms", "qr 256x256"),
    ("cholesky_ms", "cholesky 256x256"),
    ("lu_ms", "lu 256x256"),
    ("eig_ms", "eig 256x256"),
)


def measure_modjax() -> dict[str, float]:
    """Run the programs with modjax in a fresh child process; return their figures."""
    result = measure_jax(sys.executable, CODE, "modjax", REPEAT)
    if result is None:
        raise RuntimeError("the modjax run failed")
    result.pop("version")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jax-python", default=None)
    parser.add_argument(
        "--blas-threads", default="1", help="OPENBLAS_NUM_THREADS of both sides (if unset)"
    )
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", args.blas_threads)

    ours, theirs, version, spread = median_of_rounds(
        args.rounds, measure_modjax, jax_python(args.jax_python), CODE, "jax", REPEAT
    )
    rows = [(k, label, "ms") for k, label in FIGURES]
    rows += [(k.replace("_ms", "_cpu_ms"), label + " (CPU)", "ms") for k, label in FIGURES]
    print(
        f"linear algebra under jit, float32, per call (median of {args.rounds} rounds, "
        f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']})"
    )
    print_figures(rows, ours, theirs, version, label_width=36)
    print("range over the rounds:")
    for key, label, _ in rows:
        print(f"  {label}: {spread[key]}")


if __name__ == "__main__":
    main()
