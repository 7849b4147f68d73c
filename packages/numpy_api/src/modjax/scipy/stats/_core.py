"""Sample statistics: mode, rankdata and sem (jax.scipy.stats.mode / rankdata / sem)."""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import numpy as np

import modjax.numpy as jnp
from modjax.numpy._util import canonicalize_axis, check_arraylike, promote_args_inexact
from modjax.runtime import jit
from modjax.tracecore import dtypes


class ModeResult(NamedTuple):
    """The result of ``mode``: the modal values and how often each occurs."""

    mode: object
    count: object


def _check_nan_policy(nan_policy, fn):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(
            f"Illegal nan_policy value {nan_policy!r}; expected one of "
            "{'propagate', 'omit', 'raise'}"
        )
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{fn}`, we cannot know whether `x` contains nans. "
            f"Please check if nans exist in `x` outside of the `{fn}` function."
        )


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """Return the most common value along ``axis`` and its count (jax.scipy.stats.mode).

    Ties go to the smallest value; ``axis=None`` flattens.
    """
    check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy(nan_policy, "mode")
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        x = jnp.ravel(x)[:, None]
    else:
        axis = canonicalize_axis(axis, x.ndim)
        rest = tuple(s for i, s in enumerate(x.shape) if i != axis)
        out_shape = x.shape[:axis] + (1,) + x.shape[axis + 1 :] if keepdims else rest
        x = jnp.reshape(jnp.moveaxis(x, axis, 0), (x.shape[axis], math.prod(rest)))
    if x.shape[0] == 0:
        nan = jnp.full(out_shape, math.nan, dtypes.default_float_dtype())
        return ModeResult(nan, jnp.zeros(out_shape, dtypes.default_float_dtype()))
    x = jnp.sort(x, axis=0)
    # count of each sorted entry's value: pairwise equality, fine for the sizes mode is used on
    # (the default int, as the counts of JAX's jnp.unique: int64 with x64)
    counts = jnp.sum(x[:, None, :] == x[None, :, :], axis=1, dtype=dtypes.default_int_dtype())
    first = jnp.argmax(counts, axis=0)  # the first maximal count: the smallest modal value
    values = jnp.take_along_axis(x, first[None, :], axis=0)[0]
    return ModeResult(
        jnp.reshape(values, out_shape), jnp.reshape(jnp.max(counts, axis=0), out_shape)
    )


def _rank_1d(a, method, out_dtype):
    n = a.shape[0]
    order = jnp.argsort(a, stable=True)
    arr = a[order]
    inv = jnp.zeros(n, np.int32).at[order].set(jnp.arange(n, dtype=np.int32))
    if method == "ordinal":
        return (inv + 1).astype(out_dtype)
    new_value = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
    dense = jnp.cumsum(new_value)[inv]
    if method == "dense":
        return dense.astype(out_dtype)
    # starts[j]: the sorted position where the j-th distinct value begins (n past the last)
    starts = jnp.nonzero(new_value, size=n + 1, fill_value=n)[0].astype(out_dtype)
    if method == "max":
        return starts[dense]
    if method == "min":
        return starts[dense - 1] + 1
    return 0.5 * (starts[dense] + starts[dense - 1] + 1)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Rank the data, from 1, with ties resolved by ``method`` (jax.scipy.stats.rankdata).

    ``method`` is one of average, min, max, dense, ordinal; ``axis=None``
    ranks the flattened array; any NaN makes every rank NaN.
    """
    check_arraylike("rankdata", a)
    _check_nan_policy(nan_policy, "rankdata")
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    out_dtype = dtypes.default_float_dtype()
    a = jnp.asarray(a)
    if axis is not None:
        axis = canonicalize_axis(axis, a.ndim)
        moved = jnp.moveaxis(a, axis, -1)
        flat = jnp.reshape(moved, (-1, moved.shape[-1]))
        from modjax.batching import vmap

        ranks = vmap(lambda row: rankdata(row, method))(flat)
        return jnp.moveaxis(jnp.reshape(ranks, moved.shape), -1, axis)
    a = jnp.ravel(a)
    ranks = _rank_1d(a, method, out_dtype)
    return jnp.where(jnp.any(jnp.isnan(a)), math.nan, ranks).astype(out_dtype)


@partial(jit, static_argnames=("axis", "nan_policy", "keepdims"))  # as JAX's
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """Compute the standard error of the mean along ``axis`` (jax.scipy.stats.sem).

    ``nan_policy="omit"`` ignores NaNs.
    """
    (b,) = promote_args_inexact("sem", a)
    b = jnp.asarray(b)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        std = jnp.std(b, axis, ddof=ddof, keepdims=keepdims)
        return std / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis, keepdims=keepdims)
        return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
