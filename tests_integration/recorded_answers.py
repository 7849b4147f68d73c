"""What the ``*_cases.py`` files share: answers made JSON-able, and their recording.

A cases file defines ``record(jax) -> dict`` and ends with ``write_record(record)``
under ``if __name__ == "__main__":``; run by a Python that has JAX, it writes JAX's
answers to the file named on the command line. This module imports neither
library by name either.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np


def raised(fn: Callable[[], object], *, message: bool = True) -> list[str] | None:
    """The class and first message line of what ``fn()`` raised, or None.

    The class is the first builtin one (or ``JaxRuntimeError``) it derives from, so
    modjax's wrappers compare with JAX's plain errors: a LoweringError around a rule's
    ValueError is that ValueError, its message the rule's after the lowering's prefix.
    A function's address in the message (it differs between runs) is elided.
    """
    try:
        fn()
    except Exception as e:
        kind = next(
            c.__name__
            for c in type(e).__mro__
            if c.__module__ == "builtins" or c.__name__ == "JaxRuntimeError"
        )
        if not message:
            return [kind]
        text = str(e).splitlines()[0]
        if kind != type(e).__name__:
            text = text.split(f"{kind}: ", 1)[-1]
        return [kind, re.sub(r" at 0x[0-9a-f]+", " at 0x...", text)]
    return None


def cpu_kind() -> str:
    """The processor's model and the vector extensions XLA's CPU code may use.

    XLA compiles for the host, so float32 answers that hinge on the last bit (an
    optimizer's line search deciding to stop) are only reproducible on this kind.
    """
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    flags = sorted(
        f for f in fields.get("flags", "").split() if f.startswith(("avx", "fma", "amx", "sse4"))
    )
    model = fields.get("model name", "")
    return " ".join([model, *flags])


def write_record(record: Callable[[object], dict]) -> None:
    """Write ``record(jax)`` as JSON to the path in ``sys.argv[1]``."""
    out = record(importlib.import_module("jax"))
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def assert_answers_close(got, want, where, tolerances, *, float_atol=None) -> None:
    """Compare recorded answers: ``[dtype, values]`` leaves within ``tolerances[dtype]``
    (``(rtol, atol)``, NaN equal to NaN), bare floats within ``float_atol`` when given,
    dicts and lists item by item, everything else exactly."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for k in want:
            assert_answers_close(got[k], want[k], f"{where}.{k}", tolerances, float_atol=float_atol)
    elif isinstance(want, list) and len(want) == 2 and str(want[0]) in tolerances:
        assert got[0] == want[0], where
        rtol, atol = tolerances[want[0]]
        np.testing.assert_allclose(got[1], want[1], rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_answers_close(g, w, f"{where}[{i}]", tolerances, float_atol=float_atol)
    elif type(want) is float and float_atol is not None:
        np.testing.assert_allclose(got, want, rtol=0, atol=float_atol, err_msg=where)
    else:
        assert got == want, where
