"""Where an equation came from: the user's frame and the stack of transform names.

Recording happens once per traced equation, so it must be cheap: we keep the
thread's state in one ``threading.local`` and walk frames with ``sys._getframe``,
remembering per code object whether it belongs to modjax.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Any, NamedTuple

__all__ = [
    "Frame",
    "NameStack",
    "Transform",
    "SourceInfo",
    "current",
    "user_frame",
    "user_stacklevel",
    "register_exclusion",
    "transform_name",
    "scope_name",
    "name_stack",
    "user_context",
    "compute_type",
    "current_xla_metadata",
    "xla_metadata",
]


class Frame(NamedTuple):
    """One user-code location: file, line and enclosing function."""

    file_name: str
    line: int
    function_name: str

    def __str__(self) -> str:
        return f"{self.file_name}:{self.line} ({self.function_name})"


class Transform(str):
    """A transformation's entry in a name stack (``jvp``, ``vmap``, ``transpose``)."""

    __slots__ = ()


class NameStack(tuple):
    """The scopes and transformations an equation was traced under, outermost first.

    A tuple that prints as JAX's name stack does, which libraries split on ``/``
    (haiku's jaxpr_info): scopes joined by ``/``, each transformation wrapping the
    scope after it (``jvp(model)/layer``, ``transpose(jvp())``); empty: ``""``.
    """

    __slots__ = ()

    def __str__(self) -> str:
        parts: list[str] = []  # innermost first
        for entry in reversed(self):
            if type(entry) is not Transform:
                parts.append(str(entry))
            elif parts:
                parts[-1] = f"{entry}({parts[-1]})"
            else:
                parts.append(f"{entry}()")
        return "/".join(reversed(parts))


_NO_NAMES = NameStack()


class SourceInfo(NamedTuple):
    """An equation's provenance: the innermost user frame and the transform name stack.

    ``compute_type`` is the ``compute_on`` block the equation was traced in
    (``"device_host"``, ...), or None (JAX keeps it in the equation's context);
    ``xla_metadata`` the ``(name, value)`` pairs of the ``set_xla_metadata`` blocks
    around it (sorted), which lowering adds to its ops' frontend attributes.
    """

    frame: Frame | None
    name_stack: tuple[str, ...] = _NO_NAMES
    compute_type: str | None = None
    xla_metadata: tuple[tuple[str, Any], ...] | None = None

    def __str__(self) -> str:
        where = str(self.frame) if self.frame is not None else "<unknown>"
        return f"{where} [{'/'.join(self.name_stack)}]" if self.name_stack else where


class _State(threading.local):
    def __init__(self):
        self.name_stack: tuple[str, ...] = _NO_NAMES
        self.override: SourceInfo | None = None
        self.compute_type: str | None = None
        self.xla_metadata: tuple[tuple[str, Any], ...] | None = None


_state = _State()
_MODJAX_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_excluded_prefixes: list[str] = [_MODJAX_ROOT + os.sep]
# Caches, per code object, whether its frames are modjax's own (skipped).
_excluded_code: dict[object, bool] = {}
_known_excluded: set[object] = set()  # the code objects _excluded_code maps to True


def register_exclusion(path: str) -> None:
    """Skip frames whose file lies under ``path`` (jax's source_info_util.register_exclusion).

    Each modjax distribution installs its sources in its own ``modjax/`` folder; packages
    above tracecore call this with theirs so their frames never count as user code.
    """
    prefix = os.path.abspath(path).rstrip(os.sep) + os.sep
    if prefix not in _excluded_prefixes:
        _excluded_prefixes.append(prefix)
        _excluded_code.clear()
        _known_excluded.clear()


def _is_excluded(code) -> bool:
    excluded = _excluded_code.get(code)
    if excluded is None:
        name = code.co_filename
        excluded = name.startswith((*_excluded_prefixes, "<frozen "))
        _excluded_code[code] = excluded
        if excluded:
            _known_excluded.add(code)
    return excluded


def user_frame() -> Frame | None:
    """Return the innermost frame on the stack that is not modjax's own code."""
    frame: FrameType | None = sys._getframe(1)
    # This loop runs over every modjax frame of every bind: known frames cost one set lookup.
    known = _known_excluded
    while frame is not None:
        code = frame.f_code
        if code not in known and not _is_excluded(code):
            return Frame(code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


def user_stacklevel() -> int:
    """Return the ``stacklevel`` that makes the caller's ``warnings.warn`` name the user's line.

    The counterpart of the fixed stack levels JAX passes: it skips every modjax
    frame, however deep the call that warns.
    """
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and _is_excluded(frame.f_code):
        frame = frame.f_back
        level += 1
    return level


def current() -> SourceInfo:
    """Return the SourceInfo to record for an equation traced now."""
    state = _state
    override = state.override
    if override is not None:
        # As JAX's: the names in force now, then the equation's own (a transposed
        # equation of jvp(f) is named transpose(jvp(f))).
        stack = (
            NameStack(state.name_stack + override.name_stack)
            if state.name_stack
            else override.name_stack
        )
        return SourceInfo(
            override.frame,
            stack,
            state.compute_type or override.compute_type,
            state.xla_metadata or override.xla_metadata,
        )
    return SourceInfo(user_frame(), state.name_stack, state.compute_type, state.xla_metadata)


def name_stack() -> tuple[str, ...]:
    """Return the current stack of transform names (outermost first)."""
    return _state.name_stack


@contextmanager
def transform_name(name: str):
    """Push the transformation ``name`` on the name stack while tracing under it (``"jvp"``)."""
    with _pushed(Transform(name)):
        yield


@contextmanager
def scope_name(name: str):
    """Push the scope ``name`` on the name stack (``jax.named_scope``, ``jax.named_call``)."""
    with _pushed(name):
        yield


@contextmanager
def _pushed(entry: str):
    state = _state
    saved = state.name_stack
    state.name_stack = NameStack((*saved, entry))
    try:
        yield
    finally:
        state.name_stack = saved


@contextmanager
def compute_type(name: str | None):
    """Record ``name`` as the compute type of equations traced in this block (``compute_on``)."""
    state = _state
    saved = state.compute_type
    state.compute_type = name
    try:
        yield
    finally:
        state.compute_type = saved


def current_xla_metadata() -> tuple[tuple[str, Any], ...] | None:
    """Return the ``set_xla_metadata`` pairs in force, or None."""
    return _state.xla_metadata


@contextmanager
def xla_metadata(pairs: tuple[tuple[str, Any], ...] | None):
    """Record ``pairs`` as the XLA metadata of equations traced in this block."""
    state = _state
    saved = state.xla_metadata
    state.xla_metadata = pairs
    try:
        yield
    finally:
        state.xla_metadata = saved


@contextmanager
def user_context(info: SourceInfo | None):
    """Record ``info`` as the provenance of equations traced inside this block.

    Interpreters that re-trace an existing jaxpr use this so that derived equations
    keep pointing at the user's original line instead of at the interpreter. The name
    stack in force when an equation is traced is appended to the recorded one.
    """
    state = _state
    saved = state.override
    state.override = info
    try:
        yield
    finally:
        state.override = saved
