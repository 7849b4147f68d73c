"""Source locations of equations (``jax.extend.source_info_util``).

``SourceInfo``, ``current()``, ``register_exclusion(path)`` and
``user_context(traceback)`` are tracecore's; JAX's name-stack helpers are not
provided (tracecore keeps a name stack of its own, through ``transform_name``).
"""

from __future__ import annotations

from modjax.tracecore.source_info import SourceInfo, current, register_exclusion, user_context

from .._unsupported import Unsupported

__all__ = [
    "NameStack",
    "SourceInfo",
    "current",
    "current_name_stack",
    "extend_name_stack",
    "new_name_stack",
    "new_source_info",
    "register_exclusion",
    "reset_name_stack",
    "set_name_stack",
    "summarize",
    "transform_name_stack",
    "user_context",
]

_NAMES = "JAX's NameStack objects; tracecore's name stack is a tuple set by transform_name"
NameStack = Unsupported("jax.extend.source_info_util.NameStack", _NAMES)
current_name_stack = Unsupported("jax.extend.source_info_util.current_name_stack", _NAMES)
extend_name_stack = Unsupported("jax.extend.source_info_util.extend_name_stack", _NAMES)
new_name_stack = Unsupported("jax.extend.source_info_util.new_name_stack", _NAMES)
reset_name_stack = Unsupported("jax.extend.source_info_util.reset_name_stack", _NAMES)
set_name_stack = Unsupported("jax.extend.source_info_util.set_name_stack", _NAMES)
transform_name_stack = Unsupported("jax.extend.source_info_util.transform_name_stack", _NAMES)
new_source_info = Unsupported(
    "jax.extend.source_info_util.new_source_info", "use SourceInfo(...) or current()"
)
summarize = Unsupported(
    "jax.extend.source_info_util.summarize", "a SourceInfo prints its user frame itself"
)
