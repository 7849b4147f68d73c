"""modjax.scipy: SciPy-style functions on modjax arrays (the counterpart of ``jax.scipy``).

It has the submodules of ``jax.scipy`` but ``sparse`` and ``spatial``.
"""

from . import (
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    special,
    stats,
)

__all__ = [
    "cluster",
    "fft",
    "integrate",
    "interpolate",
    "linalg",
    "ndimage",
    "optimize",
    "signal",
    "special",
    "stats",
]
