"""Type annotations for modjax programs (``jax.typing``): ``ArrayLike``, ``DTypeLike``."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from modjax.tracecore import Array

__all__ = ["ArrayLike", "DTypeLike"]


class SupportsDType(Protocol):
    """Anything with a ``dtype`` attribute (``jnp.float32`` and the like)."""

    @property
    def dtype(self, /) -> np.dtype: ...


#: What modjax functions accept as an array: arrays, tracers, numpy values, scalars.
ArrayLike = Array | np.ndarray | np.bool_ | np.number | bool | int | float | complex

#: What modjax functions accept as a dtype: a name, a scalar type, a dtype.
DTypeLike = str | type[Any] | np.dtype | SupportsDType
