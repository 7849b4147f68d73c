"""One compiled program per eager call of a composite function on device Arrays.

JAX jits most of its jnp functions, so an eager ``jnp.interp(x, xp, fp)`` is one
cache lookup and one executable; op by op it would be dozens of dispatches from
Python (and as many compilations on first use). ``compiled_on_arrays`` gives a
modjax.numpy function that path: with a device Array as the first argument, its
Array arguments become the program's operands and every other argument (axes,
dtypes, sizes, modes) part of its static signature. Parameters named as *value
parameters* (``clip``'s ``min``/``max``, ``where``'s ``x``/``y``, ``quantile``'s
``q``, ...) take a Python number as a weakly typed operand instead, as JAX's
jitted functions do, so ``clip(x, 0, 1)`` and ``clip(x, 0, 2)`` share one program
(a static number would compile one program per value). Anything else (a tracer,
a numpy array, a list, an unhashable argument) takes the plain function, whose
errors and jaxprs are unchanged. A signature whose trace needs concrete values
(``where(cond)`` with one argument, ``bincount`` without ``length``, ...) is
remembered and runs the plain function from then on.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from modjax.runtime import Array, jit
from modjax.runtime.cpp_dispatch import make_fast_function
from modjax.runtime.fast_path_cpp import eager_fast_path, flags
from modjax.tracecore.config import enable_x64
from modjax.tracecore.core import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerIntegerConversionError,
)
from modjax.tracecore.core import eval_trace as _eval_trace
from modjax.tracecore.core import trace_state as _trace_state

from ._util import ARRAY_TYPES

__all__ = ["bare_pjit_function", "compile_on_arrays", "compiled_on_arrays", "compiled_on_values"]

# What a trace raises when the function needs the values, not just the shapes.
_NEEDS_VALUES = (ConcretizationTypeError, TracerArrayConversionError, TracerIntegerConversionError)


# Static values that are always hashable and equal to themselves (unlike a float NaN).
_PLAIN_STATICS = frozenset({int, str, bool, type(None)})


def _static(value: Any) -> bool:
    """Whether ``value`` can key a compilation: hashable and equal to itself (no NaN)."""
    try:
        hash(value)
        return bool(value == value)
    except (TypeError, ValueError):
        return False


# Python numbers a value parameter takes as operands (bool too: a strongly typed bool).
_NUMBERS = frozenset({bool, int, float, complex})


def _operand(value: Any) -> bool:
    """Whether a value parameter's ``value`` goes to the program as a weakly typed operand.

    Python numbers do, except an int outside the default integer type, which jit
    would refuse (OverflowError) where the plain function may take it (``clip``
    of a float array to ``2**40``): that one stays static, as before.
    """
    if type(value) is int:
        bound = 2**63 if enable_x64.value else 2**31
        return -bound <= value < bound
    return type(value) in _NUMBERS


def _host_operand(value: Any) -> bool:
    """Whether ``value`` is a numeric numpy array: an operand of the program, as JAX's jit
    takes it (a ``where=`` mask given as numpy computes as the same Array would; run op
    by op instead, its count and sums rounded otherwise)."""
    return type(value) is np.ndarray and value.dtype.kind in "biufc"


def _positional_key(args: tuple, pattern: tuple) -> tuple:
    """The signature of a positional call: static values, operand types and avals."""
    return tuple(
        (a.shape, a.dtype, a.weak_type) if type(a) is Array else (a,) if i in pattern else type(a)
        for i, a in enumerate(args)
    )


def _keyword_key(args: tuple, kwargs: dict, key: tuple) -> tuple:
    """The signature of a keyword call: ``_positional_key``'s, then the keywords' own."""
    pattern, names = key
    return _positional_key(args, pattern), tuple(
        (k, v.shape, v.dtype, v.weak_type)
        if type(v) is Array
        else (k, v)
        if k in names
        else (k, type(v))
        for k, v in kwargs.items()
    )


def _entry(program: Callable) -> tuple:
    """``(program, its C++ fast path or None)``: a positional call takes the second."""
    return program, eager_fast_path(program)


def compiled_on_arrays(fn: Callable, values: str = "", statics: str | None = None) -> Callable:
    """Return ``fn`` with one compiled program per signature for calls on device Arrays.

    ``fn`` must return arrays. It may take ``**kwargs`` but not ``*args``. ``values``
    names (space-separated) the parameters that take values rather than
    configuration: a Python number given there is an operand of the program (a
    weakly typed scalar, as JAX's jit takes it), so a new number compiles nothing.
    ``fn`` must trace with a tracer in each of them.

    ``statics`` (space-separated, possibly empty) names the parameters that are always
    configuration, JAX's ``static_argnames`` of the function. Given, the result is a
    bare C++ ``PjitFunction`` (as JAX's jitted jnp functions are): a call of a known
    signature runs without a Python frame. A static given an unhashable value then
    raises jit's ValueError, as in JAX.
    """
    parameters = inspect.signature(fn).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        raise TypeError(f"compiled_on_arrays: {fn.__name__} takes *args")
    keywords = frozenset(p.name for p in parameters if p.kind is not inspect.Parameter.VAR_KEYWORD)
    positional_only = [p.name for p in parameters if p.kind is inspect.Parameter.POSITIONAL_ONLY]
    positional = tuple(
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )
    any_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    value_names = frozenset(values.split())
    unknown = value_names - keywords if not any_keyword else frozenset()
    if unknown:
        raise TypeError(f"compiled_on_arrays: {fn.__name__} has no parameter {sorted(unknown)}")

    # Calls go to a jit of ``fn`` itself, one per pattern of static positions (and, for
    # keyword calls, of static keywords), so that jit's C++ fast path flattens, hashes
    # the statics and looks up the call without Python.
    by_pattern: dict[tuple, tuple] = {(): _entry(jit(fn))}
    by_keywords: dict[tuple, tuple] = {}
    # The keywords a call with n positional arguments may give (``allowed[n]``), or with
    # ``**kwargs``, the ones it may not (``taken[n]``: positional-only or given already).
    taken = [frozenset(positional_only).union(positional[:n]) for n in range(len(positional) + 1)]
    allowed = [] if any_keyword else [keywords - t for t in taken]
    value_positions = frozenset(i for i, name in enumerate(positional) if name in value_names)
    needs_values: set = set()

    # The C++ fast path of each *type signature* (the types of the arguments in order,
    # then the keywords' names and types) whose types alone decide which arguments are
    # static: a call of a known signature goes straight to C++, without the
    # classification below. Python ints in value parameters decide by their size, floats
    # elsewhere by being NaN or not, other objects by hashing: those never enter.
    by_types: dict[tuple, Callable] = {}
    # Type signatures one of whose calls needed concrete values: always classified.
    unmemoized: set = set()

    def typed(value: Any, value_parameter: bool) -> bool:
        kind = type(value)
        if kind is Array:
            return True
        if value_parameter:
            return kind is not int and (kind in _NUMBERS or kind in _PLAIN_STATICS)
        return kind in _PLAIN_STATICS

    def run(entry: tuple, args: tuple, kwargs: dict, signature: tuple, memo: bool):
        program, fast = entry
        if fast is not None and not flags.slow:
            try:
                result = fast(*args, **kwargs)  # jit's C++ fast path, without its wrapper
            except Exception:
                return program(*args, **kwargs)  # the wrapper raises it as the user sees it
            if memo and signature not in unmemoized:
                by_types[signature] = fast
            return result
        return program(*args, **kwargs)

    def call_fits(args: tuple, kwargs: dict) -> bool:
        """An Array first, no more positional arguments than ``fn`` takes, known keywords."""
        if not args or type(args[0]) is not Array or len(args) > len(positional):
            return False
        return not kwargs or (
            allowed[len(args)].issuperset(kwargs)
            if allowed
            else taken[len(args)].isdisjoint(kwargs)
        )

    def classified(signature: tuple, args: tuple, kwargs: dict):
        if _trace_state.trace is not _eval_trace or not call_fits(args, kwargs):
            # Recorded as its equations; or the plain function raises its TypeError.
            return fn(*args, **kwargs)
        static_at = []
        memo = True
        for i, value in enumerate(args):
            memo = memo and typed(value, i in value_positions)
            if (
                type(value) is Array
                or _host_operand(value)
                or (i in value_positions and _operand(value))
            ):
                continue
            if type(value) in _PLAIN_STATICS or (
                not isinstance(value, ARRAY_TYPES) and _static(value)
            ):
                static_at.append(i)
            else:
                return fn(*args, **kwargs)
        if not kwargs:
            pattern = tuple(static_at)
            if needs_values and _positional_key(args, pattern) in needs_values:
                return fn(*args)
            entry = by_pattern.get(pattern)
            if entry is None:
                entry = by_pattern[pattern] = _entry(jit(fn, static_argnums=pattern))
            try:
                return run(entry, args, kwargs, signature, memo)
            except _NEEDS_VALUES:
                needs_values.add(_positional_key(args, pattern))
                unmemoized.add(signature)
                by_types.pop(signature, None)
                return fn(*args)
        static_names = []
        for name, value in kwargs.items():
            memo = memo and typed(value, name in value_names)
            if (
                type(value) is Array
                or _host_operand(value)
                or (name in value_names and _operand(value))
            ):
                continue
            if type(value) in _PLAIN_STATICS or (
                not isinstance(value, ARRAY_TYPES) and _static(value)
            ):
                static_names.append(name)
            else:
                return fn(*args, **kwargs)
        # Keyed by the keywords' order too: cheaper than sorting, and orders are few.
        key = (tuple(static_at), tuple(static_names))
        if needs_values and _keyword_key(args, kwargs, key) in needs_values:
            return fn(*args, **kwargs)
        entry = by_keywords.get(key)
        if entry is None:
            entry = by_keywords[key] = _entry(
                jit(fn, static_argnums=key[0], static_argnames=key[1])
            )
        try:
            return run(entry, args, kwargs, signature, memo)
        except _NEEDS_VALUES:
            needs_values.add(_keyword_key(args, kwargs, key))
            unmemoized.add(signature)
            by_types.pop(signature, None)
            return fn(*args, **kwargs)

    @functools.wraps(fn)
    def dispatch(*args, **kwargs):
        signature = (
            (*map(type, args), *kwargs, *map(type, kwargs.values()))
            if kwargs
            else tuple(map(type, args))
        )
        fast = by_types.get(signature)
        if fast is not None and _trace_state.trace is _eval_trace and not flags.slow:
            try:
                return fast(*args, **kwargs)
            except Exception:
                pass  # classified again below, which raises it as the user sees it
        return classified(signature, args, kwargs)

    # The signatures that ran the plain function (for tests: a value parameter must trace).
    dispatch.needs_values = needs_values  # type: ignore[attr-defined]
    if statics is None:
        return dispatch
    program = jit(fn, static_argnames=tuple(statics.split()))
    static_positions = frozenset(program._jit.static_argnums)  # type: ignore[attr-defined]
    static_names = frozenset(program._jit.static_argnames)  # type: ignore[attr-defined]

    def serves(args: tuple, kwargs: dict) -> bool:
        # The calls ``program`` compiles as dispatch would, with no static beyond the
        # declared ones: every other argument an Array, None, or a number in a value
        # parameter.
        if not call_fits(args, kwargs):
            return False
        return all(
            _static(v) if i in static_positions else _dynamic(v, i in value_positions)
            for i, v in enumerate(args)
        ) and all(
            _static(v) if k in static_names else _dynamic(v, k in value_names)
            for k, v in kwargs.items()
        )

    bare = bare_pjit_function(fn, dispatch, program, serves)
    bare.needs_values = needs_values  # type: ignore[attr-defined]
    return bare


def _dynamic(value: Any, value_parameter: bool) -> bool:
    return type(value) is Array or value is None or (value_parameter and _operand(value))


def bare_pjit_function(
    fn: Callable, dispatch: Callable, program: Callable, serves: Callable[[tuple, dict], bool]
) -> Callable:
    """Return ``fn`` as a C++ ``PjitFunction`` over ``dispatch``, or ``dispatch`` itself.

    ``program`` is ``jit`` of ``fn`` (with its statics); the PjitFunction's entries
    are its programs. On a miss, a call that ``serves(args, kwargs)`` accepts compiles
    through ``program`` and hands the C++ side its record; any other call, and every
    call while the thread traces or a debugging check is on (the C++ side then calls
    its Python function), goes to ``dispatch``, which must handle every call ``fn``
    takes. Without the C++ fast path (option ``cpp_dispatch`` off): ``dispatch``.
    """
    if eager_fast_path(program) is None:
        return dispatch
    inner = program._jit  # type: ignore[attr-defined]
    key_of = (frozenset(inner.static_argnums), frozenset(inner.static_argnames))
    # Signatures whose trace needed concrete values: ``dispatch`` runs them as it does.
    needs_values: set = set()

    def miss(*args, **kwargs):
        if _trace_state.trace is _eval_trace and not flags.slow and serves(args, kwargs):
            key = _keyword_key(args, kwargs, key_of)
            if key not in needs_values:
                try:
                    return inner.cpp_cache_miss(*args, **kwargs)
                except _NEEDS_VALUES:
                    needs_values.add(key)
                except Exception:
                    pass  # ``dispatch`` raises it as the user sees it
        return dispatch(*args, **kwargs), None, False

    bare = make_fast_function(
        fn.__name__, dispatch, miss, inner.static_argnums, inner.static_argnames
    )
    functools.update_wrapper(bare, fn)
    return bare


def compile_on_arrays(
    namespace: dict,
    names: str,
    values: dict[str, str] | None = None,
    statics: dict[str, str] | None = None,
) -> None:
    """Replace each function named in ``names`` (space-separated) in ``namespace``.

    ``values`` maps a function's name to its value parameters, ``statics`` to its
    static ones, which make it a bare ``PjitFunction`` (``compiled_on_arrays``).
    """
    values = values or {}
    statics = statics or {}
    unknown = (set(values) | set(statics)) - set(names.split())
    if unknown:
        raise TypeError(f"compile_on_arrays: values or statics of unlisted {sorted(unknown)}")
    for name in names.split():
        namespace[name] = compiled_on_arrays(
            namespace[name], values.get(name, ""), statics.get(name)
        )


# Python scalars a whole-program call takes as (weakly typed) operands.
_PYTHON_SCALARS = frozenset({bool, int, float, complex})


def _concrete_numeric(value: Any) -> bool:
    if type(value) is Array or type(value) in _PYTHON_SCALARS:
        return True
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biufc"


def compiled_on_values(fn: Callable) -> Callable:
    """Return ``fn`` run as one compiled program whenever every argument is a concrete value.

    For elementwise composites whose rounding depends on running as one program:
    XLA contracts a multiply feeding an add into one fused multiply-add, so op by
    op the same equations can round differently (``logaddexp2(-1., -1.)`` is 0.0
    op by op, -1.06e-8 compiled, as in JAX, which jits these functions). Device
    Arrays, numeric numpy arrays and scalars, and Python scalars qualify; any
    other argument (a tracer, a list) takes ``fn`` itself, so traces inline and
    errors are ``fn``'s. ``fn`` takes positional arguments only.
    """
    program = jit(fn)

    @functools.wraps(fn)
    def dispatch(*args):
        if all(map(_concrete_numeric, args)):
            return program(*args)
        return fn(*args)

    return dispatch
