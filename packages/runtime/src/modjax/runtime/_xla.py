"""The jaxlib boundary: every name modjax.runtime (and modjax.sharding) takes from jaxlib.

jaxlib's ``_jax`` and ``xla_client`` are jaxlib's internals, not a stable API
(design.md, "jaxlib"), so this is the one module of runtime that imports them:
a jaxlib upgrade that moves or renames something touches this file only. (MLIR
is lowering's: ``modjax.lowering._mlir``.) A test in ``tests/test_xla_boundary.py``
fails when another module of runtime imports jaxlib.

What is here:

* the C++ classes that runtime and modjax.sharding subclass or check with
  ``isinstance`` (``ArrayImpl``, its base ``Array``, the sharding bases, ``Device``);
* small functions, one per jaxlib operation runtime performs (clients, buffers,
  compile options and compiling, result handlers, the C++ jit fast path, the
  distributed runtime, DLPack). Where a call sits on a fast path the name is
  jaxlib's own callable, bound here (``batched_device_put``), so it costs no
  extra Python frame.

Methods of the objects these return are called where they are used: an
executable's ``execute_sharded``, the results' ``consume_with_handlers`` and an
``ArrayImpl``'s own methods run on every call of a fast path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

import jaxlib
import numpy as np
from jaxlib import _hlo, _jax, _profile_data, _profiler, utils, xla_client

__all__ = [
    "Array",
    "ArrayImpl",
    "Client",
    "CompileOptions",
    "Device",
    "DeviceList",
    "GSPMDSharding",
    "HloSharding",
    "JaxRuntimeError",
    "ProfileData",
    "ProfileEvent",
    "ProfileOptions",
    "ProfilePlane",
    "ProfilerSession",
    "TraceMe",
    "SingleDeviceSharding",
    "batched_block_until_ready",
    "batched_device_put",
    "buffer_to_dlpack",
    "compile_and_load",
    "compile_options",
    "copy_to_devices",
    "cost_analysis",
    "cpp_jit_available",
    "deserialize_executable",
    "distributed_client",
    "distributed_service",
    "dlpack_to_buffer",
    "encode_inspect_sharding_callback",
    "executable_layouts",
    "gloo_collectives",
    "hlo_sharding",
    "hlo_sharding_from_string",
    "hlo_cost_analysis",
    "hlo_module_text",
    "hlo_text",
    "install_jit_states",
    "jaxlib_include_dir",
    "jaxlib_version",
    "layout_fields",
    "make_cpu_client",
    "memory_analysis",
    "module_to_xla_computation",
    "pjit",
    "pjit_cache",
    "explicit_transfer",
    "set_array_gc_guard",
    "set_thread_guard",
    "set_transfer_guard",
    "profiler_metadata",
    "profiler_server",
    "profiler_subprocess",
    "pytree_registry",
    "quiet_native_logs",
    "register_custom_call_as_batch_partitionable",
    "register_custom_call_target",
    "register_custom_type",
    "replicated_hlo_sharding",
    "result_handler",
    "serialize_compile_options",
    "serialize_executable",
    "xla_shardings",
]

jaxlib_version: str = jaxlib.__version__

# --- classes runtime and modjax.sharding subclass or check --------------------------------

#: The device array (``runtime.Array`` is this class, with Python methods grafted on).
ArrayImpl: TypeAlias = _jax.ArrayImpl
#: The base of ``ArrayImpl`` (runtime's ``ExtendedArray`` subclasses it).
Array: TypeAlias = _jax.Array
ArrayCopySemantics = _jax.ArrayCopySemantics
Device: TypeAlias = _jax.Device
DeviceList: TypeAlias = _jax.DeviceList
#: A jaxlib client (a backend): owns devices, compiles and loads executables.
Client: TypeAlias = xla_client.Client
CompileOptions: TypeAlias = xla_client.CompileOptions
HloSharding: TypeAlias = xla_client.HloSharding
#: The C++ sharding bases jaxlib's runtime recognizes.
SingleDeviceSharding: TypeAlias = _jax.SingleDeviceSharding
GSPMDSharding: TypeAlias = _jax.GSPMDSharding
#: What jaxlib raises when XLA fails (a deleted buffer, a failed run).
JaxRuntimeError: TypeAlias = _jax.JaxRuntimeError

# --- backends ------------------------------------------------------------------------------


def approx_top_k_output_size(
    input_size: int, rank: int, k: int, recall_target: float, input_size_override: int
) -> int:
    """How many results XLA's ApproxTopK returns along its dimension when not aggregated."""
    return _jax.approx_top_k_reduction_output_size(
        input_size, rank, k, recall_target, False, input_size_override
    )[0]


def quiet_native_logs() -> None:
    """Keep jaxlib's C++ logs at warnings and errors (its clients log devices at INFO)."""
    utils.absl_set_min_log_level(1)


def make_cpu_client(num_devices: int | None, **options: Any) -> Client:
    """Return a CPU client with ``num_devices`` devices (``options``: the distributed ones).

    None leaves the count to XLA: one device unless ``XLA_FLAGS`` holds
    ``--xla_force_host_platform_device_count``.
    """
    return xla_client.make_cpu_client(num_devices=num_devices, **options)


# --- foreign functions (jax.ffi) ----------------------------------------------------------


def register_custom_call_target(
    name: str, fn: Any, platform: str, api_version: int, **options: Any
) -> None:
    """Register an XLA custom-call target: a PyCapsule of a handler, or a dict of stage capsules.

    ``api_version`` 1 is XLA's typed FFI, 0 the older custom-call API. A platform
    with no client yet is remembered by jaxlib and registered when one appears.
    """
    xla_client.register_custom_call_target(name, fn, platform, api_version, **options)


def register_custom_type(name: str, type_registration: Any, platform: str) -> None:
    """Register a user type for FFI handlers (a dict with a ``type_id`` capsule, ``type_info``)."""
    xla_client.register_custom_type(name, type_registration, platform=platform)


def register_custom_call_as_batch_partitionable(name: str) -> None:
    """Tell XLA's partitioner that target ``name`` is batch-partitionable."""
    xla_client.register_custom_call_as_batch_partitionable(name)


def jaxlib_include_dir() -> str:
    """Return the folder of C headers jaxlib ships (``xla/ffi/api/{c_api,api,ffi}.h``)."""
    return os.path.join(os.path.dirname(os.path.abspath(jaxlib.__file__)), "include")


# --- buffers -------------------------------------------------------------------------------

#: ``batched_device_put(aval, sharding, values, devices, committed=, enable_x64=,
#: host_buffer_semantics=)``: one ArrayImpl from one host value per device.
batched_device_put = _jax.batched_device_put
#: The host buffer semantics of a copy made during the call (numpy memory is not aliased).
COPY_DURING_CALL = _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
#: Wait for every ArrayImpl of a list.
batched_block_until_ready = _jax.batched_block_until_ready


def copy_to_devices(x: ArrayImpl, sharding) -> ArrayImpl:
    """Return a copy of the device array ``x`` on the devices of ``sharding``."""
    (copy,) = _jax.batched_copy_array_to_devices_with_sharding(
        [x], [sharding._internal_device_list], [sharding], [_jax.ArrayCopySemantics.ALWAYS_COPY]
    )
    return copy


def result_handler(aval, sharding, committed: bool):
    """Return jaxlib's handler turning an executable's output buffers into an ArrayImpl."""
    return _jax.array_result_handler(aval, sharding, committed, _skip_checks=True)


# --- compiling -----------------------------------------------------------------------------


def compile_options(
    device_ids: Sequence[int],
    *,
    spmd_partitioning: bool,
    shardy: bool = False,
    propagate_to_parameters: Sequence[bool] | None = None,
    propagate_to_output: Sequence[bool] | None = None,
    compiler_options: Mapping[str, Any] | None = None,
) -> CompileOptions:
    """Return compile options for one replica partitioned over the devices ``device_ids``.

    ``shardy`` selects the Shardy partitioner; ``propagate_to_parameters`` /
    ``propagate_to_output`` say per input / output whether XLA chooses its sharding;
    ``compiler_options`` are XLA's flags by name (``Lowered.compile(compiler_options)``),
    the four effort settings of the build options among them, as JAX passes them.
    """
    options = xla_client.CompileOptions()
    options.num_replicas = 1
    options.num_partitions = len(device_ids)
    ids = np.array([list(device_ids)], dtype=np.int64)
    options.device_assignment = xla_client.DeviceAssignment.create(ids)
    build = options.executable_build_options
    build.use_spmd_partitioning = spmd_partitioning
    if shardy:
        build.use_shardy_partitioner = True
    if propagate_to_parameters is not None:
        build.allow_spmd_sharding_propagation_to_parameters = list(propagate_to_parameters)
    if propagate_to_output is not None:
        build.allow_spmd_sharding_propagation_to_output = list(propagate_to_output)
    if compiler_options:
        overrides = dict(compiler_options)
        for name in _BUILD_OPTION_NAMES:
            if name in overrides:
                setattr(build, name, overrides.pop(name))
        options.env_option_overrides = list(overrides.items())
    return options


# Compiler options that are fields of the build options rather than XLA flags.
_BUILD_OPTION_NAMES = (
    "exec_time_optimization_effort",
    "memory_fitting_effort",
    "optimization_level",
    "memory_fitting_level",
)


def serialize_compile_options(options: CompileOptions) -> bytes:
    """Return the options as bytes (part of the compile cache's key)."""
    return options.SerializeAsString()


def compile_and_load(
    backend: Client,
    module: Any,
    devices: Sequence[Device],
    options: CompileOptions,
    host_callbacks: Sequence[Any] = (),
):
    """Compile ``module`` (an MLIR module, its text or bytecode) and load it on ``devices``."""
    device_list = _jax.DeviceList(tuple(devices))
    if host_callbacks:
        return backend.compile_and_load(
            module,
            executable_devices=device_list,
            compile_options=options,
            host_callbacks=list(host_callbacks),
        )
    return backend.compile_and_load(module, device_list, options)


def serialize_executable(backend: Client, executable) -> bytes:
    """Return a loaded executable as bytes for the persistent compile cache."""
    return backend.serialize_executable(executable)


def deserialize_executable(
    backend: Client, payload: bytes, devices: Sequence[Device], options: CompileOptions
):
    """Load an executable from ``serialize_executable``'s bytes onto ``devices``."""
    return backend.deserialize_executable(payload, _jax.DeviceList(tuple(devices)), options)


def hlo_text(executable) -> str:
    """Return the optimized HLO text of a loaded executable."""
    return executable.get_hlo_text()


def cost_analysis(executable) -> dict[str, Any]:
    """Return XLA's cost estimate of a loaded executable (flops, bytes accessed, ...)."""
    return dict(executable.cost_analysis())


def memory_analysis(executable):
    """Return XLA's memory estimate of a loaded executable (jaxlib's CompiledMemoryStats)."""
    return executable.get_compiled_memory_stats()


def executable_layouts(executable) -> tuple[list, list]:
    """Return the PjRtLayouts of a loaded executable's parameters and outputs."""
    return executable.get_parameter_layouts(), executable.get_output_layouts()


def layout_fields(pjrt_layout) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...], int]:
    """Return a PjRtLayout's minor-to-major order, tiling and sub-byte element size."""
    layout = pjrt_layout._xla_layout()
    return tuple(layout.minor_to_major()), tuple(layout.tiling()), layout.element_size_in_bits()


def module_to_xla_computation(bytecode: bytes):
    """Return the HLO XlaComputation of a StableHLO module given as MLIR bytecode."""
    return _jax.mlir.mlir_module_to_xla_computation(bytecode, use_tuple_args=False)


def hlo_module_text(computation, debug_info: bool = False) -> str:
    """Return an XlaComputation's HLO text (XLA's short parsable form; metadata on request)."""
    options = _hlo.HloPrintOptions.short_parsable()
    options.print_metadata = debug_info
    return computation.as_hlo_module().to_string(options)


def hlo_cost_analysis(backend: Client, computation) -> dict[str, Any]:
    """Return XLA's cost estimate of an unoptimized XlaComputation on ``backend``."""
    return dict(_jax.hlo_module_cost_analysis(backend, computation.as_hlo_module()))


def xla_shardings(executable) -> tuple[list, list]:
    """Return the shardings XLA gave an SPMD executable's parameters and outputs.

    Each is an HloSharding or an OpSharding proto: :func:`hlo_sharding` reads both.
    """
    return executable.get_parameter_shardings(), executable.get_output_shardings()


def hlo_sharding(op_sharding) -> HloSharding:
    """Return ``op_sharding`` (an HloSharding or an OpSharding proto) as an HloSharding."""
    if isinstance(op_sharding, xla_client.HloSharding):
        return op_sharding
    return xla_client.HloSharding.from_proto(op_sharding)


def hlo_sharding_from_string(text: str) -> HloSharding:
    """Parse an HloSharding from its text (``{devices=[2,1]<=[2]}``)."""
    return xla_client.HloSharding.from_string(text)


def replicated_hlo_sharding() -> HloSharding:
    """Return the HloSharding of a replicated value."""
    return xla_client.HloSharding.replicate()


def encode_inspect_sharding_callback(callback: Callable[[HloSharding], None]) -> bytes:
    """Return the backend config of an ``InspectSharding`` custom call calling ``callback``.

    XLA's SPMD partitioner calls ``callback`` with the HloSharding it chose for
    the custom call's operand; the bytes hold the callable's address, so the
    caller keeps it alive until the program is compiled.
    """
    return xla_client.encode_inspect_sharding_callback(callback)


# --- the C++ jit fast path (jaxlib's PjitFunction) -----------------------------------------

cpp_jit_available: bool = hasattr(_jax, "pjit") and hasattr(_jax, "PjitFunctionCache")


def pytree_registry():
    """Return a new C++ pytree registry (what the C++ fast path flattens with)."""
    return _jax.pytree.PyTreeRegistry()


def install_jit_states(enable_x64: bool) -> tuple[Callable[[bool], None], Any]:
    """Create the process-wide states the C++ fast path keys on.

    The C++ side reads x64 mode and disable_jit on every call (both part of its
    cache key) and a post hook (unused: None). Returns the setter of x64 mode and
    the disable_jit state: while it is True, globally (``set_global``) or in one
    thread (``swap_local``), a ``PjitFunction`` calls its Python function
    instead of looking up its compiled programs.
    """
    x64 = _jax.config.Config("modjax_enable_x64", enable_x64, include_in_jit_key=True)
    _jax.jax_jit.set_enable_x64_state(x64)
    disable = _jax.config.Config("modjax_disable_jit", False, include_in_jit_key=True)
    _jax.jax_jit.set_disable_jit_state(disable)
    _jax.jax_jit.set_post_hook_state(_jax.config.Config("modjax_post_hook", None))
    return x64.set_global, disable


def pjit_cache(capacity: int):
    """Return a process-wide cache of C++ fast-path entries (``PjitFunctionCache``)."""
    return _jax.PjitFunctionCache(capacity=capacity)


def pjit(
    name: str,
    fun: Callable,
    cache_miss: Callable,
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
    global_key: Any,
    registry: Any,
    shard_arg_fallback: Callable,
    cache: Any,
) -> Callable:
    """Return jaxlib's C++ fast-path callable (a ``PjitFunction``) for ``fun``."""
    return _jax.pjit(
        name,
        fun,
        cache_miss,
        list(static_argnums),
        list(static_argnames),
        global_key,
        registry,
        shard_arg_fallback,
        cache,
    )


# --- many processes ------------------------------------------------------------------------


def distributed_service(address: str, num_processes: int, **timeouts: Any):
    """Start jaxlib's coordination service on ``address`` (process 0 runs it)."""
    return _jax.get_distributed_runtime_service(address, num_processes, **timeouts)


def distributed_client(coordinator_address: str, process_id: int, **options: Any):
    """Return a (not yet connected) client of the coordination service."""
    return _jax.get_distributed_runtime_client(coordinator_address, process_id, **options)


def gloo_collectives(client):
    """Return jaxlib's Gloo TCP collectives over the distributed ``client`` (CPU backends)."""
    return _jax.make_gloo_tcp_collectives(distributed_client=client)


# --- DLPack --------------------------------------------------------------------------------


def buffer_to_dlpack(buffer: ArrayImpl, stream):
    """Export a single-device buffer as a DLPack capsule."""
    return _jax.buffer_to_dlpack_managed_tensor(buffer, stream=stream)


def dlpack_to_buffer(capsule, device: Device, dl_type: int, copy: bool | None) -> ArrayImpl:
    """Import a DLPack capsule as a single-device buffer on ``device``."""
    return _jax.dlpack_managed_tensor_to_buffer(capsule, device, None, copy, int(dl_type))


#: jaxlib's IFRT program builders (``jax.extend.ifrt_programs.ifrt_programs``).
ifrt_programs = _jax.ifrt_programs


# --- compiler passes (jax.extend.xla) --------------------------------------------------------


def register_cpu_hlo_transform(name: str, stage: int, callback) -> None:
    """Run ``callback(serialized HloModuleProto) -> bytes | None`` in XLA:CPU's pipeline."""
    from jaxlib import _xla as _xla_ext

    _xla_ext.register_xla_transform(name, stage, callback)


def clear_cpu_hlo_transform(name: str, stage: int) -> bool:
    """Remove a pass ``register_cpu_hlo_transform`` added; tell whether there was one."""
    from jaxlib import _xla as _xla_ext

    return bool(_xla_ext.clear_xla_transform(name, stage))


# --- buffer callbacks (jax.experimental.buffer_callback) --------------------------------------

#: A device buffer a buffer callback reads or fills (``__array__``, ``__dlpack__``).
FfiBuffer: TypeAlias = _jax.ffi.Buffer
#: What XLA passes a buffer callback first (its stage; the stream on GPU).
FfiExecutionContext: TypeAlias = _jax.ffi.ExecutionContext
FfiExecutionStage: TypeAlias = _jax.ffi.ExecutionStage


# --- the profiler (jaxlib's TSL profiler: sessions, TraceMe, the server) ----------------------

#: A profiling session: started on creation, ``stop_and_export(log_dir)`` writes the trace.
ProfilerSession: TypeAlias = _profiler.ProfilerSession
#: What a session collects (host/Python tracer levels, duration, ...).
ProfileOptions: TypeAlias = _profiler.ProfileOptions
#: A named span on the host timeline while a session runs (a context manager).
TraceMe: TypeAlias = _profiler.TraceMe
#: A written trace read back (planes of lines of events).
ProfileData: TypeAlias = _profile_data.ProfileData
ProfileEvent: TypeAlias = _profile_data.ProfileEvent
ProfilePlane: TypeAlias = _profile_data.ProfilePlane


def profiled_instructions_proto(tensorboard_dir: str) -> bytes:
    """Return the serialized ProfiledInstructionsProto of the trace in ``tensorboard_dir``."""
    return _profiler.get_profiled_instructions_proto(tensorboard_dir)


def profiler_server(port: int):
    """Start jaxlib's profiler server on ``port``; it serves until the returned object dies."""
    return _profiler.start_server(port)


def profiler_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Profile the subprocess ``pid`` (serving on ``port``) with this process; return the undo."""
    return _profiler.register_subprocess(pid, port)


def profiler_metadata(entries: dict[str, str] | None) -> None:
    """Set the metadata the next trace records (``None``: clear it)."""
    if entries is None:
        _profiler.clear_metadata()
        return
    for key, value in entries.items():
        _profiler.set_metadata(key, value)


# --- guards (jaxlib's guard_lib: transfer guards, array GC guard, thread guard) -------------

_guards = _jax.guard_lib
_TRANSFER_LEVELS = {
    "allow": _guards.TransferGuardLevel.ALLOW,
    "log": _guards.TransferGuardLevel.LOG,
    "disallow": _guards.TransferGuardLevel.DISALLOW,
    "log_explicit": _guards.TransferGuardLevel.LOG_EXPLICIT,
    "disallow_explicit": _guards.TransferGuardLevel.DISALLOW_EXPLICIT,
}
_GC_LEVELS = {
    "allow": _guards.GarbageCollectionGuardLevel.ALLOW,
    "log": _guards.GarbageCollectionGuardLevel.LOG,
    "fatal": _guards.GarbageCollectionGuardLevel.FATAL,
}


def set_transfer_guard(direction: str, level: str | None) -> None:
    """Set the process-wide guard level of ``direction`` ("host_to_device", ...); None: default.

    jaxlib checks it on every transfer it makes (``batched_device_put``, the C++
    fast path's argument transfers, copies between devices).
    """
    setattr(_guards.global_state(), direction, None if level is None else _TRANSFER_LEVELS[level])


def set_array_gc_guard(level: str | None) -> None:
    """Set what jaxlib does when the garbage collector frees an Array in a cycle."""
    _guards.global_state().garbage_collect_array = None if level is None else _GC_LEVELS[level]


def set_thread_guard(enabled: bool) -> None:
    """Turn jaxlib's thread guard on or off (multi-process operations from one thread)."""
    _guards.update_thread_guard_global_state(enabled)


class explicit_transfer:
    """Mark the transfers inside the block explicit (``device_put``/``device_get``)."""

    __slots__ = ("attribute", "before")

    def __init__(self, attribute: str):  # "explicit_device_put" or "explicit_device_get"
        self.attribute = attribute

    def __enter__(self) -> None:
        state = _guards.thread_local_state()
        self.before = getattr(state, self.attribute)
        setattr(state, self.attribute, True)

    def __exit__(self, *exc: Any) -> None:
        setattr(_guards.thread_local_state(), self.attribute, self.before)
