"""Finding leaked tracers: ``check_tracer_leaks`` (``jax_check_tracer_leaks``, ``checking_leaks``).

When a transformation finishes, its tracers should be unreachable. With the
option on, each transformation calls :func:`check_leaks` on its trace after its
own references are gone: any tracer of that trace still alive was stored
somewhere it escapes to (a global, a closure, an object); the error names it,
where it was computed and what holds it (JAX raises a plain ``Exception``
starting "Leaked trace").
"""

from __future__ import annotations

import gc
import sys
import types

from .config import config
from .core import Trace, Tracer

__all__ = ["check_tracer_leaks", "checking_leaks", "check_leaks"]

check_tracer_leaks = config.define_bool_option(
    "check_tracer_leaks",
    False,
    env_var="MODJAX_CHECK_TRACER_LEAKS",
    help="Raise when a transformation finishes while one of its tracers is still referenced.",
)


def checking_leaks():
    """Check for leaked tracers inside this block (``jax.checking_leaks``)."""
    return check_tracer_leaks(True)


def _describe_holder(holder, held) -> str | None:
    """Say how ``holder`` refers to ``held`` (``<list>[0]``, ``module.name``), or None."""
    if isinstance(holder, types.FrameType):
        return None  # a running function's local: not a leak by itself
    if isinstance(holder, dict):
        for module in list(sys.modules.values()):
            if getattr(module, "__dict__", None) is holder:
                for key, value in holder.items():  # type: ignore[union-attr]  # holder is a dict
                    if value is held:
                        return f"{module.__name__}.{key}"
        for key, value in holder.items():
            if value is held:
                return f"<dict {id(holder)}>[{key!r}]"
        return f"<dict {id(holder)}>"
    if isinstance(holder, list | tuple):
        for i, value in enumerate(holder):
            if value is held:
                return f"<{type(holder).__name__} {id(holder)}>[{i}]"
    if isinstance(holder, types.CellType):
        return f"<closure cell {id(holder)}>"
    return f"<{type(holder).__name__} {id(holder)}>"


def _referrer_chain(obj, ignore: set[int], depth: int = 4) -> list[str]:
    """Follow the first non-frame referrer of ``obj`` up to ``depth`` links (for the message)."""
    lines = []
    current = obj
    for _ in range(depth):
        found = None
        for holder in gc.get_referrers(current):
            if id(holder) in ignore:
                continue
            text = _describe_holder(holder, current)
            if text is not None:
                found = (holder, text)
                break
        if found is None:
            break
        holder, text = found
        name = f"<{type(current).__name__} {id(current)}>"
        lines.append(f"{name} is referred to by {text}")
        if "." in text and not text.startswith("<"):
            break  # reached a module global
        ignore.add(id(holder))
        current = holder
    return lines


def check_leaks(trace: Trace) -> None:
    """Raise an Exception naming every tracer of the finished ``trace`` still referenced."""
    gc.collect()
    leaked = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer) and r._trace is trace]
    if not leaked:
        return
    ignore = {id(leaked)}
    blocks = []
    for tracer in leaked:
        chain = _referrer_chain(tracer, set(ignore))
        if not chain:
            continue  # only referenced by frames still running: not escaped
        blocks.append("\n".join([repr(tracer) + tracer._origin(), *chain]))
    if blocks:
        raise Exception(  # noqa: TRY002 - JAX raises a plain Exception here
            f"Leaked trace {type(trace).__name__}. Leaked tracer(s):\n\n" + "\n\n".join(blocks)
        )
