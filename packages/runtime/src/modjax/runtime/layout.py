"""Memory layouts of compiled programs' arguments and results (JAX's ``Layout`` and ``Format``).

A :class:`Layout` is the order of an array's dimensions in memory, major to minor,
with XLA's tiling; a :class:`Format` pairs a layout with a sharding. modjax reads
them from compiled executables (``Compiled.input_formats``); passing them to
``jit`` or ``device_put`` to ask for a layout is not supported yet.
"""

from __future__ import annotations

from typing import Any

from . import _xla
from .sharding import Sharding

__all__ = ["AUTO", "Format", "Layout", "layouts_of"]


class _AutoLayout:
    """``Layout.AUTO``: let the compiler choose the layout."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "AUTO"


AUTO = _AutoLayout()


class Layout:
    """An array's memory layout (``jax.experimental.layout.Layout``).

    ``major_to_minor`` orders the dimensions from the slowest-varying to the fastest;
    ``tiling`` is XLA's tiling (None: none given); ``sub_byte_element_size_in_bits``
    the packed size of sub-byte elements (0: the dtype's own).
    """

    __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")

    AUTO = AUTO

    def __init__(
        self,
        major_to_minor: tuple[int, ...],
        tiling: tuple[tuple[int, ...], ...] | None = None,
        sub_byte_element_size_in_bits: int = 0,
    ):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    @staticmethod
    def from_pjrt_layout(pjrt_layout: Any) -> Layout:
        """Return the Layout of one of jaxlib's ``PjRtLayout`` objects."""
        minor_to_major, tiling, bits = _xla.layout_fields(pjrt_layout)
        return Layout(tuple(minor_to_major)[::-1], tiling, bits)

    def update(self, **changes: Any) -> Layout:
        """Return a copy with some fields replaced."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"Layout.update got unexpected fields {sorted(unknown)}")
        fields.update(changes)
        return Layout(**fields)

    def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:
        """Raise ValueError unless the layout orders as many dimensions as ``aval_shape`` has."""
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError(
                "Length of major_to_minor and the rank of the value should match. Got "
                f"major_to_minor={self.major_to_minor} and shape={aval_shape}"
            )

    def _key(self) -> tuple:
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
            f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})"
        )


class Format:
    """A layout and a sharding (``jax.experimental.layout.Format``); either may be None."""

    __slots__ = ("layout", "sharding")

    def __init__(
        self, layout: Layout | _AutoLayout | None = None, sharding: Sharding | None = None
    ):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                f"Sharding has to be concrete when layout is of type {type(layout)}. Please "
                "pass a `jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` "
                f"to the sharding argument. Got sharding {sharding}"
            )
        if not isinstance(layout, Layout | _AutoLayout | type(None)):
            raise TypeError(
                "Invalid value received for the layout argument. Expected values are "
                f"`None`, `Layout.AUTO` or an instance of `Layout`. Got {layout} of type "
                f"{type(layout)}"
            )
        if not isinstance(sharding, Sharding | type(None)):
            raise TypeError(
                "Invalid value received for the sharding argument. Expected values are "
                f"`None` or an instance of `jax.Sharding`. Got {sharding} of type "
                f"{type(sharding)}"
            )
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Format)
            and self.layout == other.layout
            and self.sharding == other.sharding
        )

    def __hash__(self) -> int:
        return hash((self.layout, self.sharding))

    def __repr__(self) -> str:
        return f"Format(layout={self.layout}, sharding={self.sharding})"


def layouts_of(executable) -> tuple[list[Layout], list[Layout]]:
    """Return the layouts XLA chose for a loaded executable's parameters and outputs."""
    params, outs = _xla.executable_layouts(executable)
    return [Layout.from_pjrt_layout(p) for p in params], [Layout.from_pjrt_layout(o) for o in outs]
