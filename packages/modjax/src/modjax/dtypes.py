"""Dtypes and type promotion (the counterpart of ``jax.dtypes``)."""

from modjax.random._prng import prng_key  # noqa: E402, F401  (jax.dtypes.prng_key)
from modjax.tracecore.dtypes import *  # noqa: F403
from modjax.tracecore.dtypes import __all__  # noqa: F401
