"""``Array``: the abstract array type that concrete arrays and tracers both are.

As in JAX, ``jax.Array`` is an abstract base class for instance checks and type
annotations, not a constructor: ``isinstance(x, Array)`` holds for a device array
and for a tracer of any transformation, so a function written with
``isinstance(x, jax.Array)`` (einops, optax) behaves the same eagerly and traced.

Tracers and device arrays join by registration (``Array.register``), not by
inheritance: runtime's concrete array is jaxlib's C++ ``ArrayImpl``, which cannot
take a Python base, and ``Tracer`` keeps plain ``type`` as its metaclass so that the
``isinstance(x, Tracer)`` checks on every ``bind`` stay a C-level type check.
"""

from __future__ import annotations

import abc

import numpy as np

from .core import Tracer


class Array(abc.ABC):
    """The type of modjax arrays and tracers (``jax.Array``): use it for
    ``isinstance`` checks and annotations; make arrays with ``modjax.numpy``."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # arrays compare elementwise

    @property
    @abc.abstractmethod
    def dtype(self) -> np.dtype:
        """The element type."""

    @property
    @abc.abstractmethod
    def shape(self) -> tuple[int, ...]:
        """The dimensions."""

    @property
    @abc.abstractmethod
    def ndim(self) -> int:
        """The number of dimensions."""

    @property
    @abc.abstractmethod
    def size(self) -> int:
        """The number of elements."""


Array.__module__ = "modjax"
Array.register(Tracer)
