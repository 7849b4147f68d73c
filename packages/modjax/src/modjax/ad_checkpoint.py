"""Rematerialization (``jax.ad_checkpoint``): checkpoint, its policies and value names."""

from modjax.autodiff import checkpoint, checkpoint_name, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
