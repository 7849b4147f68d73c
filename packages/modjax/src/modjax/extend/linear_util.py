"""Wrapped functions (``jax.extend.linear_util``): tracecore's ``WrappedFun``.

``wrap_init(f, params=None, *, debug_info)`` and ``cache`` are tracecore's;
JAX's generator-based transformations of a WrappedFun have no counterpart
(modjax transforms flat functions directly) and raise NotImplementedError.
"""

from __future__ import annotations

import functools

from modjax.tracecore.wrapped_fun import WrappedFun
from modjax.tracecore.wrapped_fun import cache as _cache
from modjax.tracecore.wrapped_fun import wrap_init as _wrap_init

from .._unsupported import Unsupported

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


_GENERATORS = "JAX's generator-based transformations of a WrappedFun; modjax has none"
StoreException = Unsupported("jax.extend.linear_util.StoreException", _GENERATORS)
merge_linear_aux = Unsupported("jax.extend.linear_util.merge_linear_aux", _GENERATORS)
transformation = Unsupported("jax.extend.linear_util.transformation", _GENERATORS)
transformation2 = Unsupported("jax.extend.linear_util.transformation2", _GENERATORS)
transformation_with_aux = Unsupported("jax.extend.linear_util.transformation_with_aux", _GENERATORS)
transformation_with_aux2 = Unsupported(
    "jax.extend.linear_util.transformation_with_aux2", _GENERATORS
)
