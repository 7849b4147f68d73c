"""``jax._src.interpreters``: views of ``jax.interpreters``' modules."""
