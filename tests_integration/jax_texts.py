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
ARANGE = np.arange(1, 4, dtype=F32) / 4
GRID = np.arange(12, dtype=F32).reshape(3, 4)
COMPLEX = np.array([1 + 1j, 0.5 - 2j], np.complex64)


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


def _accuracy_sin_highest(jax):
    return (lambda x: jax.lax.sin(x, accuracy=jax.lax.AccuracyMode.HIGHEST)), (ARANGE,)


def _accuracy_exp_tolerance(jax):
    tolerance = jax.lax.Tolerance(atol=1e-5, rtol=1e-4)
    return (lambda x: jax.lax.exp(x, accuracy=tolerance)), (ARANGE,)


def _accuracy_log_ulps(jax):
    return (lambda x: jax.lax.log(x, accuracy=jax.lax.Tolerance(ulps=2))), (ARANGE,)


def _accuracy_tanh_default(jax):
    return (lambda x: jax.lax.tanh(x, accuracy=jax.lax.AccuracyMode.DEFAULT)), (ARANGE,)


def _accuracy_each_function(jax):
    lax, highest = jax.lax, jax.lax.AccuracyMode.HIGHEST
    names = ("exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan", "sqrt", "rsqrt", "cbrt")
    return (lambda x: [getattr(lax, n)(x, accuracy=highest) for n in names]), (ARANGE,)


def _accuracy_exp2(jax):
    return (lambda x: jax.lax.exp2(x, accuracy=jax.lax.AccuracyMode.HIGHEST)), (ARANGE,)


def _accuracy_logistic(jax):
    return (lambda x: jax.lax.logistic(x, accuracy=jax.lax.AccuracyMode.HIGHEST)), (ARANGE,)


def _accuracy_complex_sin(jax):
    return (lambda z: jax.lax.sin(z, accuracy=jax.lax.AccuracyMode.HIGHEST)), (COMPLEX,)


def _accuracy_jvps(jax):
    lax, highest = jax.lax, jax.lax.AccuracyMode.HIGHEST

    def f(x):
        return [
            lax.sin(x, accuracy=highest),
            lax.cos(x, accuracy=highest),
            lax.expm1(x, accuracy=highest),
            lax.tanh(x, accuracy=highest),
            lax.exp(x, accuracy=highest),
        ]

    return (lambda x: jax.jvp(f, (x,), (x,))), (ARANGE,)


def _accuracy_jvp_logistic(jax):
    def f(x):
        return jax.lax.logistic(x, accuracy=jax.lax.AccuracyMode.HIGHEST)

    return (lambda x: jax.jvp(f, (x,), (x,))), (ARANGE,)


def _accuracy_vmap(jax):
    f = jax.vmap(lambda x: jax.lax.sin(x, accuracy=jax.lax.AccuracyMode.HIGHEST))
    return f, (np.ones((2, 3), F32),)


def _split(jax):
    return (lambda x: jax.lax.split(x, [1, 3], axis=1)), (GRID,)


def _split_under_vmap(jax):
    return jax.vmap(lambda x: jax.lax.split(x, [1, 3])), (GRID,)


def _stack_and_unstack(jax):
    def f(x):
        return jax.lax.stack(jax.lax.unstack(x, axis=1), axis=0), jax.numpy.unstack(x)

    return f, (GRID,)


def _jnp_stack_promotes_then_stacks(jax):
    return (lambda x: jax.numpy.stack([x, x.astype(np.int32)])), (GRID,)


def _tile(jax):
    return (lambda x: (jax.lax.tile(x, (2, 1)), jax.numpy.tile(x, (2,)))), (GRID,)


def _device_put_pytree(jax):
    return (lambda x, y: jax.device_put((x, y))), (ARANGE, F32(1.0))


def _device_put_to_a_device(jax):
    device = jax.devices()[0]
    return (lambda x: jax.device_put(x, device)), (ARANGE,)


def _device_put_donated(jax):
    return (lambda x: jax.device_put(x, donate=True)), (ARANGE,)


def _device_put_under_grad(jax):
    return jax.value_and_grad(lambda x: jax.device_put(x) * 2.0), (F32(1.0),)


def _nested_jit(jax):
    inner = jax.jit(lambda x: jax.numpy.sin(x) * 2)
    return (lambda x: inner(x) + 1), (ARANGE,)


def _nested_jit_donated(jax):
    inner = jax.jit(lambda x: jax.numpy.sin(x) * 2)
    return jax.jit(lambda x: inner(x) + 1, donate_argnums=0), (ARANGE,)


def _nested_jit_operand_twice_keep_unused(jax):
    inner = jax.jit(lambda x, y: (x, x * 2), keep_unused=True)
    return (lambda x: inner(x, x)), (ARANGE,)


def _scan_with_grad(jax):
    def step(c, x):
        return c * x, c + x

    return jax.grad(lambda xs: jax.lax.scan(step, F32(1.0), xs)[0]), (ARANGE,)


def _while_and_cond(jax):
    lax = jax.lax

    def f(x):
        y = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))[1]
        return lax.cond(y.sum() > 0, lambda v: v * 2, lambda v: -v, y)

    return f, (ARANGE,)


def _layout_constraint(jax):
    layout = importlib.import_module(jax.__name__ + ".experimental.layout")
    column_major = layout.Layout(major_to_minor=(1, 0))
    return (lambda x: layout.with_layout_constraint(x * 2, column_major)), (GRID,)


def _xla_metadata(jax):
    metadata = importlib.import_module(jax.__name__ + ".experimental.xla_metadata")
    jnp = jax.numpy

    def f(x):
        with metadata.set_xla_metadata(a="b", n=3):
            y = jnp.sin(x) * 2
            with metadata.set_xla_metadata(a="c", flag=True):
                y = jnp.cos(y)
        return metadata.set_xla_metadata(y + 1, tag=False)

    return f, (ARANGE,)


CASES = {
    "token_after_all": _token_after_all,
    "token_create": _token_create,
    "token_create_ignores_its_argument": _token_create_ignores_its_argument,
    "token_after_all_of_nothing": _token_after_all_of_nothing,
    "token_closed_over": _token_closed_over,
    "token_in_pytree": _token_in_pytree,
    "accuracy_sin_highest": _accuracy_sin_highest,
    "accuracy_exp_tolerance": _accuracy_exp_tolerance,
    "accuracy_log_ulps": _accuracy_log_ulps,
    "accuracy_tanh_default": _accuracy_tanh_default,
    "accuracy_each_function": _accuracy_each_function,
    "accuracy_exp2": _accuracy_exp2,
    "accuracy_logistic": _accuracy_logistic,
    "accuracy_complex_sin": _accuracy_complex_sin,
    "accuracy_jvps": _accuracy_jvps,
    "accuracy_jvp_logistic": _accuracy_jvp_logistic,
    "accuracy_vmap": _accuracy_vmap,
    "split": _split,
    "split_under_vmap": _split_under_vmap,
    "stack_and_unstack": _stack_and_unstack,
    "jnp_stack_promotes_then_stacks": _jnp_stack_promotes_then_stacks,
    "tile": _tile,
    "device_put_pytree": _device_put_pytree,
    "device_put_to_a_device": _device_put_to_a_device,
    "device_put_donated": _device_put_donated,
    "device_put_under_grad": _device_put_under_grad,
    "nested_jit": _nested_jit,
    "nested_jit_donated": _nested_jit_donated,
    "nested_jit_operand_twice_keep_unused": _nested_jit_operand_twice_keep_unused,
    "scan_with_grad": _scan_with_grad,
    "while_and_cond": _while_and_cond,
    "layout_constraint": _layout_constraint,
    "xla_metadata": _xla_metadata,
}

# How much of the lowered module is compared: everything (the default), only the ops
# carrying ``result_accuracy`` (exp2: JAX also broadcasts its scalar constant), or
# nothing (logistic: JAX lowers 1 / (1 + exp(-x)), modjax stablehlo.logistic; complex
# sin: JAX lowers a formula of real ops, modjax stablehlo.sine; neither carries the
# accuracy, in both libraries).
LOWERED = {
    # tile: JAX reshapes to (1, s0, 1, s1, ...) and broadcasts; modjax broadcasts at once
    "tile": "none",
    "accuracy_exp2": "accuracy",
    "accuracy_jvps": "accuracy",  # tanh's JVP calls logistic, lowered as said below
    "accuracy_logistic": "none",
    "accuracy_jvp_logistic": "none",
    "accuracy_complex_sin": "none",
    # JAX calls private functions for the body and the slicing; modjax inlines them
    "scan_with_grad": "none",
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
_TOLERANCE = re.compile(r"<jax\._src\.lax\.lax\.Tolerance object at 0x\w+>|Tolerance\([^()]*\)")
# JAX lets XLA choose the layout of a result a layout constraint made (modjax's results
# keep the default layout, as all its Arrays).
_AUTO_LAYOUT = ', mhlo.layout_mode = "auto"'
_DEFAULT_PARAMS = re.compile(r"\s*\blinear=\([^()]*\)|\s*\bout_sharding=None\b")
_DEF = re.compile(r"^\s*(%[\w#]+) = ")
_VALUE = re.compile(r"%(?!arg\d)[\w]+")


def normalize_jaxpr(text: str) -> str:
    """A jaxpr's text without the known differences of spelling: modjax's ``~`` on weak
    types and its scan's ``linear=`` (JAX 0.10's scan has no such param), JAX's
    ``out_sharding=None`` (modjax leaves out that default), JAX's unprintable Tolerance
    (``<... object at 0x...>``), line breaks."""
    text = _TOLERANCE.sub("Tolerance(...)", text.replace("~", ""))
    text = _DEFAULT_PARAMS.sub("", text)
    return re.sub(r"\s*([\[\]])\s*", r"\1", re.sub(r"\s+", " ", text)).strip()


def normalize_lowered(text: str, part: str = "all") -> str:
    """A module's text without JAX's result_info, result layout modes and replica counts,
    without ops whose result nothing uses (JAX emits a dead copy of each op carrying an
    accuracy), with values renamed in order of appearance; ``part="accuracy"`` keeps only
    the ops carrying ``result_accuracy``."""
    text = _MODULE_ATTRS.sub("", _RESULT_INFO.sub("", text.replace(_AUTO_LAYOUT, "")))
    text = _ONE_RESULT.sub(r"-> \1 {", text)
    lines = [re.sub(r" +", " ", line).rstrip() for line in text.strip().splitlines()]
    while True:  # drop dead definitions
        uses = " ".join(_DEF.sub("", line) for line in lines)
        dead = [
            i
            for i, line in enumerate(lines)
            if (m := _DEF.match(line)) and not re.search(re.escape(m.group(1)) + r"\b", uses)
        ]
        if not dead:
            break
        lines = [line for i, line in enumerate(lines) if i not in dead]
    if part == "accuracy":
        lines = [_DEF.sub("", line).strip() for line in lines if "result_accuracy" in line]
    names: dict[str, str] = {}
    return "\n".join(
        _VALUE.sub(lambda m: names.setdefault(m.group(), f"%v{len(names)}"), line) for line in lines
    )


def agree(modjax_texts: dict, jax_texts: dict, name: str) -> list[str]:
    """The kinds of text (jaxpr, lowered) in which a case's two recordings differ."""
    bad = []
    if normalize_jaxpr(modjax_texts["jaxpr"]) != normalize_jaxpr(jax_texts["jaxpr"]):
        bad.append("jaxpr")
    part = LOWERED.get(name, "all")
    if part != "none" and normalize_lowered(modjax_texts["lowered"], part) != normalize_lowered(
        jax_texts["lowered"], part
    ):
        bad.append("lowered")
    return bad


if __name__ == "__main__":
    out = record(importlib.import_module("jax"))
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
