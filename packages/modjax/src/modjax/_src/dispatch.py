"""``jax._src.dispatch``'s name that libraries use (equinox registers it at exit)."""

from modjax.runtime import effects_barrier as wait_for_tokens

__all__ = ["wait_for_tokens"]
