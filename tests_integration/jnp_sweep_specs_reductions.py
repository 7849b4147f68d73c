"""Specs of the reduction, cumulative, sorting, indexing and signal functions for the jnp sweeps.

Differentiable specs are placed where the function is smooth: the operands of sorts,
extrema, medians and quantiles have well separated values (no ties), the ``nan*``
functions get NaN at fixed positions (every reduced slice keeps a number) and are
differentiated at the rest, as JAX masks the NaN positions out of the tangents.
Integer-valued results (indices, counts, bins) only run the vmap sweep.
"""

import functools

import numpy as np
from jnp_sweep_specs import add, bools, complexes, floats, ints

import modjax.numpy as jnp

S0, S1, S2 = (), (4,), (2, 3)


def distinct(*shape, lo=-2.0, hi=2.0):
    """Make float64 values of ``shape`` in [lo, hi], pairwise at least (hi - lo) / (3 n) apart."""
    n = max(int(np.prod(shape)), 1)

    def make(rng):
        x = rng.permutation(n) + rng.uniform(1 / 3, 2 / 3, n)
        return np.asarray(lo + x * (hi - lo) / n, np.float64).reshape(shape)

    return make


def with_nans(*shape):
    """Make distinct values of ``shape`` with NaN at fixed positions.

    In (4,) position 1 is NaN; in (2, 3) positions (0, 1) and (1, 0), so every row
    and every column keeps a number.
    """
    spots = {(4,): [1], (2, 3): [1, 3]}[shape]
    base = distinct(*shape)

    def make(rng):
        x = base(rng).reshape(-1)
        x[spots] = np.nan
        return x.reshape(shape)

    return make


def increasing(n, lo=-2.0, hi=2.0):
    """Make ``n`` sorted, distinct float64 values in [lo, hi]."""
    base = distinct(n, lo=lo, hi=hi)
    return lambda rng: np.sort(base(rng))


def permutation(*shape, axis=-1):
    """Make int32 indices of ``shape`` that are a permutation along ``axis``."""

    def make(rng):
        x = rng.uniform(size=shape)
        return np.argsort(x, axis=axis).astype(np.int32)

    return make


def probabilities(*shape):
    """Make quantile levels in [0.05, 0.95] away from the kinks of linear interpolation."""
    return floats(*shape, lo=0.05, hi=0.95)


def _variant(name, kw):
    return f"{name}[{','.join(f'{k}={v}' for k, v in kw.items())}]" if kw else name


# --- reductions ------------------------------------------------------------------------------


def two_per_row(*shape):
    """Make a where= mask of ``shape`` that keeps at least two elements of each row."""

    def make(rng):
        mask = rng.rand(*shape) > 0.5
        rows = mask.reshape(-1, shape[-1])
        for row in rows:
            row[rng.permutation(shape[-1])[:2]] = True
        return rows.reshape(shape)

    return make


def numbers_kept(*shape):
    """Make a where= mask that keeps the numbers of ``with_nans`` and drops NaN at random."""

    def make(rng):
        mask = rng.rand(*shape) > 0.5
        return mask | ~np.isnan(with_nans(*shape)(rng))

    return make


# (name, maker of the operand, differentiable, maker of a where= mask or None, keywords
# that go with where=: max and min need an initial value there, as in JAX)
_REDUCTIONS = [
    ("sum", floats, True, bools, {}),
    ("prod", floats, True, bools, {}),
    ("mean", floats, True, two_per_row, {}),
    ("max", distinct, True, bools, {"initial": -3.0}),
    ("min", distinct, True, bools, {"initial": 3.0}),
    ("amax", distinct, True, bools, {"initial": -3.0}),
    ("amin", distinct, True, bools, {"initial": 3.0}),
    ("ptp", distinct, True, None, {}),
    ("var", floats, True, two_per_row, {}),
    ("std", distinct, True, two_per_row, {}),
    ("median", distinct, True, None, {}),
    ("nansum", with_nans, True, bools, {}),
    ("nanprod", with_nans, True, bools, {}),
    ("nanmean", with_nans, True, numbers_kept, {}),
    ("nanmax", with_nans, True, bools, {"initial": -3.0}),
    ("nanmin", with_nans, True, bools, {"initial": 3.0}),
    ("nanvar", with_nans, True, numbers_kept, {}),
    ("nanstd", with_nans, True, numbers_kept, {}),
    ("nanmedian", with_nans, True, None, {}),
    ("argmax", distinct, False, None, {}),
    ("argmin", distinct, False, None, {}),
    ("nanargmax", with_nans, False, None, {}),
    ("nanargmin", with_nans, False, None, {}),
    ("all", bools, False, bools, {}),
    ("any", bools, False, bools, {}),
    ("count_nonzero", functools.partial(ints, lo=-1, hi=1), False, None, {}),
]

# The axis variants run on (2, 3), the 0-d one only where the function takes no NaN;
# the arg* functions take one axis at most.
_AXES = [{}, {"axis": 1}, {"axis": (0, 1)}, {"axis": 0, "keepdims": True}]
_ONE_AXIS = [{}, {"axis": 1}, {"axis": 0, "keepdims": True}]

for _name, _maker, _diff, _mask, _where_kw in _REDUCTIONS:
    _f = getattr(jnp, _name)
    _d = (0,) if _diff else ()
    for _kw in _ONE_AXIS if "arg" in _name else _AXES:
        # nanstd over axis 0 has one number per column: a zero deviation, where the
        # square root has no derivative.
        _smooth = not (_name == "nanstd" and _kw.get("axis") == 0)
        add(
            _variant(_name, _kw),
            functools.partial(_f, **_kw),
            _maker(*S2),
            diff=_d if _smooth else (),
        )
    if _maker is not with_nans:
        # The deviation of a scalar is zero, where std has no derivative.
        add(f"{_name}[0-d]", _f, _maker(*S0), diff=_d if _name != "std" else ())
    if _mask is not None:
        add(
            _variant(_name, {"axis": 1, "where": "mask", **_where_kw}),
            lambda x, m, f=_f, kw=_where_kw: f(x, axis=1, where=m, **kw),
            _maker(*S2),
            _mask(*S2),
            diff=_d,
        )

for _name in ("var", "std", "nanvar", "nanstd"):
    _maker = with_nans if _name.startswith("nan") else distinct
    add(
        f"{_name}[axis=1,ddof=1]",
        functools.partial(getattr(jnp, _name), axis=1, ddof=1),
        _maker(*S2),
        diff=(0,),
    )
add(
    "var[axis=1,ddof=1,where=mask]",
    lambda x, m: jnp.var(x, axis=1, ddof=1, where=m),
    distinct(*S2),
    two_per_row(*S2),
    diff=(0,),
)
add(
    "std[correction=1,axis=0]",
    functools.partial(jnp.std, axis=0, correction=1),
    distinct(*S2),
    diff=(0,),
)

add("average", jnp.average, floats(*S2), diff=(0,))
add("average[axis=1]", functools.partial(jnp.average, axis=1), floats(*S2), diff=(0,))
add(
    "average[weights]",
    lambda x, w: jnp.average(x, weights=w),
    floats(*S2),
    floats(*S2, lo=0.5, hi=2.0),
    diff=(0, 1),
)
add(
    "average[weights,axis=1,keepdims=True]",
    lambda x, w: jnp.average(x, axis=1, weights=w, keepdims=True),
    floats(*S2),
    floats(*S2, lo=0.5, hi=2.0),
    diff=(0, 1),
)
add(
    "average[weights1d,axis=1,returned=True]",
    lambda x, w: jnp.average(x, axis=1, weights=w, returned=True),
    floats(*S2),
    floats(3, lo=0.5, hi=2.0),
    diff=(0, 1),
)

# Quantiles: q an operand (scalar or 1-d); linear interpolation is smooth in q too.
for _name, _maker, _scale in [
    ("quantile", distinct, 1.0),
    ("percentile", distinct, 100.0),
    ("nanquantile", with_nans, 1.0),
    ("nanpercentile", with_nans, 100.0),
]:
    _f = getattr(jnp, _name)
    _q0 = floats(lo=0.05 * _scale, hi=0.95 * _scale)
    _q1 = floats(2, lo=0.05 * _scale, hi=0.95 * _scale)
    add(_name, _f, _maker(*S2), _q0, diff=(0, 1))
    add(
        f"{_name}[q1d,axis=1,keepdims=True]",
        lambda x, q, f=_f: f(x, q, axis=1, keepdims=True),
        _maker(*S2),
        _q1,
        diff=(0, 1),
    )
    add(f"{_name}[axis=0]", lambda x, q, f=_f: f(x, q, axis=0), _maker(*S2), _q0, diff=(0,))
    for _method in ("lower", "higher", "nearest", "midpoint"):
        add(
            f"{_name}[method={_method}]",
            lambda x, q, f=_f, m=_method: f(x, q, axis=1, method=m),
            _maker(*S2),
            _q1,
            diff=(0,),
        )
add("quantile[1d]", jnp.quantile, distinct(*S1), probabilities(), diff=(0, 1))

# --- cumulative ------------------------------------------------------------------------------

for _name, _maker in [
    ("cumsum", floats),
    ("cumprod", floats),
    ("nancumsum", with_nans),
    ("nancumprod", with_nans),
]:
    _f = getattr(jnp, _name)
    add(_name, _f, _maker(*S2), diff=(0,))
    add(f"{_name}[axis=0]", functools.partial(_f, axis=0), _maker(*S2), diff=(0,))
    add(f"{_name}[axis=-1]", functools.partial(_f, axis=-1), _maker(*S2), diff=(0,))
add("cumsum[int]", functools.partial(jnp.cumsum, axis=1), ints(*S2))
add("cumsum[dtype=float32]", lambda x: jnp.cumsum(x, dtype=jnp.float32), ints(*S1))

for _name in ("cumulative_sum", "cumulative_prod"):
    _f = getattr(jnp, _name)
    add(_name, _f, floats(*S1), diff=(0,))
    add(f"{_name}[axis=1]", functools.partial(_f, axis=1), floats(*S2), diff=(0,))
    add(
        f"{_name}[axis=0,include_initial=True]",
        functools.partial(_f, axis=0, include_initial=True),
        floats(*S2),
        diff=(0,),
    )

add("diff", jnp.diff, floats(*S2), diff=(0,))
add("diff[n=2,axis=0]", functools.partial(jnp.diff, n=2, axis=0), floats(3, 2), diff=(0,))
add("diff[n=2]", functools.partial(jnp.diff, n=2), floats(*S1), diff=(0,))
add(
    "diff[prepend,append]",
    lambda x, p, a: jnp.diff(x, prepend=p, append=a),
    floats(*S2),
    floats(2, 1),
    floats(2, 2),
    diff=(0, 1, 2),
)
add("diff[prepend=scalar]", lambda x: jnp.diff(x, prepend=0.5), floats(*S1), diff=(0,))
add("diff[int]", jnp.diff, ints(*S1))
add("diff[bool]", jnp.diff, bools(*S1))

add("ediff1d", jnp.ediff1d, floats(*S2), diff=(0,))
add(
    "ediff1d[to_begin,to_end]",
    lambda x, b, e: jnp.ediff1d(x, to_end=e, to_begin=b),
    floats(*S1),
    floats(2),
    floats(),
    diff=(0, 1, 2),
)

# Under vmap the number of bins must be static: length= (as in JAX).
add("bincount[length=6]", functools.partial(jnp.bincount, length=6), ints(*S1, lo=0, hi=7))
add(
    "bincount[weights,length=5]",
    lambda x, w: jnp.bincount(x, weights=w, length=5),
    ints(*S1, lo=0, hi=4),
    floats(*S1),
    diff=(1,),
)
add("digitize", jnp.digitize, floats(*S2), increasing(4))
add(
    "digitize[right=True]",
    lambda x, b: jnp.digitize(x, b, right=True),
    floats(*S1),
    increasing(3),
)
add(
    "digitize[decreasing]",
    lambda x, b: jnp.digitize(x, b[::-1]),
    floats(*S1),
    increasing(3),
)
# The edges follow the operand's minimum and maximum; the counts are piecewise constant,
# so only the weights (and the edges) are differentiated.
add("histogram[bins=4]", lambda a: jnp.histogram(a, bins=4), distinct(*S2))
add(
    "histogram[weights,range,density]",
    lambda a, w: jnp.histogram(a, bins=3, range=(-2.0, 2.0), weights=w, density=True)[0],
    distinct(*S1),
    floats(*S1, lo=0.5, hi=2.0),
    diff=(1,),
)
add(
    "histogram[bins=edges]",
    lambda a, b: jnp.histogram(a, bins=b),
    distinct(*S1),
    increasing(3, lo=-2.5, hi=2.5),
)
add("histogram_bin_edges", jnp.histogram_bin_edges, distinct(*S2), diff=(0,))
add(
    "histogram_bin_edges[bins=3,range]",
    lambda a: jnp.histogram_bin_edges(a, bins=3, range=(-1.0, 1.0)),
    distinct(*S1),
)

# --- sorting ---------------------------------------------------------------------------------

add("sort", jnp.sort, distinct(*S2), diff=(0,))
add("sort[axis=0]", functools.partial(jnp.sort, axis=0), distinct(*S2), diff=(0,))
add("sort[axis=None]", functools.partial(jnp.sort, axis=None), distinct(*S2), diff=(0,))
add("sort[descending]", functools.partial(jnp.sort, descending=True), distinct(*S1), diff=(0,))
add("sort[int]", jnp.sort, ints(*S2))
add("sort[nan]", jnp.sort, with_nans(*S2))
add("argsort", jnp.argsort, distinct(*S2))
add("argsort[axis=0]", functools.partial(jnp.argsort, axis=0), ints(*S2, lo=0, hi=2))
add("argsort[axis=None]", functools.partial(jnp.argsort, axis=None), ints(*S2, lo=0, hi=2))
add(
    "argsort[descending,stable]",
    functools.partial(jnp.argsort, descending=True, stable=True),
    ints(*S1, lo=0, hi=2),
)
add("lexsort", lambda a, b: jnp.lexsort((a, b)), ints(*S1, lo=0, hi=2), ints(*S1, lo=0, hi=2))
add(
    "lexsort[axis=0]",
    lambda a, b: jnp.lexsort((a, b), axis=0),
    ints(*S2, lo=0, hi=1),
    distinct(*S2),
)
add("partition", functools.partial(jnp.partition, kth=1), distinct(*S2), diff=(0,))
add("partition[axis=0]", functools.partial(jnp.partition, kth=0, axis=0), distinct(*S2), diff=(0,))
add("argpartition", functools.partial(jnp.argpartition, kth=2), distinct(*S1))
add("argpartition[axis=0]", functools.partial(jnp.argpartition, kth=1, axis=0), distinct(*S2))
add("sort_complex", jnp.sort_complex, complexes(*S1), diff=(0,))
add("sort_complex[real]", jnp.sort_complex, distinct(*S1))

add("searchsorted", jnp.searchsorted, increasing(4), floats(*S2, lo=-2.5, hi=2.5))
add("searchsorted[scalar]", jnp.searchsorted, increasing(4), floats(lo=-2.5, hi=2.5))
for _method in ("scan", "compare_all", "sort"):
    add(
        f"searchsorted[side=right,method={_method}]",
        functools.partial(jnp.searchsorted, side="right", method=_method),
        lambda rng: np.sort(rng.randint(-2, 3, 5)).astype(np.float64),
        floats(*S1, lo=-3.0, hi=3.0),
    )
add(
    "searchsorted[sorter]",
    lambda a, v, s: jnp.searchsorted(a, v, sorter=s),
    distinct(*S1),
    floats(3),
    permutation(*S1),
)

# The unique family has a data-dependent size: as in JAX, vmap needs a static size=.
_REPEATS = ints(*S2, lo=0, hi=3)
add("unique[size=4]", lambda x: jnp.unique(x, size=4), _REPEATS)
add(
    "unique[size=6,fill_value=-1,return_all]",
    lambda x: jnp.unique(
        x, return_index=True, return_inverse=True, return_counts=True, size=6, fill_value=-1
    ),
    _REPEATS,
)
add(
    "unique[axis=None,size=3,return_inverse]",
    lambda x: jnp.unique(x, return_inverse=True, size=3),
    ints(*S1, lo=0, hi=2),
)
add("unique_values[size=4]", lambda x: jnp.unique_values(x, size=4), _REPEATS)
add(
    "unique_values[size=6,fill_value]",
    lambda x: jnp.unique_values(x, size=6, fill_value=9),
    ints(*S1, lo=0, hi=2),
)
add("unique_counts[size=5]", lambda x: jnp.unique_counts(x, size=5, fill_value=0), _REPEATS)
add("unique_inverse[size=4]", lambda x: jnp.unique_inverse(x, size=4), _REPEATS)
add("unique_all[size=5]", lambda x: jnp.unique_all(x, size=5, fill_value=-1), _REPEATS)
add("unique_values[float,size=4]", lambda x: jnp.unique_values(x, size=4), with_nans(*S1))

# --- indexing --------------------------------------------------------------------------------

# The number of nonzeros is data dependent: as in JAX, vmap needs a static size=.
_SPARSE = ints(*S2, lo=-1, hi=1)
add("nonzero[size=4]", lambda x: jnp.nonzero(x, size=4), _SPARSE)
add("nonzero[size=2,fill_value=-1]", lambda x: jnp.nonzero(x, size=2, fill_value=-1), _SPARSE)
add("nonzero[1d,size=5]", lambda x: jnp.nonzero(x, size=5), bools(*S1))
add("argwhere[size=4]", lambda x: jnp.argwhere(x, size=4), _SPARSE)
add("argwhere[size=7,fill_value=9]", lambda x: jnp.argwhere(x, size=7, fill_value=9), bools(*S2))
add("flatnonzero[size=4]", lambda x: jnp.flatnonzero(x, size=4), _SPARSE)
add(
    "flatnonzero[size=3,fill_value=-1]",
    lambda x: jnp.flatnonzero(x, size=3, fill_value=-1),
    ints(*S1, lo=0, hi=1),
)

add("take", lambda a, i: jnp.take(a, i), floats(*S2), ints(*S1, lo=-6, hi=5), diff=(0,))
add(
    "take[axis=1]",
    lambda a, i: jnp.take(a, i, axis=1),
    floats(*S2),
    ints(2, 2, lo=-3, hi=2),
    diff=(0,),
)
add(
    "take[axis=0,mode=clip]",
    lambda a, i: jnp.take(a, i, axis=0, mode="clip"),
    floats(*S2),
    ints(*S1, lo=-3, hi=4),
    diff=(0,),
)
add(
    "take[mode=wrap]",
    lambda a, i: jnp.take(a, i, axis=-1, mode="wrap"),
    floats(*S1),
    ints(3, lo=-9, hi=9),
    diff=(0,),
)
add(
    "take[mode=fill]",
    lambda a, i: jnp.take(a, i, mode="fill", fill_value=-7.0),
    floats(*S1),
    ints(3, lo=-6, hi=6),
    diff=(0,),
)
add(
    "take_along_axis",
    lambda a, i: jnp.take_along_axis(a, i, axis=1),
    floats(*S2),
    ints(2, 4, lo=-3, hi=2),
    diff=(0,),
)
add(
    "take_along_axis[axis=0]",
    lambda a, i: jnp.take_along_axis(a, i, axis=0),
    floats(*S2),
    ints(1, 3, lo=0, hi=1),
    diff=(0,),
)
add(
    "take_along_axis[axis=None]",
    lambda a, i: jnp.take_along_axis(a, i, axis=None),
    floats(*S2),
    ints(4, lo=0, hi=5),
    diff=(0,),
)
# Distinct indices along the axis, so that no two values write the same place.
add(
    "put_along_axis",
    lambda a, i, v: jnp.put_along_axis(a, i, v, axis=1, inplace=False),
    floats(*S2),
    permutation(*S2),
    floats(*S2),
    diff=(0, 2),
)
add(
    "put_along_axis[scalar values,axis=0]",
    lambda a, i, v: jnp.put_along_axis(a, i, v, axis=0, inplace=False),
    floats(*S2),
    ints(1, 3, lo=0, hi=1),
    floats(),
    diff=(0, 2),
)

# --- signal ----------------------------------------------------------------------------------

for _name in ("convolve", "correlate"):
    _f = getattr(jnp, _name)
    for _mode in ("full", "same", "valid"):
        add(
            f"{_name}[mode={_mode}]",
            functools.partial(_f, mode=_mode),
            floats(*S1),
            floats(3),
            diff=(0, 1),
        )
    add(f"{_name}[short first]", _f, floats(2), floats(*S1), diff=(0, 1))
    add(f"{_name}[complex]", _f, complexes(*S1), complexes(2), diff=(0, 1))
    add(f"{_name}[int]", _f, ints(*S1), ints(2))
