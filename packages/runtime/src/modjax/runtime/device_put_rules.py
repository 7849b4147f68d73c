"""The rules of ``device_put_p`` (declared in ``array.py``, next to ``device_put``).

Lowered as the identity (a program runs on the devices it was compiled for), linear
(its transpose puts each cotangent back on the source, copying, as JAX's does),
unchanged by ``vmap``, and printed as JAX prints it:
``device_put[copy_semantics=(ArrayCopySemantics.REUSE_INPUT,) devices=(None,) srcs=(None,)]``.

It also gives autodiff its host-to-array conversion: a gradient that met no primitive
(``grad(lambda x: x)(1.0)``) is the seed autodiff made on the host, and is placed on the
default device here, so that ``grad`` returns an Array as JAX's does.
"""

from __future__ import annotations

import re

import numpy as np

from modjax.autodiff import Zero, jvp_rules, register_host_to_array, transpose_rules
from modjax.batching import batching_rules
from modjax.lowering import register_lowering
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer

from .array import CopySemantics, device_put, device_put_p
from .backends import devices as all_devices
from .memory import MemorySpace
from .sharding import single_device_sharding

__all__: list[str] = []


def _transpose(cts, *xs, devices, srcs, copy_semantics):
    live = [i for i, ct in enumerate(cts) if type(ct) is not Zero]
    out: list = [Zero(x.aval) if type(ct) is Zero else None for ct, x in zip(cts, xs, strict=True)]
    if live:
        # As JAX 0.10.2: a cotangent goes back to its source, and to host memory when the
        # source is unnamed and the operand was typed there
        back = [
            MemorySpace.Host
            if srcs[i] is None and getattr(xs[i].aval, "memory_space", None) is MemorySpace.Host
            else srcs[i]
            for i in live
        ]
        moved = device_put_p.bind(
            *(cts[i] for i in live),
            devices=tuple(back),
            srcs=tuple(devices[i] for i in live),
            copy_semantics=(CopySemantics.ALWAYS_COPY,) * len(live),
        )
        for i, m in zip(live, moved, strict=True):
            out[i] = m
    return out


def _pick(params: dict, live: list[int]) -> dict:
    return {k: tuple(v[i] for i in live) for k, v in params.items()}


def _jvp(primals, tangents, **params):
    # Linear; symbolic zero tangents (float0 ones of integer inputs) stay symbolic.
    out = device_put_p.bind(*primals, **params)
    tangents_out = [Zero.from_primal_value(o) for o in out]
    live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    if live:
        moved = device_put_p.bind(*(tangents[i] for i in live), **_pick(params, live))
        for i, t in zip(live, moved, strict=True):
            tangents_out[i] = t
    return out, tangents_out


register_lowering(device_put_p, lambda ctx, *xs, **_: list(xs))
jvp_rules[device_put_p] = _jvp
transpose_rules[device_put_p] = _transpose
batching_rules[device_put_p] = lambda args, dims, **params: (
    device_put_p.bind(*args, **params),
    list(dims),
)


def _format_tuple(values, text=str) -> str:
    return "(" + ", ".join(text(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def _format_devices(values) -> str:
    return _format_tuple(values, repr)  # CpuDevice(id=0), as JAX prints it


def _entries(text: str) -> list[str]:
    inner = text.strip()
    if not (inner.startswith("(") and inner.endswith(")")):
        raise ValueError(f"expected a tuple, got {text!r}")
    # split at the commas outside parentheses: SingleDeviceSharding(device=..., memory_kind=...)
    entries, depth, start = [], 0, 1
    for i, c in enumerate(inner[1:-1], 1):
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            entries.append(inner[start:i])
            start = i + 1
    entries.append(inner[start:-1])
    return [e.strip() for e in entries if e.strip()]


_DEVICE = re.compile(r"\w+\(id=(\d+)\)$")
_SINGLE_DEVICE = re.compile(r"SingleDeviceSharding\(device=(.*), memory_kind=(\w+)\)$")


def _device(text: str):
    match = _DEVICE.match(text)
    if match is None:
        raise ValueError(
            "expected None, a device such as CpuDevice(id=0), a MemorySpace or a "
            f"SingleDeviceSharding, got {text!r}"
        )
    wanted = int(match.group(1))
    found = [d for d in all_devices() if d.id == wanted]
    if not found:
        raise ValueError(f"no device with id {wanted}")
    return found[0]


def _parse_devices(text: str) -> tuple:
    out: list = []
    for entry in _entries(text):
        single = _SINGLE_DEVICE.match(entry)
        if entry == "None":
            out.append(None)
        elif entry.startswith("MemorySpace."):  # device_put(x, jax.memory.Space.Host)
            out.append(MemorySpace[entry.removeprefix("MemorySpace.")])
        elif single is not None:
            out.append(single_device_sharding(_device(single.group(1)), single.group(2)))
        else:
            out.append(_device(entry))
    return tuple(out)


def _parse_semantics(text: str) -> tuple:
    return tuple(
        getattr(CopySemantics, entry.removeprefix("ArrayCopySemantics."))
        for entry in _entries(text)
    )


for _name in ("devices", "srcs"):
    register_param_printer(device_put_p, _name, _format_devices)
    register_param_parser(device_put_p, _name, _parse_devices)
register_param_printer(device_put_p, "copy_semantics", _format_tuple)
register_param_parser(device_put_p, "copy_semantics", _parse_semantics)


def _host_to_array(x):
    # Only host scalars and numpy arrays: anything else (an Array, a token) is kept.
    if isinstance(x, bool | int | float | complex | np.ndarray | np.generic):
        return device_put(x)  # Python scalars stay weakly typed
    return x


register_host_to_array(_host_to_array)
