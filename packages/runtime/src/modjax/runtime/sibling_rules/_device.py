"""Eager impls of layer-1 primitives on the device, through ``apply_primitive``."""

from __future__ import annotations

from modjax.tracecore import dtypes
from modjax.tracecore.core import Primitive

from ..dispatch import apply_primitive

__all__ = ["device_impl"]


def device_impl(prim: Primitive, numpy_impl):
    """Run ``prim`` on the device, except on ``float0`` values (numpy's zero-size dtype)."""

    def impl(*args, **params):
        if any(getattr(x, "dtype", None) == dtypes.float0 for x in args):
            return numpy_impl(*args, **params)
        return apply_primitive(prim, *args, **params)

    return impl
