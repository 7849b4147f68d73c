"""shard_map beyond full manual meshes, on 8 CPU devices, against JAX 0.10.2's answers.

One child process runs every check. ``check_cases_match_jax`` evaluates the
recorded expressions of ``data/shard_map_axes_jax.json`` (``axis_names`` a
strict subset of the mesh, in_specs inferred from explicit types, typed
results, ``axis_index_groups`` on psum/pmax/pmean, all_gather, psum_scatter and
all_to_all under shard_map and pmap, ``lax.pcast``) and compares types,
values and error classes with JAX's; the others check the lowered module of a
partly manual shard_map.
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
from modjax.sharding import NamedSharding as NS
from modjax.sharding import PartitionSpec as P
from modjax.sharding.testing import main
from modjax.tracecore import parse_jaxpr

DATA = pathlib.Path(__file__).parent / "data" / "shard_map_axes_jax.json"


def _env():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    line = jax.make_mesh((8,), ("i",), axis_types=(AxisType.Auto,))
    data = np.arange(64, dtype=np.float32).reshape(8, 8)
    return {
        "jax": jax, "jnp": jnp, "lax": lax, "NS": NS, "P": P, "np": np,
        "mesh": mesh, "auto": auto, "line": line,
        "a": jax.device_put(data, NS(mesh, P("x", "y"))),
        "b": jax.device_put(data, NS(auto, P("x", "y"))),
        "v": np.arange(8, dtype=np.float32), "w": np.float32(3.0),
    }  # fmt: skip


def check_cases_match_jax():
    data = json.loads(DATA.read_text())
    env = _env()
    wrong = []
    for name, text in data["cases"].items():
        want = data["results"][name]
        try:
            r = eval(text, env)
            got = {"type": jax.typeof(r).str_short(short_dtypes=True)}
            if "type" in want:
                np.testing.assert_allclose(np.asarray(r), np.asarray(want["value"]), rtol=1e-5)
        except AssertionError as ex:
            wrong.append(f"{name}: values differ: {ex}")
            continue
        except Exception as ex:
            got = {"error": type(ex).__name__}
        want = {k: v for k, v in want.items() if k != "value"}
        if got != want:
            wrong.append(f"{name}: {text}\n  modjax: {got}\n  JAX:    {want}")
    assert not wrong, "\n".join(wrong)


def check_varying_axes_in_types():
    env = _env()
    seen = {}

    def body(x):
        w = jnp.ones(3)
        seen["x"] = str(jax.typeof(x))
        seen["sum_y"] = str(jax.typeof(lax.psum(x, "y")))
        seen["sum_xy"] = str(jax.typeof(lax.psum(x, ("x", "y"))))
        seen["mixed"] = str(jax.typeof(x + 1.0))
        seen["pcast"] = str(jax.typeof(lax.pcast(w, "x", to="varying")))
        seen["index"] = str(jax.typeof(lax.axis_index("y")))
        seen["ppermute"] = str(jax.typeof(lax.ppermute(w, "x", [(0, 1), (1, 0)])))
        seen["jit"] = str(jax.typeof(jax.jit(lambda v: lax.psum(v, "x"))(x)))
        return x

    jax.shard_map(body, mesh=env["auto"], in_specs=P("x", "y"), out_specs=P("x", "y"))(env["b"])
    # JAX 0.10.2's answers for the same body.
    assert seen == {
        "x": "float32[4,2]{V:(x,y)}",
        "sum_y": "float32[4,2]{V:x}",
        "sum_xy": "float32[4,2]",
        "mixed": "float32[4,2]{V:(x,y)}",
        "pcast": "float32[3]{V:x}",
        "index": "int32[]{V:y}",
        "ppermute": "float32[3]{V:x}",
        "jit": "float32[4,2]{V:y}",
    }, seen
    seen.clear()
    jax.shard_map(
        body, mesh=env["auto"], in_specs=P("x", "y"), out_specs=P("x", "y"), check_vma=False
    )(env["b"])
    assert seen["x"] == "float32[4,2]" and seen["pcast"] == "float32[3]", seen
    # The jaxpr of a checked body prints the varying axes (as JAX's), and parses back; the
    # invariant operand of `mul` is first made varying (JAX's inserted pvary).
    closed = jax.make_jaxpr(
        jax.shard_map(lambda x: x * 2, mesh=env["auto"], in_specs=P("x"), out_specs=P("x"))
    )(env["b"])
    text = str(closed.jaxpr.eqns[0].params["jaxpr"])
    assert text == (
        "{ lambda ; a:f32[4,8]{V:x}. let\n    b:~f32[]{V:x} = pvary[axes=('x',)] 2.0:~f32[]\n"
        "    c:f32[4,8]{V:x} = mul a b\n  in (c,) }"
    ), text
    assert str(parse_jaxpr(text)) == text


def check_partly_manual_lowering():
    env = _env()
    f = jax.jit(
        jax.shard_map(
            lambda x: lax.psum(x * lax.axis_index("x"), "x"),
            mesh=env["auto"],
            in_specs=P("x"),
            out_specs=P(),
            axis_names={"x"},
        )  # fmt: skip
    )
    text = f.lower(env["b"]).as_text()
    # The body is manual over "x" only; axis_index needs every axis manual (nested over "y").
    assert 'manual_axes={"x"}' in text and 'manual_axes={"y"}' in text, text
    assert "replica_groups = dense<[[0, 4], [1, 5], [2, 6], [3, 7]]>" in text, text


CHECKS = [check_cases_match_jax, check_varying_axes_in_types, check_partly_manual_lowering]


results, test_on_8_devices = device_tests(__file__, CHECKS)


if __name__ == "__main__":
    main(CHECKS)
