"""``JAXSparse``: the base class of modjax's sparse arrays (``jax.experimental.sparse.JAXSparse``).

It holds the static ``shape`` and gives the array-like surface every format shares
(``dtype``, ``ndim``, ``size``, ``T``, ``len``, ``block_until_ready``, the repr).
Arithmetic a format does not define raises NotImplementedError naming the class and
the method.
"""

from __future__ import annotations

import abc
import math
import operator
from collections.abc import Sequence
from typing import Any

from modjax.tracecore.core import Tracer

__all__ = ["JAXSparse"]


class JAXSparse(abc.ABC):
    """Base class for modjax's sparse arrays: a static shape plus buffers (a pytree)."""

    shape: tuple[int, ...]
    data: Any

    __hash__ = None  # type: ignore[assignment]
    # NumPy arrays defer their operators (``ndarray @ sparse``) to ours.
    __array_ufunc__ = None

    def __init__(self, args: tuple[Any, ...], *, shape: Sequence[int]):
        self.shape = tuple(operator.index(d) for d in shape)

    @property
    def dtype(self):
        return self.data.dtype

    @property
    @abc.abstractmethod
    def nse(self) -> int: ...

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def _repr_fields(self) -> str:
        # As JAX's JAXSparse: batch and dense counts only where a format has them.
        text = f", nse={self.nse}"
        n_batch, n_dense = getattr(self, "n_batch", 0), getattr(self, "n_dense", 0)
        if n_batch:
            text += f", n_batch={n_batch}"
        if n_dense:
            text += f", n_dense={n_dense}"
        return text

    def __repr__(self) -> str:
        name = type(self).__name__
        try:
            text = f"{name}({self.dtype}{list(self.shape)}{self._repr_fields()})"
        except Exception:
            text = f"{name}(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    @abc.abstractmethod
    def tree_flatten(self): ...

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux_data, children): ...

    @abc.abstractmethod
    def transpose(self, axes=None): ...

    @abc.abstractmethod
    def todense(self): ...

    @property
    def T(self):
        return self.transpose()

    def block_until_ready(self):
        for buffer in self.tree_flatten()[0]:
            buffer.block_until_ready()
        return self

    def _unsupported(self, method: str):
        raise NotImplementedError(f"{type(self).__name__}.{method} is not implemented in modjax")

    # Formats override what they support; the rest refuse with the method's name.
    def sum(self, *args, **kwargs):
        self._unsupported("sum")

    def __neg__(self):
        self._unsupported("__neg__")

    def __pos__(self):
        self._unsupported("__pos__")

    def __matmul__(self, other):
        self._unsupported("__matmul__")

    def __rmatmul__(self, other):
        self._unsupported("__rmatmul__")

    def __mul__(self, other):
        self._unsupported("__mul__")

    def __rmul__(self, other):
        self._unsupported("__rmul__")

    def __add__(self, other):
        self._unsupported("__add__")

    def __radd__(self, other):
        self._unsupported("__radd__")

    def __sub__(self, other):
        self._unsupported("__sub__")

    def __rsub__(self, other):
        self._unsupported("__rsub__")

    def __getitem__(self, item):
        self._unsupported("__getitem__")
