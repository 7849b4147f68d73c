"""``jax._src.traceback_util``'s names that libraries use: tracecore's traceback filtering."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TypeVar

from modjax.tracecore import traceback_util as _filtering
from modjax.tracecore.traceback_util import register_exclusion

__all__ = ["api_boundary", "include_frame", "register_exclusion"]

C = TypeVar("C", bound=Callable)

#: The folders whose frames filtering removes (JAX's ``_exclude_paths``, the same list).
_exclude_paths = _filtering._exclusions


def api_boundary(fun: C, *, repro_api_name: str | None = None, repro_user_func: bool = False) -> C:
    """Filter the library frames out of errors leaving ``fun`` (JAX's ``api_boundary``).

    ``repro_api_name`` and ``repro_user_func`` belong to JAX's repro tool and are unused.
    """
    del repro_api_name, repro_user_func
    return _filtering.api_boundary(fun)


def include_frame(frame: types.FrameType) -> bool:
    """Tell whether filtering keeps ``frame`` (one outside the excluded folders)."""
    return not frame.f_code.co_filename.startswith(tuple(_exclude_paths))
