"""Clustering in scipy.cluster's names (the counterpart of jax.scipy.cluster): ``vq``."""

from . import vq

__all__ = ["vq"]
