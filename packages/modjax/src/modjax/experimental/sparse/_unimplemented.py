"""Stand-ins for the names of ``jax.experimental.sparse`` that modjax does not implement.

Each exists (so imports and ``hasattr`` succeed) and raises NotImplementedError naming
itself when it is called, constructed or bound. packages/modjax/README.md lists them.
"""

from __future__ import annotations

from typing import Any

from modjax.experimental.sparse._base import JAXSparse

__all__ = ["UnimplementedPrimitive", "unimplemented_class", "unimplemented_function"]


def _error(name: str) -> NotImplementedError:
    return NotImplementedError(f"jax.experimental.sparse.{name} is not implemented in modjax yet")


def unimplemented_function(name: str):
    """A function named ``name`` whose every call raises NotImplementedError."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise _error(name)

    refuse.__name__ = refuse.__qualname__ = name.rsplit(".", 1)[-1]
    refuse.__doc__ = f"``jax.experimental.sparse.{name}``: not implemented in modjax yet."
    return refuse


def unimplemented_class(name: str, base: type = JAXSparse) -> type:
    """A class named ``name`` (a subclass of ``base``) that cannot be constructed.

    ``isinstance`` checks against it work (and are False); constructing it or calling
    its ``fromdense``/``from_scipy_sparse`` raises NotImplementedError.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _error(name)

    def refuse(cls, *args: Any, **kwargs: Any) -> Any:
        raise _error(f"{name}.fromdense")

    def refuse_scipy(cls, *args: Any, **kwargs: Any) -> Any:
        raise _error(f"{name}.from_scipy_sparse")

    namespace = {
        "__init__": __init__,
        "__doc__": f"``jax.experimental.sparse.{name}``: not implemented in modjax yet.",
        "__module__": "modjax.experimental.sparse",
        "fromdense": classmethod(refuse),
        "from_scipy_sparse": classmethod(refuse_scipy),
    }
    if base is JAXSparse:
        for abstract in ("dtype", "nse"):
            namespace[abstract] = property(lambda self: None)
        for abstract in ("tree_flatten", "transpose", "todense"):
            namespace[abstract] = lambda self, *a, **k: None
        namespace["tree_unflatten"] = classmethod(lambda cls, aux, children: None)
    return type(name, (base,), namespace)


class UnimplementedPrimitive:
    """A primitive of JAX's sparse library (``bcoo_todense_p``, ...) that modjax does not declare.

    modjax's sparse operations are compositions of lax primitives, so these have a
    name and nothing else: ``bind`` (or any other use) raises NotImplementedError.
    """

    def __init__(self, name: str):
        self.name = name

    def bind(self, *args: Any, **params: Any) -> Any:
        raise _error(f"{self.name}_p")

    impl = abstract_eval = bind

    def __repr__(self) -> str:
        return self.name
