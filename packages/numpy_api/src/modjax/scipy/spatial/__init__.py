"""modjax.scipy.spatial: the counterpart of ``jax.scipy.spatial`` (its ``transform`` module)."""

from . import transform

__all__ = ["transform"]
