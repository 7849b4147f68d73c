"""Numerical integration in scipy.integrate's names (the counterpart of jax.scipy.integrate)."""

from __future__ import annotations

from typing import Any

from modjax.numpy import trapezoid as _trapezoid

__all__ = ["trapezoid"]


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1):
    """Integrate ``y`` along ``axis`` by the trapezoidal rule (jax.scipy.integrate.trapezoid).

    Sample points are ``x`` when given, else spaced ``dx`` apart; it is
    jax.numpy.trapezoid under scipy's name.
    """
    return _trapezoid(y, x, dx, axis)
