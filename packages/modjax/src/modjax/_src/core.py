"""``jax._src.core``: ``jax.core``'s names, with the deprecated ones served without warning."""

from __future__ import annotations

import warnings
from typing import Any

from modjax import core as _public
from modjax.core import *  # noqa: F403 - this module is a view of jax.core
from modjax.tracecore.abstract import physical_aval

__all__ = [*_public.__all__, "physical_aval"]


def __getattr__(name: str) -> Any:
    # JAX's own modules read these names from _src.core, where they are not deprecated.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(_public, name)
