import copy
import inspect
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis_profiles import examples
from runtime_test_prims import add, sin

from modjax import runtime as R
from modjax.runtime.sharding import Sharding, SingleDeviceSharding
from modjax.tracecore import core, dtypes
from modjax.tracecore.abstract import ShapedArray, get_aval

pytestmark = pytest.mark.usefixtures("runtime_operators")

# Host dtype -> the dtype it has on device with x64 off (the default).
DTYPES = {
    np.bool_: np.bool_,
    np.int8: np.int8,
    np.int16: np.int16,
    np.int32: np.int32,
    np.int64: np.int32,
    np.uint8: np.uint8,
    np.uint16: np.uint16,
    np.uint32: np.uint32,
    np.uint64: np.uint32,
    np.float16: np.float16,
    dtypes.bfloat16: dtypes.bfloat16,
    np.float32: np.float32,
    np.float64: np.float32,
    np.complex64: np.complex64,
    np.complex128: np.complex64,
}


@settings(max_examples=examples(60), deadline=None)
@given(
    dtype=st.sampled_from(list(DTYPES)),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    data=st.data(),
)
def test_device_put_get_round_trip(dtype, shape, data):
    host_dtype = np.dtype(dtype)
    if host_dtype == np.dtype(dtypes.bfloat16):
        value = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-100, 100, width=32)))
        value = value.astype(dtypes.bfloat16)
    else:
        value = data.draw(hnp.arrays(host_dtype, shape))
    x = R.device_put(value)
    with np.errstate(over="ignore"):
        expected = value.astype(DTYPES[dtype])
    assert x.dtype == np.dtype(DTYPES[dtype])
    assert x.shape == value.shape and x.ndim == value.ndim and x.size == value.size
    assert not x.weak_type and not x.committed
    back = R.device_get(x)
    assert isinstance(back, np.ndarray) and back.dtype == expected.dtype
    np.testing.assert_array_equal(back, expected)
    np.testing.assert_array_equal(np.asarray(x), expected)
    np.testing.assert_array_equal(np.asarray(x.tolist()), np.asarray(expected.tolist()))


def test_device_put_copies_host_memory():
    value = np.ones(1000, np.float32)
    x = R.device_put(value)
    value[0] = 5.0
    assert float(np.asarray(x)[0]) == 1.0


def test_python_scalars_are_weakly_typed():
    for v, dtype in [(2.0, np.float32), (3, np.int32), (1j, np.complex64)]:
        x = R.device_put(v)
        assert x.weak_type and x.dtype == dtype and x.shape == ()
    b = R.device_put(True)
    assert b.dtype == np.bool_ and not b.weak_type
    with pytest.raises(OverflowError):
        R.device_put(2**40)


def test_device_put_placement():
    x = R.device_put(np.arange(3.0))
    assert R.device_put(x) is x
    dev = R.devices()[0]
    y = R.device_put(x, dev)
    assert y.committed and y.devices() == {dev}
    assert R.device_put(y, dev) is y
    z = R.device_put(x, SingleDeviceSharding(dev))
    assert z.committed and z.sharding == SingleDeviceSharding(dev)
    tree = R.device_put({"a": 1.0, "b": [np.ones(2), None]})
    assert tree["a"].weak_type and tree["b"][1] is None
    with pytest.raises(ValueError, match="a Sharding, a Device"):  # JAX's class
        R.device_put(x, "cpu")
    with pytest.raises(TypeError, match="Cannot interpret value of type .* as an abstract array"):
        R.device_put(object())


def test_device_put_donate():
    # On the same device the result aliases the source, which stays valid (a copy to
    # another device deletes the source: see test_backends' multi-device test).
    x = R.device_put(np.arange(3.0))
    y = R.device_put(x, R.devices()[0], donate=True)
    assert y.committed and y.tolist() == [0.0, 1.0, 2.0] and x.tolist() == y.tolist()


def test_device_put_may_alias_and_src():
    # As JAX 0.10.2: an Array already in place is returned as it is unless may_alias=False,
    # which always makes a new buffer; may_alias and donate exclude each other.
    x = R.device_put(np.arange(3.0))
    assert R.device_put(x) is x and R.device_put(x, may_alias=True) is x
    for target in (None, R.devices()[0]):
        y = R.device_put(x, target, may_alias=False)
        assert y is not x and y.unsafe_buffer_pointer() != x.unsafe_buffer_pointer()
        assert y.tolist() == x.tolist() and y.committed == (target is not None)
    pair = R.device_put([x, x], may_alias=[False, True])
    assert pair[0] is not x and pair[1] is x
    assert R.device_put(x, R.devices()[0], src=R.devices()[0]).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="may_alias and donate cannot be True at the same"):
        R.device_put(x, donate=True, may_alias=True)


def test_metadata():
    x = R.device_put(np.zeros((2, 3), np.float32))
    assert x.aval == ShapedArray((2, 3), np.float32)
    assert get_aval(x) is x.aval and core.to_aval(x) is x.aval
    assert x.itemsize == 4 and x.nbytes == 24
    dev = R.devices()[0]
    assert x.devices() == {dev} and x.device == dev
    assert isinstance(x.sharding, Sharding) and x.is_fully_addressable
    assert x.is_fully_replicated
    (shard,) = x.addressable_shards
    assert shard.device == dev and shard.index == (slice(None), slice(None))
    assert isinstance(x, R.Array) and R.is_array(x) and not R.is_array(np.zeros(2))
    # avals are shared, so the jit fast path can compare them by identity
    assert R.device_put(np.ones((2, 3), np.float32)).aval is x.aval


def test_format_and_removed_buffer_attributes():
    x = R.device_put(np.zeros((2, 3), np.float32))
    here = SingleDeviceSharding(R.devices()[0])
    assert repr(x.format) == (  # JAX 0.10.2's
        "Format(layout=Layout(major_to_minor=(0, 1), tiling=(), "
        f"sub_byte_element_size_in_bits=0), sharding={here!r})"
    )
    with pytest.raises(AttributeError, match=r"Use arr.addressable_data\(0\)"):
        x.device_buffer  # noqa: B018
    with pytest.raises(AttributeError, match="device_buffers has been deprecated"):
        x.device_buffers  # noqa: B018
    x.delete()
    assert x.format.layout is None and x.format.sharding == here


REPRS = [
    (np.arange(3.0, dtype=np.float32), "Array([0., 1., 2.], dtype=float32)"),
    (2.0, "Array(2., dtype=float32, weak_type=True)"),
    (2, "Array(2, dtype=int32, weak_type=True)"),
    (True, "Array(True, dtype=bool)"),
    (np.ones((2, 3), np.float32), "Array([[1., 1., 1.],\n       [1., 1., 1.]], dtype=float32)"),
    (np.zeros((0, 3), np.float32), "Array([], shape=(0, 3), dtype=float32)"),
    (
        np.ones((2, 2), dtypes.bfloat16),
        "Array([[1, 1],\n       [1, 1]], dtype=bfloat16)",
    ),
]


@pytest.mark.parametrize("value,expected", REPRS)
def test_repr_matches_jax(value, expected):
    assert repr(R.device_put(value)) == expected


def test_long_repr_wraps_like_jax():
    text = repr(R.device_put(np.arange(100.0, dtype=np.float32)))
    lines = text.split("\n")
    assert lines[0].startswith("Array([ 0.,  1.,  2.,")
    assert lines[1].startswith("       13., 14.,")
    assert lines[-1].endswith("99.], dtype=float32)")


def test_str_format_item_tolist():
    x = R.device_put(np.arange(3.0, dtype=np.float32))
    assert str(x) == "[0. 1. 2.]"
    assert f"{R.device_put(1.5):.3f}" == "1.500"
    assert f"{x}" == "[0. 1. 2.]"
    assert x.item(1) == 1.0 and x.tolist() == [0.0, 1.0, 2.0]
    assert R.device_put(2.0).tolist() == 2.0
    assert x.tobytes() == np.arange(3.0, dtype=np.float32).tobytes()


def test_scalar_conversions_follow_jax():
    one = R.device_put(np.array([1.0], np.float32))
    scalar = R.device_put(np.float32(1.5))
    integer = R.device_put(np.int32(3))
    empty = R.device_put(np.zeros(0, np.float32))
    assert float(scalar) == 1.5 and int(integer) == 3 and complex(scalar) == 1.5
    assert bool(one) and bool(scalar)
    assert [10, 20, 30, 40][integer] == 40
    with pytest.raises(TypeError, match="Only scalar arrays can be converted"):
        float(one)
    with pytest.raises(TypeError, match="Only scalar arrays can be converted"):
        int(one)
    with pytest.raises(TypeError, match="Only integer scalar arrays"):
        [1, 2][scalar]
    with pytest.raises(ValueError, match="more than one element is ambiguous"):
        bool(R.device_put(np.ones(2)))
    with pytest.raises(ValueError, match="empty array is ambiguous"):
        bool(empty)
    with pytest.raises(ValueError, match="size 1"):
        R.device_put(np.ones(2)).item()


def test_len_and_iteration():
    x = R.device_put(np.arange(6, dtype=np.int32).reshape(3, 2))
    assert len(x) == 3
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    assert all(isinstance(r, R.Array) and r.shape == (2,) for r in rows)
    weak = list(R.device_put(np.ones(2, np.float32)))
    assert repr(weak[0]) == "Array(1., dtype=float32)"
    assert len(R.device_put(np.zeros(0))) == 0
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(R.device_put(1.0))
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(R.device_put(1.0))


def test_pickle_and_copy():
    for value in (2.0, np.arange(4, dtype=np.int8), np.ones((2, 0)), np.float16(3)):
        x = R.device_put(value)
        y = pickle.loads(pickle.dumps(x))
        assert isinstance(y, R.Array) and y.aval == x.aval
        np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    x = R.device_put(np.arange(3.0))
    for y in (copy.copy(x), copy.deepcopy(x)):
        assert y is not x and y.aval is x.aval and y.tolist() == x.tolist()
        x2 = R.device_put(np.arange(3.0))
        y2 = copy.copy(x2)
        x2.delete()
        assert y2.tolist() == [0.0, 1.0, 2.0]


def test_unhashable():
    with pytest.raises(TypeError, match="unhashable"):
        hash(R.device_put(1.0))


def test_deleted_arrays():
    x = R.device_put(np.ones(3, np.float32))
    x.delete()
    assert x.is_deleted()
    assert x.shape == (3,) and x.dtype == np.float32  # metadata stays readable
    reads = (repr, str, np.asarray, lambda a: a.tolist(), sin)
    methods = (
        "copy_to_host_async",
        "devices",
        "is_ready",
        "clone",
        "platform",
        "on_device_size_in_bytes",
        "unsafe_buffer_pointer",
    )
    # (jaxlib's own is_ready, clone and platform crash the process on a deleted array)
    for read in (*reads, *(lambda a, m=m: getattr(a, m)() for m in methods)):
        with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]"):
            read(x)
    # JAX's own error for waiting on a deleted (or donated) buffer
    for wait in (R.block_until_ready, lambda a: a.block_until_ready()):
        with pytest.raises(RuntimeError, match="called on deleted or donated buffer"):
            wait(x)
    x.delete()  # deleting twice is fine


def test_ready_and_async_copy():
    x = R.device_put(np.arange(4.0))
    assert R.block_until_ready(x) is x
    tree = {"a": x, "b": (x, 1)}
    assert R.block_until_ready(tree) is tree
    x.copy_to_host_async()
    assert x.is_ready()
    assert np.asarray(x).tolist() == [0, 1, 2, 3]
    assert R.device_get({"a": x, "b": 3})["b"] == 3


def test_host_value_is_cached_and_read_only():
    x = sin(R.device_put(np.arange(3.0, dtype=np.float32)))
    a = np.asarray(x)
    assert not a.flags.writeable
    b = np.array(x)
    assert b.flags.writeable
    np.testing.assert_array_equal(a, b)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64


def test_operators_and_attributes_use_the_tracer_tables():
    x = R.device_put(np.arange(3.0, dtype=np.float32))
    assert (x + x).tolist() == [0.0, 2.0, 4.0]
    assert (1.0 + x).tolist() == [1.0, 2.0, 3.0]
    assert (x * 2.0).tolist() == [0.0, 2.0, 4.0]
    assert (-x).tolist() == [-0.0, -1.0, -2.0]
    assert x.double.tolist() == [0.0, 2.0, 4.0]
    np.testing.assert_allclose(np.asarray(x.sin()), np.sin(np.arange(3.0)), rtol=1e-6)
    with pytest.raises(TypeError):
        x @ x  # nothing registered __matmul__
    with pytest.raises(TypeError, match="not defined for Array"):
        abs(x)
    with pytest.raises(AttributeError, match="no attribute 'transpose'"):
        x.transpose  # noqa: B018
    saved = dict(core.tracer_operators)
    try:
        core.register_tracer_operator("__matmul__", lambda a, b: "matmul!")
        assert x @ x == "matmul!"
    finally:
        core.tracer_operators.clear()
        core.tracer_operators.update(saved)


def test_interchange_dunders_show_the_array_api_signatures():
    # The forwarders take *args/**kwargs; inspect shows the Array API's parameters (as
    # jax.Array's methods do), which conformance checks read.
    x = R.device_put(np.ones(2, np.float32))
    sig = inspect.signature(x.__array_namespace__)
    assert list(sig.parameters) == ["api_version"]
    assert sig.parameters["api_version"].kind is inspect.Parameter.KEYWORD_ONLY
    dl = inspect.signature(x.__dlpack__).parameters
    assert list(dl) == ["stream", "max_version", "dl_device", "copy"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is None for p in dl.values())
    assert not inspect.signature(x.__dlpack_device__).parameters
    assert list(inspect.signature(type(x).__array_namespace__).parameters) == [
        "self",
        "api_version",
    ]


def test_make_array_from_single_device_arrays():
    dev = R.devices()[0]
    part = R.device_put(np.arange(3.0, dtype=np.float32), dev)
    whole = R.make_array_from_single_device_arrays((3,), SingleDeviceSharding(dev), [part])
    assert whole.tolist() == [0.0, 1.0, 2.0] and whole.committed


def test_single_device_sharding():
    dev = R.devices()[0]
    s = SingleDeviceSharding(dev)
    assert s == SingleDeviceSharding(dev) and hash(s) == hash(SingleDeviceSharding(dev))
    assert repr(s) == f"SingleDeviceSharding(device={dev!r}, memory_kind=device)"
    assert s.__reduce__()[1] == (dev,)  # devices do not pickle (nor in JAX)
    assert isinstance(s, Sharding)
    assert s.num_devices == 1 and s.device_set == {dev} and s._device_assignment == (dev,)
    assert s.is_fully_replicated and s.is_fully_addressable and s.memory_kind == "device"
    assert s.shard_shape((4, 5)) == (4, 5)
    assert s.devices_indices_map((4,)) == {dev: (slice(None),)}
    assert s.addressable_devices_indices_map((4,)) == {dev: (slice(None),)}
    assert s.is_equivalent_to(SingleDeviceSharding(dev), 2)
    assert s.with_memory_kind("device") == s


def test_add_is_eager_on_device():
    x = add(R.device_put(np.float32(1.0)), 2.0)
    assert isinstance(x, R.Array) and x.tolist() == 3.0


def test_device_arrays_are_instances_of_the_abstract_array():
    from modjax.tracecore import Array as AbstractArray

    x = R.device_put(np.ones(3, np.float32))
    assert type(x) is R.ArrayImpl and isinstance(x, AbstractArray)
    assert issubclass(R.ArrayImpl, AbstractArray)
    assert not isinstance(np.ones(3), AbstractArray)
