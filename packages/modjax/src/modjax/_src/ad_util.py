"""``jax._src.ad_util``'s names that libraries use (lineax registers rules of stop_gradient_p)."""

from modjax.autodiff import stop_gradient_p
from modjax.interpreters.ad import Zero

__all__ = ["Zero", "stop_gradient_p"]
