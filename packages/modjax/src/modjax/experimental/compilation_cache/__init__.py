"""The persistent compilation cache (``jax.experimental.compilation_cache``)."""
