"""Rematerialization (``jax.ad_checkpoint``): checkpoint, its policies, value names, residuals."""

from modjax.autodiff import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    print_saved_residuals,
    remat,
)

__all__ = [
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
]
