"""modjax.random: explicit, splittable PRNG keys and the samplers (the counterpart of jax.random).

Randomness is a value: a key is split, folded and consumed, never a global
generator. ``_threefry`` holds the threefry2x32 primitive and the bit
generation on raw key data, ``_keys`` the key arrays and their operations,
``_distributions`` the samplers. For the same seed and calls, the bits are
JAX 0.10's (threefry2x32 with ``jax_threefry_partitionable`` on).
"""

from ._distributions import *  # noqa: F403
from ._keys import *  # noqa: F403
