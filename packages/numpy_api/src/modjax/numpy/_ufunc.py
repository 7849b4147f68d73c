"""``jnp.ufunc``: elementwise functions with ``reduce``, ``accumulate``, ``outer`` and ``at``.

The fourteen functions that are ufuncs in JAX (``add``, ``multiply``,
``maximum``, ``logaddexp``, ...) are made here from the plain functions of
``_ufuncs.py`` (``_make_ufunc``); ``frompyfunc`` makes one of a scalar Python
function. Reductions of the built-in ufuncs go to ``sum``/``prod``/``max``/...,
the others reduce pairwise (or in order, when not known to be associative).
"""

from __future__ import annotations

import math
import operator

from modjax import lax
from modjax.batching import vectorize
from modjax.lax.elementwise import _convert_element_type

from ._ufunc_factories import (
    _as_array,
    _as_bool,
    _dtype,
    _full_like,
    _strong,
    _where,
)
from ._util import (
    ARRAY_TYPES,
    aval,
    broadcast_to,
    canonical_dtype,
    canonicalize_axis,
    check_arraylike,
    promote_args_inexact,
)

__all__ = ["frompyfunc", "ufunc"]


def _vectorized_call(func, nout: int):
    """Call ``func`` elementwise over broadcast operands; give modjax arrays back."""
    vectorized = vectorize(func)

    def call(*args):
        out = vectorized(*args)
        return tuple(_as_array(o) for o in out) if nout > 1 else _as_array(out)

    return call


class ufunc:  # noqa: N801 - numpy's and JAX's name
    """A universal function: an elementwise function with reductions (jax.numpy.ufunc).

    ``jnp.add``, ``jnp.multiply``, ``jnp.maximum``, ``jnp.logaddexp``, ... are
    ufuncs. Calling one applies it elementwise; ``reduce``, ``accumulate``,
    ``outer``, ``at`` and ``reduceat`` work as in numpy, functionally (``at``
    needs ``inplace=False``). ``out`` and ``where`` of a call are not supported
    (as in JAX). ``reduce=``, ``accumulate=``, ``at=`` and ``reduceat=`` of the
    constructor replace those methods (after their argument checks), as in JAX.
    """

    __module__ = "modjax.numpy"

    def __init__(
        self,
        func,
        /,
        nin: int,
        nout: int,
        *,
        name: str | None = None,
        nargs: int | None = None,
        identity=None,
        call=None,
        reduce=None,
        accumulate=None,
        at=None,
        reduceat=None,
    ):
        # Custom implementations replace the generic methods, as JAX's static props do.
        self._custom = {"reduce": reduce, "accumulate": accumulate, "at": at, "reduceat": reduceat}
        self.nin = operator.index(nin)
        self.nout = operator.index(nout)
        if self.nin < 1 or self.nout < 1:
            raise ValueError(f"jnp.ufunc: nin and nout must be positive, got {nin} and {nout}")
        # ``_func`` is what a call runs: a scalar function is vectorized, as numpy's frompyfunc.
        self._func = call if call is not None else _vectorized_call(func, self.nout)
        self.__name__ = name if name is not None else getattr(func, "__name__", "<ufunc>")
        self.nargs = self.nin if nargs is None else operator.index(nargs)
        self.identity = identity
        self.__doc__ = getattr(func, "__doc__", None) or ""
        # The name of the built-in ufunc this is (its fast reductions and .at), else None.
        self._builtin = None

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is None and where is None:  # the hot path: operators call this
            return self._func(*args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        raise NotImplementedError(f"where argument of {self}")

    def _binary_only(self, what: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{what} only supported for binary ufuncs")

    def outer(self, A, B, /):  # noqa: N803 - numpy's argument names
        """Apply the ufunc to every pair ``(a, b)`` of elements (jax.numpy.ufunc.outer)."""
        self._binary_only("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        a, b = _asarray(A), _asarray(B)
        a = lax.reshape(a, (*aval(a).shape, *(1,) * len(aval(b).shape)))
        return self(a, b)

    def reduce(
        self, a, axis=0, dtype=None, out=None, keepdims: bool = False, initial=None, where=None
    ):
        """Reduce ``a`` along ``axis`` by repeated application (jax.numpy.ufunc.reduce).

        ``axis`` is an int, a tuple or None (all axes); ``initial`` starts the
        reduction; ``where`` masks elements out (it needs an identity or
        ``initial``).
        """
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        check_arraylike(f"{self.__name__}.reduce", a)
        custom = self._custom["reduce"]
        if custom is not None:
            if where is not None and self.identity is None and initial is None:
                raise ValueError(
                    f"reduction operation {self.__name__!r} does not have an identity, so to "
                    "use a where mask one has to specify 'initial'."
                )
            return custom(
                a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where
            )
        x = _asarray(a)
        if dtype is not None:
            x = _convert_element_type(x, canonical_dtype(dtype, f"{self.__name__}.reduce"))
        fast = _REDUCERS.get(self._builtin)
        if fast is not None:
            return fast(x, axis, keepdims, initial, where)
        # JAX reduces these by a loop whose carry is cast to the result dtype: strongly typed.
        return _strong(self._generic_reduce(self._promote(x), axis, keepdims, initial, where))

    def _promote(self, x):
        """``x`` in the dtype the ufunc computes in, so that reductions keep one dtype."""
        builtin = self._builtin or ""
        if builtin.startswith("logical_"):
            return _as_bool(x, self.__name__)
        if builtin.startswith("logaddexp"):
            return _as_array(promote_args_inexact(self.__name__, x)[0])
        return x

    def _generic_reduce(self, x, axis, keepdims, initial, where):
        ndim = len(aval(x).shape)
        if axis is None:
            axes = tuple(range(ndim))
        elif isinstance(axis, tuple | list):
            axes = tuple(sorted(canonicalize_axis(ax, ndim) for ax in axis))
        else:
            axes = (canonicalize_axis(axis, ndim),)
        if self._builtin == "subtract" and len(axes) > 1:
            raise ValueError(
                "reduction operation 'subtract' is not reorderable, so at most one axis may be "
                "specified"
            )
        if where is not None:
            fill = self.identity if initial is None else initial
            if fill is None:
                raise ValueError(
                    f"reduction operation {self.__name__} does not have an identity, so to use a "
                    "where mask one has to specify 'initial'."
                )
            mask = broadcast_to(_as_bool(where, "reduce"), aval(x).shape)
            x = _where(mask, x, _full_like(x, fill))
        # move the reduced axes to the front, flatten them, and reduce pairwise
        shape = aval(x).shape
        rest = [i for i in range(ndim) if i not in axes]
        kept = tuple(shape[i] for i in rest)
        n = math.prod(shape[i] for i in axes)
        x = lax.reshape(lax.transpose(x, (*axes, *rest)), (n, *kept))
        if n == 0:
            fill = self.identity if initial is None else initial
            if fill is None:
                raise ValueError(
                    f"zero-size array to reduction operation {self.__name__} which has no identity"
                )
            result = lax.full(kept, fill, _dtype(x))
        else:
            if self._builtin == "subtract":  # x0 - x1 - ... - xn = x0 - (x1 + ... + xn)
                from ._ufuncs import add, subtract  # _ufuncs makes its ufuncs with this module

                first = lax.squeeze(_slice_axis(x, 0, 1, 0), (0,))
                rest_sum = _tree_reduce(add, _slice_axis(x, 1, n, 0), n - 1) if n > 1 else None
                result = first if rest_sum is None else subtract(first, rest_sum)
            elif self._builtin is None:  # not known to be associative: numpy's order
                result = _fold_left(self, x, n, initial)
            else:
                result = _tree_reduce(self, x, n)
            if initial is not None and self._builtin is not None:
                result = self(initial, result)
        if keepdims:
            result = lax.reshape(result, tuple(1 if i in axes else shape[i] for i in range(ndim)))
        return result

    def accumulate(self, a, axis: int = 0, dtype=None, out=None):
        """Return the running results of the ufunc along ``axis`` (jax.numpy.ufunc.accumulate)."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        check_arraylike(f"{self.__name__}.accumulate", a)
        custom = self._custom["accumulate"]
        if custom is not None:
            return custom(a, axis=axis, dtype=dtype)
        # JAX's running results are cast to the result dtype: strongly typed.
        return _strong(self._accumulate(a, axis, dtype))

    def _accumulate(self, a, axis: int, dtype):
        x = _asarray(a)
        if dtype is not None:
            x = _convert_element_type(x, canonical_dtype(dtype, f"{self.__name__}.accumulate"))
        x = self._promote(x)
        ndim = len(aval(x).shape)
        if ndim == 0:
            raise ValueError(f"{self.__name__}.accumulate does not allow scalar inputs")
        axis = canonicalize_axis(axis, ndim)
        if self._builtin == "subtract":  # x0 - x1 - ... - xk = 2 x0 - (x0 + ... + xk)
            from ._ufuncs import add, multiply, subtract

            first = _slice_axis(x, 0, min(1, aval(x).shape[axis]), axis)
            return subtract(multiply(first, 2), add.accumulate(x, axis))
        n = aval(x).shape[axis]
        if self._builtin is None:  # not known to be associative: one step per element
            running = [_slice_axis(x, 0, min(n, 1), axis)]
            for i in range(1, n):
                running.append(self(running[-1], _slice_axis(x, i, i + 1, axis)))
            return _as_array(lax.concatenate(running, axis))
        # Hillis-Steele scan: log2(n) steps of "combine with the element d places back"
        d = 1
        while d < n:
            head = _slice_axis(x, 0, d, axis)
            tail = self(_slice_axis(x, 0, n - d, axis), _slice_axis(x, d, n, axis))
            x = lax.concatenate([head, tail], axis)
            d *= 2
        return _as_array(x)

    def at(self, a, indices, b=None, /, *, inplace: bool = True):
        """Apply the ufunc at ``indices`` of ``a``, functionally (jax.numpy.ufunc.at).

        Repeated indices accumulate, as in numpy. JAX arrays are immutable:
        pass ``inplace=False`` and use the result. The built-in binary ufuncs
        scatter; the others visit the indexed elements one by one, in order.
        """
        if inplace:
            raise NotImplementedError(
                "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like "
                "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.\n"
                ">>> arr = jnp.add.at(arr, ind, val, inplace=False)"
            )
        custom = self._custom["at"]
        if custom is not None:
            return custom(a, indices) if b is None else custom(a, indices, b)
        x = _asarray(a)
        method = _AT_METHODS.get(self._builtin)
        if method is None or b is None:
            return self._at_by_loop(x, indices, *(() if b is None else (b,)))
        if self._builtin == "subtract":
            from ._ufuncs import negative

            b = negative(b)
        return getattr(x.at[indices], method)(b)

    def _at_by_loop(self, x, indices, *args):
        import modjax.numpy as jnp
        from modjax.runtime import eval_shape

        if len(args) + 1 != self.nin or self.nout != 1:
            raise ValueError(f"{self.__name__}.at needs {self.nin - 1} value argument(s)")
        check_arraylike(f"{self.__name__}.at", x, *args)
        # The ufunc's result dtype on these operands: x and the values are cast to it.
        ones = [jnp.ones((), _dtype(v)) for v in (x, *args)]
        dtype = eval_shape(self._func, *ones).dtype
        x = jnp.asarray(x).astype(dtype)
        args = tuple(jnp.asarray(v).astype(dtype) for v in args)
        if not isinstance(indices, tuple):
            indices = (indices,)
        if not indices:
            return x
        arrays = [jnp.asarray(i) for i in indices if not isinstance(i, slice)]
        shape = jnp.broadcast_shapes(*(i.shape for i in arrays)) if arrays else ()
        if not shape:  # one element (or slices): a single application
            return x.at[indices].set(self(x[indices], *args))
        n = math.prod(shape)
        if args:
            value = args[0]
            value = jnp.broadcast_to(value, (*shape, *value.shape[len(shape) :]))
            args = (value.reshape(n, *value.shape[len(shape) :]),)
        flat = [i if isinstance(i, slice) else jnp.broadcast_to(i, shape).ravel() for i in indices]

        def step(k, y):
            where = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            return y.at[where].set(self(y[where], *(v[k] for v in args)))

        return lax.fori_loop(0, n, step, x)

    def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
        """Reduce ``a`` over the segments starting at ``indices`` (jax.numpy.ufunc.reduceat).

        Result ``i`` reduces ``a[indices[i]:indices[i + 1]]`` along ``axis`` (the last
        segment runs to the end); where ``indices[i] >= indices[i + 1]`` it is
        ``a[indices[i]]``, as in numpy.
        """
        import modjax.numpy as jnp

        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        custom = self._custom["reduceat"]
        if custom is not None:
            return custom(a, indices, axis=axis, dtype=dtype)
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        x = _asarray(a)
        if isinstance(indices, list):
            indices = jnp.asarray(indices)
        starts = jnp.asarray(indices)
        if x.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={x.shape}")
        if starts.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got {starts.shape=}")
        if axis is None or isinstance(axis, tuple | list):
            raise ValueError("reduceat requires a single integer axis.")
        axis = canonicalize_axis(axis, x.ndim)
        if dtype is not None:
            x = x.astype(canonical_dtype(dtype, f"{self.__name__}.reduceat"))
        size = x.shape[axis]
        result = jnp.take(x, starts, axis=axis)
        # Segment j collects the elements strictly after its start and before the next start.
        bounds = jnp.append(starts, size)
        other = [d for d in range(result.ndim) if d != axis]
        lo = jnp.expand_dims(bounds[:-1], other)
        hi = jnp.expand_dims(bounds[1:], other)

        def step(k, acc):
            element = jnp.take(x, jnp.expand_dims(k, 0), axis=axis)
            return jnp.where((k > lo) & (k < hi), self(acc, element), acc)

        return lax.fori_loop(0, size, step, result)


def _asarray(x):
    if isinstance(x, ARRAY_TYPES):
        return x
    from ._creation import asarray

    return asarray(x)


def _slice_axis(x, start: int, stop: int, axis: int):
    """``x[start:stop]`` along ``axis`` (a static slice)."""
    shape = aval(x).shape
    starts = [0] * len(shape)
    stops = list(shape)
    starts[axis], stops[axis] = start, stop
    return lax.slice(x, starts, stops)


def _tree_reduce(uf, x, n):
    """Reduce the leading axis of ``x`` (of size ``n`` >= 1) pairwise, in log2(n) steps."""
    while n > 1:
        half = n // 2
        paired = uf(_slice_axis(x, 0, half, 0), _slice_axis(x, half, 2 * half, 0))
        if n % 2:
            paired = lax.concatenate([paired, _slice_axis(x, 2 * half, n, 0)], 0)
        x, n = paired, half + n % 2
    return lax.squeeze(x, (0,))


def _fold_left(uf, x, n, initial=None):
    """Reduce the leading axis of ``x`` (of size ``n`` >= 1) in order: ``((x0 . x1) . x2) ...``."""
    rows = [lax.squeeze(_slice_axis(x, i, i + 1, 0), (0,)) for i in range(n)]
    result = rows[0] if initial is None else uf(initial, rows[0])
    for row in rows[1:]:
        result = uf(result, row)
    return result


def _reduce_with(name):
    def reducer(x, axis, keepdims, initial, where):
        from . import _reductions

        fn = getattr(_reductions, name)
        kwargs = {"axis": axis, "keepdims": keepdims, "where": where}
        if initial is not None:
            kwargs["initial"] = initial
        return fn(x, **kwargs)

    return reducer


def _reduce_logical(name):
    def reducer(x, axis, keepdims, initial, where):
        from . import _reductions

        out = getattr(_reductions, name)(x, axis=axis, keepdims=keepdims, where=where)
        if initial is not None:
            from ._ufuncs import logical_and, logical_or

            out = (logical_and if name == "all" else logical_or)(out, initial)
        return out

    return reducer


_REDUCERS = {
    "add": _reduce_with("sum"),
    "multiply": _reduce_with("prod"),
    "maximum": _reduce_with("max"),
    "minimum": _reduce_with("min"),
    "logical_and": _reduce_logical("all"),
    "logical_or": _reduce_logical("any"),
}
_AT_METHODS = {
    "add": "add",
    "subtract": "add",
    "multiply": "multiply",
    "maximum": "max",
    "minimum": "min",
}


def _make_ufunc(func, name: str, nin: int, identity=None, eager=None):
    # ``eager`` wraps what a call runs (reductions and .at trace ``func`` itself).
    made = ufunc(func, nin, 1, name=name, identity=identity, call=eager(func) if eager else func)
    made._builtin = name
    return made


def frompyfunc(func, /, nin: int, nout: int, *, identity=None) -> ufunc:
    """Make a ufunc of a scalar function of ``nin`` arguments (jax.numpy.frompyfunc).

    ``func`` is traced once per call on one element of each broadcast operand
    (``vectorize``); ``reduce``, ``accumulate`` and ``outer`` of binary ufuncs
    work from it, ``identity`` starting empty reductions.
    """
    return ufunc(func, nin, nout, identity=identity)
