"""``jax._src.dtypes``: ``jax.dtypes``'s names and the private ones libraries read."""

from __future__ import annotations

import numpy as np

from modjax import dtypes as _public
from modjax.dtypes import *  # noqa: F403 - this module is a view of jax.dtypes
from modjax.tracecore.dtypes import TypePromotionError  # noqa: F401 - equinox reads it here

__all__ = [*_public.__all__, "DType", "TypePromotionError"]

#: The type of a dtype, as JAX's private modules annotate it.
DType = np.dtype
