"""Specs of the elementwise, special and nn-style functions for the jnp sweeps."""

import numpy as np  # noqa: F401
from jnp_sweep_specs import add, exclude, floats  # noqa: F401

import modjax.numpy as jnp  # noqa: F401
