"""Memo tables of programs derived from jaxprs: JVPs, partial-evaluation splits, transposes.

A transformation that turns the program of a call into another program (its
JVP, its split into a known and an unknown call, its transpose, its batched
version) is a pure function of that jaxpr object and a little static
information (which inputs have tangents, are known, are linear; batch dims and
axis). ``JaxprCache`` derives each once: the table holds the jaxpr weakly, so
an entry lives exactly as long as its program. Deriving once also keeps the
identity of the derived programs stable, which the caches downstream key on
(the eager executables of jit's primitive, say).

Derived equations record the transform name stack in force while they are
traced, so that stack is part of every key. Every table is emptied when
``enable_x64`` changes, since derived programs hold the dtypes of their mode.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any

from . import source_info as source_info_util
from .config import enable_x64
from .core import Tracer

__all__ = ["JaxprCache", "clear_jaxpr_caches", "has_tracers"]


class JaxprCache:
    """Values derived from a jaxpr (or ClosedJaxpr), memoized per object and key.

    Counterpart of jax's ``weakref_lru_cache`` on jaxprs. ``hits`` and ``misses``
    count lookups, for tests and benchmarks.
    """

    __slots__ = ("name", "tables", "hits", "misses", "__weakref__")

    def __init__(self, name: str):
        self.name = name
        self.tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.hits = 0
        self.misses = 0
        _all_caches.add(self)

    def get(
        self,
        jaxpr: Any,
        key: Hashable,
        compute: Callable[[], Any],
        cacheable: Callable[[Any], bool] | None = None,
    ) -> Any:
        """Return ``compute()``, derived once per (``jaxpr`` object, ``key``, name stack).

        ``cacheable(value)`` may refuse to keep a value (one that closes over
        tracers of a trace that will end, say); it is then derived again next time.
        """
        table = self.tables.get(jaxpr)
        if table is None:
            table = self.tables[jaxpr] = {}
        full_key = (key, source_info_util.name_stack())
        value = table.get(full_key, _MISSING)
        if value is not _MISSING:
            self.hits += 1
            return value
        self.misses += 1
        value = compute()
        if cacheable is None or cacheable(value):
            table[full_key] = value
        return value

    def clear(self) -> None:
        """Forget every derived value."""
        self.tables.clear()

    def __repr__(self) -> str:
        return f"JaxprCache({self.name!r}, hits={self.hits}, misses={self.misses})"


_MISSING = object()
_all_caches: weakref.WeakSet = weakref.WeakSet()


def has_tracers(values) -> bool:
    """Tell whether ``values`` (consts of a derived program) hold tracers, never to be cached."""
    return any(isinstance(v, Tracer) for v in values)


def clear_jaxpr_caches() -> None:
    """Empty every JaxprCache (part of ``clear_caches`` in the packages above)."""
    for cache in list(_all_caches):
        cache.clear()


enable_x64.add_hook(lambda _value: clear_jaxpr_caches())
