"""Wrapped functions (``jax.extend.linear_util``): tracecore's ``WrappedFun``.

``wrap_init(f, params=None, *, debug_info)`` and ``cache`` are tracecore's. A
tracecore WrappedFun layer is JAX's ``transformation2`` layer: a function
``layer(f, *static_args, *args, **kwargs)`` calling the inner function ``f``
(``layer(f, store, *static_args, ...)`` with an auxiliary Store), so
``transformation2`` and ``transformation_with_aux2`` add one directly, and the
older generator-based ``transformation`` and ``transformation_with_aux`` add a layer
that drives the generator (it yields the inner call's arguments, receives its
results, and yields the layer's).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from modjax.tracecore.wrapped_fun import Store, WrappedFun
from modjax.tracecore.wrapped_fun import cache as _cache
from modjax.tracecore.wrapped_fun import wrap_init as _wrap_init

__all__ = [
    "StoreException",
    "WrappedFun",
    "cache",
    "merge_linear_aux",
    "transformation",
    "transformation2",
    "transformation_with_aux",
    "transformation_with_aux2",
    "wrap_init",
]


def wrap_init(f, params=None, *, debug_info=None) -> WrappedFun:
    """Wrap ``f`` (with keyword ``params`` bound) as a WrappedFun (``lu.wrap_init``)."""
    return _wrap_init(functools.partial(f, **params) if params else f, debug_info)


def cache(call, *, explain=None):
    """Memoize ``call(fun, *args)`` on the WrappedFun and the arguments (``lu.cache``).

    ``explain`` (JAX's logger of cache misses) is not supported.
    """
    if explain is not None:
        raise NotImplementedError("linear_util.cache(explain=...)")
    return _cache(call)


class StoreException(Exception):
    """An auxiliary output read before (or written twice) (``lu.StoreException``)."""


class _EqualStore(Store):
    """A Store that takes a second value equal to the first (JAX's ``EqualStore``)."""

    __slots__ = ()

    def store(self, val: Any) -> None:
        if self and self.val == val:
            return
        super().store(val)


def _reader(store: Store) -> Callable[[], Any]:
    def read():
        if not store:
            raise StoreException("the auxiliary output was read before the function ran")
        return store.val

    return read


def _curried(transform: Callable) -> Callable:
    """Let ``transform(gen)`` be given alone first, as JAX's curried decorators are."""

    @functools.wraps(transform)
    def curried(gen, *rest, **kwargs):
        if not rest and not kwargs:
            return functools.partial(transform, gen)
        return transform(gen, *rest, **kwargs)

    return curried


@_curried
def transformation2(gen: Callable, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """Add the layer ``gen(f, *gen_static_args, *args, **kwargs)`` to ``fun`` (``lu``'s)."""
    return fun.wrap(gen, *gen_static_args)


@_curried
def transformation_with_aux2(
    gen: Callable,
    fun: WrappedFun,
    *gen_static_args,
    use_eq_store: bool = False,
    unk_names: bool = False,
) -> tuple[WrappedFun, Callable[[], Any]]:
    """Add the layer ``gen(f, store, *gen_static_args, *args)``; return it and its aux reader.

    ``unk_names`` (JAX's marking of the argument names as unknown in its debug info)
    has nothing to mark here.
    """
    del unk_names
    store = _EqualStore() if use_eq_store else Store()
    wrapped = WrappedFun(fun.f, (*fun.transforms, (gen, gen_static_args, store)), fun.debug_info)
    return wrapped, _reader(store)


# One layer per generator function, so that WrappedFuns made by the same generator
# and static arguments are equal (and share ``cache`` entries).
_GENERATOR_LAYERS: dict[Callable, Callable] = {}
_GENERATOR_AUX_LAYERS: dict[Callable, Callable] = {}


def _generator_layer(gen: Callable) -> Callable:
    layer = _GENERATOR_LAYERS.get(gen)
    if layer is None:

        def layer(f, *args, **kwargs):
            steps = gen(*args, **kwargs)
            inner_args, inner_kwargs = next(steps)
            return steps.send(f(*inner_args, **inner_kwargs))

        layer = _GENERATOR_LAYERS[gen] = functools.wraps(gen)(layer)
    return layer


def _generator_aux_layer(gen: Callable) -> Callable:
    layer = _GENERATOR_AUX_LAYERS.get(gen)
    if layer is None:

        def layer(f, store, *args, **kwargs):
            steps = gen(*args, **kwargs)
            inner_args, inner_kwargs = next(steps)
            out, aux = steps.send(f(*inner_args, **inner_kwargs))
            store.store(aux)
            return out

        layer = _GENERATOR_AUX_LAYERS[gen] = functools.wraps(gen)(layer)
    return layer


@_curried
def transformation(gen: Callable, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """Add a layer run by the generator ``gen(*gen_static_args, *args)`` (``lu.transformation``).

    The generator yields ``(args, kwargs)`` for the inner function, receives its
    results, and yields the layer's results.
    """
    return fun.wrap(_generator_layer(gen), *gen_static_args)


@_curried
def transformation_with_aux(
    gen: Callable, fun: WrappedFun, *gen_static_args
) -> tuple[WrappedFun, Callable[[], Any]]:
    """``transformation`` whose generator yields ``(results, aux)``; return the aux reader too."""
    return transformation_with_aux2(_generator_aux_layer(gen), fun, *gen_static_args)


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """The one of two auxiliary outputs that was written, and whether it was the first.

    ``lu.merge_linear_aux``: raises StoreException when neither or both were written.
    """
    try:
        first = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither auxiliary output was written") from None
    try:
        aux2()
    except StoreException:
        return True, first
    raise StoreException("both auxiliary outputs were written")
