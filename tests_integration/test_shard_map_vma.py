"""Varying manual axes as part of types inside shard_map (check_vma=True), against JAX 0.10.2.

One child process (8 CPU devices) evaluates the recorded expressions of
``data/shard_map_vma_jax.json``: a ``scan``/``while_loop``/``fori_loop`` carry
that turns varying raises JAX's TypeError (with its ``pcast`` hint), ``cond`` and
``switch`` branches differing in varying axes raise JAX's TypeError, the
``pvary`` JAX inserts (operands of elementwise ops, ``select_n``,
``concatenate``, ``dynamic_slice``, ``dynamic_update_slice``, ``zeros_like``,
``full_like``, results under out_specs, the operands of ``psum``/``pmax``/``pmin``/
``all_gather``/``ppermute``/``psum_scatter``/``all_to_all`` that do not vary over
their axes, with those collectives' values and gradients) is inserted alike, replication
errors list every failing out_specs entry in JAX's words, and ``jax.grad`` taken inside a
body transposes ``psum`` to ``pvary`` and ``pvary`` to ``psum`` (no factor of the axis size;
invariant gradients of invariant values), and ``grad``/``vjp``/``jvp``/``linearize``/
``value_and_grad`` *of* shard_maps whose bodies hold ``cond``/``switch``/``scan``/
``fori_loop``/``while_loop`` on varying operands (with ``checkpoint``, under ``vmap``)
equal JAX's, also under ``jax.auto_pcast(False)`` (``data/shard_map_auto_pcast_jax.json``);
collectives over mesh axes and vmap axes at once (``data/shard_map_vmap_axes_jax.json``).
Each case compares
result types and values, the body's result types and the axes of its
``pvary`` equations, or the error class and message.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
from eight_device_checks import device_tests

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.sharding import AxisType
from modjax.sharding import PartitionSpec as P
from modjax.sharding.testing import main

DATA = pathlib.Path(__file__).parent / "data" / "shard_map_vma_jax.json"
PCAST_OFF = pathlib.Path(__file__).parent / "data" / "shard_map_auto_pcast_jax.json"
VMAP_AXES = pathlib.Path(__file__).parent / "data" / "shard_map_vmap_axes_jax.json"
_X = P("x")


def _env():
    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

    def sm(f, in_specs=_X, out_specs=_X):
        return jax.shard_map(f, mesh=auto, in_specs=in_specs, out_specs=out_specs)

    return {"jax": jax, "jnp": jnp, "lax": lax, "P": P, "np": np, "sm": sm}


def _record(text: str, f, d) -> dict:
    """What the recording script records for one case (see the data file's ``script``)."""
    r = jax.tree.leaves(jax.jit(f)(d))
    res = {
        "types": [jax.typeof(x).str_short(short_dtypes=True) for x in r],
        "values": [np.asarray(x).tolist() for x in r],
    }
    eqn = jax.make_jaxpr(f)(d).jaxpr.eqns[0]
    if text.startswith("sm(") and eqn.primitive.name == "shard_map":
        body = eqn.params["jaxpr"]
        body = getattr(body, "jaxpr", body)
        res["body_out_types"] = [v.aval.str_short(short_dtypes=True) for v in body.outvars]
        axes = {tuple(e.params["axes"]) for e in body.eqns if e.primitive.name == "pvary"}
        res["pvary_axes"] = [list(a) for a in sorted(axes)]
    return res


def check_cases_match_jax():
    data = json.loads(DATA.read_text())
    env = _env()
    d = np.arange(64, dtype=np.float32).reshape(8, 8) / 10
    wrong = []
    for name, text in data["cases"].items():
        want = data["results"][name]
        try:
            got = _record(text, eval(text, env), d)
        except Exception as ex:
            got = {"error": type(ex).__name__, "message": str(ex)}
        if "error" in want or "error" in got:
            if (got.get("error"), got.get("message")) != (want.get("error"), want.get("message")):
                wrong.append(f"{name}: got {got.get('error')} {got.get('message')!r:.2000}")
            continue
        for key in ("types", "body_out_types", "pvary_axes"):
            if got.get(key) != want.get(key):
                wrong.append(f"{name}: {key} {got.get(key)} != JAX's {want.get(key)}")
        for a, b in zip(got["values"], want["values"], strict=True):
            if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5):
                wrong.append(f"{name}: values differ")
    assert not wrong, "\n".join(wrong)


def check_auto_pcast_off_cases_match_jax():
    # With auto_pcast(False) modjax's derivative and batching rules must not combine values
    # of different varying axes where JAX's insert a pvary. Where JAX raises, modjax raises
    # JAX's ValueError class (its rules may reach another operation first, so the message
    # may name another primitive), except the recorded `differs` cases, whose values must
    # be those JAX gives with auto_pcast on.
    data = json.loads(PCAST_OFF.read_text())
    with_pcast = json.loads(DATA.read_text())["results"]
    env = _env()
    d = np.arange(64, dtype=np.float32).reshape(8, 8) / 10
    wrong = []
    for name, text in data["cases"].items():
        want = data["results"][name]
        if name in data["differs"]:
            want = with_pcast[data["differs"][name]]
        try:
            with jax.auto_pcast(False):
                got = _record(text, eval(text, env), d)
        except ValueError as ex:
            got = {"error": type(ex).__name__, "message": str(ex)}
        if "error" in want or "error" in got:
            if got.get("error") != want.get("error"):
                wrong.append(f"{name}: got {got.get('error')} {got.get('message')!r:.2000}")
            continue
        for key in ("types", "body_out_types", "pvary_axes"):
            if got.get(key) != want.get(key):
                wrong.append(f"{name}: {key} {got.get(key)} != JAX's {want.get(key)}")
        for a, b in zip(got["values"], want["values"], strict=True):
            if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5):
                wrong.append(f"{name}: values differ")
    assert not wrong, "\n".join(wrong)


def check_collectives_over_mesh_and_vmap_axes_match_jax():
    # psum/pmax/pmean and axis_index over mesh axes and a vmap's axis at once. Where JAX
    # raises (`differs`), modjax gives the values JAX gives with check_vma=False. The
    # pvary equations are not compared: JAX builds a mixed axis_index from pieces (an
    # invariant iota cast to vary), modjax binds one axis_index.
    data = json.loads(VMAP_AXES.read_text())
    env = _env()
    d = np.arange(64, dtype=np.float32).reshape(8, 8) / 10
    wrong = []
    for name, text in data["cases"].items():
        want = data["results"][data["differs"].get(name, name)]
        got = _record(text, eval(text, env), d)
        for key in ("types", "body_out_types"):
            if key in want and got.get(key) != want[key]:
                wrong.append(f"{name}: {key} {got.get(key)} != JAX's {want[key]}")
        for a, b in zip(got["values"], want["values"], strict=True):
            if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-5):
                wrong.append(f"{name}: values differ")
    assert not wrong, "\n".join(wrong)


def check_scan_carry_error_names_every_component():
    # Three differing carry components: JAX separates the bullets with blank lines.
    env = _env()
    f = env["sm"](
        lambda a: lax.scan(
            lambda c, xi: ((c[0] + xi, c[1] + xi, c[2] + xi), None),
            (jnp.ones(8), jnp.ones(8), jnp.ones(8)),
            a,
        )[0][0][None]
    )
    try:
        f(np.ones((8, 8), np.float32))
    except TypeError as ex:
        text = str(ex)
    else:
        raise AssertionError("a carry turning varying must raise")
    assert "  * the input carry component c[0] has type float32[8] but" in text, text
    assert "do not match;\n\n  * the input carry component c[1]" in text, text
    assert "(c[2]" not in text and "corresponding to the input carry component c[2].\n" in text


CHECKS = [
    check_cases_match_jax,
    check_auto_pcast_off_cases_match_jax,
    check_collectives_over_mesh_and_vmap_axes_match_jax,
    check_scan_carry_error_names_every_component,
]


results, test_on_8_devices = device_tests(__file__, CHECKS)


if __name__ == "__main__":
    main(CHECKS)
