"""The FlatBuffers reader and writer of export, on their own: round trips and bad bytes."""

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis_profiles import examples

from modjax.runtime import export
from modjax.runtime.export import flatbuf, schema

names = st.text(max_size=8)
avals = st.fixed_dictionaries(
    {"kind": st.integers(0, 1), "shape": st.lists(names, max_size=3), "dtype": st.integers(0, 26)},
    optional={"memory_space": st.integers(1, 3)},
)
trees = st.recursive(
    st.fixed_dictionaries({"kind": st.just(0)}),
    lambda children: st.fixed_dictionaries(
        {"kind": st.integers(1, 5), "children": st.lists(children, min_size=1, max_size=3)},
        optional={"custom_name": names, "custom_auxdata": st.binary(max_size=6)},
    ),
    max_leaves=6,
)
exporteds = st.fixed_dictionaries(
    {
        "function_name": names,
        "in_tree": trees,
        "in_avals": st.lists(avals, max_size=3),
        "nr_devices": st.integers(1, 2**32 - 1),
        "platforms": st.lists(names, max_size=2),
        "mlir_module_serialized": st.binary(max_size=20),
        "calling_convention_version": st.integers(0, 2**16 - 1),
        "module_kept_var_idx": st.lists(st.integers(0, 2**16 - 1), max_size=4),
        "uses_global_constants": st.booleans(),
        "in_avals_idxs": st.lists(st.integers(0, 2**32 - 1), max_size=4),
    }
)


def with_defaults(fields: dict, table: str) -> dict:
    """What the reader gives back: absent scalars read as their defaults."""
    out = {}
    for field, (_, kind) in schema.SCHEMA[table].items():
        if field in fields:
            value = fields[field]
            if kind.startswith("table:"):
                value = with_defaults(value, kind[6:])
            elif kind.startswith("[table:"):
                value = [with_defaults(v, kind[7:-1]) for v in value]
            out[field] = value
        elif kind in ("i8", "u16", "i16", "u32"):
            out[field] = 0
        elif kind == "bool":
            out[field] = False
    return out


@settings(max_examples=examples(40), deadline=None)
@given(exporteds)
def test_encode_then_decode_gives_the_fields_back(fields):
    blob = flatbuf.encode(fields, schema.SCHEMA, schema.ROOT)
    assert flatbuf.decode(blob, schema.SCHEMA, schema.ROOT) == with_defaults(fields, "Exported")


def test_alignment_of_tables_and_vectors():
    blob = flatbuf.encode(
        {"function_name": "f", "module_kept_var_idx": [1, 2, 3], "nr_devices": 7},
        schema.SCHEMA,
        schema.ROOT,
    )
    root = int.from_bytes(blob[:4], "little")
    assert root % 8 == 0  # tables start 8-aligned, so every scalar is aligned
    vtable = root - int.from_bytes(blob[root : root + 4], "little", signed=True)
    slot = 4 + 2 * schema.SCHEMA["Exported"]["module_kept_var_idx"][0]
    field = root + int.from_bytes(blob[vtable + slot : vtable + slot + 2], "little")
    vector = field + int.from_bytes(blob[field : field + 4], "little")
    assert vector % 4 == 0
    assert blob[vector : vector + 10] == bytes([3, 0, 0, 0, 1, 0, 2, 0, 3, 0])


@pytest.mark.parametrize("cut", [0, 3, 8, 40])
def test_truncated_or_foreign_bytes_are_value_errors(cut):
    blob = flatbuf.encode(
        {"function_name": "f" * 50, "platforms": ["cpu"]}, schema.SCHEMA, schema.ROOT
    )
    with pytest.raises(ValueError):
        export.deserialize(blob[:cut])
    with pytest.raises(ValueError):
        export.deserialize(np.random.default_rng(cut).bytes(64))
