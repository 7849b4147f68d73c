"""Specs of the set operations, polynomials, numerical and statistical functions, functional
helpers and windows for the jnp sweeps.

Set operations have a data-dependent size, so (as in JAX) they are swept with a static
``size=``; their results are piecewise constant, so only vmap runs. Interpolation and
histograms are differentiated where they are smooth: ``interp`` at points that fall
strictly inside segments, histograms in their weights.
"""

import numpy as np
from jnp_sweep_specs import add, complexes, exclude, floats, ints
from jnp_sweep_specs_reductions import distinct, increasing

import modjax.numpy as jnp

S1, S2 = (4,), (2, 3)
# modjax.lax's gather/scatter reject a batched operand of batch size 0 ("window size 1 of
# operand dimension 0 exceeds its size 0"), which JAX accepts: these specs skip size 0 until
# the shape checks of lax.indexing allow it.
_ZERO_BATCH_GATHER = False
_SMALL_INTS = ints(5, lo=0, hi=4)

# --- set operations -------------------------------------------------------------------------
add("isin", jnp.isin, ints(*S2, lo=0, hi=6), ints(4, lo=0, hi=6))
add(
    "isin[invert,method=sort]",
    lambda a, b: jnp.isin(a, b, invert=True, method="sort"),
    floats(*S1),
    floats(3),
)
add("union1d[size=8]", lambda a, b: jnp.union1d(a, b, size=8), _SMALL_INTS, ints(3, lo=2, hi=7))
add(
    "union1d[size=3,fill_value]",
    lambda a, b: jnp.union1d(a, b, size=3, fill_value=-1),
    _SMALL_INTS,
    ints(3, lo=2, hi=7),
)
add("setdiff1d[size=5]", lambda a, b: jnp.setdiff1d(a, b, size=5), _SMALL_INTS, ints(3, lo=0, hi=4))
add(
    "setdiff1d[assume_unique,size=4,fill_value]",
    lambda a, b: jnp.setdiff1d(a, b, assume_unique=True, size=4, fill_value=9),
    _SMALL_INTS,
    ints(3, lo=0, hi=4),
)
add("setxor1d[size=6]", lambda a, b: jnp.setxor1d(a, b, size=6), _SMALL_INTS, ints(3, lo=2, hi=7))
add(
    "setxor1d[float,size=4]",
    lambda a, b: jnp.setxor1d(a, b, size=4),
    floats(3),
    floats(3),
)
add(
    "intersect1d[size=4,return_indices]",
    lambda a, b: jnp.intersect1d(a, b, return_indices=True, size=4),
    _SMALL_INTS,
    ints(4, lo=0, hi=4),
    zero_batch=_ZERO_BATCH_GATHER,
)
add(
    "intersect1d[assume_unique,size=3,fill_value]",
    lambda a, b: jnp.intersect1d(a, b, assume_unique=True, size=3, fill_value=-5),
    lambda rng: rng.permutation(6)[:4].astype(np.int32),
    lambda rng: rng.permutation(6)[:3].astype(np.int32),
)

# --- polynomials -------------------------------------------------------------------------------
add("poly", jnp.poly, floats(3), diff=(0,))
add("poly[complex]", jnp.poly, complexes(2))
add("polyadd", jnp.polyadd, floats(3), floats(2), diff=(0, 1))
add("polysub", jnp.polysub, floats(2), floats(4), diff=(0, 1))
add("polymul", jnp.polymul, floats(3), floats(2), diff=(0, 1))
add(
    "polydiv",
    jnp.polydiv,
    floats(4),
    floats(2, lo=0.5, hi=2.0, away_from_zero=True),
    diff=(0, 1),
)
add("polyder", jnp.polyder, floats(4), diff=(0,))
add("polyder[m=2]", lambda p: jnp.polyder(p, 2), floats(4), diff=(0,))
add("polyint", jnp.polyint, floats(3), diff=(0,))
add("polyint[m=2,k]", lambda p, k: jnp.polyint(p, 2, k=k), floats(3), floats(2), diff=(0, 1))
add("polyval", jnp.polyval, floats(4), floats(*S2), diff=(0, 1))
exclude(
    "raises NotImplementedError until modjax.numpy.linalg exists (lstsq, eigvals)",
    "polyfit",
    "roots",
)

# --- numerical analysis and statistics ------------------------------------------------------------
# The points to interpolate at are kept away from the sample points (interp has kinks there).
_INSIDE = lambda rng: np.asarray([-2.2, -1.1, 0.1, 1.2, 2.3], np.float64)  # noqa: E731
_KNOTS = lambda rng: np.asarray([-1.5, -0.5, 0.5, 1.5]) + rng.uniform(-0.2, 0.2, 4)  # noqa: E731
add("interp", jnp.interp, _INSIDE, _KNOTS, floats(4), diff=(0, 1, 2))
add(
    "interp[extrapolate]",
    lambda x, xp, fp: jnp.interp(x, xp, fp, left="extrapolate", right="extrapolate"),
    _INSIDE,
    _KNOTS,
    floats(4),
    diff=(0, 1, 2),
)
add(
    "interp[left,right]",
    lambda x, xp, fp: jnp.interp(x, xp, fp, left=-3.0, right=3.0),
    _INSIDE,
    _KNOTS,
    floats(4),
    diff=(2,),
    zero_batch=_ZERO_BATCH_GATHER,
)
add("gradient", jnp.gradient, floats(*S2), diff=(0,))
add(
    "gradient[spacing]",
    lambda f, h: jnp.gradient(f, h, axis=1),
    floats(*S2),
    increasing(3),
    diff=(0, 1),
)
add("gradient[dx,axis=0]", lambda f: jnp.gradient(f, 0.5, axis=0), floats(*S2), diff=(0,))
add("trapezoid", jnp.trapezoid, floats(*S2), diff=(0,))
add("trapezoid[x]", lambda y, x: jnp.trapezoid(y, x), floats(*S2), floats(3), diff=(0, 1))
add("trapezoid[dx,axis=0]", lambda y: jnp.trapezoid(y, dx=0.3, axis=0), floats(*S2), diff=(0,))
# Jumps of about 2.5 (kept away from the threshold pi) so every slice is differentiable.
_PHASES = lambda rng: np.cumsum(  # noqa: E731
    rng.choice([-1.0, 1.0], (2, 4)) * rng.uniform(2.3, 2.7, (2, 4)), axis=1
)
add("unwrap", jnp.unwrap, _PHASES, diff=(0,))
add("unwrap[period=4,axis=0]", lambda p: jnp.unwrap(p.T, period=4.0, axis=0), _PHASES, diff=(0,))
add("cov", jnp.cov, floats(3, 5), diff=(0,))
add(
    "cov[rowvar=False,bias]", lambda m: jnp.cov(m, rowvar=False, bias=True), floats(5, 2), diff=(0,)
)
add(
    "cov[fweights,aweights]",
    lambda m, a: jnp.cov(m, fweights=np.array([1, 2, 1, 3]), aweights=a),
    floats(2, 4),
    floats(4, lo=0.5, hi=2.0),
    diff=(0, 1),
)
add("cov[y]", lambda m, y: jnp.cov(m, y), floats(4), floats(4), diff=(0, 1))
add("corrcoef", jnp.corrcoef, floats(3, 5), diff=(0,))
add(
    "corrcoef[y,rowvar=False]",
    lambda x, y: jnp.corrcoef(x, y, rowvar=False),
    floats(5, 1),
    floats(5, 2),
)
add("histogramdd", lambda s: jnp.histogramdd(s, bins=3), distinct(6, 2))
add(
    "histogramdd[weights,range,density]",
    lambda s, w: jnp.histogramdd(s, bins=[2, 3], range=[(-2, 2), (-2, 2)], weights=w, density=True)[
        0
    ],
    distinct(6, 2),
    floats(6, lo=0.5, hi=2.0),
    diff=(1,),
    zero_batch=_ZERO_BATCH_GATHER,
)
add(
    "histogram2d",
    lambda x, y, w: jnp.histogram2d(x, y, bins=[2, 3], range=[(-2, 2), (-2, 2)], weights=w),
    distinct(5),
    distinct(5),
    floats(5, lo=0.5, hi=2.0),
    diff=(2,),
    zero_batch=_ZERO_BATCH_GATHER,
)

# --- functional helpers --------------------------------------------------------------------------
add(
    "apply_along_axis",
    lambda a: jnp.apply_along_axis(lambda v: jnp.cumsum(v) * v[0], 1, a),
    floats(*S2),
    diff=(0,),
)
add(
    "apply_along_axis[outer,axis=0]",
    lambda a: jnp.apply_along_axis(lambda v: jnp.outer(v, v), 0, a),
    floats(*S2),
    diff=(0,),
)
add("apply_over_axes", lambda a: jnp.apply_over_axes(jnp.sum, a, [0, 1]), floats(*S2), diff=(0,))

# --- windows -----------------------------------------------------------------------------------
add("kaiser", lambda beta: jnp.kaiser(5, beta), floats(lo=0.5, hi=5.0), diff=(0,))
exclude(
    "takes only the static window length, no array",
    "bartlett",
    "blackman",
    "hamming",
    "hanning",
)
