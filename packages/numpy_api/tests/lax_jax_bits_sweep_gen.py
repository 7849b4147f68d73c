"""Record JAX 0.10.2's answers for the lax calls of ``lax_jax_bits_cases.py``.

Run with a JAX 0.10.2 Python from outside the repository:
    python lax_jax_bits_sweep_gen.py > lax_jax_bits_sweep.json
Each case is run under ``jax.jit`` with its arrays as arguments (a ``grad`` case: the
jitted VJP at the shared cotangent) with x64 off; the answer is the result's dtype,
shape, weak type and bytes, or the exception's type and first line.
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
from lax_jax_bits_cases import CASES, cotangent  # noqa: E402


def describe(x):
    """The recorded form of a result: nested lists for tuples, a dict per array."""
    if isinstance(x, tuple | list):
        return [describe(v) for v in x]
    a = np.asarray(x)
    return {
        "dtype": str(a.dtype),
        "shape": list(a.shape),
        "weak": bool(jax.typeof(x).weak_type),
        "hex": a.tobytes().hex(),
    }


def run(kind, fn, args):
    """Run one case under jit; return its description or its error."""
    f = lambda *a: fn(lax, jnp, *a)  # noqa: E731
    try:
        if kind == "value":
            return describe(jax.jit(f)(*args))
        out = jax.eval_shape(f, *args)
        ct = cotangent(out.shape, out.dtype)
        return describe(jax.jit(lambda ct, *a: jax.vjp(f, *a)[1](ct))(ct, *args))
    except Exception as e:  # noqa: BLE001 - the error is the recorded answer
        return {"error": type(e).__name__, "message": str(e).split("\n")[0]}


def main():
    out = {"recorded_with": f"jax {jax.__version__}: lax_jax_bits_sweep_gen.py", "cases": {}}
    for name, (kind, fn, args) in CASES.items():
        out["cases"][name] = run(kind, fn, args)
    json.dump(out, sys.stdout, separators=(",", ":"))
    print()


if __name__ == "__main__":
    main()
