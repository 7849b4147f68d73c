"""Tracebacks of user-facing errors without modjax's own frames (``jax_traceback_filtering``).

An error raised deep inside a transformation unwinds through dozens of modjax
frames (the jit wrapper, tracing, the transformation stack, the primitive
library) between the user's call and the user's function. An *API boundary*
(the function ``jit`` returns, ``grad``'s, ``vmap``'s, ``make_jaxpr``'s,
``Primitive.bind``) catches the exception on its way out and, as JAX's
``traceback_util.api_boundary`` does, keeps only the frames that are not
modjax's, according to the option ``traceback_filtering``:

* ``"auto"`` (default): ``"tracebackhide"`` under IPython, else
  ``"quiet_remove_frames"``;
* ``"quiet_remove_frames"``: drop modjax's frames and add a note saying so;
* ``"remove_frames"``: drop them, and chain an :class:`UnfilteredStackTrace`
  holding the whole traceback as the exception's ``__cause__``;
* ``"tracebackhide"``: keep every frame, marking modjax's with
  ``__tracebackhide__`` (which IPython and pytest hide);
* ``"off"``: leave the traceback alone.

Only the outermost boundary on the stack filters (an inner one sees an outer
one above it and lets the exception pass), so a nested ``jit(grad(f))`` is
filtered once. Boundaries cost nothing until an exception passes: the check is
a ``try`` block.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
import types
from collections.abc import Callable
from typing import TypeVar

from .config import config

__all__ = [
    "UnfilteredStackTrace",
    "api_boundary",
    "filter_traceback",
    "filter_exception",
    "register_boundary",
    "register_exclusion",
    "traceback_filtering",
]

C = TypeVar("C", bound=Callable)

traceback_filtering = config.define_enum_option(
    "traceback_filtering",
    "auto",
    ("auto", "off", "tracebackhide", "remove_frames", "quiet_remove_frames"),
    env_var="MODJAX_TRACEBACK_FILTERING",
    help="How modjax's own frames are removed from tracebacks of user-facing errors.",
)

_SIMPLIFIED_NOTE = (
    "--------------------\n"
    "For simplicity, modjax has removed its internal frames from the traceback of this "
    "exception. Set MODJAX_TRACEBACK_FILTERING=off (or "
    "config.update('jax_traceback_filtering', 'off')) to include these."
)
_UNFILTERED_NOTE = (
    "The stack trace below includes modjax-internal frames.\n"
    "The preceding is the original exception that occurred, unmodified.\n"
    "\n--------------------"
)


class UnfilteredStackTrace(Exception):
    """The whole traceback of an error whose own traceback was filtered (``remove_frames``)."""


# Folders whose frames are modjax's. Every modjax distribution installs into a
# ``modjax/`` folder of its own (editable) or a shared one (wheels): the
# namespace package's path lists them all, read when a filter first runs.
_exclusions: list[str] = []
_excluded_code: dict[types.CodeType, bool] = {}
# Code objects of boundary frames: a boundary below another lets errors pass.
_boundary_codes: set[types.CodeType] = set()


def register_exclusion(path: str) -> None:
    """Treat frames of files under ``path`` as modjax's own (JAX's function of that name)."""
    prefix = os.path.abspath(path).rstrip(os.sep) + os.sep
    if prefix not in _exclusions:
        _exclusions.append(prefix)
        _excluded_code.clear()


def register_boundary(code: types.CodeType) -> None:
    """Mark frames running ``code`` as API boundaries (for those that filter inline)."""
    _boundary_codes.add(code)


def _namespace_paths() -> None:
    package = sys.modules.get("modjax")
    for path in list(getattr(package, "__path__", ())):
        register_exclusion(path)


def _is_modjax_code(code: types.CodeType) -> bool:
    excluded = _excluded_code.get(code)
    if excluded is None:
        excluded = _excluded_code[code] = code.co_filename.startswith(tuple(_exclusions))
    return excluded


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """Return a traceback of ``tb``'s frames that are not modjax's, in the same order."""
    _namespace_paths()
    out = None
    for frame, lineno in reversed(list(traceback.walk_tb(tb))):
        if not _is_modjax_code(frame.f_code):
            out = types.TracebackType(out, frame, frame.f_lasti, lineno)
    return out


def _with_callers(tb: types.TracebackType) -> types.TracebackType:
    """Prepend the frames above the boundary (up to module level) to a full traceback."""
    out = tb
    reached_module = False
    for frame, lineno in traceback.walk_stack(tb.tb_frame.f_back):
        if reached_module and frame.f_code.co_name != "<module>":
            break
        out = types.TracebackType(out, frame, frame.f_lasti, lineno)
        reached_module = frame.f_code.co_name == "<module>"
    return out


def _under_outer_boundary(tb: types.TracebackType) -> bool:
    frame = tb.tb_frame.f_back
    while frame is not None:
        if frame.f_code in _boundary_codes:
            return True
        frame = frame.f_back
    return False


def _running_under_ipython() -> bool:
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    return get_ipython is not None and get_ipython() is not None


def _mode() -> str:
    mode = traceback_filtering.value
    if mode == "auto":
        return "tracebackhide" if _running_under_ipython() else "quiet_remove_frames"
    return mode


def filter_exception(e: BaseException) -> None:
    """Filter the traceback of ``e``, being caught at an API boundary, per the option.

    Call it in the boundary's ``except`` block, then ``raise``. It does nothing
    when another boundary is further up the stack or the option is ``"off"``.
    """
    tb = e.__traceback__
    if tb is None or _under_outer_boundary(tb):
        return
    mode = _mode()
    if mode == "off":
        return
    if mode == "tracebackhide":
        _namespace_paths()
        for frame, _ in traceback.walk_tb(tb):
            if _is_modjax_code(frame.f_code):
                frame.f_locals["__tracebackhide__"] = True
        return
    e.with_traceback(filter_traceback(tb))
    if mode == "quiet_remove_frames":
        e.add_note(_SIMPLIFIED_NOTE)
        return
    text = "".join(traceback.format_exception_only(type(e), e)).strip()
    unfiltered = UnfilteredStackTrace(f"{text}\n\n{_UNFILTERED_NOTE}")
    unfiltered.with_traceback(_with_callers(tb))
    unfiltered.__cause__ = e.__cause__
    unfiltered.__context__ = e.__context__
    unfiltered.__suppress_context__ = e.__suppress_context__
    e.__cause__ = unfiltered
    e.__context__ = None


def api_boundary(fun: C) -> C:
    """Wrap ``fun`` so that errors leaving it have modjax's frames filtered (JAX's api_boundary)."""

    @functools.wraps(fun)
    def reraise_with_filtered_traceback(*args, **kwargs):
        __tracebackhide__ = True  # noqa: F841  (read by IPython and pytest)
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise

    return reraise_with_filtered_traceback  # type: ignore[return-value]


register_boundary(api_boundary(lambda: None).__code__)
register_exclusion(os.path.dirname(os.path.abspath(__file__)))
