"""Regenerate the ``values`` of lax_special_reference.json: float64 scipy references.

Run where scipy is installed (modjax's tests do not need it). The ``specials``
(what JAX 0.10 returns, in float32, at signed zeros, infinities, NaN and domain
edges) were recorded with JAX by the snippet stored in the file itself
(``specials_recorded_with``); modjax never imports jax, so it is kept as text,
and this script leaves those entries as they are.
"""

import json
import pathlib

import numpy as np
import scipy.special as sp

rng = np.random.default_rng(0)
path = pathlib.Path(__file__).with_name("lax_special_reference.json")
previous = json.loads(path.read_text()) if path.exists() else {}
out = {"values": {}, "specials": previous.get("specials", {})}
out["specials_recorded_with"] = previous.get("specials_recorded_with", [])


def add(name, args, ref):
    args = [np.asarray(a, np.float64) for a in args]
    val = np.asarray(ref(*args), np.float64)
    keep = np.isfinite(val)
    out["values"][name] = {
        "args": [a[keep].tolist() for a in args],
        "expected": val[keep].tolist(),
    }


x = np.concatenate([np.linspace(-4, 4, 33), rng.uniform(-6, 6, 16)])
add("erf", [x], sp.erf)
add("erfc", [x], sp.erfc)
add("erf_inv", [np.concatenate([np.linspace(-0.999, 0.999, 41), [1e-6, -1e-4]])], sp.erfinv)
g = np.concatenate([rng.uniform(-4.9, 0, 12) + 0.05, np.geomspace(1e-3, 60, 30)])
add("lgamma", [g], sp.gammaln)
add("digamma", [g], sp.digamma)
b = np.concatenate(
    [np.linspace(-40, 40, 41), rng.uniform(-5, 5, 10), [14.9, 15.1, 29.9, 30.1, 1e-4]]
)
add("bessel_i0e", [b], sp.i0e)
add("bessel_i1e", [b], sp.i1e)
a = np.concatenate([np.geomspace(0.01, 100, 25), [0.5, 1, 2, 5, 20, 300]])
xx = np.concatenate([np.geomspace(1e-3, 150, 25), [0.3, 1, 2.5, 6, 21, 290]])
A, X = np.meshgrid(a, xx)
A, X = A.ravel(), X.ravel()
pick = rng.choice(A.size, 120, replace=False)
A, X = A[pick], X[pick]
add("igamma", [A, X], sp.gammainc)
add("igammac", [A, X], sp.gammaincc)
h = 1e-6 * A
add("igamma_grad_a", [A, X], lambda a, x: (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h))
n = rng.integers(0, 4, 40).astype(np.float64)
px = rng.uniform(0.2, 15, 40)
add("polygamma", [n, px], sp.polygamma)
s = rng.uniform(1.5, 8, 40)
q = rng.uniform(0.2, 10, 40)
add("zeta", [s, q], sp.zeta)
ba, bb = (
    np.exp(rng.uniform(np.log(0.1), np.log(50), 60)),
    np.exp(rng.uniform(np.log(0.1), np.log(50), 60)),
)
bx = rng.uniform(0, 1, 60)
add("regularized_incomplete_beta", [ba, bb, bx], sp.betainc)

path.write_text(json.dumps(out, indent=0) + "\n")
print(path, path.stat().st_size)
