"""``jax._src.core``: ``jax.core``'s names, with the deprecated ones served without warning."""

from __future__ import annotations

import warnings
from typing import Any

from modjax import core as _public
from modjax.core import *  # noqa: F403 - this module is a view of jax.core
from modjax.tracecore.abstract import physical_aval
from modjax.tracecore.compile_time_eval import CompileTimeEvalTrace
from modjax.tracecore.core import current_trace, eval_trace

__all__ = [*_public.__all__, "physical_aval", "trace_state_clean"]


def trace_state_clean() -> bool:
    """Tell whether no transformation is tracing now (JAX's private ``trace_state_clean``).

    numpyro reads it to decide whether caching a function is safe. An
    ``ensure_compile_time_eval`` block counts as the trace it was opened under.
    """
    trace = current_trace()
    while isinstance(trace, CompileTimeEvalTrace):
        trace = trace.parent
    return trace is eval_trace


def __getattr__(name: str) -> Any:
    # JAX's own modules read these names from _src.core, where they are not deprecated.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(_public, name)
