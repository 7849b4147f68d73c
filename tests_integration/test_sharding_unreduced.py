"""Unreduced and reduced types on 8 CPU devices, against JAX 0.10.2's recorded answers.

One child process runs every check. ``check_cases_match_jax`` evaluates the
expressions of ``data/sharding_unreduced_jax.json`` (NamedShardings with
``unreduced=``/``reduced=`` axes, ``device_put`` to them, contractions whose
``out_sharding`` leaves them unreduced over the contracting axes, the operations
JAX allows on such values and its errors for the others; inside shard_map,
``lax.pcast`` to ``'unreduced'``/``'reduced'``, ``psum`` of partial sums and their
derivatives) and compares types, values, error classes and messages with JAX's;
the others check the lowered modules and the printed jaxprs.
"""

from __future__ import annotations

import json
import pathlib
import re

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

DATA = pathlib.Path(__file__).parent / "data" / "sharding_unreduced_jax.json"

#: Cases JAX 0.10.2 runs and modjax refuses (NotImplementedError, listed in
#: packages/sharding/README.md): derivatives and vmap of a contraction left unreduced,
#: derivatives of a shard_map whose in_specs have unreduced axes.
NOT_SUPPORTED = {"grad_through_unreduced", "vmap_unreduced", "shard_map_grad_in_unreduced"}

#: A message names the function given to shard_map: JAX 0.10.2 names its own wrapper of a
#: single out_specs entry (``_rem_singleton``), modjax the user's.
_FUNCTION = re.compile(r"the function '[^']*'")

#: Cases where modjax deliberately answers where JAX 0.10.2 fails: reducing an array
#: unreduced over every mesh axis (JAX's eager reshard asks for its devices' indices and
#: raises NotImplementedError); modjax gives the value, checked against numpy.
ANSWERED = {"device_put_unreduced_all"}

_SET = re.compile(r"\{('[^']*'(?:, '[^']*')*)\}")


def _sorted_sets(message: str) -> str:
    """The message with the items of each printed set sorted (set order follows string hashes)."""
    message = _FUNCTION.sub("the function", message)
    message = _SET.sub(lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)
    return re.sub(r"\{(frozenset\(.*?\))(, frozenset\(.*?\))+\}", _sort_frozensets, message)


def _sort_frozensets(m: re.Match) -> str:
    return "{" + ", ".join(sorted(re.findall(r"frozenset\(\{[^}]*\}\)", m.group(0)))) + "}"


_TYPES: list[str] = []


def _print_type(x) -> None:
    """Record the type of a value inside a traced body (``inner`` in the recorded answers)."""
    _TYPES.append(jax.typeof(x).str_short(short_dtypes=True))


def _env():
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    mesh3 = jax.make_mesh((2, 2, 2), ("x", "y", "z"))
    data = np.arange(64, dtype=np.float32).reshape(8, 8)
    return {
        "jax": jax, "jnp": jnp, "lax": lax, "NS": NS, "P": P, "np": np, "print_type": _print_type,
        "mesh": mesh, "auto": auto, "mesh3": mesh3, "data": data,
        "a": jax.device_put(data, NS(mesh, P("x", "y"))),
        "c": jax.device_put(data.T, NS(mesh, P("y", None))),
        "d": jax.device_put(data, NS(mesh, P(None, None))),
        "e": jax.device_put(data, NS(mesh, P("x", None))),
        "f": jax.device_put(data, NS(mesh3, P("x", ("y", "z")))),
        "g": jax.device_put(data.T, NS(mesh3, P(("y", "z"), None))),
    }  # fmt: skip


def _answer(text: str, env: dict) -> dict:
    """What evaluating ``text`` gives, recorded as the JSON file records JAX's answers."""
    _TYPES.clear()
    try:
        r = eval(text, env)
    except Exception as ex:
        return {"error": type(ex).__name__, "message": str(ex).split("\n")[0]}
    if isinstance(r, str | bool | tuple):
        return {"result": r if isinstance(r, str) else repr(r)}
    got = {"type": jax.typeof(r).str_short(short_dtypes=True)}
    if _TYPES:
        got["inner"] = _TYPES[0]
    try:
        got["value"] = np.asarray(r)
    except Exception as ex:
        got["value_error"] = type(ex).__name__
    return got


def check_cases_match_jax():
    data = json.loads(DATA.read_text())
    env = _env()
    wrong = []
    for name, text in data["cases"].items():
        want, got = data["results"][name], _answer(text, env)
        if name in NOT_SUPPORTED:
            if got.get("error") != "NotImplementedError":
                wrong.append(f"{name}: expected modjax's NotImplementedError, got {got}")
            continue
        if name in ANSWERED:
            if "value" not in got or not np.array_equal(got["value"], env["data"]):
                wrong.append(f"{name}: expected the reduced value, got {got}")
            continue
        for answer in (want, got):
            if "message" in answer:
                answer["message"] = _sorted_sets(answer["message"])
        if "value" in want and "value" in got:
            try:
                np.testing.assert_allclose(got.pop("value"), np.asarray(want["value"]), rtol=1e-6)
            except AssertionError as ex:
                wrong.append(f"{name}: values differ: {ex}")
                continue
        got.pop("value", None)
        want = {k: v for k, v in want.items() if k != "value"}
        if got != want:
            wrong.append(f"{name}: {text}\n  modjax: {got}\n  JAX:    {want}")
    assert not wrong, "\n".join(wrong)


def check_lowered_as_jax():
    env = _env()
    a, c, mesh = env["a"], env["c"], env["mesh"]
    unreduced = NS(mesh, P("x", unreduced={"y"}))

    def f(a, c):
        return jax.reshard(jnp.matmul(a, c, out_sharding=unreduced), NS(mesh, P("x")))

    text = jax.jit(f).lower(a, c).as_text()
    # As JAX 0.10.2: the partial sums pinned unreduced, then reduced by the next constraint.
    assert 'sdy.sharding_constraint %0 <@mesh, [{"x"}, {}], unreduced={"y"}>' in text, text
    assert 'sdy.sharding_constraint %1 <@mesh, [{"x"}, {}]>' in text, text
    text = jax.jit(lambda a, c: jnp.matmul(a, c, out_sharding=unreduced)).lower(a, c).as_text()
    result = (
        '-> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>'
    )
    assert result in text, text
    mesh3, g = env["mesh3"], env["g"]
    s3 = NS(mesh3, P("x", unreduced={"z", "y"}))
    text = jax.jit(lambda f, g: jnp.matmul(f, g, out_sharding=s3)).lower(env["f"], g).as_text()
    assert 'unreduced={"y", "z"}' in text, text


def check_printed_types():
    env = _env()
    a, c, mesh = env["a"], env["c"], env["mesh"]
    unreduced = NS(mesh, P("x", unreduced={"y"}))

    def twice(a, c):
        return jnp.matmul(a, c, out_sharding=unreduced) + jnp.matmul(a, c, out_sharding=unreduced)

    text = str(jax.make_jaxpr(twice)(a, c))
    # The out_sharding param is not printed: the result's type says it, as in JAX.
    assert "c:f32[8@x,8]{U:y} = dot_general[" in text and "out_sharding" not in text, text
    assert "e:f32[8@x,8]{U:y} = add c d" in text, text
    reduced = jax.device_put(env["data"], NS(mesh, P("y", reduced={"x"})))
    assert str(jax.typeof(reduced)) == "float32[8@y,8]{R:x}"
    # Shards of partial sums: one copy of the value per group along the unreduced axis,
    # zeros on the other devices of the group (JAX's device_put of a host value).
    put = jax.device_put(env["data"], unreduced)
    pieces = [np.asarray(piece) for piece in put._arrays]
    assert [float(p.sum()) != 0 for p in pieces] == [True, False, False, False] * 2


def check_shard_map_casts():
    env = _env()
    a, mesh = env["a"], env["mesh"]

    def body(x):
        return lax.psum(lax.pcast(x, "y", to="unreduced"), "y")

    f = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))
    text = str(jax.make_jaxpr(f)(a))
    # JAX 0.10.2's lines (its names for the cast and the sum of partial sums).
    assert "d:f32[4,2]{V:x, U:y} = vary_unreduced_cast_p[axes=('y',)] c" in text, text
    assert "e:f32[4,2]{V:x} = unreduced_psum[axes=('y',)] d" in text, text
    lowered = jax.jit(f).lower(a).as_text()
    assert lowered.count("stablehlo.all_reduce") == 1, lowered
    assert "replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]>" in lowered, lowered
    # The transpose inside a body traced with types: preduced, then reduced -> varying.
    grad_text = str(jax.make_jaxpr(jax.grad(lambda a: f(a).sum()))(a))
    assert "preduced[axes=('y',)]" in grad_text, grad_text
    assert "reduced_vary_cast_p[axes=('y',)]" in grad_text, grad_text
    # Specs with unreduced axes: Shardy's unreduced={"y"} on the manual computation, as JAX's.
    g = jax.shard_map(
        lambda x: lax.pcast(x, "y", to="unreduced"),
        mesh=mesh,
        in_specs=P("x", "y"),
        out_specs=P("x", unreduced={"y"}),
    )
    lowered = jax.jit(g).lower(a).as_text()
    assert 'out_shardings=[<@mesh, [{"x"}, {}], unreduced={"y"}>]' in lowered, lowered
    # Manual unreduced/reduced axes parse back.
    body_text = (
        "{ lambda ; a:f32[4,2]{V:x, U:y} b:f32[4]{R:(x,y)}. let "
        "c:f32[4,2]{V:x, U:y} = add a a in (c, b) }"
    )
    parsed = parse_jaxpr(body_text)
    assert "b:f32[4]{R:(x,y)}" in str(parsed) and "c:f32[4,2]{V:x, U:y} = add" in str(parsed)
    assert str(parse_jaxpr(str(parsed))) == str(parsed)
    assert parsed.in_avals[1].manual_axis_type.reduced == {"x", "y"}


CHECKS = [check_cases_match_jax, check_lowered_as_jax, check_printed_types, check_shard_map_casts]


results, test_on_8_devices = device_tests(__file__, CHECKS)


if __name__ == "__main__":
    main(CHECKS)
