"""Why jit traced or compiled again: the messages of ``explain_cache_misses``.

The wording follows JAX 0.10's ``TRACING CACHE MISS`` log (``jax_explain_cache_misses``):
a never-seen function, or, against the closest key seen before, which argument
changed and how: its pytree structure, a static value, its shape, dtype or weak
type. A trace hit that still compiles (the same types on another device or
sharding) gets a ``COMPILE CACHE MISS`` message naming the placement change.
"""

from __future__ import annotations

import logging
from typing import Any

from modjax.tracecore import dtypes
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.config import config

__all__ = ["explain_trace_miss", "explain_compile_miss"]

logger = logging.getLogger("modjax.runtime.jit")

_WEAK_TYPES_URL = "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"


def _defined_at(fun) -> str:
    code = getattr(fun, "__code__", None)
    if code is None:
        return "<unknown location>"
    return f"{code.co_filename}:{code.co_firstlineno}"


def _type_text(aval, weak: bool) -> str:
    dims = ",".join(str(d) for d in aval.shape)
    text = f"{dtypes.short_dtype_name(aval.dtype)}[{dims}]"
    return f"{text}{{weak_type={aval.weak_type}}}" if weak else text


def _differences(key, old, arg_names) -> list[str]:
    """Describe how trace key ``key`` differs from ``old``: one block per kind of change."""
    tree, avals, statics, donated, context = key
    old_tree, old_avals, old_statics, old_donated, old_context = old
    if tree != old_tree:
        return ["different input pytree:", f"* now {tree} and before {old_tree}"]
    lines = []
    if context != old_context:
        names = config.trace_context_names()
        lines += ["tracing context doesn't match, e.g. due to config or context manager:"]
        lines += [
            f"* {names[i] if i < len(names) else i}: now {now!r} and before {before!r}"
            for i, (now, before) in enumerate(zip(context, old_context, strict=False))
            if now != before or type(now) is not type(before)
        ]
    old_static = {k: v for k, _, v in old_statics}
    changed = []
    for k, _, v in statics:
        before = old_static.get(k, "<absent>")
        if before is not v and (before != v or type(before) is not type(v)):
            where = k if isinstance(k, str) else f"position {k}"
            changed.append(f"* at {where}, now {v!r} and before {before!r}")
    if changed:
        lines += ["different static arguments:", *changed]
    changed = []
    for i, (new, before) in enumerate(zip(avals, old_avals, strict=True)):
        if new == before:
            continue
        name = arg_names[i] if arg_names and i < len(arg_names) else f"flat argument {i}"
        weak = new.weak_type != before.weak_type
        url = _WEAK_TYPES_URL if weak else ""
        changed.append(
            f"* at {name}, now {_type_text(new, weak)} and before {_type_text(before, weak)}{url}"
        )
    if changed:
        lines += ["different input types:", *changed]
    if donated != old_donated:
        lines += ["different donated arguments:", f"* now {donated} and before {old_donated}"]
    return lines


def _closest(key, seen: list) -> Any:
    def distance(old):
        if old[0] != key[0]:
            return 10**6
        changes = sum(
            (a.shape != b.shape) + (a.dtype != b.dtype) + (a.weak_type != b.weak_type)
            for a, b in zip(old[1], key[1], strict=True)
        )
        return changes + (old[2] != key[2]) + (old[3] != key[3])

    return min(seen, key=distance)


def explain_trace_miss(name: str, fun, key, seen: list, arg_names) -> None:
    """Log at WARNING why ``fun`` (jitted as ``name``) is traced for ``key``."""
    where = source_info_util.user_frame()
    head = f"TRACING CACHE MISS at {where}:"
    if not seen:
        logger.warning(
            "%s\n  never seen function:\n    %s id=%d defined at %s",
            head,
            name,
            id(fun),
            _defined_at(fun),
        )
        return
    lines = _differences(key, _closest(key, seen), arg_names) or [
        "the key equals one seen before that was not kept (it closed over tracers)"
    ]
    logger.warning(
        "%s\n  for %s defined at %s\n  all previously seen cache keys differ. For the closest "
        "previous key:\n  %s",
        head,
        name,
        _defined_at(fun),
        "\n  ".join(lines),
    )


def explain_compile_miss(name: str, fun, placement, committed, seen: list) -> None:
    """Log at WARNING why an already traced signature of ``fun`` compiles for a new placement."""
    where = source_info_util.user_frame()
    before = ", ".join(
        f"{old_placement}{' (committed)' if old_committed else ''}"
        for old_placement, old_committed in seen
    )
    now = f"{placement}{' (committed)' if committed else ''}"
    logger.warning(
        "COMPILE CACHE MISS at %s:\n  for %s defined at %s\n  same input types, different "
        "device or sharding:\n  * now %s and before %s",
        where,
        name,
        _defined_at(fun),
        now,
        before,
    )
