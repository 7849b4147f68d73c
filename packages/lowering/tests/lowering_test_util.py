"""Test primitives with numpy impls and StableHLO rules, and a tiny XLA CPU runner.

A DSL author's view of modjax.lowering: declare primitives with tracecore, register
one lowering rule each, and run the lowered module with jaxlib's CPU client.
"""

from __future__ import annotations

import numpy as np
from jaxlib import _jax, xla_client

from modjax.lowering import LoweredModule, hlo, ir_type, register_lowering
from modjax.tracecore import core, dtypes
from modjax.tracecore.abstract import ShapedArray

# --- primitives ---------------------------------------------------------------------------


def _result_aval(*avals: ShapedArray) -> ShapedArray:
    shape = np.broadcast_shapes(*(a.shape for a in avals))
    strong = [a for a in avals if not a.weak_type]
    return ShapedArray(shape, (strong or avals)[0].dtype, weak_type=not strong)


def _elementwise(name: str, np_fn, hlo_fn) -> core.Primitive:
    prim = core.Primitive(name)

    def impl(*args):
        aval = _result_aval(*(core.to_aval(a) for a in args))
        out = np_fn(*(np.asarray(a, aval.dtype) for a in args))
        return np.asarray(out, aval.dtype)

    def lowering(ctx, *operands):
        # Operands are of the result's shape or 0-d (then broadcast), of any dtype
        # (then converted): enough for scalar literals such as ``x * 2``.
        out_aval = ctx.avals_out[0]
        args = []
        for value, aval in zip(operands, ctx.avals_in, strict=True):
            if aval.dtype != out_aval.dtype:
                value = hlo.convert(ir_type(aval.update(dtype=out_aval.dtype)), value)
            if aval.shape != out_aval.shape:
                value = hlo.broadcast_in_dim(ir_type(out_aval), value, [])
            args.append(value)
        return hlo_fn(*args)

    prim.def_impl(impl)
    prim.def_abstract_eval(_result_aval)
    register_lowering(prim, lowering)
    return prim


sin_p = _elementwise("lt_sin", np.sin, hlo.sine)
neg_p = _elementwise("lt_neg", np.negative, hlo.negate)
add_p = _elementwise("lt_add", np.add, hlo.add)
mul_p = _elementwise("lt_mul", np.multiply, hlo.multiply)
sub_p = _elementwise("lt_sub", np.subtract, hlo.subtract)

# Two results: the sum and the difference of two operands of one shape and dtype.
sumdiff_p = core.Primitive("lt_sumdiff")
sumdiff_p.multiple_results = True
sumdiff_p.def_impl(lambda x, y: [np.asarray(x + y), np.asarray(x - y)])
sumdiff_p.def_abstract_eval(lambda x, y: [_result_aval(x, y), _result_aval(x, y)])
register_lowering(sumdiff_p, lambda ctx, x, y: (hlo.add(x, y), hlo.subtract(x, y)))


def sin(x):
    return sin_p.bind(x)


def neg(x):
    return neg_p.bind(x)


def add(x, y):
    return add_p.bind(x, y)


def mul(x, y):
    return mul_p.bind(x, y)


def sub(x, y):
    return sub_p.bind(x, y)


def sumdiff(x, y):
    return sumdiff_p.bind(x, y)


# --- running lowered modules on XLA's CPU client ---------------------------------------------


class _Sharding(_jax.SingleDeviceSharding):
    """The least a jaxlib sharding needs for ``batched_device_put`` to accept it."""

    memory_kind = None
    is_fully_replicated = True
    is_fully_addressable = True
    num_devices = 1

    def __init__(self, device):
        super().__init__(device)
        self._devices = (device,)

    @property
    def _internal_device_list(self):
        return _jax.DeviceList(self._devices)

    @property
    def _device_assignment(self):
        return self._devices

    @property
    def device_set(self):
        return set(self._devices)

    def _to_xla_hlo_sharding(self, ndim):
        return xla_client.HloSharding.replicate()

    def shard_shape(self, shape):
        return shape


class CpuRunner:
    """Compile lowered modules with jaxlib's CPU client, put numpy arrays, run, read back."""

    def __init__(self):
        self.client = xla_client.make_cpu_client()
        self.device = self.client.devices()[0]
        self.devices = _jax.DeviceList((self.device,))
        self.sharding = _Sharding(self.device)
        self.compiles = 0

    def compile(self, module):
        """Compile a LoweredModule (by its text), an ir.Module, text or bytecode."""
        if isinstance(module, LoweredModule):
            module = module.as_text()
        self.compiles += 1
        return self.client.compile_and_load(
            module, executable_devices=self.devices, compile_options=xla_client.CompileOptions()
        )

    def put(self, x):
        x = np.asarray(x)
        aval = ShapedArray(x.shape, x.dtype)
        return _jax.batched_device_put(aval, self.sharding, [x], [self.device], enable_x64=True)

    def execute(self, executable, *buffers) -> list[np.ndarray]:
        outs = executable.execute_sharded(list(buffers)).disassemble_into_single_device_arrays()
        return [to_numpy(shards[0]) for shards in outs]

    def run(self, module, *args) -> list[np.ndarray]:
        """Compile ``module`` and run it on numpy ``args``; return the outputs as numpy."""
        return self.execute(self.compile(module), *(self.put(a) for a in args))


def to_numpy(array) -> np.ndarray:
    """Copy a jaxlib array to a numpy array (sub-byte dtypes included)."""
    return array._single_device_array_to_np_array_did_copy()[0]


def assert_same_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    """Assert equal dtype, shape and elements (bit for bit; NaN equals NaN)."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if expected.dtype == np.bool_:
        np.testing.assert_array_equal(actual, expected)
        return
    if dtypes.itemsize_bits(expected.dtype) < 8:
        # Sub-byte types: compare values, whatever the unused high bits of each byte hold.
        np.testing.assert_array_equal(actual.astype(np.float32), expected.astype(np.float32))
        return
    view = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[
        expected.dtype.itemsize
    ]
    np.testing.assert_array_equal(
        np.array(actual).reshape(-1).view(view), np.array(expected).reshape(-1).view(view)
    )
