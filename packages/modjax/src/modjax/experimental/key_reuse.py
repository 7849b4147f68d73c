"""``jax.experimental.key_reuse``: where JAX keeps its checker of PRNG key reuse.

It has no public names in JAX 0.10. The checker itself is enabled with the
``jax_debug_key_reuse`` option (``jax.config.update("jax_debug_key_reuse", True)``),
which modjax implements in ``modjax.random``: a consumed key passed again raises
``jax.errors.KeyReuseError``.
"""

__all__: list[str] = []
