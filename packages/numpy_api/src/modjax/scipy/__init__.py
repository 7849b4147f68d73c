"""modjax.scipy: SciPy-style functions on modjax arrays (the counterpart of ``jax.scipy``).

It has ``special``, ``linalg`` and ``fft`` so far; the other submodules of ``jax.scipy``
are not there yet.
"""

from . import fft, linalg, special

__all__ = ["fft", "linalg", "special"]
