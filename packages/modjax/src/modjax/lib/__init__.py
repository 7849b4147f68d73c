"""modjax.lib: the counterpart of ``jax.lib``.

JAX 0.10 keeps jaxlib's modules private; its one public name here is
``__version__``, the version of the installed jaxlib, which libraries compare to
choose workarounds (equinox does). modjax reaches jaxlib only through
modjax-runtime's ``_xla.py`` and modjax-lowering's ``_mlir.py``.
"""

from modjax.runtime._xla import jaxlib_version as __version__

__all__: list[str] = []
