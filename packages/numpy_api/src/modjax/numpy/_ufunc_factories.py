"""The small helpers and the factories the elementwise functions of modjax.numpy are made with.

A factory turns a lax op into a jnp function with JAX's promotion (``_unary``,
``_binary_inexact``, ...) and, for calls on device Arrays, jit's C++ fast path
(``_compiled``).
"""

from __future__ import annotations

import functools

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.lax.elementwise import _convert_element_type
from modjax.runtime import Array, jit
from modjax.runtime.fast_path_cpp import eager_fast_path, flags
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapeDtypeStruct
from modjax.tracecore.config import enable_x64
from modjax.tracecore.core import eval_trace as _eval_trace
from modjax.tracecore.core import trace_state as _trace_state
from modjax.tracecore.tracing import make_jaxpr

from ._eager_jit import bare_pjit_function
from ._util import (
    ARRAY_TYPES,
    NUMBER_OPERAND_TYPE,
    aval,
    check_arraylike,
    convert,
    promote_args,
    promote_args_inexact,
    promote_binary,
    shape_of,
)


def _dtype(x) -> np.dtype:
    return aval(x).dtype


def _zero(x):
    return np.zeros((), _dtype(x))


def _const(x, value):
    """``value`` as an operand of lax ops next to ``x``: ``x``'s dtype, and weak if ``x`` is."""
    a = aval(x)
    return convert(value, a.dtype, a.weak_type)


def _scale_const(x, value):
    """``value`` as the constant a JAX implementation multiplies ``x`` by (``deg2rad``).

    JAX's constant is weakly typed next to a 0-d ``x`` and a strong array of ``x``'s
    dtype next to a larger one, so a weak ``x`` of one or more dimensions gives a strong
    result; this gives the same.
    """
    a = aval(x)
    if not a.shape:
        return _const(x, value)
    return np.array(value, a.dtype)


def _const_full_like(x, value):
    """``lax.full_like(x, value)`` typed as JAX's constant of that shape (see ``_scale_const``)."""
    full = lax.full_like(x, value)
    return _strong(full) if aval(x).shape else full


def _as_array(x):
    """Return ``x`` (already promoted) as an Array or tracer, keeping its weak type."""
    if isinstance(x, ARRAY_TYPES):
        return x
    a = aval(x)
    return lax.convert_element_type_p.bind(x, new_dtype=a.dtype, weak_type=a.weak_type)


def _bool_as_int(x):
    """JAX computes integer-only arithmetic on bools in the default integer type."""
    if _dtype(x) == np.bool_:
        return _convert_element_type(x, dtypes.default_int_dtype(), weak_type=False)
    return x


def _strong(x):
    """``x`` without its weak type (where JAX's implementation drops it)."""
    return _convert_element_type(x, _dtype(x), weak_type=False)


def _where(pred, on_true, on_false):
    return lax.select_n(pred, on_false, on_true)


def _full_like(x, value, dtype=None):
    return lax.full_like(x, value, dtype)


# --- factories ------------------------------------------------------------------------------


_NUMBERS = (int, float, complex)


# The ints of the default integer type lie in [-limit, limit), by x64.
INT_LIMIT = {False: 2**31, True: 2**63}


def _with_number(args: tuple) -> tuple | None:
    """Return ``(x, number)`` (either order) ready for the compiled path, or None.

    Qualifies: a device Array of a non-weak dtype and a Python number that
    ``convert`` keeps a Python number next to it (the dtype is the default one
    of the number's kind or a wider kind: ``x > 0`` on float32, ``x * 2`` on
    int32). jit then takes the number as a weakly typed operand of the Array's
    dtype, which is exactly the literal the plain function would use, so the
    values are the same. ``NUMBER_OPERAND_TYPE`` holds ``convert``'s decision for
    these pairs (one lookup instead of a call, on every ``x > 0``); an int also
    gets ``convert``'s OverflowError when out of range.
    """
    x1, x2 = args
    if type(x1) is Array and type(x2) in _NUMBERS:
        array, number = x1, x2
    elif type(x2) is Array and type(x1) in _NUMBERS:
        array, number = x2, x1
    else:
        return None
    a = array.aval
    if a.weak_type:
        return None
    x64 = enable_x64.value
    as_type = NUMBER_OPERAND_TYPE.get((type(number), a.dtype, x64))
    if as_type is None:
        return None
    if type(number) is int and not -INT_LIMIT[x64] <= number < INT_LIMIT[x64]:
        dtypes.check_int_range(number, dtypes.default_int_dtype())  # convert's OverflowError
    number = as_type(number)
    return (array, number) if array is x1 else (number, array)


def _compiled(fn):
    """Give ``fn`` jit's C++ fast path for calls on device Arrays, as JAX's jnp functions.

    Eagerly, a call on Arrays (or on an Array and a Python number, ``x > 0``) is
    then one cache lookup and one executable instead of promotion and dispatch in
    Python per call. Any other argument (a tracer, a numpy array, a number that
    would change the Array's dtype) takes the plain function, so jaxprs stay as
    before: under a trace a Python scalar stays a literal of the array's dtype.
    """
    compiled = jit(fn)
    fast = eager_fast_path(compiled)

    @functools.wraps(fn)
    def dispatch(*args):
        if _trace_state.trace is not _eval_trace:
            return fn(*args)  # recorded as its equations, as with tracer arguments
        operands = args
        for arg in args:
            if type(arg) is not Array:
                operands = _with_number(args) if len(args) == 2 else None
                if operands is None:
                    return fn(*args)
                break
        if fast is not None and not flags.slow:
            try:
                return fast(*operands)  # jit's C++ fast path, without its Python wrapper
            except Exception:
                pass  # the wrapper raises it as the user sees it
        return compiled(*operands)

    dispatch.fast_path = fast  # type: ignore[attr-defined]  # for the operators of Arrays
    dispatch.program = compiled  # type: ignore[attr-defined]
    return dispatch


def _one_array(args: tuple, kwargs: dict) -> bool:
    return len(args) == 1 and not kwargs and type(args[0]) is Array


def _compiled_unary(fn):
    """``_compiled`` for a one-argument function: a bare ``PjitFunction``, as JAX's ``jnp.sin``.

    A call on a device Array of a seen signature then runs without a Python frame;
    every other call goes to ``_compiled``'s dispatch (``bare_pjit_function``).
    """
    dispatch = _compiled(fn)
    return bare_pjit_function(fn, dispatch, dispatch.program, _one_array)


def _unary_inexact(lax_fn, name: str, what: str):
    """A unary function that computes in floating point (ints and bools become float)."""

    def fn(x, /):
        if isinstance(x, ARRAY_TYPES) and kind(x.dtype) in "fc":
            return lax_fn(x)
        (x,) = promote_args_inexact(name, x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise (jax.numpy.{name})."
    return _compiled_unary(fn)


def _unary(lax_fn, name: str, what: str):
    """A unary function that keeps the dtype of its argument."""

    def fn(x, /):
        (x,) = promote_args(name, x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise (jax.numpy.{name})."
    return _compiled_unary(fn)


def _check_example_shapes(lax_fn, x1, x2) -> None:
    """Raise the lax op's shape error on the shapes the user sees, if they clash.

    Under ``vmap`` those are the per-example shapes: JAX's jnp functions, jitted, raise
    there, where lax's own batching rule would name the batched shapes.
    """
    s1, s2 = shape_of(x1), shape_of(x2)
    if s1 == s2 or len(s1) != len(s2):  # ranks differ only for a 0-d operand here
        return
    if all(a == b or 1 in (a, b) for a, b in zip(s1, s2, strict=True)):
        return
    operands = [ShapeDtypeStruct(s, aval(x).dtype) for s, x in ((s1, x1), (s2, x2))]
    make_jaxpr(lax_fn)(*operands)  # raises the op's TypeError, naming its primitive


def _binary(lax_fn, name: str, what: str):
    """A binary function: promote dtypes, broadcast, apply the lax op."""

    def fn(x1, x2, /):
        x1, x2 = promote_binary(name, x1, x2)
        _check_example_shapes(lax_fn, x1, x2)
        return lax_fn(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (
        f"{what} elementwise, with JAX's type promotion and broadcasting (jax.numpy.{name})."
    )
    return _compiled(fn)


def _binary_inexact(lax_fn, name: str, what: str):
    def fn(x1, x2, /):
        x1, x2 = promote_args_inexact(name, x1, x2)
        _check_example_shapes(lax_fn, x1, x2)
        return lax_fn(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise, computing in floating point (jax.numpy.{name})."
    return _compiled(fn)


def _binary_int(lax_fn, name: str, what: str):
    """A binary function on integers; two bools compute in the default integer type."""

    def fn(x1, x2, /):
        x1, x2 = promote_binary(name, x1, x2)
        x1, x2 = _bool_as_int(x1), _bool_as_int(x2)
        _check_example_shapes(lax_fn, x1, x2)
        return lax_fn(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{what} elementwise, with JAX's type promotion (jax.numpy.{name})."
    return fn


def _as_bool(x, name):
    check_arraylike(name, x)
    if type(x) is bool:
        return np.bool_(x)
    if type(x) in (int, float, complex):
        return lax.ne(x, type(x)(0))  # weak, as JAX's truth value of a Python number
    if isinstance(x, np.ndarray | np.generic):
        return np.asarray(x) != 0
    # JAX compares with a zero typed as its 0-d constants (``_scale_const``): a weak
    # 0-d number gives a weak bool, any other a strong one.
    return x if _dtype(x) == np.bool_ else lax.ne(x, _scale_const(x, 0))
