"""The few of JAX's private ``jax._src`` modules that widely used libraries import.

``jax._src`` is JAX's implementation, not its API, and modjax does not mirror it.
But flax, equinox and chex import a handful of its modules when they are
imported themselves (traceback filtering, dtypes, the core types), so under
``modjax.install_jax_alias()`` they could not even be imported without these.
Each module here is a thin view of modjax's own code in the names those libraries
read; anything else of ``jax._src`` raises ImportError (the libraries guard their
optional uses of it with ``try``).
"""
