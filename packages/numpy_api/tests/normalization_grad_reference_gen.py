"""Record JAX 0.10.2's gradient bits of normalization-style functions.

Run with a JAX 0.10.2 Python from outside the repository:
    python normalization_grad_reference_gen.py > normalization_grad_reference.json
The cases themselves live in ``normalization_grad_cases.py`` (shared with the test),
so that the test computes exactly what this script recorded.
"""

import importlib
import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))

# not static imports: modjax's sources and tests never import jax
jax = importlib.import_module("jax")
jnp = importlib.import_module("jax.numpy")
lax = importlib.import_module("jax.lax")
from normalization_grad_cases import CASES, INT_CASES, INT_INPUT, inputs  # noqa: E402


def main():
    x = inputs()
    out = {"recorded_with": f"jax {jax.__version__}: normalization_grad_reference_gen.py"}
    for name, make in CASES.items():
        f = make(jnp, lax, jax.nn)
        g = jax.jit(jax.grad(f))(x)
        out[name] = np.asarray(g, np.float32).view(np.uint32).ravel().tolist()
    out["integer_dtype"] = integer_dtype_results(jnp)
    json.dump(out, sys.stdout, separators=(",", ":"))
    print()


def integer_dtype_results(jnp):
    """var/std/nanvar/mean of an int32 array with an explicit integer ``dtype``."""
    a = jnp.asarray(INT_INPUT, jnp.int32)
    results = {}
    for name, kwargs in INT_CASES.items():
        fn, dtype, extra = kwargs
        try:
            r = getattr(jnp, fn)(a, dtype=getattr(jnp, dtype), **extra)
        except Exception as e:  # noqa: BLE001 - the error is the recorded answer
            results[name] = {"error": type(e).__name__}
            continue
        results[name] = {
            "dtype": str(r.dtype),
            "weak_type": bool(r.aval.weak_type),
            "value": np.asarray(r).tolist(),
        }
    return results


if __name__ == "__main__":
    main()
