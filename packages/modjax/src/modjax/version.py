"""modjax's version (the counterpart of ``jax.version``).

``__version__`` is modjax's own; ``_minimum_jaxlib_version`` is the oldest jaxlib
the runtime is tested with (its pinned range, design.md "jaxlib").
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("modjax")
except _metadata.PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0.1.0"

_version = __version__
__version_info__ = tuple(int(p) for p in __version__.split(".")[:3] if p.isdigit())
_minimum_jaxlib_version = "0.10.0"
_minimum_jaxlib_version_info = (0, 10, 0)
