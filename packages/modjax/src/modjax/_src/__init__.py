"""The few of JAX's private ``jax._src`` modules that widely used libraries import.

``jax._src`` is JAX's implementation, not its API, and modjax does not mirror it.
But flax, equinox and chex import a handful of its modules when they are
imported themselves (traceback filtering, dtypes, the core types), so under
``modjax.install_jax_alias()`` they could not even be imported without these.
Each module here is a thin view of modjax's own code in the names those libraries
read; anything else of ``jax._src`` raises ImportError (the libraries guard their
optional uses of it with ``try``).
"""

import importlib as _importlib

# JAX imports these when ``jax`` is imported, so libraries read them as attributes of
# ``jax._src`` without importing them (chex: ``jax._src.xla_bridge._backends``).
_SUBMODULES = frozenset(
    {
        "ad_util",
        "checkify",
        "compiler",
        "core",
        "dispatch",
        "dtypes",
        "flatten_util",
        "interpreters",
        "state",
        "traceback_util",
        "tree_util",
        "xla_bridge",
    }
)


def __getattr__(name: str):
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
