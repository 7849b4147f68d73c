"""Small sharding API behaviours on 8 CPU devices, against JAX 0.10.2's recorded answers.

One child process runs every check: ``jnp.array``/``jnp.asarray`` with ``device=``
a NamedSharding (a sharding constraint, as in JAX: sharded as asked on an
automatic mesh, JAX's ValueError for explicit axes outside a mesh context);
``make_array_from_process_local_data`` in one process (``device_put``, so under jit
too; pytrees; JAX's errors); ``out_sharding=`` of the contractions (ignored for
operands with no mesh outside a mesh context, JAX's errors, results' specs padded).
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


CHECKS = [
    check_array_device_sharding_is_a_constraint,
    check_make_array_from_process_local_data_is_device_put_in_one_process,
    check_contraction_out_sharding_as_jax,
]

results, test_on_8_devices = device_tests(__file__, CHECKS)

if __name__ == "__main__":
    main(CHECKS)
