"""jit's arguments: leaf avals, static and donated arguments, shardings per leaf.

How one call of a jitted function is taken apart before tracing: static
arguments are separated (they must be hashable), the dynamic ones flattened to
leaves with tracecore's pytrees, each leaf given the aval it is traced with
(numpy arrays canonicalized, Python scalars weakly typed), donated leaves
marked, and jit's ``in_shardings``/``out_shardings`` prefixes spread over the
leaves.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray, ShapeDtypeStruct
from modjax.tracecore.state import Ref as ConcreteRef
from modjax.tracecore.tokens import Token
from modjax.tracecore.tree_util import (
    leaf_stand_ins,
    prefix_errors,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
)
from modjax.tracecore.wrapped_fun import check_array_arguments, debug_info

from .array import ArrayImpl, _canonical_host_value
from .extended import ExtendedArray, committed_key_sharding
from .sharding import Sharding, as_sharding, is_sharding_like

if TYPE_CHECKING:
    from .jit_function import JitFunction


def leaf_aval(x: Any) -> ShapedArray:
    """Return the aval a leaf is traced and compiled with (numpy canonicalized, scalars weak)."""
    if type(x) is ArrayImpl or isinstance(
        x, core.Tracer | ShapeDtypeStruct | ExtendedArray | Token
    ):
        return x.aval
    if type(x) is ConcreteRef:  # a mutable array reference: its aval is a Ref{...}
        return x.aval  # type: ignore[return-value]
    return _canonical_host_value(x)[1]


def _check_hashable(value: Any) -> None:
    """Raise JAX's ValueError (as jaxlib's jit words it) when the static ``value`` is unhashable."""
    try:
        hash(value)
    except TypeError as err:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(value)}, {value!r}. The error was:\n"
            f"{type(err).__name__}: {err}\n"
        ) from None


def normalize_indices(value, what: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, int):
        return (value,)
    try:
        out = tuple(value)
    except TypeError:
        raise TypeError(f"{what} must be an int or a sequence of ints, got {value!r}") from None
    if not all(isinstance(i, int) for i in out):
        raise TypeError(f"{what} must be an int or a sequence of ints, got {value!r}")
    return out


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None  # a builtin without one: nothing to check against, as JAX


def validate_argnums(fun, nums: tuple[int, ...], what: str) -> None:
    """Raise JAX's ValueError when ``nums`` point past ``fun``'s positional parameters."""
    sig = _signature(fun)
    if not nums or sig is None:
        return
    kinds = [p.kind for p in sig.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    n = sum(k in positional for k in kinds)
    if max(nums) >= n or -min(nums) > n:
        raise ValueError(
            f"Jitted function has {what}={nums}, but only accepts {n} positional arguments."
        )


def validate_argnames(fun, names: tuple[str, ...], what: str) -> None:
    """Raise JAX's ValueError for ``names`` that ``fun`` cannot take as keywords."""
    sig = _signature(fun)
    if not names or sig is None:
        return
    params = sig.parameters.values()
    positional_only = {p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)}
    if bad := positional_only & set(names):
        raise ValueError(
            f"Jitted function has invalid argnames {bad} in {what}. These are positional-only"
        )
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    keywords = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if bad := set(names) - keywords:
        raise ValueError(
            f"Jitted function has invalid argnames {bad} in {what}. "
            "Function does not take these args."
        )


def normalize_names(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    out = tuple(value)
    if not all(isinstance(n, str) for n in out):
        raise TypeError(f"{what} must be a str or a sequence of str, got {value!r}")
    return out


def split_statics(fn: JitFunction, args: tuple, kwargs: dict):
    """Return ``(statics, dyn_args, dyn_kwargs, static_positions)`` of one call.

    ``statics`` is a tuple of ``(position or name, type, value)``; each value must
    be hashable (ValueError naming the argument otherwise).
    """
    nargs = len(args)
    positions = {i if i >= 0 else i + nargs for i in fn.static_argnums}
    statics: list = []
    for i in sorted(positions):
        if 0 <= i < nargs:
            _check_hashable(args[i])
            statics.append((i, type(args[i]), args[i]))
    dyn_args = tuple(a for i, a in enumerate(args) if i not in positions)
    dyn_kwargs = {}
    for k, v in kwargs.items():
        if k in fn.static_argnames:
            _check_hashable(v)
            statics.append((k, type(v), v))
        else:
            dyn_kwargs[k] = v
    return tuple(statics), dyn_args, dyn_kwargs, positions


class CallArgs:
    """One call's arguments, split and flattened (the slow path's working set)."""

    __slots__ = (
        "args",
        "kwargs",
        "dyn_args",
        "dyn_kwargs",
        "statics",
        "leaves",
        "in_tree",
        "donated",
    )

    def __init__(self, fn: JitFunction, args: tuple, kwargs: dict):
        self.args = args
        self.kwargs = kwargs
        if fn.static_argnums or fn.static_argnames:
            self.statics, self.dyn_args, self.dyn_kwargs, positions = split_statics(
                fn, args, kwargs
            )
        else:
            self.statics, self.dyn_args, self.dyn_kwargs, positions = (), args, kwargs, ()
        self.leaves, self.in_tree = tree_flatten((self.dyn_args, self.dyn_kwargs))
        if fn.donate_argnums or fn.donate_argnames:
            # Mark every leaf of a donated argument, in the order tree_flatten visits them.
            nargs = len(args)
            nums = {i if i >= 0 else i + nargs for i in fn.donate_argnums}
            dyn_positions = [i for i in range(nargs) if i not in positions]
            marks = (
                tuple(
                    tree_map(lambda _, d=(i in nums): d, a)
                    for i, a in zip(dyn_positions, self.dyn_args, strict=True)
                ),
                {
                    k: tree_map(lambda _, d=(k in fn.donate_argnames): d, v)
                    for k, v in self.dyn_kwargs.items()
                },
            )
            self.donated = tuple(tree_flatten(marks)[0])
        else:
            self.donated = (False,) * len(self.leaves)

    def avals(self, fun: Callable) -> tuple[ShapedArray, ...]:
        """Return each leaf's aval; a leaf that is no array raises JAX's TypeError naming it."""
        try:
            return tuple(leaf_aval(x) for x in self.leaves)
        except TypeError:
            static_pos = tuple(k for k, _, _ in self.statics if isinstance(k, int))
            static_names = tuple(k for k, _, _ in self.statics if isinstance(k, str))
            info = debug_info(fun, self.args, self.kwargs, static_pos, static_names)
            check_array_arguments(fun, self.leaves, info.arg_names, leaf_aval)
            raise

    def bound_function(self, fun: Callable) -> Callable:
        """Return ``fun`` with the static arguments filled in, taking the dynamic ones."""
        if not self.statics:
            return fun
        positional = {k: v for k, _, v in self.statics if isinstance(k, int)}
        named = {k: v for k, _, v in self.statics if isinstance(k, str)}
        nargs = len(self.args)

        def bound(*dyn_args, **dyn_kwargs):
            it = iter(dyn_args)
            full = [positional[i] if i in positional else next(it) for i in range(nargs)]
            return fun(*full, **dyn_kwargs, **named)

        return bound


def committed_of(x) -> Sharding | None:
    """The sharding a leaf insists on: a committed Array's, or a ShapeDtypeStruct's."""
    if type(x) is ArrayImpl:
        return x._sharding if x._committed else None
    if isinstance(x, ShapeDtypeStruct):
        return x.sharding if isinstance(x.sharding, Sharding) else None
    if isinstance(x, ExtendedArray):
        return committed_key_sharding(x)
    return None


_is_sharding_leaf = is_sharding_like


def broadcast_shardings(prefix, full, what: str) -> list:
    """Return one sharding (or None) per leaf of ``full``, from the pytree prefix ``prefix``."""
    if _is_sharding_leaf(prefix):
        return [as_sharding(prefix, what)] * len(tree_leaves(full))
    treedef = tree_structure(prefix, is_leaf=_is_sharding_leaf)
    try:
        subtrees = treedef.flatten_up_to(full)
    except ValueError:
        raise _shardings_prefix_error(prefix, full, what) from None
    prefix_leaves = tree_leaves(prefix, is_leaf=_is_sharding_leaf)
    out = []
    for s, sub in zip(prefix_leaves, subtrees, strict=True):
        if not _is_sharding_leaf(s):
            raise TypeError(f"jit {what}: expected Shardings or None, got {s!r}")
        out.extend([as_sharding(s, what)] * len(tree_leaves(sub)))
    return out


def _is_prefix(prefix, full) -> bool:
    try:
        tree_structure(prefix, is_leaf=_is_sharding_leaf).flatten_up_to(full)
    except ValueError:
        return False
    return True


def _shardings_prefix_error(prefix, full, what: str) -> ValueError:
    """JAX's error for jit shardings that are not a pytree prefix of the arguments or outputs."""
    name = f"pjit {what}"
    if what == "in_shardings" and (type(prefix) is not tuple or len(prefix) != len(full)):
        # in_shardings stand for the tuple of positional arguments.
        msg = (
            f"{name} specification must be a tree prefix of the positional arguments tuple. "
            f"In particular, {name} must either be a Sharding, a PartitionSpec, or a tuple of "
            "length equal to the number of positional arguments."
        )
        if type(prefix) is not tuple:
            msg += f" But {name} is not a tuple: got {type(prefix)} instead."
        else:
            msg += (
                f" But {name} is the wrong length: got a tuple or list of length "
                f"{len(prefix)} for an args tuple of length {len(full)}."
            )
        if len(full) == 1 and _is_prefix((prefix,), full):
            msg += (
                " Given the corresponding argument being passed, it looks like "
                f"{name} might need to be wrapped in a singleton tuple."
            )
        return ValueError(msg)
    errors = prefix_errors(prefix, leaf_stand_ins(full), _is_sharding_leaf)
    details = "\n".join(str(e(name)) for e in errors)
    return ValueError(f"Mismatch details ({len(errors)} found):\n{details}")


def flat_shardings(in_shardings, call: CallArgs, what: str) -> list | None:
    """Return jit's ``in_shardings`` per flat argument leaf (keyword arguments: unspecified)."""
    if in_shardings is None:
        return None
    if _is_sharding_leaf(in_shardings):
        return [as_sharding(in_shardings, what)] * len(call.leaves)
    prefix = tuple(in_shardings) if isinstance(in_shardings, list) else in_shardings
    positional = broadcast_shardings(prefix, tuple(call.dyn_args), what)
    return positional + [None] * (len(call.leaves) - len(positional))
