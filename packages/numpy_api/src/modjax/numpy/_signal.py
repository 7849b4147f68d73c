"""One-dimensional discrete convolution and correlation: ``convolve``, ``correlate``.

Both are one ``lax.conv_general_dilated`` on the two vectors seen as a
one-channel, one-image batch, so they run as XLA convolutions (and are
differentiable and batchable as those are). Inputs are promoted to an inexact
dtype, as in JAX.
"""

from __future__ import annotations

from typing import Any

from modjax import lax
from modjax.lax._common import kind

from ._eager_jit import compile_on_arrays
from ._util import aval, check_arraylike, promote_dtypes_inexact

__all__ = ["convolve", "correlate"]


def _conv(name: str, a: Any, v: Any, mode: str, precision, preferred_element_type):
    check_arraylike(name, a, v)
    from ._creation import asarray

    a, v = (asarray(x) for x in promote_dtypes_inexact(a, v))
    if aval(a).ndim != 1 or aval(v).ndim != 1:
        raise ValueError(
            f"{name}() only support 1-dimensional inputs, got shapes {aval(a).shape} and "
            f"{aval(v).shape}."
        )
    if aval(a).shape[0] == 0 or aval(v).shape[0] == 0:
        raise ValueError(
            f"{name}: inputs cannot be empty, got shapes {aval(a).shape} and {aval(v).shape}."
        )
    reverse_out = False
    if name == "correlate":
        if kind(aval(v).dtype) == "c":
            v = lax.conj(v)
        if aval(a).shape[0] < aval(v).shape[0]:
            a, v, reverse_out = v, a, True
    else:
        if aval(a).shape[0] < aval(v).shape[0]:
            a, v = v, a
        v = lax.rev(v, (0,))
    m = aval(v).shape[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(m // 2, m - m // 2 - 1)]
    elif mode == "full":
        padding = [(m - 1, m - 1)]
    else:
        raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    out = lax.conv_general_dilated(
        lax.reshape(a, (1, 1, aval(a).shape[0])),
        lax.reshape(v, (1, 1, m)),
        (1,),
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    out = lax.reshape(out, (aval(out).shape[2],))
    return lax.rev(out, (0,)) if reverse_out else out


def convolve(a: Any, v: Any, mode: str = "full", *, precision=None, preferred_element_type=None):
    """Return the discrete linear convolution of two 1-D arrays (jax.numpy.convolve).

    ``mode`` is ``"full"`` (every overlap, length ``len(a) + len(v) - 1``),
    ``"same"`` (length ``max(len(a), len(v))``, centred) or ``"valid"`` (only full
    overlaps).
    """
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """Return the cross-correlation of two 1-D arrays, conjugating ``v`` (jax.numpy.correlate).

    ``mode`` is as in :func:`convolve`, with ``"valid"`` the default.
    """
    return _conv("correlate", a, v, mode, precision, preferred_element_type)


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(globals(), "convolve correlate")
