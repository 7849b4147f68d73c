"""Small sharding API behaviours on 8 CPU devices, against JAX 0.10.2's recorded answers.

One child process runs every check: ``jnp.array``/``jnp.asarray`` with ``device=``
a NamedSharding (a sharding constraint, as in JAX: sharded as asked on an
automatic mesh, JAX's ValueError for explicit axes outside a mesh context);
``make_array_from_process_local_data`` in one process (``device_put``, so under jit
too; pytrees; JAX's errors); ``out_sharding=`` of the contractions (ignored for
operands with no mesh outside a mesh context, JAX's errors, results' specs padded);
``out_sharding=`` of reshape, convolutions, ``.at[]``, the creation functions,
``broadcast_to``, ``repeat`` and the random samplers for operands with no mesh
outside a mesh context (ignored, or JAX's ValueError for a one-device program).
"""

from __future__ import annotations

import numpy as np
from eight_device_checks import device_tests

import modjax as jax
import modjax.numpy as jnp
from modjax.sharding import AxisType
from modjax.sharding import NamedSharding as NS
from modjax.sharding import PartitionSpec as P
from modjax.sharding.testing import main

DATA = np.arange(32, dtype=np.float32).reshape(8, 4)
KEY = jax.random.key(0)


def _meshes():
    auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    return auto, jax.make_mesh((2, 4), ("x", "y"))


def _raises(call, kind, text):
    try:
        call()
    except kind as err:
        assert text in str(err), err
    else:
        raise AssertionError(f"expected {kind.__name__}: {text}")


def check_array_device_sharding_is_a_constraint():
    for make in (jnp.asarray, jnp.array):
        _check_device_constraint(make)


def _check_device_constraint(make):
    auto, expl = _meshes()
    s, e = NS(auto, P("x")), NS(expl, P("x"))
    for got in (
        make(DATA, device=s),
        jax.jit(lambda a: make(a, device=s))(DATA),
        jax.jit(lambda: make(DATA, device=s))(),
        make(DATA, copy=False, device=s),
    ):
        assert got.sharding == s and got.committed, got.sharding
        np.testing.assert_array_equal(np.asarray(got), DATA)
    # JAX constrains before ndmin's new leading dimensions.
    assert jnp.array(np.ones(8), ndmin=2, device=s).sharding.spec == P(None, "x")
    assert jax.jit(lambda: make([[1.0, 2.0], [3.0, 4.0]], device=s))().sharding.spec == P("x")
    assert jax.typeof(jax.jit(lambda: make(2.0, device=NS(auto, P())))()).weak_type
    rank = (
        "One of with_sharding_constraint arguments is incompatible with its sharding "
        f"annotation {s}: Sharding {s} is only valid for values of rank at least 1, but was "
        "applied to a value of rank 0. For scalars the PartitionSpec should be P()"
    )
    _raises(lambda: jax.jit(lambda: make(1.0, device=s))(), ValueError, rank)
    # Explicit axes: JAX's with_sharding_constraint refuses them outside a mesh context.
    auto_only = (
        "The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto "
        "axes of the mesh. Got spec=P('x',) and mesh=AbstractMesh('x': 2, 'y': 4, "
        "axis_types=(Explicit, Explicit), device_kind=cpu, num_cores=None, platform=cpu). "
        "You probably meant to use `reshard` API?"
    )
    _raises(lambda: make(DATA, device=e), ValueError, auto_only)
    _raises(lambda: jax.jit(lambda a: make(a, device=e))(DATA), ValueError, auto_only)
    _raises(lambda: jax.jit(lambda: make(1.0, device=e))(), ValueError, rank[:60])
    assert make(DATA, device=NS(expl, P())).sharding.spec == P()
    # An Array already laid out so is returned as is, as in JAX.
    x = jax.device_put(DATA, e)
    if make is jnp.asarray:
        assert make(x, device=e) is x
    else:  # its copy's sharding is P('x', None): a constraint, refused as in JAX
        _raises(lambda: jnp.array(x, device=e), ValueError, auto_only)
    with jax.set_mesh(expl):  # all axes explicit: a reshard, typed
        for got in (make(DATA, device=e), jax.jit(lambda a: make(a, device=e))(DATA)):
            assert str(jax.typeof(got)) == "float32[8@x,4]"
            assert got.sharding.spec == P("x", None), got.sharding
    with jax.set_mesh(auto):
        _raises(lambda: make(DATA, device=e), ValueError, auto_only)


def check_make_array_from_process_local_data_is_device_put_in_one_process():
    auto, expl = _meshes()
    s = NS(auto, P("x"))
    make = jax.make_array_from_process_local_data
    # Under jit (a tracer) and vmap it is device_put, as in JAX; the layout inside a
    # program on an automatic mesh is XLA's choice (JAX 0.10.2 gives P() here).
    out = jax.jit(lambda a: make(s, a))(DATA)
    np.testing.assert_array_equal(np.asarray(out), DATA)
    out = jax.vmap(lambda a: make(NS(auto, P()), a))(DATA)
    np.testing.assert_array_equal(np.asarray(out), DATA)
    tree = make({"a": s, "b": NS(expl, P())}, {"a": DATA, "b": [DATA[0], DATA[1]]})
    assert tree["a"].sharding == s and str(jax.typeof(tree["b"][1])) == "float32[4]"
    assert make(jax.devices()[1], DATA).sharding.device_set == {jax.devices()[1]}
    assert str(jax.typeof(make(NS(expl, P("x")), DATA))) == "float32[8@x,4]"
    for shape in [(16, 4), (8,), 8, (None, 4)]:
        _raises(
            lambda shape=shape: make(s, DATA, shape),
            ValueError,
            "When calling `make_array_from_process_local_data` on a single process, "
            f"global_shape should be None or equal to local_data.shape.Got global_shape={shape} "
            "and local_data.shape=(8, 4).",
        )
    _raises(lambda: make(P("x"), DATA), ValueError, "Please set a mesh via `jax.set_mesh`")
    with jax.set_mesh(auto):
        assert make(P("x"), DATA, (8, 4)).sharding.spec == P("x")


def check_contraction_out_sharding_as_jax():
    auto, expl = _meshes()
    a, b = DATA, np.arange(16, dtype=np.float32).reshape(4, 4)
    e = NS(expl, P("x"))
    contractions = {
        "dot_general": [
            lambda x, y, o: jnp.dot(x, y, out_sharding=o),
            lambda x, y, o: jnp.matmul(x, y, out_sharding=o),
            lambda x, y, o: jnp.tensordot(x, y, 1, out_sharding=o),
            lambda x, y, o: jax.lax.dot(x, y, out_sharding=o),
            lambda x, y, o: jax.lax.dot_general(x, y, (((1,), (0,)), ((), ())), out_sharding=o),
        ],
        "einsum": [lambda x, y, o: jnp.einsum("ij,jk->ik", x, y, out_sharding=o)],
    }
    typed = jax.device_put(a, e)
    want = a @ b
    for name, fns in contractions.items():
        for f in fns:
            # Operands with no mesh in their types, outside a mesh context: JAX ignores it.
            for got in (f(a, b, e), jax.jit(lambda x, y, f=f: f(x, y, e))(a, b)):
                assert str(jax.typeof(got)) == "float32[8,4]", jax.typeof(got)
                assert len(got.sharding.device_set) == 1, got.sharding
                np.testing.assert_allclose(np.asarray(got), want)
            for got in (f(typed, b, e), jax.jit(lambda x, y, f=f: f(x, y, e))(typed, b)):
                assert str(jax.typeof(got)) == "float32[8@x,4]", jax.typeof(got)
                assert got.sharding.spec == P("x", None), got.sharding
                np.testing.assert_allclose(np.asarray(got), want)
            _raises(
                lambda f=f: f(a, b, P("x")),
                ValueError,
                "Using PartitionSpec when you are not under a mesh context is not allowed. "
                "Please pass a NamedSharding instance or enter into a mesh context via "
                "`jax.set_mesh`. Got P('x',)",
            )
            auto_axis = (
                f"PartitionSpec passed to {name} cannot contain axis names that are of type Auto "
                "or Manual. Got PartitionSpec: P('x',) with axis name: x of type: AxisType.Auto."
            )
            _raises(lambda f=f: f(a, b, NS(auto, P("x"))), ValueError, auto_axis)
            with jax.set_mesh(expl):
                got = f(a, b, P("x"))
                assert str(jax.typeof(got)) == "float32[8@x,4]", jax.typeof(got)
                assert got.sharding.spec == P("x", None), got.sharding
            with jax.set_mesh(auto):
                _raises(lambda f=f: f(a, b, P("x")), ValueError, auto_axis)


# out_sharding= of operations whose operands have no mesh in their types, outside a
# mesh context, as JAX 0.10.2 answers (recorded eagerly and under jit).


# JAX ignores it: the result keeps its unsharded type (the name is the one its errors use).
IGNORING = {
    "reshape": lambda o: jnp.reshape(DATA.reshape(4, 8), (8, 4), out_sharding=o),
    "reshape ": lambda o: jax.lax.reshape(DATA.reshape(4, 8), (8, 4), out_sharding=o),
    "dot_general": lambda o: jax.lax.conv_general_dilated(
        DATA.reshape(8, 1, 4), np.ones((1, 1, 1), np.float32), (1,), "VALID", out_sharding=o
    ),
    ".get": lambda o: jnp.asarray(np.vstack([DATA, DATA])).at[8:].get(out_sharding=o),
}
# JAX types the new value on the sharding's mesh, which its one-device program cannot
# hold: a ValueError naming the result's type (name, type) for a sharding over explicit axes.
PLACING = {
    "jnp.zeros": lambda o: jnp.zeros((8, 4), out_sharding=o),
    "jnp.ones": lambda o: jnp.ones((8, 4), out_sharding=o),
    "jnp.zeros ": lambda o: jnp.empty((8, 4), out_sharding=o),  # JAX's empty is its zeros
    "full": lambda o: jnp.full((8, 4), 2.0, out_sharding=o),
    "jnp.zeros_like": lambda o: jnp.zeros_like(DATA, out_sharding=o),
    "jnp.ones_like": lambda o: jnp.ones_like(DATA, out_sharding=o),
    "full_like": lambda o: jnp.full_like(DATA, 2.0, out_sharding=o),
    "jnp.arange": lambda o: jnp.arange(8, out_sharding=o),
    "jnp.broadcast_to": lambda o: jnp.broadcast_to(DATA[0], (8, 4), out_sharding=o),
    "repeat": lambda o: jnp.repeat(DATA[:4], 2, axis=0, total_repeat_length=8, out_sharding=o),
    "broadcast_in_dim": lambda o: jax.lax.broadcast(DATA[0], (8,), out_sharding=o),
    ".set": lambda o: jnp.asarray(DATA).at[0].set(1.0, out_sharding=o),
    ".multiply": lambda o: jnp.asarray(DATA).at[0].mul(2.0, out_sharding=o),
    ".divide": lambda o: jnp.asarray(DATA).at[0].divide(2.0, out_sharding=o),
    "segment_sum": lambda o: jax.ops.segment_sum(DATA, np.arange(8), 8, out_sharding=o),
    "normal": lambda o: jax.random.normal(KEY, (8, 4), out_sharding=o),
    "uniform": lambda o: jax.random.uniform(KEY, (8, 4), out_sharding=o),
    "exponential": lambda o: jax.random.exponential(KEY, (8, 4), out_sharding=o),
    "randint": lambda o: jax.random.randint(KEY, (8, 4), 0, 3, out_sharding=o),
    "bits": lambda o: jax.random.bits(KEY, (8, 4), out_sharding=o),
    "bernoulli": lambda o: jax.random.bernoulli(KEY, 0.5, (8, 4), out_sharding=o),
    "gamma": lambda o: jax.random.gamma(KEY, 1.0, (8, 4), out_sharding=o),
    "permutation": lambda o: jax.random.permutation(KEY, DATA, out_sharding=o),
    "categorical": lambda o: jax.random.categorical(KEY, DATA, shape=(8,), out_sharding=o),
    "normal ": lambda o: jax.nn.initializers.normal()(KEY, (8, 4), out_sharding=o),
}
PLACED_TYPES = {
    "jnp.arange": "i32[8@x]",
    "randint": "i32[8@x,4]",
    "bits": "u32[8@x,4]",
    "bernoulli": "bool[8@x,4]",
    "categorical": "i32[8@x]",
}
SPEC_WITHOUT_MESH = (
    "Using PartitionSpec when you are not under a mesh context is not allowed. Please pass "
    "a NamedSharding instance or enter into a mesh context via `jax.set_mesh`. Got P('x',)"
)


def _auto_axis(name):
    return (
        f"PartitionSpec passed to {name.strip()} cannot contain axis names that are of type "
        "Auto or Manual. Got PartitionSpec: P('x',) with axis name: x of type: AxisType.Auto."
    )


def _one_device(got):
    assert len(got.sharding.device_set) == 1 and "@" not in str(jax.typeof(got)), got.sharding


def check_out_sharding_without_a_mesh_as_jax():
    auto, expl = _meshes()
    e = NS(expl, P("x"))
    for name, f in {**IGNORING, **PLACING}.items():
        for call in (f, lambda o, f=f: jax.jit(lambda: f(o))()):
            _raises(lambda call=call: call(P("x")), ValueError, SPEC_WITHOUT_MESH)
            _raises(lambda call=call: call(NS(auto, P("x"))), ValueError, _auto_axis(name))
            _one_device(call(NS(auto, P())))  # no explicit axis: no type, ignored
            if name.startswith("."):  # x.at[...] methods: JAX asserts the type
                continue
            _raises(
                lambda call=call: call(jax.devices()[1]),
                TypeError,
                f"`out_sharding` argument of {name.strip()} only supports instances of "
                "`NamedSharding` or `PartitionSpec`. Got ",
            )
        with jax.set_mesh(expl):
            assert "@x" in str(jax.typeof(f(P("x")))), name
    for f in IGNORING.values():
        for got in (f(e), jax.jit(lambda f=f: f(e))()):
            _one_device(got)
    typed = jax.device_put(DATA.reshape(4, 8), e)
    for got in (
        jnp.reshape(typed, (8, 4), out_sharding=e),
        jax.jit(lambda a: jnp.reshape(a, (8, 4), out_sharding=e))(typed),
    ):
        assert str(jax.typeof(got)) == "float32[8@x,4]" and got.sharding.spec == P("x", None)
    one = jax.make_mesh((1, 1), ("x", "y"))
    for name, f in PLACING.items():
        aval = PLACED_TYPES.get(name, "f32[8@x,4]")
        _raises(
            lambda f=f: f(e),
            ValueError,
            "Length of device assignment 1 is not equal to the size of the mesh 8 of aval "
            f"{aval}({{Explicit: ('x', 'y')}}). Please enter your `jit` into a mesh context via "
            "`jax.set_mesh`.",
        )
        got = f(NS(one, P("x")))  # a mesh of one device fits the program: typed on it
        assert "@x" in str(jax.typeof(got)) and got.sharding.mesh.shape == {"x": 1, "y": 1}
    _raises(lambda: jnp.zeros((8, 4), out_sharding=NS(expl, P())), ValueError, "f32[8,4]({Expl")
    # A jitted program with an argument typed on the mesh holds it, as JAX's does.
    got = jax.jit(lambda a: (a, jnp.zeros((8, 4), out_sharding=e)))(typed)[1]
    assert str(jax.typeof(got)) == "float32[8@x,4]" and got.sharding.spec == P("x", None)


def check_jit_closing_over_a_key_array():
    """A key array closed over is a constant of the program, passed as its data (key data
    has one dimension more than the key: its sharding annotation too); it raised."""
    mesh = jax.make_mesh((8,), ("x",))
    expected = np.asarray(jax.random.normal(KEY, (8,)))
    np.testing.assert_array_equal(jax.jit(lambda: jax.random.normal(KEY, (8,)))(), expected)
    sharded = NS(mesh, P("x"))
    f = jax.jit(lambda x: x + jax.random.normal(KEY, (8,)), in_shardings=sharded)
    got = f(jnp.zeros(8))
    np.testing.assert_array_equal(got, expected)
    assert got.sharding.spec == P("x"), got.sharding
    g = jax.jit(lambda k, x: x + jax.random.normal(k, (8,)), in_shardings=(NS(mesh, P()), sharded))
    np.testing.assert_array_equal(g(KEY, jnp.zeros(8)), expected)


def check_key_arrays_on_explicit_axes_are_typed_as_jaxs():
    """A key array's type holds its sharding (``key<fry>[8@x]``), as JAX's, so programs on
    it are laid out by it: results of vmapped samplers, comparisons, concatenation and a
    jitted identity keep P('x'); its ``.sharding`` is the logical one. All were replicated
    (or typed without the mesh) before."""
    mesh = jax.make_mesh((8,), ("x",))
    keys = jax.device_put(jax.random.split(KEY, 16), NS(mesh, P("x")))
    assert str(jax.typeof(keys)) == "key<fry>[16@x]"
    expected = np.stack([np.asarray(jax.random.normal(k)) for k in jax.random.split(KEY, 16)])
    results = {
        "vmap_normal": (jax.vmap(jax.random.normal)(keys), "float32[16@x]"),
        "jit_vmap_normal": (jax.jit(jax.vmap(jax.random.normal))(keys), "float32[16@x]"),
        "eq": (keys == keys, "bool[16@x]"),
        "fold_in": (jax.vmap(jax.random.fold_in, (0, None))(keys, 3), "key<fry>[16@x]"),
        "split": (jax.vmap(jax.random.split)(keys), "key<fry>[16@x,2]"),
        "concat": (jnp.concatenate([keys, keys]), "key<fry>[32@x]"),
        "jit_identity": (jax.jit(lambda k: k)(keys), "key<fry>[16@x]"),
        "wrap": (jax.random.wrap_key_data(jax.random.key_data(keys)), "key<fry>[16@x]"),
    }
    for name, (value, typed) in results.items():
        assert str(jax.typeof(value)) == typed, (name, jax.typeof(value))
        assert value.sharding.spec[0] == "x", (name, value.sharding)
    assert results["fold_in"][0].sharding.spec == P("x"), results["fold_in"][0].sharding
    np.testing.assert_array_equal(results["vmap_normal"][0], expected)
    np.testing.assert_array_equal(results["jit_vmap_normal"][0], expected)
    # Key arrays placed by XLA (an Auto mesh, pmap) are NamedSharded too, and eager
    # operations run on them (an AttributeError before).
    auto = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    made = jax.jit(lambda: jax.random.split(KEY, 16), out_shardings=NS(auto, P("x")))()
    for value in (made, jnp.concatenate([made, made]), made == made):
        assert isinstance(value.sharding, NS) and value.sharding.spec == P("x"), value.sharding
    mapped = jax.pmap(lambda i: jax.random.fold_in(KEY, i))(jnp.arange(8))
    assert isinstance((mapped == mapped).sharding, NS)
    np.testing.assert_array_equal(
        jax.vmap(jax.random.normal)(mapped),
        [np.asarray(jax.random.normal(jax.random.fold_in(KEY, i))) for i in range(8)],
    )


CHECKS = [
    check_key_arrays_on_explicit_axes_are_typed_as_jaxs,
    check_array_device_sharding_is_a_constraint,
    check_make_array_from_process_local_data_is_device_put_in_one_process,
    check_contraction_out_sharding_as_jax,
    check_out_sharding_without_a_mesh_as_jax,
    check_jit_closing_over_a_key_array,
]

results, test_on_8_devices = device_tests(__file__, CHECKS)

if __name__ == "__main__":
    main(CHECKS)
