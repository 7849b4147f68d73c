"""Which kind of CPU recorded bits belong to, and the tables recorded on other kinds.

XLA compiles for the CPU it runs on: with AVX-512 or without, a dot or a reduction is
vectorized differently, and the last bits of floats differ, JAX's as modjax's (JAX
0.10.2 gives other bits for attention, expm or polyfit on an AVX2-only machine). A
table of JAX's answers is recorded on ``BASE_KIND``; a recording on another kind keeps
only what differs from it, in ``<table>.<kind>.json`` beside it, and ``load_reference``
reads the base with this machine's differences over it. On a kind with no such file
the base table is what the tests expect.

Record on another kind: run the table's generator there; those that print their table
go through ``python cpu_kind.py TABLE.json < printed.json``.
"""

from __future__ import annotations

import functools
import json
import pathlib
import platform
import sys

# The kind the base tables were recorded on (the machines of the sessions that made them).
BASE_KIND = "x86_64-avx512"


@functools.cache
def cpu_kind() -> str:
    """This machine's kind: its architecture, and on x86_64 whether it has AVX-512."""
    machine = platform.machine()
    if machine != "x86_64":
        return machine
    try:
        cpuinfo = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return machine
    flags = next((line.split() for line in cpuinfo.splitlines() if line.startswith("flags")), [])
    return f"{machine}-avx512" if "avx512f" in flags else f"{machine}-avx2"


def _overrides_path(path: pathlib.Path) -> pathlib.Path:
    return path.with_name(f"{path.stem}.{cpu_kind()}.json")


def _merged(base, overrides):
    if not (isinstance(base, dict) and isinstance(overrides, dict)):
        return overrides
    out = dict(base)
    for key, value in overrides.items():
        out[key] = _merged(base[key], value) if key in base else value
    return out


def _differences(base, new):
    if not (isinstance(base, dict) and isinstance(new, dict)):
        return new
    return {
        key: _differences(base[key], value) if key in base else value
        for key, value in new.items()
        if base.get(key) != value
    }


def load_reference(path: pathlib.Path) -> dict:
    """Read the JSON table at ``path``, with this machine kind's differences over it."""
    table = json.loads(path.read_text())
    extra = _overrides_path(path)
    if cpu_kind() != BASE_KIND and extra.exists():
        table = _merged(table, json.loads(extra.read_text()))
    return table


def save_reference(path: pathlib.Path, table: dict, *, indent: int | None = 0) -> pathlib.Path:
    """Write ``table`` as the base table on ``BASE_KIND``; elsewhere, what differs from it.

    Return the path written.
    """
    if cpu_kind() == BASE_KIND or not path.exists():
        target, content = path, table
    else:
        target = _overrides_path(path)
        content = _differences(json.loads(path.read_text()), table)
        content["cpu_kind"] = cpu_kind()
    target.write_text(json.dumps(content, indent=indent, sort_keys=True) + "\n")
    return target


if __name__ == "__main__":
    written = save_reference(pathlib.Path(sys.argv[1]), json.load(sys.stdin))
    print(f"written to {written}")
