"""Dtypes and type promotion (the counterpart of ``jax.dtypes``)."""

from modjax.random._prng import prng_key  # noqa: E402, F401  (jax.dtypes.prng_key)
from modjax.tracecore import dtypes as _tracecore_dtypes
from modjax.tracecore.dtypes import *  # noqa: F403
from modjax.tracecore.dtypes import __all__  # noqa: F401


def issubdtype(a, b) -> bool:
    """Return whether dtype ``a`` is ``b`` or lies in category ``b`` (``jax.dtypes.issubdtype``).

    ``jax.numpy.issubdtype`` is the same test, its parameters named ``arg1``, ``arg2``.
    """
    return _tracecore_dtypes.issubdtype(a, b)


def __getattr__(name: str):
    # bfloat16, float8_*, int4, ...: loaded on first use (see modjax.tracecore.dtypes).
    if name in NARROW_DTYPE_NAMES:  # noqa: F405
        return getattr(_tracecore_dtypes, name)
    raise AttributeError(f"module 'modjax.dtypes' has no attribute {name!r}")
