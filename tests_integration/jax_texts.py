"""Programs whose jaxprs and StableHLO modules modjax prints as JAX 0.10.2 does.

Each case is a function of the ``jax`` module returning ``(function, arguments)``;
``record(jax)`` prints every case's jaxpr (``make_jaxpr``) and lowered module
(``jit(f).lower(*args).as_text()``). ``data/jax_texts.json`` holds JAX 0.10.2's
answers, recorded by running this file with a Python that has JAX::

    /work/jaxref/bin/python tests_integration/jax_texts.py tests_integration/data/jax_texts.json

``test_jax_texts.py`` runs the same cases on modjax and compares, after
``normalize`` removes the known, documented differences of spelling (modjax marks
weak types with ``~``; JAX's modules carry ``jax.result_info`` and replica counts).
This file imports neither library by name: the caller passes the module in.
"""

from __future__ import annotations

import importlib
import json
import re
import sys

import numpy as np

F32 = np.float32


def _token_after_all(jax):
    token = jax.lax.create_token()
    return (lambda t, x: (jax.lax.after_all(t, t), x + 1)), (token, F32(1.0))


def _token_create(jax):
    return (lambda: jax.lax.create_token()), ()


def _token_create_ignores_its_argument(jax):
    return (lambda x: jax.lax.create_token(x)), (F32(1.0),)


def _token_after_all_of_nothing(jax):
    token = jax.lax.create_token()
    return (lambda t: jax.lax.after_all()), (token,)


def _token_closed_over(jax):
    token = jax.lax.create_token()
    return (lambda x: (jax.lax.after_all(token), x)), (F32(1.0),)


def _token_in_pytree(jax):
    token = jax.lax.create_token()
    return (lambda d: {"t": jax.lax.after_all(d["t"]), "x": d["x"] * 2}), (
        {"t": token, "x": np.ones(3, F32)},
    )


CASES = {
    "token_after_all": _token_after_all,
    "token_create": _token_create,
    "token_create_ignores_its_argument": _token_create_ignores_its_argument,
    "token_after_all_of_nothing": _token_after_all_of_nothing,
    "token_closed_over": _token_closed_over,
    "token_in_pytree": _token_in_pytree,
}


def texts(jax, name: str) -> dict:
    """The jaxpr and the lowered module of one case."""
    fn, args = CASES[name](jax)
    return {
        "jaxpr": str(jax.make_jaxpr(fn)(*args)),
        "lowered": jax.jit(fn).lower(*args).as_text(),
    }


def record(jax) -> dict:
    """Every case's texts (what the data file holds)."""
    return {name: texts(jax, name) for name in CASES}


_RESULT_INFO = re.compile(r" \{jax\.result_info = \"[^\"]*\"\}")
_MODULE_ATTRS = re.compile(
    r" attributes \{mhlo\.num_partitions = 1 : i32, mhlo\.num_replicas = 1 : i32\}"
)
_ONE_RESULT = re.compile(r"-> \(([^(),]+)\) \{")


def normalize(text: str) -> str:
    """Remove the known differences of spelling between modjax's texts and JAX's."""
    text = text.replace("~", "")
    text = _MODULE_ATTRS.sub("", _RESULT_INFO.sub("", text))
    text = _ONE_RESULT.sub(r"-> \1 {", text)
    return "\n".join(re.sub(r" +", " ", line).rstrip() for line in text.strip().splitlines())


if __name__ == "__main__":
    out = record(importlib.import_module("jax"))
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
