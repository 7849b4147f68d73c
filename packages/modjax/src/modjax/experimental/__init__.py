"""Experimental APIs (the counterpart of ``jax.experimental``): ``io_callback``, ``cur_qdd``,
``primal_tangent_dtype`` and ``EArray`` (arrays of such dtypes)."""

from modjax.experimental import compilation_cache
from modjax.lax.callbacks import io_callback
from modjax.lax.edtype import EArray
from modjax.tracecore.dtypes import primal_tangent_dtype

__all__ = ["EArray", "compilation_cache", "cur_qdd", "io_callback", "primal_tangent_dtype"]


def cur_qdd(x):
    """Return the current quasi-dynamic data of ``x`` (``jax.experimental.cur_qdd``).

    Only types with quasi-dynamic data define it (``x.cur_qdd()``); modjax's arrays
    and references have none, so for them this raises AttributeError, as JAX does.
    """
    method = getattr(x, "cur_qdd", None)
    if method is None:
        raise AttributeError(f"'{type(x).__name__}' object has no attribute 'cur_qdd'")
    return method()
