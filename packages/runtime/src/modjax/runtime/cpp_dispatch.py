"""The C++ dispatch fast path: jaxlib's ``PjitFunction``, fed by modjax's Python slow path.

jaxlib ships the fast path JAX uses for ``jax.jit``: a C++ callable that
flattens the arguments (with a C++ pytree registry), computes a signature per
leaf (shape, dtype, weak type, sharding, committed; Python scalars and numpy
arrays included), looks it up and runs the executable, and on a miss calls a
Python ``cache_miss(*args, **kwargs)`` that must return ``(outputs,
fastpath_data or None, False)``. This module is the whole contract with it (its
jaxlib calls are ``_xla``'s):

* the process-wide states the C++ side reads (x64 mode, disable_jit, a post
  hook), mirrored from modjax's config;
* :class:`FastpathData`, the record a cache miss hands back;
* :func:`make_fast_function`, and the pytree registry it flattens with. Pytree
  node types tracecore knows but the C++ registry does not are mirrored into it
  the first time they are met (:func:`mirror_node_types`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from modjax.tracecore import tree_util
from modjax.tracecore.config import config, enable_x64
from modjax.tracecore.core import set_eval_transition_hooks

from . import _xla
from .array import ArrayImpl, _canonical_host_value, copy_to_sharding, put_host_value
from .debugging import flags

__all__ = [
    "available",
    "clear_cache",
    "cpp_dispatch",
    "FastpathData",
    "make_fast_function",
    "registry",
    "flatten_arguments",
    "flatten_outputs",
    "mirror_node_types",
]

available = _xla.cpp_jit_available

cpp_dispatch = config.define_bool_option(
    "cpp_dispatch",
    available,
    env_var="MODJAX_CPP_DISPATCH",
    help="Use jaxlib's C++ PjitFunction for jit's fast path (else a Python one).",
)

#: The pytree registry the C++ side flattens arguments and outputs with.
registry = _xla.pytree_registry()

if available:
    # States the C++ fast path reads on every call; they are part of its cache key.
    _set_x64, _to_python = _xla.install_jit_states(enable_x64.value)
    enable_x64.add_hook(_set_x64)
    _cache = _xla.pjit_cache(8192)
    # A PjitFunction cannot see Python's trace state or debugging checks: while a thread
    # traces, or while a check or disable_jit is on, every PjitFunction calls its Python
    # function (jit's wrapper never calls its own then; a bare one, a library function
    # made a PjitFunction, gets there its Python dispatch).
    set_eval_transition_hooks(lambda: _to_python.swap_local(True), _to_python.swap_local)
    flags.slow_listeners.append(_to_python.set_global)
    _to_python.set_global(flags.slow)


class FastpathData(NamedTuple):
    """What the C++ fast path needs to run an executable without Python.

    ``in_shardings`` and ``in_device_local_layouts`` have one entry per kept
    input, counting ``const_args`` (leading inputs the C++ side prepends) first;
    ``kept_var_bitvec`` has one flag per const arg and flat argument.
    """

    xla_executable: Any
    out_pytree_def: Any
    in_shardings: Sequence[Any]
    out_shardings: Sequence[Any]
    out_avals: Sequence[Any]
    out_committed: Sequence[bool]
    kept_var_bitvec: Sequence[bool]
    in_device_local_layouts: Sequence[Any]
    const_args: Sequence[Any]


class _GlobalKey:
    """The part of the C++ cache key shared by all calls of one jitted function.

    jaxlib's ``PjitFunctionCache`` keys each entry on a weak reference to the
    function plus this object, and drops the entry when the function dies. So
    this key must not reach the function (or anything holding it): a key that
    did would keep every wrapped function and its closure alive for as long as
    the cache keeps its entry. It is a bare identity, one per jitted wrapper.
    """

    __slots__ = ("__weakref__",)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other


def _shard_arg_fallback(x: Any, sharding, layout) -> ArrayImpl:
    """Put ``x`` on ``sharding`` when the C++ side cannot (an Array on another device)."""
    if type(x) is ArrayImpl:
        x._check_if_deleted()
        return copy_to_sharding(x, sharding, x._committed)
    value, aval = _canonical_host_value(x)
    return put_host_value(value, aval, sharding, False)


def make_fast_function(
    name: str,
    fun: Callable,
    cache_miss: Callable,
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
) -> Callable:
    """Return jaxlib's C++ fast-path callable for one jitted function.

    The function's compiled entries live in a bounded process-wide cache that
    holds ``fun`` weakly (as JAX's pjit caches do); they go when ``fun`` dies.
    """
    return _xla.pjit(
        name,
        fun,
        cache_miss,
        static_argnums,
        static_argnames,
        _GlobalKey(),
        registry,
        _shard_arg_fallback,
        _cache,
    )


def clear_cache() -> None:
    """Drop every compiled entry of the C++ fast path (part of ``clear_caches``)."""
    if available:
        _cache.clear()


def flatten_arguments(dyn_args, dyn_kwargs) -> list:
    """Flatten dynamic arguments as the C++ fast path does (kwargs sorted by name)."""
    leaves, _ = registry.flatten((tuple(dyn_args), dict(dyn_kwargs)))
    return leaves


def flatten_outputs(tree) -> tuple[list, Any]:
    """Flatten an output pytree with the C++ registry; return its leaves and treedef."""
    return registry.flatten(tree)


def mirror_node_types(values: Sequence[Any]) -> bool:
    """Register in the C++ registry each node type of tracecore found among ``values``.

    ``values`` are leaves of a C++ flattening; one that tracecore flattens further
    is a custom node (a registered class or dataclass) the C++ side does not know
    yet. Return whether anything was registered.
    """
    added = False
    for value in values:
        node_type = type(value)
        if value is None or registry.is_node(value):
            continue
        _, treedef = tree_util.tree_flatten(value, is_leaf=lambda y, root=value: y is not root)  # type: ignore[misc]
        if treedef.num_nodes == 1:
            continue  # a leaf for tracecore too
        try:
            registry.register_node(node_type, _to_iterable, _from_iterable)
        except ValueError:
            continue  # registered meanwhile
        added = True
    return added


def _to_iterable(node):
    children, treedef = tree_util.tree_flatten(node, is_leaf=lambda y: y is not node)
    return children, treedef


def _from_iterable(treedef, children):
    return treedef.unflatten(list(children))
