"""Versions (the counterpart of ``jax.version``).

``__version__`` (and ``__version_info__``) is the JAX release whose public API
modjax implements, not modjax's own: code written against JAX, libraries
especially, compares ``jax.__version__`` with releases to choose which of JAX's
APIs to call (flax, optax and equinox all do), and under ``import modjax as jax``
or the jax alias it must take the branches of the JAX that modjax mirrors.
``modjax_version`` is modjax's own release, the version of its distribution.
``_minimum_jaxlib_version`` is the oldest jaxlib the runtime is tested with (its
pinned range, design.md "jaxlib").
"""

from importlib import metadata as _metadata

__version__ = "0.10.2"
__version_info__ = (0, 10, 2)
_version = __version__

try:
    modjax_version = _metadata.version("modjax")
except _metadata.PackageNotFoundError:  # a source tree that is not installed
    modjax_version = "0.1.0"

_minimum_jaxlib_version = "0.10.0"
_minimum_jaxlib_version_info = (0, 10, 0)
