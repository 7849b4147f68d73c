"""Regenerate linalg_jax_reference.json: JAX 0.10.2's answers to linalg_reference.CASES.

Run with a Python where jax is installed, from outside the repository (modjax's
tests never import jax): ``python .../linalg_jax_reference_gen.py``. The cases
and the way inputs are built live in ``linalg_reference.py``; the table stores
this script's text under ``recorded_with``.
"""

import importlib
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
jax = importlib.import_module("jax")  # not a static import: modjax's sources never import jax
for sub in ("numpy", "scipy.linalg", "lax.linalg", "random"):
    importlib.import_module(f"jax.{sub}")
reference = importlib.import_module("linalg_reference")


def record(case):
    # A fresh trace per case: JAX warns only while tracing, and its caches would hide
    # a warning that an earlier case with the same shapes already traced.
    jax.clear_caches()
    return reference.run(jax, case)[0]


results = {case["name"]: record(case) for case in reference.CASES}
table = {
    "jax_version": jax.__version__,
    "recorded_with": pathlib.Path(__file__).read_text(),
    "results": results,
}
written = importlib.import_module("cpu_kind").save_reference(reference.REFERENCE, table, indent=1)
print(f"{len(results)} cases written to {written}")
