"""WrappedFun: a Python function plus a stack of transformations to apply to it.

A transformation is a plain function ``t(call_next, *params, *args, **kwargs)``
that calls ``call_next`` (the next inner layer) somewhere in its body. Layers
that must report something besides their return value (the output treedef of a
flattening layer, say) get a ``Store`` as their first parameter. A WrappedFun is
hashable on its function and transformations (not on stores), which is what
``cache`` keys traced programs on.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import source_info as source_info_util
from .tree_util import tree_flatten, tree_unflatten

__all__ = [
    "Store",
    "WrappedFun",
    "DebugInfo",
    "wrap_init",
    "debug_info",
    "flatten_fun",
    "flatten_fun_nokwargs",
    "cache",
    "check_callable",
    "fun_name",
    "wraps_transform",
]


class _Empty:
    __slots__ = ()

    def __repr__(self):
        return "<empty>"


_EMPTY = _Empty()


class Store:
    """A write-once box a transformation uses to report an auxiliary result."""

    __slots__ = ("_val",)

    def __init__(self):
        self._val = _EMPTY

    def store(self, val: Any) -> None:
        """Record ``val``; a second store is a bug in the transformation."""
        if self._val is not _EMPTY:
            raise RuntimeError("Store already holds a value")
        self._val = val

    @property
    def val(self) -> Any:
        """Return the stored value (raise if the wrapped function has not run yet)."""
        if self._val is _EMPTY:
            raise RuntimeError("Store is empty: call the WrappedFun first")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not _EMPTY


class DebugInfo(NamedTuple):
    """What errors and printed jaxprs say about a traced function."""

    func_name: str
    func_src_info: str | None = None
    arg_names: tuple[str, ...] | None = None
    traced_for: str = "jit"  # the transformation tracing it, as JAX's errors name it

    def describe_arg(self, index: int) -> str:
        """Name flat argument ``index`` for a message (e.g. ``"argument x"``)."""
        if self.arg_names is not None and 0 <= index < len(self.arg_names):
            return f"argument {self.arg_names[index]}"
        return f"flat argument {index}"


def check_callable(fun) -> None:
    """Raise JAX's TypeError unless ``fun`` can be transformed (``api_util.check_callable``).

    Every transformation (``jit``, ``grad``, ``vmap``, ...) checks its function with it:
    it must be callable, not a bare ``staticmethod`` object, not a generator function.
    """
    if isinstance(fun, staticmethod):
        raise TypeError(f"staticmethod arguments are not supported, got {fun}")
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun}")


def _func_name(fun: Callable) -> str:
    while isinstance(fun, functools.partial):
        fun = fun.func
    return getattr(fun, "__name__", None) or type(fun).__name__


def check_array_arguments(fun: Callable, leaves: Sequence, arg_names, aval_of: Callable) -> None:
    """Raise JAX's TypeError for the first leaf that is no array, naming its path.

    Called once ``aval_of`` has failed on some leaf: a leaf of an unsupported type (a
    string, an arbitrary object) gets the message JAX's jit and make_jaxpr give; a
    numpy array of an unsupported dtype is left to ``aval_of``'s own error.
    """
    names = arg_names or ()
    for i, x in enumerate(leaves):
        if isinstance(x, np.ndarray | np.generic):
            continue
        try:
            aval_of(x)
        except TypeError as err:
            path = names[i] if i < len(names) else f"flat argument {i}"
            raise TypeError(
                f"Error interpreting argument to {fun!r} as an abstract array. The "
                f"problematic value is of type {type(x)} and was passed to the function "
                f"at path {path}.\nThis typically means that a jit-wrapped function was "
                "called with a non-array argument, and this argument was not marked as "
                "static using the static_argnums or static_argnames parameters of jax.jit."
            ) from err


def debug_info(
    fun: Callable,
    args: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
    static_argnums: Sequence[int] = (),
    static_argnames: Sequence[str] = (),
    traced_for: str = "jit",
) -> DebugInfo:
    """Describe ``fun`` called on ``args``: its name, definition site and flat argument names.

    Each flat leaf of the dynamic arguments gets a name such as ``x`` or ``params['w']``.
    """
    from .tree_util import keystr, tree_flatten_with_path

    code = getattr(inspect.unwrap(fun), "__code__", None)
    src = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None
    kwargs = kwargs or {}
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
        named = list(bound.arguments.items())
    except (TypeError, ValueError):
        named = [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
    names = []
    positional = {name: i for i, (name, _) in enumerate(named)}
    for name, value in named:
        if positional[name] in static_argnums or name in static_argnames:
            continue
        for path, _ in tree_flatten_with_path(value)[0]:
            names.append(name + keystr(path))
    return DebugInfo(_func_name(fun), src, tuple(names), traced_for)


class WrappedFun:
    """A function with a stack of transformations, called by ``call_wrapped``."""

    __slots__ = ("f", "transforms", "debug_info", "_key")

    def __init__(self, f: Callable, transforms: tuple = (), debug_info: DebugInfo | None = None):
        self.f = f
        self.transforms = transforms  # innermost first: (transform, params, store|None)
        self.debug_info = debug_info
        self._key = (f, tuple((t, params) for t, params, _ in transforms))

    def wrap(self, transform: Callable, *params) -> WrappedFun:
        """Return a WrappedFun that runs ``transform(call_next, *params, *args)`` outermost."""
        return WrappedFun(self.f, self.transforms + ((transform, params, None),), self.debug_info)

    def wrap_with_store(self, transform: Callable, *params) -> tuple[WrappedFun, Store]:
        """Like ``wrap``, giving the transform a fresh Store as its first parameter."""
        store = Store()
        wrapped = WrappedFun(
            self.f, self.transforms + ((transform, params, store),), self.debug_info
        )
        return wrapped, store

    def stores(self) -> list[Store]:
        """Return the stores of the transformations, innermost first."""
        return [store for _, _, store in self.transforms if store is not None]

    def call_wrapped(self, *args, **kwargs):
        """Call the function through every transformation."""
        call = self.f
        for transform, params, store in self.transforms:
            if store is None:
                call = functools.partial(transform, call, *params)
            else:
                call = functools.partial(transform, call, store, *params)
        return call(*args, **kwargs)

    @property
    def __name__(self) -> str:
        return self.debug_info.func_name if self.debug_info else _func_name(self.f)

    def __eq__(self, other) -> bool:
        return isinstance(other, WrappedFun) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        names = ", ".join(getattr(t, "__name__", repr(t)) for t, _, _ in self.transforms)
        return f"WrappedFun({self.__name__}; transforms: [{names}])"


def wrap_init(f: Callable, debug_info: DebugInfo | None = None) -> WrappedFun:
    """Start a WrappedFun with no transformations (jax's lu.wrap_init)."""
    return WrappedFun(f, (), debug_info)


def _flatten_fun(call, store, in_tree, *args_flat):
    args, kwargs = tree_unflatten(in_tree, args_flat)
    out = call(*args, **kwargs)
    out_flat, out_tree = tree_flatten(out)
    store.store(out_tree)
    return out_flat


def _flatten_fun_nokwargs(call, store, in_tree, *args_flat):
    out = call(*tree_unflatten(in_tree, args_flat))
    out_flat, out_tree = tree_flatten(out)
    store.store(out_tree)
    return out_flat


def flatten_fun(fun: WrappedFun, in_tree) -> tuple[WrappedFun, Store]:
    """Make ``fun`` take flat leaves of ``(args, kwargs)`` and return flat leaves.

    The Store receives the output treedef once the function has run.
    """
    return fun.wrap_with_store(_flatten_fun, in_tree)


def flatten_fun_nokwargs(fun: WrappedFun, in_tree) -> tuple[WrappedFun, Store]:
    """Make ``fun`` take flat leaves of an ``args`` tuple; the Store gets the output treedef."""
    return fun.wrap_with_store(_flatten_fun_nokwargs, in_tree)


_STRONG_LIMIT = 1024


def cache(compute: Callable) -> Callable:
    """Memoize ``compute(fun: WrappedFun, *args)`` on ``fun`` and ``args`` (jax's lu.cache).

    On a hit the stores of ``fun`` are filled with what the first call stored, so
    callers read output trees exactly as after a real call. Entries of a function are
    dropped when the function is garbage collected.
    """
    tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    # Functions that cannot be weakly referenced are held strongly, in a bounded table.
    strong: dict = {}

    @functools.wraps(compute)
    def cached(fun: WrappedFun, *args):
        try:
            table = tables.setdefault(fun.f, {})
        except TypeError:
            if len(strong) >= _STRONG_LIMIT and fun.f not in strong:
                strong.clear()
            table = strong.setdefault(fun.f, {})
        key = (fun._key[1], args, source_info_util.name_stack())
        hit = table.get(key)
        if hit is None:
            result = compute(fun, *args)
            table[key] = hit = (result, [store.val for store in fun.stores()])
        else:
            for store, val in zip(fun.stores(), hit[1], strict=True):
                store.store(val)
        return hit[0]

    def cache_clear() -> None:
        tables.clear()
        strong.clear()

    cached.cache_clear = cache_clear  # type: ignore[attr-defined]  # as functools.cache's
    return cached


def infer_nums_and_names(fun, nums, names) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Complete argnums from argnames and back through ``fun``'s signature, as JAX does."""
    if not nums and not names:
        return nums, names  # nothing to complete: spare a fresh wrapper the signature
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    nums_set = set(nums)
    for name in names:
        if name in positional and positional.index(name) not in nums_set:
            nums_set.add(positional.index(name))
    names_set = list(names)
    for i in nums:
        j = i if i >= 0 else len(positional) + i
        if 0 <= j < len(positional):
            p = params[j]
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in names_set:
                names_set.append(p.name)
    return tuple(sorted(nums_set)), tuple(names_set)


def fun_name(fun) -> str:
    """Return the name a transformation gives ``fun`` (JAX's ``util.fun_name``)."""
    name = getattr(fun, "__name__", None)
    if isinstance(name, str):
        return name
    if isinstance(fun, functools.partial):
        return fun_name(fun.func)
    return "<unnamed function>"


def wraps_transform(fun: Callable, docstr: str | None = None, **fields):
    """Name a transformed function after ``fun`` (JAX's ``util.wraps``).

    ``docstr`` (formatted with ``fun``, the name, and ``fields`` such as
    ``argnums``) becomes the docstring, ``fun``'s own when None; ``__wrapped__``
    is ``fun``. A callable whose attributes cannot be copied (a Module instance
    with odd ``__name__``, say) leaves the wrapper with what was set so far.
    """

    def decorate(wrapper):
        name = fun_name(fun)
        try:
            wrapper.__dict__.update(getattr(fun, "__dict__", {}))
            wrapper.__annotations__ = getattr(fun, "__annotations__", {})
            wrapper.__name__ = name
            wrapper.__module__ = getattr(fun, "__module__", "<unknown module>")
            doc = getattr(fun, "__doc__", "") or ""
            wrapper.__doc__ = doc if docstr is None else docstr.format(fun=name, **fields)
            wrapper.__qualname__ = getattr(fun, "__qualname__", name)
            wrapper.__wrapped__ = fun
        except (AttributeError, TypeError):
            pass
        return wrapper

    return decorate
