"""modjax.random: explicit, splittable PRNG keys and the samplers (the counterpart of jax.random).

Randomness is a value: a key is split, folded and consumed, never a global
generator. ``_threefry`` holds the threefry2x32 primitive and the bit
generation on raw key data (``_rbg``, ``_philox`` and ``_threefry4x32`` the
other implementations'), ``_keys`` the key arrays and their operations,
``_distributions`` the samplers. For the same seed and calls, the bits are
JAX 0.10's (threefry2x32 with ``jax_threefry_partitionable`` on).
"""

import os as _os

from modjax.tracecore import source_info as _source_info

from ._distributions import *  # noqa: F403
from ._key_reuse import debug_key_reuse as _debug_key_reuse  # noqa: F401  (defines the option)
from ._keys import *  # noqa: F403

# Equations and key reuse errors point at the user's line, not at these modules.
_source_info.register_exclusion(_os.path.dirname(_os.path.abspath(__file__)))
