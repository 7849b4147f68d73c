"""Regenerate scipy_special_reference.json: float64 values of scipy.special on fixed grids.

Run where scipy is installed (modjax's tests do not need it).
"""

import json
import pathlib

import numpy as np
import scipy.special as sp

rng = np.random.default_rng(1)
out = {}


def add(name, args, ref):
    args = [np.asarray(a, np.float64) for a in args]
    out[name] = {"args": [a.tolist() for a in args], "expected": np.asarray(ref(*args)).tolist()}


p = np.concatenate(
    [[1e-30, 1e-20, 1e-10, 1e-6, 1e-3, 0.02, 0.3, 0.5, 0.7, 0.99, 1 - 1e-6]], axis=None
)
add("ndtri", [p], sp.ndtri)
x = np.concatenate([np.linspace(-30, 8, 39), [-100.0, -11.0, -9.5, 5.5, 4.9]])
add("log_ndtr", [x], sp.log_ndtr)
add("ndtr", [np.linspace(-8, 8, 33)], sp.ndtr)
g = np.concatenate([rng.uniform(-4.9, -0.1, 10), np.geomspace(0.01, 30, 20)])
add("gamma", [g], sp.gamma)
add("gammasgn", [g], sp.gammasgn)
a, b = np.geomspace(0.05, 80, 20), rng.permutation(np.geomspace(0.05, 80, 20))
add("betaln", [a, b], sp.betaln)
add("beta", [a[:12], b[:12]], sp.beta)
m = rng.uniform(3, 20, 10)
add("multigammaln3", [m], lambda v: sp.multigammaln(v, 3))
i = np.linspace(-12, 12, 25)
add("i0", [i], sp.i0)
add("i1", [i], sp.i1)
add("logit", [np.linspace(0.01, 0.99, 21)], sp.logit)
add("expit", [np.linspace(-20, 20, 21)], sp.expit)
add("factorial", [np.arange(0, 15.0)], sp.factorial)
pq = rng.uniform(0, 3, (2, 20))
add("rel_entr", [pq[0], pq[1]], sp.rel_entr)
add("kl_div", [pq[0], pq[1]], sp.kl_div)
add("entr", [np.linspace(0, 5, 21)], sp.entr)
add("xlogy", [pq[0], pq[1]], sp.xlogy)
add("xlog1py", [pq[0], pq[1] - 0.5], sp.xlog1py)
path = pathlib.Path(__file__).with_name("scipy_special_reference.json")
path.write_text(json.dumps(out, indent=0) + "\n")
print(path, path.stat().st_size)
