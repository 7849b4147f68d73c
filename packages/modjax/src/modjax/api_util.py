"""Helpers that JAX's transformations share, in JAX's names (jax.api_util).

For code that builds its own transformation on modjax's ``WrappedFun``
(``modjax.tracecore.wrap_init``): flattening a function's arguments and results
(``flatten_fun``, ``flatten_fun_nokwargs``, whose second result is called to get the
output tree), fixing static arguments (``argnums_partial``), axis specs per leaf
(``flatten_axes``), donation flags per leaf (``donation_vector``,
``rebase_donate_argnums``), and the abstract value of an argument
(``shaped_abstractify``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from modjax.batching.api import _flatten_axes
from modjax.tracecore import DebugInfo, WrappedFun, tree_flatten, tree_unflatten
from modjax.tracecore.core import to_aval
from modjax.tracecore.wrapped_fun import debug_info as _debug_info
from modjax.tracecore.wrapped_fun import flatten_fun as _flatten_fun
from modjax.tracecore.wrapped_fun import flatten_fun_nokwargs as _flatten_fun_nokwargs

__all__ = [
    "argnums_partial",
    "debug_info",
    "donation_vector",
    "flatten_axes",
    "flatten_fun",
    "flatten_fun_nokwargs",
    "rebase_donate_argnums",
    "safe_map",
    "shaped_abstractify",
]


def safe_map(f: Callable, *args) -> list:
    """Map ``f`` over sequences of equal length; return a list (jax.api_util.safe_map).

    Raise ValueError naming the shorter or longer argument otherwise.
    """
    lists = [list(a) for a in args]
    n = len(lists[0])
    for i, a in enumerate(lists[1:], start=2):
        if len(a) != n:
            side = "shorter" if len(a) < n else "longer"
            raise ValueError(f"safe_map() argument {i} is {side} than argument 1")
    return list(map(f, *lists))


def shaped_abstractify(x) -> Any:
    """Return the abstract value (``ShapedArray``) of an array, scalar or tracer (api_util name).

    Python scalars give weakly typed avals; TypeError for a value that is not an array.
    """
    return to_aval(x)


class _OutTree:
    """The output tree of a flattened function, as JAX's thunk: call it after the function ran."""

    __slots__ = ("_store",)

    def __init__(self, store):
        self._store = store

    def __call__(self):
        return self._store.val


def flatten_fun(f: WrappedFun, in_tree) -> tuple[WrappedFun, Callable[[], Any]]:
    """Make ``f`` take the leaves of ``(args, kwargs)`` (tree ``in_tree``) and return leaves.

    The counterpart of jax.api_util.flatten_fun: returns the new function and a thunk
    giving the output tree once it has run.
    """
    fun, store = _flatten_fun(f, in_tree)
    return fun, _OutTree(store)


def flatten_fun_nokwargs(f: WrappedFun, in_tree) -> tuple[WrappedFun, Callable[[], Any]]:
    """Like :func:`flatten_fun` for a tree of the positional arguments only (api_util name)."""
    fun, store = _flatten_fun_nokwargs(f, in_tree)
    return fun, _OutTree(store)


def argnums_partial(
    f: WrappedFun, dyn_argnums: int | Sequence[int], args: Sequence,
    require_static_args_hashable: bool = True,
) -> tuple[WrappedFun, tuple]:  # fmt: skip
    """Fix the arguments not in ``dyn_argnums`` to their values in ``args`` (api_util name).

    Return a function of the dynamic arguments only and those arguments. A static
    argument must be hashable when ``require_static_args_hashable``.
    """
    dyn = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    dyn = tuple(d % len(args) for d in dyn)
    fixed = tuple((i, a) for i, a in enumerate(args) if i not in dyn)
    if require_static_args_hashable:
        for _, a in fixed:
            try:
                hash(a)
            except TypeError as err:
                raise ValueError(
                    f"Non-hashable static arguments are not supported. An error occurred while "
                    f"trying to hash an object of type {type(a)}, {a}. The error was:\n{err}\n"
                ) from err

    # Hashable statics are part of the function's identity (caches key on it).
    key = fixed if require_static_args_hashable else tuple((i, id(a)) for i, a in fixed)
    fun = f.wrap(_StaticArgs(dict(fixed), key), len(args))
    return fun, tuple(args[i] for i in dyn)


class _StaticArgs:
    """The transform merging static arguments back; they are part of its identity for caches."""

    __slots__ = ("fixed", "key")

    def __init__(self, fixed: dict, key):
        self.fixed = fixed
        self.key = key

    def __call__(self, call, n, *dyn_args):
        it = iter(dyn_args)
        return call(*[self.fixed[i] if i in self.fixed else next(it) for i in range(n)])

    def __eq__(self, other):
        return type(other) is _StaticArgs and self.key == other.key

    def __hash__(self):
        return hash(self.key)


def flatten_axes(name: str, treedef, axis_tree, *, kws: bool = False, tupled_args: bool = False):
    """Return one axis per leaf of ``treedef``, broadcasting the prefix tree ``axis_tree``.

    The counterpart of jax.api_util.flatten_axes (``None`` in ``axis_tree`` is a leaf).
    Raise ValueError naming ``name`` when ``axis_tree`` is not a prefix.
    """
    leaves = [object() for _ in range(treedef.num_leaves)]
    return _flatten_axes(name, tree_unflatten(treedef, leaves), axis_tree)


def donation_vector(donate_argnums, donate_argnames, in_tree, kws: bool = True) -> tuple[bool, ...]:
    """Return, per leaf of ``in_tree``, whether its argument is donated (api_util name).

    ``in_tree`` is the tree of ``(args, kwargs)`` (of ``args`` alone when not
    ``kws``); an argument is donated when its position is in ``donate_argnums`` or
    its keyword in ``donate_argnames``.
    """
    placeholder = tree_unflatten(in_tree, [None] * in_tree.num_leaves)
    args, kwargs = placeholder if kws else (placeholder, {})
    flags: list[bool] = []
    for i, arg in enumerate(args):
        flags += [i in donate_argnums] * len(tree_flatten(arg, is_leaf=lambda x: x is None)[0])
    for name, value in kwargs.items():
        flags += [name in donate_argnames] * len(
            tree_flatten(value, is_leaf=lambda x: x is None)[0]
        )
    return tuple(flags)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple[int, ...]:
    """Renumber ``donate_argnums`` as positions among the non-static arguments (api_util name)."""
    statics = sorted(set(static_argnums))
    out = []
    for d in sorted(set(donate_argnums)):
        if d in statics:
            continue
        out.append(d - sum(s < d for s in statics))
    return tuple(out)


def debug_info(
    traced_for: str, fun: Callable, args: Sequence, kwargs: dict, *,
    static_argnums: Sequence[int] = (), static_argnames: Sequence[str] = (), **options: Any,
) -> DebugInfo:  # fmt: skip
    """Return what errors and printed jaxprs say about ``fun`` called on ``args`` (api_util name).

    ``traced_for`` (``"jit"``, ``"vmap"``, ...) is accepted for JAX's signature.
    """
    return _debug_info(
        fun, args, kwargs, static_argnums=static_argnums, static_argnames=static_argnames
    )
