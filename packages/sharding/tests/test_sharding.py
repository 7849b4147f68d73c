"""Meshes, PartitionSpecs, NamedShardings and sharded Arrays on 8 CPU devices.

The checks run in one child process (the device count is fixed when the
backend starts); each is reported as its own test. They need only the
runtime: no array operations, so no modjax.numpy.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import pickle

import numpy as np
import pytest

from modjax import runtime
from modjax.sharding import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    DuplicateSpecError,
    IndivisibleError,
    Mesh,
    NamedSharding,
    P,
    get_abstract_mesh,
    get_mesh,
    inspect_array_sharding,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    set_mesh,
    smap,
    use_abstract_mesh,
    visualize_array_sharding,
    with_sharding_constraint,
)
from modjax.sharding.testing import main, run_checks
from modjax.sharding.visualize import sharding_picture

# --- checks that need no devices (run here) -------------------------------------------------


def test_partition_spec_prints_and_compares_as_jax():
    assert repr(P("x")) == "P('x',)" and str(P("x")) == "P('x',)"
    assert repr(P("x", None)) == "P('x', None)" and repr(P()) == "P()"
    assert repr(P(("x", "y"))) == "P(('x', 'y'),)"
    assert repr(P(P.UNCONSTRAINED, "x")) == "P(UNCONSTRAINED, 'x')"
    assert P(("x",)) == P("x") and P("x") != P("x", None) and P("x") != ("x",)
    assert hash(P("x")) == hash(P(("x",)))
    assert len(P("x", None)) == 2 and list(P("x", None)) == ["x", None]
    assert P("x", None)[1] is None and P("x", "y")[1:] == P("y")
    assert pickle.loads(pickle.dumps(P(("x", "y"), None))) == P(("x", "y"), None)
    with pytest.raises(TypeError):
        P(3)


def test_partition_spec_unreduced_and_reduced_as_jax():
    # JAX 0.10.2's answers (sets print sorted here; JAX prints them in hash order).
    p = P("x", None, unreduced={"y"})
    assert repr(p) == str(p) == "P('x', None, unreduced={'y'})"
    assert repr(P("x", unreduced={"y"})) == "P('x', unreduced={'y'})"
    assert repr(P(reduced={"x"})) == "P(reduced={'x'})" and P(reduced={"x"}).reduced == {"x"}
    assert repr(P("x", unreduced={"z", "y"}, reduced={"w"})) == (
        "P('x', unreduced={'y', 'z'}, reduced={'w'})"
    )
    assert p.unreduced == frozenset({"y"}) and p.reduced == frozenset() and len(p) == 2
    assert p.partitions == ("x", None) and P("x", None).partitions == ("x", None)
    assert p == P("x", None, unreduced={"y"}) and hash(p) == hash(P("x", None, unreduced={"y"}))
    assert p != P("x", None) and P("x", unreduced={"y"}) != P("x", reduced={"y"})
    assert pickle.loads(pickle.dumps(p)) == p and p.index(None) == 1 and p.count(None) == 1
    assert list(P("x", None, unreduced=set())) == ["x", None]
    with pytest.raises(ValueError, match=r"Using \*pspec is dangerous .* use \*spec.partitions"):
        list(p)
    with pytest.raises(ValueError, match=r"Using pspec\[...\] is dangerous"):
        p[0]  # noqa: B018
    with pytest.raises(ValueError, match="partitions cannot overlap with unreduced axes"):
        P("x", unreduced={"x"})
    with pytest.raises(ValueError, match="partitions cannot overlap with reduced axes"):
        P(("x", "y"), reduced={"y"})
    with pytest.raises(ValueError, match="`unreduced` and `reduced` argument to PartitionSpec"):
        P(unreduced={"y"}, reduced={"y"})
    with pytest.raises(TypeError, match="unreduced argument of PartitionSpec should of type"):
        P("x", unreduced=["y"])
    assert p.update(reduced={"z"}) == P("x", None, unreduced={"y"}, reduced={"z"})
    assert P("x", unreduced={"y"}).update(partitions=("w",)) == P("w", unreduced={"y"})
    # ``+`` as JAX's: specs concatenate (sets united), tuples only without sets.
    assert P("x") + P("y", None) == P("x", "y", None) and ("y",) + P("x") == P("y", "x")
    assert P("x", unreduced={"a"}) + P("y", unreduced={"b"}, reduced={"c"}) == P(
        "x", "y", unreduced={"a", "b"}, reduced={"c"}
    )
    with pytest.raises(TypeError, match="cannot be of instance `tuple`"):
        ("y",) + P("x", unreduced={"b"})  # noqa: B018
    with pytest.raises(ValueError, match="partitions cannot overlap with unreduced"):
        P("x", unreduced={"y"}) + P("y")  # noqa: B018
    with pytest.raises(NotImplementedError):
        P("x") + ["y"]  # noqa: B018
    # On a mesh: JAX's errors, else the sharding (unreduced axes: a subgroup of partial sums).
    explicit = AbstractMesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    auto = AbstractMesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    with pytest.raises(ValueError, match=r"Unreduced axes q is not found in mesh.axis_names="):
        NamedSharding(explicit, P("x", unreduced={"q"}))
    with pytest.raises(ValueError, match="Reduced axes can only refer to mesh axes that is of"):
        NamedSharding(auto, P("x", reduced={"y"}))
    on_explicit = NamedSharding(explicit, P("x", unreduced={"y"}))
    assert on_explicit.spec.unreduced == {"y"} and not on_explicit.is_fully_replicated


def test_jit_over_a_one_device_mesh():
    # XLA reports no parameter or output shardings for a one-device SPMD program:
    # they are replicated (reading them crashed).
    mesh = Mesh(np.asarray(runtime.devices()[:1]), ("i",))
    f = runtime.jit(lambda x: with_sharding_constraint(x, NamedSharding(mesh, P("i"))))
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = f(x)
    np.testing.assert_array_equal(np.asarray(out), x)
    assert out.sharding.is_fully_replicated


def test_abstract_mesh_and_axis_types():
    am = AbstractMesh((2, 4), ("x", "y"))
    assert am.shape == {"x": 2, "y": 4} and am.size == 8
    assert repr(AxisType.Explicit) == "Explicit"
    assert repr(AbstractMesh()) == "AbstractMesh((), axis_types=())"
    assert am == AbstractMesh((2, 4), ("x", "y")) and hash(am) == hash(
        AbstractMesh((2, 4), ("x", "y"))
    )
    with use_abstract_mesh(am):
        assert get_abstract_mesh() is am
    assert get_abstract_mesh().empty


def test_mesh_axis_type_queries_and_updates():
    auto = AbstractMesh((2, 4), ("x", "y"))
    mixed = auto.update_axis_types({"y": AxisType.Explicit})
    assert auto.are_all_axes_auto and not auto.are_all_axes_explicit
    assert mixed.axis_types == (AxisType.Auto, AxisType.Explicit) and mixed.axis_sizes == (2, 4)
    assert not (mixed.are_all_axes_auto or mixed.are_all_axes_explicit or mixed.are_all_axes_manual)
    # A mesh without axes has no axis of any type (JAX's answer).
    assert not (AbstractMesh().are_all_axes_auto or AbstractMesh().are_all_axes_explicit)
    manual = auto.update(axis_types=(AxisType.Manual,) * 2)
    assert manual.are_all_axes_manual
    assert manual == AbstractMesh((2, 4), ("x", "y"), (AxisType.Manual,) * 2)
    assert auto.update(axis_sizes=(1, 8)).shape == {"x": 1, "y": 8}
    for name in ("devices", "device_ids", "local_devices", "local_mesh", "is_multi_process"):
        with pytest.raises(ValueError, match=f"AbstractMesh does not implement {name}"):
            getattr(auto, name)
    mesh = Mesh(np.asarray(runtime.devices()[:1]), ("i",))
    explicit = mesh.update(axis_types=(AxisType.Explicit,))
    assert explicit.are_all_axes_explicit and explicit.devices.tolist() == mesh.devices.tolist()
    assert mesh.update_axis_types({"i": AxisType.Explicit}) is explicit
    scalar = mesh.update(devices=np.asarray(runtime.devices()[0]), axis_names=(), axis_types=())
    assert not mesh.is_scalar and scalar.is_scalar


def test_smap_checks_its_arguments_as_jax():
    # JAX 0.10.2's TypeErrors, raised when smap is applied (before any mesh is needed).
    def f(x):
        return x

    with pytest.raises(TypeError, match="smap axis_name should be a `str` or a `Hashable`"):
        smap(f, in_axes=0, out_axes=0, axis_name=("x",))
    with pytest.raises(TypeError, match="smap in_axes must be an int, None"):
        smap(f, in_axes=[0], out_axes=0, axis_name="x")
    with pytest.raises(TypeError, match="smap in_axes must be an int, None"):
        smap(f, in_axes=(0, "a"), out_axes=0, axis_name="x")
    with pytest.raises(TypeError, match="smap out_axes must be an int, None"):
        smap(f, in_axes=0, out_axes=(0, 1.5), axis_name="x")
    with pytest.raises(TypeError, match="out_axes"):
        smap(f, in_axes=0, axis_name="x")
    with pytest.raises(ValueError, match="The context mesh cannot be empty"):
        smap(f, in_axes=0, out_axes=0, axis_name="x")(np.ones(4))
    assert smap(in_axes=0, out_axes=0, axis_name="x")(f).__name__ == "f"


def test_abstract_device_is_a_frozen_record_that_abstract_meshes_carry():
    # As JAX 0.10.2: a frozen dataclass; an AbstractMesh built by hand has none and prints
    # without it, and one with a device is a different mesh.
    d = AbstractDevice("cpu", None, "cpu")
    assert repr(d) == str(d) == "AbstractDevice(device_kind=cpu, num_cores=None, platform=cpu)"
    assert d == AbstractDevice(device_kind="cpu", num_cores=None, platform="cpu")
    assert hash(d) == hash(AbstractDevice("cpu", None, "cpu")) and d != AbstractDevice(
        "tpu", 2, "tpu"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.platform = "gpu"
    with pytest.raises(TypeError):
        AbstractDevice("cpu")
    am = AbstractMesh((2, 4), ("x", "y"))
    assert am.abstract_device is None
    with_device = AbstractMesh((2, 4), ("x", "y"), abstract_device=d)
    assert with_device.abstract_device is d and with_device != am
    assert repr(with_device) == (
        "AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto), device_kind=cpu, "
        "num_cores=None, platform=cpu)"
    )
    assert repr(AbstractMesh((), (), abstract_device=d)) == (
        "AbstractMesh((), axis_types=(), device_kind=cpu, num_cores=None, platform=cpu)"
    )


# --- checks on 8 devices (run in the child) --------------------------------------------------


def _mesh(shape=(2, 4), names=("x", "y")):
    return Mesh(np.array(runtime.devices()[: int(np.prod(shape))]).reshape(shape), names)


def check_mesh_attributes_and_printing():
    mesh = _mesh()
    assert mesh.shape == {"x": 2, "y": 4} and list(mesh.shape) == ["x", "y"]
    assert mesh.size == 8 and mesh.axis_names == ("x", "y") and mesh.devices.shape == (2, 4)
    assert mesh.axis_types == (AxisType.Auto, AxisType.Auto)
    assert mesh.local_devices == runtime.devices()
    assert repr(mesh) == "Mesh(axis_sizes=(2, 4), axis_names=('x', 'y'), axis_types=(Auto, Auto))"
    assert str(mesh) == "Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto))"
    assert repr(mesh.abstract_mesh) == (
        "AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto), device_kind=cpu, "
        "num_cores=None, platform=cpu)"
    )
    assert mesh.abstract_mesh.abstract_device == AbstractDevice("cpu", None, "cpu")
    assert mesh.abstract_mesh != AbstractMesh((2, 4), ("x", "y"))  # as JAX: no device kind
    assert _mesh() is mesh
    assert mesh.device_ids.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    try:
        Mesh(np.array(runtime.devices()), ("x", "y"))
    except ValueError as err:
        assert "ndim" in str(err)
    else:
        raise AssertionError("a 1-d device array with two axis names must fail")


def check_make_mesh_defaults_to_explicit_axes():
    mesh = make_mesh((4, 2), ("a", "b"))
    assert mesh.axis_types == (AxisType.Explicit, AxisType.Explicit)
    assert mesh.devices.shape == (4, 2) and mesh.devices.flat[0] == runtime.devices()[0]
    mesh = make_mesh((8,), ("a",), axis_types=(AxisType.Auto,))
    assert mesh.axis_types == (AxisType.Auto,)


def check_mesh_context_and_set_mesh():
    mesh = _mesh()
    assert get_mesh().empty
    with mesh:
        assert get_mesh() is mesh and get_abstract_mesh() == mesh.abstract_mesh
    assert get_mesh().empty
    with set_mesh(mesh):
        assert get_mesh() is mesh
    assert get_mesh().empty


def check_named_sharding_basics():
    mesh = _mesh()
    s = NamedSharding(mesh, P("x"))
    assert s is NamedSharding(mesh, P("x")) and s == NamedSharding(mesh, P("x"))
    assert repr(s) == (
        "NamedSharding(mesh=Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto)), spec=P('x',), "
        "memory_kind=device)"
    )
    assert s.shard_shape((8, 4)) == (4, 4) and s.num_devices == 8
    assert not s.is_fully_replicated and s.is_fully_addressable
    assert NamedSharding(mesh, P()).is_fully_replicated
    assert s.devices_indices_map((8, 4))[runtime.devices()[5]] == (slice(4, 8), slice(None))
    assert s.addressable_devices == set(runtime.devices())
    t = NamedSharding(mesh, P(None, ("y", "x")))
    index = t.devices_indices_map((2, 16))
    # ('y', 'x'): y is major, so device (x=1, y=2) holds piece 2 * 2 + 1 = 5.
    assert index[mesh.devices[1, 2]] == (slice(None), slice(10, 12))
    assert s.is_equivalent_to(NamedSharding(mesh, P("x", None)), 2)


def check_named_sharding_errors():
    mesh = _mesh()
    for spec, kind, text in [
        (P("z"), ValueError, "Resource axis: z of P('z',) is not found in mesh: ('x', 'y')."),
        (P("x", "x"), DuplicateSpecError, "has duplicate entries for `x`"),
    ]:
        try:
            NamedSharding(mesh, spec)
        except kind as err:
            assert text in str(err), err
        else:
            raise AssertionError(f"{spec} must fail")
    try:
        runtime.device_put(np.ones(7), NamedSharding(mesh, P("x")))
    except IndivisibleError as err:
        assert (
            "implies that array axis 0 is partitioned 2 times, but the dimension size is 7"
            in str(err)
        )
    else:
        raise AssertionError("an indivisible device_put must fail")


def check_device_put_slices_host_data():
    mesh = _mesh()
    data = np.arange(64, dtype=np.float32).reshape(8, 8)
    for spec in [
        P("x"),
        P(None, "y"),
        P("x", "y"),
        P("y", "x"),
        P(("x", "y")),
        P(),
        P(None, ("y", "x")),
    ]:
        s = NamedSharding(mesh, spec)
        a = runtime.device_put(data, s)
        assert a.sharding is s and a.committed
        np.testing.assert_array_equal(np.asarray(a), data)
        for shard in a.addressable_shards:
            np.testing.assert_array_equal(np.asarray(shard.data), data[shard.index])
            assert shard.data.shape == s.shard_shape(data.shape)


def check_shards_replica_ids_and_global_shards():
    mesh = _mesh()
    a = runtime.device_put(np.arange(16.0).reshape(8, 2), NamedSharding(mesh, P("x")))
    shards = a.addressable_shards
    assert [s.replica_id for s in shards] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert shards[5].device == runtime.devices()[5] and shards[5].index == (
        slice(4, 8),
        slice(None),
    )
    assert [s.device for s in a.global_shards] == runtime.devices()
    assert a.is_fully_addressable and not a.is_fully_replicated


def check_device_put_reshards_device_arrays():
    mesh = _mesh()
    data = np.arange(32, dtype=np.int32).reshape(4, 8)
    a = runtime.device_put(data, NamedSharding(mesh, P("x", "y")))
    b = runtime.device_put(a, NamedSharding(mesh, P(None, ("x", "y"))))
    np.testing.assert_array_equal(np.asarray(b), data)
    c = runtime.device_put(b, runtime.devices()[3])
    assert c.sharding.device_set == {runtime.devices()[3]}
    np.testing.assert_array_equal(np.asarray(c), data)
    d = runtime.device_put(c, NamedSharding(mesh, P("y")))
    np.testing.assert_array_equal(np.asarray(d), data)


def check_make_array_helpers():
    mesh = _mesh()
    data = np.arange(48.0).reshape(8, 6)
    s = NamedSharding(mesh, P("y", None))
    seen = []

    def callback(index):
        seen.append(index)
        return data[index]

    a = make_array_from_callback(data.shape, s, callback)
    np.testing.assert_array_equal(np.asarray(a), data)
    assert len(seen) == 8 and a.sharding is s
    pieces = [
        runtime.device_put(data[s.devices_indices_map(data.shape)[d]], d) for d in runtime.devices()
    ]
    b = make_array_from_single_device_arrays(data.shape, s, pieces)
    np.testing.assert_array_equal(np.asarray(b), data)
    c = make_array_from_process_local_data(s, data)
    np.testing.assert_array_equal(np.asarray(c), data)


ROWS_PICTURE = """\
┌───────────────────────┐
│                       │
│      CPU 0,1,2,3      │
│                       │
│                       │
├───────────────────────┤
│                       │
│      CPU 4,5,6,7      │
│                       │
│                       │
└───────────────────────┘"""

VECTOR_PICTURE = """\
┌───────┬───────┬───────┬───────┐
│CPU 0,4│CPU 1,5│CPU 2,6│CPU 3,7│
└───────┴───────┴───────┴───────┘"""


def check_visualize_draws_as_jax():
    # JAX 0.10.2 draws these with rich's square box when no color map is installed.
    mesh = _mesh()
    assert sharding_picture((8, 8), NamedSharding(mesh, P("x"))) == ROWS_PICTURE
    assert sharding_picture((16,), NamedSharding(mesh, P("y"))) == VECTOR_PICTURE
    grid = sharding_picture((8, 8), NamedSharding(mesh, P("x", "y")))
    assert "│ CPU 5 │" in grid and grid.count("┼") == 3
    x = runtime.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("x")))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        visualize_array_sharding(x)
    assert buffer.getvalue() == ROWS_PICTURE + "\n\n"
    seen = []
    inspect_array_sharding({"a": x}, callback=seen.append)
    assert seen == [x.sharding]
    try:
        sharding_picture((2, 2, 2), NamedSharding(mesh, P()))
    except ValueError as err:
        assert "1 and 2 dimensions" in str(err)
    else:
        raise AssertionError("3-d pictures must fail")


CHECKS = [
    check_visualize_draws_as_jax,
    check_mesh_attributes_and_printing,
    check_make_mesh_defaults_to_explicit_axes,
    check_mesh_context_and_set_mesh,
    check_named_sharding_basics,
    check_named_sharding_errors,
    check_device_put_slices_host_data,
    check_shards_replica_ids_and_global_shards,
    check_device_put_reshards_device_arrays,
    check_make_array_helpers,
]


@pytest.fixture(scope="module")
def results():
    return run_checks(__file__)


@pytest.mark.parametrize("name", [c.__name__ for c in CHECKS])
def test_on_8_devices(results, name):
    error = results[name]
    assert error is None, error


if __name__ == "__main__":
    main(CHECKS)
