"""Printing, reading and writing arrays through numpy.

modjax arrays print through numpy, so numpy's print options apply to them;
these functions are numpy's (``array_repr``, ``array_str``, ``save``,
``savez``, as JAX re-exports them) or thin wrappers that turn numpy's result
into a modjax array. They need concrete values: inside ``jit`` they raise
``TracerArrayConversionError``. ``fromfile`` and ``fromiter`` raise
NotImplementedError, as in JAX: reading a file or consuming an iterator is a
side effect that a traced function would perform only once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from modjax.tracecore import dtypes

from ._creation import asarray

__all__ = [
    "array_repr",
    "array_str",
    "frombuffer",
    "fromfile",
    "fromiter",
    "fromstring",
    "get_printoptions",
    "load",
    "printoptions",
    "save",
    "savez",
    "set_printoptions",
]

array_repr = np.array_repr
array_str = np.array_str
save = np.save
savez = np.savez


def get_printoptions() -> dict:
    """Return numpy's print options, which modjax arrays print with (jax.numpy.get_printoptions)."""
    return np.get_printoptions()


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """Set numpy's print options, which modjax arrays print with (jax.numpy.set_printoptions)."""
    return np.set_printoptions(*args, **kwargs)


def printoptions(*args: Any, **kwargs: Any):
    """Return a context manager setting numpy's print options (jax.numpy.printoptions)."""
    return np.printoptions(*args, **kwargs)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0):
    """Return the bytes of ``buffer`` read as a 1-d array of ``dtype`` (jax.numpy.frombuffer).

    The values are read with ``dtype`` (float64 by default) and then converted
    to its canonical type (float32 with x64 off).
    """
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str):
    """Return the numbers in the text ``string``, separated by ``sep`` (jax.numpy.fromstring)."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def _impure(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"jnp.{name}() is not implemented because it may be non-pure and thus unsafe for use "
        f"with jit and other transformations. Consider using jnp.asarray(np.{name}(...)) "
        f"instead, taking care that np.{name} inside a transformed function consumes its "
        "input only once, when the function is traced."
    )


def fromfile(*args: Any, **kwargs: Any):
    """Refuse to read a file: use ``asarray(np.fromfile(...))`` (jax.numpy.fromfile)."""
    raise _impure("fromfile")


def fromiter(*args: Any, **kwargs: Any):
    """Refuse to consume an iterator: use ``asarray(np.fromiter(...))`` (jax.numpy.fromiter)."""
    raise _impure("fromiter")


def load(file: Any, *args: Any, **kwargs: Any):
    """Load an array saved with ``save`` as a modjax array (jax.numpy.load).

    This is numpy's ``load``; a ``.npy`` array becomes a modjax array, with
    bfloat16 restored (numpy stores it as 2-byte void). Arrays of dtypes that
    modjax does not support, and ``.npz`` archives, are returned as numpy gives them.
    """
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        return out
    if out.dtype == np.dtype("V2"):
        out = out.view(dtypes.bfloat16)
    if out.dtype not in dtypes.supported_dtypes():
        return out
    return asarray(out)
