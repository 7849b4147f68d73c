"""A small FlatBuffers reader and writer driven by a schema table (no ``flatbuffers`` package).

Only what JAX's export schema uses: tables whose fields are scalars, strings,
tables, byte vectors, vectors of scalars, of strings and of tables; no structs,
unions or file identifiers. A schema maps a table name to ``{field: (slot, kind)}``
where ``kind`` is a scalar code (``"i8"``, ``"u16"``, ``"u32"``, ``"bool"``, ...),
``"string"``, ``"bytes"``, ``"table:<Name>"``, ``"[u16]"`` (a vector of scalars),
``"[string]"`` or ``"[table:<Name>]"``.

Decoding gives a dict per table holding the fields present in the buffer (an
absent scalar reads as its default, 0, except optional scalars); encoding takes
the same dicts. The layout follows the FlatBuffers format: little endian, a
root ``uoffset``, tables that start with a signed offset to their vtable, and
unsigned offsets that always point forward. The writer lays objects out front
to back (a parent before its children), where FlatBuffers' own builders write
back to front; both are valid buffers for any reader.
"""

from __future__ import annotations

import struct
from typing import Any

__all__ = ["decode", "encode", "FlatBufferError"]

# scalar kind -> (struct format, size)
_SCALARS = {
    "bool": ("<?", 1),
    "i8": ("<b", 1),
    "u8": ("<B", 1),
    "i16": ("<h", 2),
    "u16": ("<H", 2),
    "i32": ("<i", 4),
    "u32": ("<I", 4),
    "i64": ("<q", 8),
    "u64": ("<Q", 8),
}
# Fields that read as None, not 0, when absent (FlatBuffers' optional scalars).
OPTIONAL = "?"


class FlatBufferError(ValueError):
    """The bytes are not a FlatBuffer of the expected schema."""


def _split_kind(kind: str) -> tuple[str, str]:
    """Return ``(container, element)``: ("vector", "u16"), ("table", "PyTreeDef"), ..."""
    if kind.startswith("["):
        return "vector", kind[1:-1]
    if kind.startswith("table:"):
        return "table", kind[6:]
    return kind, ""


# --- reading -----------------------------------------------------------------------------


class _Reader:
    def __init__(self, buf: bytes, schema: dict):
        self.buf = memoryview(bytes(buf))
        self.schema = schema

    def unpack(self, fmt: str, pos: int):
        try:
            return struct.unpack_from(fmt, self.buf, pos)[0]
        except struct.error as e:
            raise FlatBufferError(f"offset {pos} is outside the {len(self.buf)}-byte buffer") from e

    def deref(self, pos: int) -> int:
        return pos + self.unpack("<I", pos)

    def table(self, pos: int, name: str) -> dict[str, Any]:
        vtable = pos - self.unpack("<i", pos)
        vtable_size = self.unpack("<H", vtable)
        out: dict[str, Any] = {}
        for field, (slot, kind) in self.schema[name].items():
            entry = 4 + 2 * slot
            offset = self.unpack("<H", vtable + entry) if entry < vtable_size else 0
            optional = kind.endswith(OPTIONAL)
            kind = kind.rstrip(OPTIONAL)
            if offset == 0:
                if kind in _SCALARS:
                    out[field] = None if optional else (False if kind == "bool" else 0)
                continue
            out[field] = self.value(pos + offset, kind)
        return out

    def value(self, pos: int, kind: str):
        container, element = _split_kind(kind)
        if container in _SCALARS:
            return self.unpack(_SCALARS[container][0], pos)
        target = self.deref(pos)
        if container == "table":
            return self.table(target, element)
        length = self.unpack("<I", target)
        start = target + 4
        size = 1 if container in ("string", "bytes") else _SCALARS.get(element, ("", 4))[1]
        if start + length * size > len(self.buf):
            raise FlatBufferError(f"a {container} of {length} items runs past the buffer")
        if container in ("string", "bytes"):
            data = bytes(self.buf[start : start + length])
            try:
                return data.decode("utf-8") if container == "string" else data
            except UnicodeDecodeError as e:
                raise FlatBufferError(f"a string is not UTF-8: {e}") from e
        if element in _SCALARS:
            fmt = _SCALARS[element][0]
            return [self.unpack(fmt, start + i * size) for i in range(length)]
        return [self.value(start + 4 * i, element) for i in range(length)]


def decode(buf: bytes, schema: dict, root: str) -> dict[str, Any]:
    """Read the root table ``root`` of a FlatBuffer into nested dicts (see the module doc)."""
    reader = _Reader(buf, schema)
    if len(reader.buf) < 8:
        raise FlatBufferError(f"{len(reader.buf)} bytes are too few for a FlatBuffer")
    return reader.table(reader.deref(0), root)


# --- writing -----------------------------------------------------------------------------


class _Writer:
    def __init__(self, schema: dict):
        self.schema = schema
        self.buf = bytearray()

    def align(self, size: int) -> None:
        self.buf.extend(b"\0" * (-len(self.buf) % size))

    def patch_offset(self, at: int, target: int) -> None:
        struct.pack_into("<I", self.buf, at, target - at)

    def table(self, values: dict[str, Any], name: str) -> int:
        fields = self.schema[name]
        present = []
        for field, value in values.items():
            if field not in fields:
                raise FlatBufferError(f"table {name} has no field {field!r}")
            if value is not None:
                slot, kind = fields[field]
                present.append((slot, kind.rstrip(OPTIONAL), value))
        # Inline layout: the vtable offset, then the fields, largest first so that
        # each is aligned to its size once the table start is aligned to 8.
        present.sort(key=lambda f: (-self.inline_size(f[1]), f[0]))
        inline, offsets = [], {}
        cursor = 4
        for slot, kind, value in present:
            size = self.inline_size(kind)
            cursor += -cursor % size
            offsets[slot] = cursor
            inline.append((cursor, kind, value))
            cursor += size
        n_slots = 1 + max((slot for slot, _, _ in present), default=-1)
        vtable = struct.pack(
            f"<HH{n_slots}H", 4 + 2 * n_slots, cursor, *(offsets.get(i, 0) for i in range(n_slots))
        )
        self.align(2)
        vtable_pos = len(self.buf)
        self.buf.extend(vtable)
        self.align(8)
        table_pos = len(self.buf)
        self.buf.extend(b"\0" * cursor)
        struct.pack_into("<i", self.buf, table_pos, table_pos - vtable_pos)
        children = []
        for at, kind, value in inline:
            if kind in _SCALARS:
                struct.pack_into(_SCALARS[kind][0], self.buf, table_pos + at, value)
            else:
                children.append((table_pos + at, kind, value))
        for at, kind, value in children:
            self.patch_offset(at, self.child(value, kind))
        return table_pos

    @staticmethod
    def inline_size(kind: str) -> int:
        return _SCALARS[kind][1] if kind in _SCALARS else 4

    def child(self, value, kind: str) -> int:
        """Write a string, vector or table after everything so far; return its position."""
        container, element = _split_kind(kind)
        if container == "table":
            return self.table(value, element)
        if container in ("string", "bytes"):
            data = value.encode("utf-8") if container == "string" else bytes(value)
            self.align(4)
            pos = len(self.buf)
            self.buf.extend(struct.pack("<I", len(data)) + data + b"\0")
            return pos
        values = list(value)
        if element in _SCALARS:
            fmt, size = _SCALARS[element]
            # The elements, after the 4-byte length, aligned to their size.
            self.align(4)
            if size == 8 and (len(self.buf) + 4) % 8:
                self.buf.extend(b"\0" * 4)
            pos = len(self.buf)
            self.buf.extend(struct.pack("<I", len(values)))
            for v in values:
                self.buf.extend(struct.pack(fmt, v))
            return pos
        self.align(4)
        pos = len(self.buf)
        self.buf.extend(struct.pack("<I", len(values)) + b"\0" * (4 * len(values)))
        for i, v in enumerate(values):
            self.patch_offset(pos + 4 + 4 * i, self.child(v, element))
        return pos


def encode(values: dict[str, Any], schema: dict, root: str) -> bytes:
    """Write nested dicts as a FlatBuffer whose root table is ``root`` (see the module doc)."""
    writer = _Writer(schema)
    writer.buf.extend(b"\0" * 8)  # the root offset, padded so tables can align to 8
    writer.patch_offset(0, writer.table(values, root))
    return bytes(writer.buf)
