"""Shardings in types (explicit mesh axes) on 8 CPU devices, against JAX 0.10.2's answers.

One child process runs every check. ``check_cases_match_jax`` evaluates the
recorded expressions of ``data/sharding_types_jax.json`` (types such as
``f32[8@x,4]``, values, and the ShardingTypeErrors of ambiguous contractions,
illegal results and reshapes) and compares them with JAX's; the other checks
cover what a recording does not: printing, jit's cache, tracing of unsharded
programs, AbstractMesh shardings.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
from eight_device_checks import device_tests

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.sharding import AbstractMesh, AxisType
from modjax.sharding import NamedSharding as NS
from modjax.sharding import PartitionSpec as P
from modjax.sharding.testing import main

DATA = pathlib.Path(__file__).parent / "data" / "sharding_types_jax.json"


def _env():
    mesh = jax.make_mesh((2, 4), ("x", "y"))

    def put(shape, spec):
        value = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10
        return jax.device_put(value, NS(mesh, spec))

    arrays = {
        "a": put((8, 8), P(("x", "y"), None)),
        "b": put((8, 8), P(None, "y")),
        "c": put((4, 8, 8), P("x", None, "y")),
        "d": put((4, 8, 8), P("x", None, None)),
        "e": put((8, 8), P(None, "x")),
        "f": put((8, 8), P("x", None)),
        "g": put((8, 8), P("y", None)),
        "u": jnp.ones((8, 8), jnp.float32),
    }
    return {"jax": jax, "jnp": jnp, "lax": lax, "NS": NS, "P": P, "np": np, "mesh": mesh, **arrays}


def check_cases_match_jax():
    data = json.loads(DATA.read_text())
    env = _env()
    wrong = []
    for name, text in data["cases"].items():
        want = data["results"][name]
        try:
            with jax.set_mesh(env["mesh"]):
                r = eval(text, env)
            got = {"type": jax.typeof(r).str_short(short_dtypes=True)}
            if "type" in want:
                got_value = np.asarray(r).astype(np.float64)  # bfloat16 and bool too
                # XLA's CPU code differs between CPUs (vector widths, so the order of a
                # matmul's sums): sin/cos of products near 100 then differ by ~4e-5
                # relative from the recording (seen on an AMD EPYC VM, before and after).
                np.testing.assert_allclose(got_value, np.asarray(want["value"]), rtol=1e-4)
        except AssertionError as ex:
            wrong.append(f"{name}: values differ: {ex}")
            continue
        except Exception as ex:
            got = {"error": type(ex).__name__, "message": str(ex).split("\n")[0]}
        want = {k: v for k, v in want.items() if k != "value"}
        if got != want:
            wrong.append(f"{name}: {text}\n  modjax: {got}\n  JAX:    {want}")
    assert not wrong, "\n".join(wrong)


def _unsharded(ndim):
    """JAX's sharding of a type with none: the empty mesh, every dimension unsplit."""
    return NS(jax.sharding.AbstractMesh((), ()), P(*[None] * ndim))


def check_aval_sharding_and_printing():
    env = _env()
    mesh, a = env["mesh"], env["a"]
    aval = jax.typeof(a)
    assert aval.sharding.spec == P(("x", "y"), None), aval.sharding
    assert a.aval.sharding is aval.sharding
    assert repr(aval) == "ShapedArray(float32[8@(x,y),8])", repr(aval)
    assert str(aval) == "float32[8@(x,y),8]", str(aval)  # as JAX: long dtype names
    text = str(jax.make_jaxpr(lambda x: jnp.sin(x) @ env["b"])(env["f"]))
    assert "a:f32[8,8@y]; b:f32[8@x,8]" in text and "f32[8@x,8@y] = dot_general" in text, text
    # Auto axes and single devices leave types unsharded, printed as before.
    auto = jax.sharding.Mesh(mesh.devices, ("x", "y"))
    v = jax.device_put(np.ones((8, 8), np.float32), NS(auto, P("x", "y")))
    assert jax.typeof(v).sharding == _unsharded(2) and str(jax.typeof(v)) == "float32[8,8]"
    assert jax.typeof(jnp.ones(3)).sharding == _unsharded(1)
    assert (
        repr(_unsharded(1)) == "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None,))"
    )
    assert _unsharded(0).is_fully_replicated and _unsharded(2).mesh.empty
    # Only the explicit axes of a partly explicit mesh enter the type.
    part = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    w = jax.device_put(np.ones((8, 4), np.float32), NS(part, P("x", "y")))
    assert jax.typeof(w).str_short(short_dtypes=True) == "f32[8@x,4]"


def check_jit_retraces_per_type_and_outputs_follow_types():
    env = _env()
    traces = []

    @jax.jit
    def f(x):
        traces.append(jax.typeof(x).str_short(short_dtypes=True))
        return x * 2

    for name in ("a", "f", "a"):
        out = f(env[name])
        assert jax.typeof(out) == jax.typeof(env[name]), (name, jax.typeof(out))
    assert traces == ["f32[8@(x,y),8]", "f32[8@x,8]"], traces
    # Results feed back into the cached program: typed avals keep the fast path.
    y = f(env["f"])
    before = dict(f._stats)
    for _ in range(3):
        y = f(y)
    assert dict(f._stats) == before and y.sharding is env["f"].sharding, (f._stats, y.sharding)


def check_named_sharding_on_an_abstract_mesh():
    env = _env()
    am = AbstractMesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    s = NS(am, P("x"))
    assert repr(s) == (
        "NamedSharding(mesh=AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit)), "
        "spec=P('x',))"
    ), repr(s)
    assert s == NS(am, P("x")) and s.shard_shape((8, 8)) == (4, 8)
    with jax.set_mesh(env["mesh"]):
        r = jax.jit(lambda v: jax.sharding.reshard(v, NS(am, P(None, "y"))))(env["a"])
    assert jax.typeof(r).str_short(short_dtypes=True) == "f32[8,8@y]"
    assert r.sharding.spec == P(None, "y"), r.sharding
    # As JAX 0.10.2 (recorded by hand): what needs devices raises its ValueError.
    assert not s.is_fully_replicated and NS(am, P()).is_fully_replicated
    assert s.is_equivalent_to(NS(am, P("x", None)), 2) and s.memory_kind is None
    assert repr(s.with_memory_kind("device")).endswith("spec=P('x',), memory_kind=device)")
    for get in (
        lambda: s.device_set,
        lambda: s.is_fully_addressable,
        lambda: s.devices_indices_map((8, 8)),
        lambda: jax.device_put(np.ones((8, 8)), s),
        lambda: jax.jit(lambda v: v * 2, out_shardings=s)(env["f"]),
    ):
        try:
            get()
        except ValueError as ex:
            assert "AbstractMesh" in str(ex), ex
        else:
            raise AssertionError("JAX raises ValueError")
    with jax.set_mesh(env["mesh"]):
        r = jax.jit(lambda v: v * 2, out_shardings=s)(np.ones((8, 8), np.float32))
    assert jax.typeof(r).str_short(short_dtypes=True) == "f32[8@x,8]", jax.typeof(r)


def check_inspect_array_sharding_inside_jit():
    env = _env()
    seen = []

    @jax.jit
    def f(x):
        y = x * 2
        jax.debug.inspect_array_sharding(y.T, callback=seen.append)
        return y

    f(env["f"])
    f(env["f"])  # once per compilation, as in JAX
    auto = jax.sharding.Mesh(env["mesh"].devices, ("x", "y"))
    v = jax.device_put(np.ones((8, 8), np.float32), NS(auto, P("x")))
    f(v)
    f(v)
    # JAX 0.10.2: XLA's choice, on the program's mesh rebuilt with automatic axes.
    assert seen == [NS(auto, P(None, "x"))] * 2, seen


def _inspected(fn, x, **jit_kwargs):
    """What ``inspect_array_sharding`` inside ``jit(fn)`` reports over two calls."""
    seen = []
    f = jax.jit(lambda a: fn(a, seen.append), **jit_kwargs)
    f(x)
    f(x)
    return seen


def check_inspect_array_sharding_chosen_by_xla():
    inspect = jax.debug.inspect_array_sharding
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    on_x, on_xy = NS(mesh, P("x")), NS(mesh, P("x", "y"))
    # (value inspected, in_shardings, JAX 0.10.2's specs, one call per compilation)
    cases = [
        (lambda a, cb: inspect(a, callback=cb), on_x, [P("x")]),
        (lambda a, cb: inspect(a * 2, callback=cb), on_x, [P("x")]),
        (lambda a, cb: inspect((a * 2).T, callback=cb), on_x, [P(None, "x")]),
        (lambda a, cb: inspect(a + 1, callback=cb), on_xy, [P("x", "y")]),
        (lambda a, cb: inspect(a + 1, callback=cb), NS(mesh, P()), [P()]),
        (lambda a, cb: inspect(a.sum(0), callback=cb), on_x, [P()]),
        (lambda a, cb: inspect(a.sum(), callback=cb), on_x, [P()]),
        (lambda a, cb: inspect(a @ a, callback=cb), on_xy, [P("x", "y")]),
        (
            lambda a, cb: inspect(a.reshape(64), callback=cb),
            NS(mesh, P(("x", "y"))),
            [P(("x", "y"))],
        ),
        (lambda a, cb: inspect({"a": a, "b": a[0]}, callback=cb), on_x, [P("x"), P()]),
        (
            lambda a, cb: inspect(
                lax.with_sharding_constraint(a, NS(mesh, P(None, "y"))), callback=cb
            ),
            on_x,
            [P(None, "y")],
        ),
        (lambda a, cb: jax.vmap(lambda r: inspect(r * 2, callback=cb))(a), on_x, [P("x")]),
        (
            lambda a, cb: jax.grad(lambda r: (inspect(r * 2, callback=cb), r.sum())[1])(a),
            on_x,
            [P("x")],
        ),
    ]
    for i, (fn, given, want) in enumerate(cases):
        seen = _inspected(fn, x, in_shardings=given)
        assert seen == [NS(mesh, s) for s in want], (i, seen)
    # The mesh is the program's, its devices in the given order, its axes automatic.
    explicit = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    seen = _inspected(
        lambda a, cb: inspect(a * 2, callback=cb), x, in_shardings=NS(explicit, P("x"))
    )
    assert seen == [NS(mesh, P("x"))] and seen[0].mesh != explicit, seen
    flipped = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2)[::-1], ("x", "y"))
    seen = _inspected(
        lambda a, cb: inspect(a + 1, callback=cb), x, in_shardings=NS(flipped, P("x"))
    )
    assert seen == [NS(flipped, P("x"))], seen
    with jax.set_mesh(mesh):
        seen = _inspected(lambda a, cb: inspect(a * 3, callback=cb), x, in_shardings=P("x"))
    assert seen == [NS(mesh, P("x"))], seen
    # One device: nothing to partition, replicated (on the mesh if there is one).
    seen = _inspected(lambda a, cb: inspect(a + 1, callback=cb), x)
    assert len(seen) == 1 and type(seen[0]).__name__ == "GSPMDSharding", seen
    assert seen[0].is_fully_replicated and seen[0]._device_assignment == (jax.devices()[0],)
    one = jax.make_mesh((1,), ("x",))
    seen = _inspected(lambda a, cb: inspect(a + 1, callback=cb), x, in_shardings=NS(one, P("x")))
    one_auto = jax.sharding.Mesh(one.devices, ("x",))
    assert seen == [NS(one_auto, P())], seen
    # In a shard_map's body: replicated over the shard_map's own mesh, its types kept.
    for on, axis_names in ((mesh, frozenset()), (explicit, {"x"})):

        def body(a, cb, on=on, axis_names=axis_names):
            inner = jax.shard_map(
                lambda v: (inspect(v * 2, callback=cb), v)[1],
                mesh=on,
                in_specs=P("x"),
                out_specs=P("x"),
                axis_names=axis_names,
            )
            return inner(a)

        seen = _inspected(body, x)
        assert seen == [NS(on, P())] and seen[0].mesh.axis_types == on.axis_types, seen
    # Lowering alone compiles nothing: no call (JAX calls it from XLA's partitioner).
    seen = []
    jax.jit(lambda a: inspect(a * 2, callback=seen.append), in_shardings=on_x).lower(x)
    assert seen == [], seen


#: One primitive each, run eagerly on ``c`` (f32[4@x,8,8@y]) and ``m`` (f32[8@x,8]): JAX 0.10.2's
#: eager result types (``jax.typeof(y)``), which its ``y.sharding`` spells too.
EAGER_OPS = {
    "slice": ("lambda c, m: lax.slice(c, (0, 0, 0), (4, 8, 4))", "f32[4@x,8,4@y]"),
    "slice_mid": ("lambda c, m: lax.slice(c, (0, 2, 0), (4, 6, 8))", "f32[4@x,4,8@y]"),
    "dynamic_slice": ("lambda c, m: lax.dynamic_slice(c, (0, 1, 0), (4, 4, 8))", "f32[4@x,4,8@y]"),
    "dynamic_slice_cut": (
        "lambda c, m: lax.dynamic_slice(c, (0, 0, 0), (4, 8, 4))",
        "f32[4@x,8,4@y]",
    ),
    "dynamic_update_slice": (
        "lambda c, m: lax.dynamic_update_slice(c, lax.slice(c, (0, 0, 0), (4, 2, 8)), (0, 3, 0))",
        "f32[4@x,8,8@y]",
    ),
    "transpose": ("lambda c, m: lax.transpose(c, (2, 0, 1))", "f32[8@y,4@x,8]"),
    "reduce_sum": ("lambda c, m: c.sum(1)", "f32[4@x,8@y]"),
    "reduce_max": ("lambda c, m: lax.reduce_max(c, (0,))", "f32[8,8@y]"),
    "cumsum": ("lambda c, m: jnp.cumsum(c, axis=1)", "f32[4@x,8,8@y]"),
    "sort": ("lambda c, m: lax.sort(c, dimension=1)", "f32[4@x,8,8@y]"),
    "rev": ("lambda c, m: lax.rev(c, (1,))", "f32[4@x,8,8@y]"),
    "pad": ("lambda c, m: lax.pad(c, 0.0, ((0, 0, 0), (1, 1, 0), (0, 0, 0)))", "f32[4@x,10,8@y]"),
    "broadcast_in_dim": ("lambda c, m: lax.broadcast_in_dim(m, (3, 8, 8), (1, 2))", "f32[3,8@x,8]"),
    "squeeze": (
        "lambda c, m: lax.squeeze(lax.slice(c, (0, 0, 0), (4, 1, 8)), (1,))",
        "f32[4@x,8@y]",
    ),
    "expand_dims": ("lambda c, m: lax.expand_dims(m, (1,))", "f32[8@x,1,8]"),
    "reshape": ("lambda c, m: lax.reshape(c, (2, 2, 8, 8))", "f32[2@x,2,8,8@y]"),
    "dot_general": (
        "lambda c, m: lax.dot_general(c, jnp.ones((8, 3)), (((2,), (0,)), ((), ())))",
        "f32[4@x,8,3]",
    ),
    "select_n": ("lambda c, m: lax.select(c > 3, c, -c)", "f32[4@x,8,8@y]"),
    "sin": ("lambda c, m: jnp.sin(c)", "f32[4@x,8,8@y]"),
    "add": ("lambda c, m: c + c", "f32[4@x,8,8@y]"),
    "convert_element_type": ("lambda c, m: c.astype(jnp.int32)", "i32[4@x,8,8@y]"),
    "argmax": ("lambda c, m: jnp.argmax(c, axis=1)", "i32[4@x,8@y]"),
    "concatenate": ("lambda c, m: lax.concatenate([c, c], 1)", "f32[4@x,16,8@y]"),
    "take": ("lambda c, m: jnp.take(c, jnp.array([0, 2]), axis=1)", "f32[4@x,2,8@y]"),
    "index_int": ("lambda c, m: c[:, 3]", "f32[4@x,8@y]"),
    "clamp": ("lambda c, m: lax.clamp(0.0, c, 5.0)", "f32[4@x,8,8@y]"),
    "cumprod": ("lambda c, m: lax.cumprod(c, axis=1)", "f32[4@x,8,8@y]"),
    "reduce_precision": ("lambda c, m: lax.reduce_precision(c, 5, 10)", "f32[4@x,8,8@y]"),
    "integer_pow": ("lambda c, m: lax.integer_pow(c, 2)", "f32[4@x,8,8@y]"),
}


def check_eager_results_typed_as_under_jit():
    # An eager primitive's result is laid out as its sharding rule types it (JAX's
    # `jax.typeof(y).sharding`), not as XLA would choose: equal to jit's result.
    env = _env()
    c, m = env["c"], env["f"]
    wrong = []
    for name, (text, want) in EAGER_OPS.items():
        f = eval(text, env)
        y, z = f(c, m), jax.jit(f)(c, m)
        ty, tz = (jax.typeof(v).str_short(short_dtypes=True) for v in (y, z))
        if ty != tz or (want is not None and ty != want):
            wrong.append(f"{name}: eager {ty}, jit {tz}, JAX {want}")
        if y.sharding != jax.typeof(y).sharding or y.sharding != z.sharding:
            wrong.append(f"{name}: eager sharding {y.sharding}, jit {z.sharding}")
        np.testing.assert_allclose(np.asarray(y), np.asarray(z), rtol=1e-6)
    assert not wrong, "\n".join(wrong)


def check_array_out_sharding_outside_a_mesh():
    # JAX 0.10.2 (recorded by hand): outside set_mesh, host data keeps its empty-mesh
    # type, so a NamedSharding out_sharding is ignored (the default device, eagerly and
    # under jit); an Array is resharded; a NamedSharding naming an automatic axis raises.
    env = _env()
    ns, host = NS(env["mesh"], P("x")), np.ones((8, 4), np.float32)
    for make in (
        lambda: jnp.array(host, out_sharding=ns),
        lambda: jnp.array(host.tolist(), out_sharding=ns),
        lambda: jnp.asarray(host.tolist(), out_sharding=ns),
    ):
        for r in (make(), jax.jit(make)()):
            assert jax.typeof(r).str_short(short_dtypes=True) == "f32[8,4]", jax.typeof(r)
            assert r.sharding == jax.sharding.SingleDeviceSharding(jax.devices()[0]), r.sharding
    r = jnp.asarray(env["f"], out_sharding=NS(env["mesh"], P(None, "y")))
    assert jax.typeof(r).str_short(short_dtypes=True) == "f32[8,8@y]" and r.sharding.spec == P(
        None, "y"
    ), r.sharding
    auto = jax.sharding.Mesh(env["mesh"].devices, ("x", "y"))
    try:
        jnp.array(host, out_sharding=NS(auto, P("x")))
    except ValueError as ex:
        assert str(ex).startswith(
            "PartitionSpec passed to jnp.array cannot contain axis names that are of type "
            "Auto or Manual. Got PartitionSpec: P('x',) with axis name: x of type: AxisType.Auto."
        ), ex
    else:
        raise AssertionError("JAX raises ValueError for an automatic axis")


def check_out_sharding_on_the_empty_mesh_is_none():
    # JAX 0.10.2: ``jax.typeof(x).sharding`` of an unsharded x is a NamedSharding on the
    # empty AbstractMesh; given as out_sharding it means none (flax's Dropout passes it).
    x = jnp.ones((2, 3))
    none = jax.typeof(x).sharding
    key = jax.random.key(0)
    for make in (
        lambda: jax.random.bernoulli(key, 0.5, (2, 3), out_sharding=none),
        lambda: jnp.zeros((2, 3), out_sharding=none),
        lambda: jnp.reshape(x.T, (2, 3), out_sharding=none),
        lambda: jnp.einsum("ij,ij->ij", x, x, out_sharding=none),
    ):
        for r in (make(), jax.jit(make)()):
            assert jax.typeof(r).str_short(short_dtypes=True) in ("f32[2,3]", "bool[2,3]"), r
    np.testing.assert_array_equal(
        jax.random.bernoulli(key, 0.5, (2, 3), out_sharding=none),
        jax.random.bernoulli(key, 0.5, (2, 3)),
    )


def check_loop_carry_shardings_message():
    # JAX 0.10.2's whole message (recorded by hand): carries typed on the mesh compare
    # their shardings; a reshard to P() is typed on the mesh, so it differs too.
    env = _env()
    f, b = env["f"], env["b"]

    def body(v, _):
        return (jax.sharding.reshard(v[0], P()), jax.sharding.reshard(v[1], P("y"))), None

    try:
        with jax.set_mesh(env["mesh"]):
            lax.scan(body, (f, b), None, length=2)
    except TypeError as ex:
        assert str(ex) == (
            "scan body function carry input and carry output must have equal types, but they "
            "differ:\n\n  * the input carry component v[0] has type float32[8@x,8] but the "
            "corresponding output carry component has type float32[8,8];\n  * the input carry "
            "component v[1] has type float32[8,8@y] but the corresponding output carry component "
            "has type float32[8@y,8].\n\nRevise the function so that all output types match the "
            "corresponding input types."
        ), str(ex)
    else:
        raise AssertionError("JAX raises TypeError for carries that change sharding")


def check_values_made_under_set_mesh():
    # JAX 0.10.2 (recorded by hand): under set_mesh, values made from host data or from
    # operands with no mesh in their type (jnp.zeros, jnp.asarray of numpy data, arange,
    # random numbers, an eager op or a jit of an unsharded value) are typed on the current
    # mesh, replicated, and live replicated on all its devices, committed. Under jit, host
    # data and unsharded arguments keep their empty-mesh type (None here).
    env = _env()
    mesh, u = env["mesh"], env["u"]  # u was made outside set_mesh
    makers = {
        "zeros": lambda: jnp.zeros((8, 4)),
        "asarray": lambda: jnp.asarray(np.ones((8, 4), np.float32)),
        "array": lambda: jnp.array([1.0, 2.0]),
        "scalar": lambda: jnp.asarray(2.0),
        "arange": lambda: jnp.arange(8),
        "eager": lambda: u + 1,
        "normal": lambda: jax.random.normal(jax.random.key(0), (8,)),
        "jit_zeros": lambda: jax.jit(lambda: jnp.zeros(8))(),
        "jit_of_unsharded": lambda: jax.jit(lambda x: x * 2)(u),
    }
    host_spec = {"asarray", "array", "scalar"}  # JAX's x.sharding spec is P() for these
    seen = {}

    def body(x):
        seen["arg"] = jax.typeof(x).sharding
        seen["const"] = jax.typeof(jnp.asarray(np.ones(3, np.float32))).sharding
        seen["zeros"] = jax.typeof(jnp.zeros(3)).sharding
        seen["mul"] = jax.typeof(x * 2).sharding
        return x

    with jax.set_mesh(mesh):
        for name, make in makers.items():
            r = make()
            typed = jax.typeof(r).sharding
            assert typed is not None and typed.mesh is mesh, (name, typed)
            assert typed.spec == P(*[None] * r.ndim), (name, typed)
            spec = P() if name in host_spec else typed.spec
            assert r.sharding == NS(mesh, spec), (name, r.sharding)
            assert r.committed and len(r.addressable_shards) == 8, name
        np.testing.assert_array_equal(np.asarray(makers["eager"]()), np.asarray(u) + 1)
        jax.jit(body)(u)
        # in_shardings on the abstract mesh: the argument's type keeps them, while
        # `a * 2` is typed by its literal, on the mesh replicated (JAX 0.10.2's answers).
        host = np.arange(64, dtype=np.float32).reshape(8, 8)
        on_abstract = NS(mesh.abstract_mesh, P("x"))
        for fn, want, spec in (
            (lambda a: a, "f32[8@x,8]", P("x")),
            (lambda a: a * 2, "f32[8,8]", P(None, None)),
        ):
            r = jax.jit(fn, in_shardings=on_abstract)(host)
            assert jax.typeof(r).str_short(short_dtypes=True) == want, jax.typeof(r)
            assert r.sharding == NS(mesh, spec), r.sharding
    assert seen["arg"] == _unsharded(2) and seen["const"] == _unsharded(1), seen
    assert seen["zeros"].spec == P(None) and seen["mul"].spec == P(None, None), seen
    auto = jax.sharding.Mesh(mesh.devices, ("x", "y"))
    with jax.set_mesh(auto):  # JAX places these too; modjax's types hold explicit axes only
        r = jnp.zeros((8, 4))
    assert r.sharding == NS(auto, P()) and jax.typeof(r).sharding == _unsharded(2), r.sharding
    r = jnp.zeros(8)
    assert jax.typeof(r).sharding == _unsharded(1) and not r.committed, r.sharding
    assert r.sharding == jax.sharding.SingleDeviceSharding(jax.devices()[0]), r.sharding


def check_out_sharding_parameters_of_lax_and_numpy():
    # JAX 0.10.2's answers on a 2x2 mesh (the record in this session's differential run).
    explicit = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    auto = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jnp.arange(16.0).reshape(4, 4)

    def typed(v):
        return jax.typeof(v).str_short(short_dtypes=True)

    on_x = NS(explicit, P("x"))
    assert typed(lax.full((4, 2), 3.0, sharding=on_x)) == "f32[4@x,2]"
    assert typed(lax.full_like(x, 2.0, sharding=on_x)) == "f32[4@x,4]"
    placed = lax.full((4, 2), 3.0, sharding=NS(auto, P("x")))
    assert typed(placed) == "f32[4,2]" and placed.sharding.spec == P("x")
    # Operands with no mesh outside one: the operation ignores the sharding.
    assert typed(lax.reduce_sum(x, (1,), out_sharding=on_x)) == "f32[4]"
    assert typed(lax.reduce(x, 0.0, lax.add, (1,), on_x)) == "f32[4]"
    assert typed(jnp.ravel(x, out_sharding=on_x)) == "f32[16]"
    for make in (
        lambda s: lax.broadcasted_iota(jnp.int32, (4, 2), 1, out_sharding=s),
        lambda s: lax.reduce_sum(x, (1,), out_sharding=s),
        lambda s: lax.rng_bit_generator(jnp.zeros(4, jnp.uint32), (4, 2), out_sharding=s),
        lambda s: jnp.ravel(x, out_sharding=s),
        lambda s: jnp.percentile(x, 50.0, axis=1, out_sharding=s),
        lambda s: jnp.bincount(jnp.array([0, 1, 1, 3]), length=4, out_sharding=s),
    ):
        try:
            make(NS(auto, P("x")))
        except ValueError as e:
            assert "cannot contain axis names that are of type Auto" in str(e), e
        else:
            raise AssertionError("an Auto axis in out_sharding must be JAX's ValueError")
    counts = jnp.bincount(jnp.array([0, 1, 1, 3]), length=4, out_sharding=NS(auto, P()))
    assert counts.tolist() == [1, 2, 0, 1]
    try:
        jnp.bincount(jnp.array([0, 1, 1, 3]), length=4, out_sharding=on_x)
    except Exception as e:
        assert type(e).__name__ == "ShardingTypeError" and "fully replicated" in str(e), e
    else:
        raise AssertionError("a sharded bincount result must be JAX's ShardingTypeError")
    xs = jax.device_put(x, NS(explicit, P("x", "y")))
    with jax.set_mesh(explicit):
        assert typed(lax.reduce_sum(xs, (1,), out_sharding=P("x"))) == "f32[4@x]"
        half = jnp.percentile(xs, 50.0, axis=1, out_sharding=P("x"))
        assert typed(half) == "f32[4@x]" and half.tolist() == [1.5, 5.5, 9.5, 13.5]
        assert typed(jnp.ravel(xs, out_sharding=P("x"))) == "f32[16@x]"
        under_jit = jax.jit(lambda a: jnp.percentile(a, 50.0, axis=0, out_sharding=P("y")))(xs)
        assert typed(under_jit) == "f32[4@y]" and under_jit.tolist() == [6.0, 7.0, 8.0, 9.0]


CHECKS = [
    check_out_sharding_on_the_empty_mesh_is_none,
    check_cases_match_jax,
    check_values_made_under_set_mesh,
    check_loop_carry_shardings_message,
    check_array_out_sharding_outside_a_mesh,
    check_aval_sharding_and_printing,
    check_jit_retraces_per_type_and_outputs_follow_types,
    check_named_sharding_on_an_abstract_mesh,
    check_inspect_array_sharding_inside_jit,
    check_inspect_array_sharding_chosen_by_xla,
    check_eager_results_typed_as_under_jit,
    check_out_sharding_parameters_of_lax_and_numpy,
]


results, test_on_8_devices = device_tests(__file__, CHECKS)


if __name__ == "__main__":
    main(CHECKS)
