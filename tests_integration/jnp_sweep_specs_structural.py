"""Specs of the shape, indexing, reduction, sorting and product functions for the jnp sweeps."""

import numpy as np  # noqa: F401
from jnp_sweep_specs import add, exclude, floats  # noqa: F401

import modjax.numpy as jnp  # noqa: F401
