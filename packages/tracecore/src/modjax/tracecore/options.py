"""JAX's configuration options that change tracing, and the ones modjax accepts without effect.

Options with a meaning are defined next to the code that reads them; this module
holds the ones whose reader is spread over the packages above tracecore (the
matmul precision ``lax.dot_general`` uses, the half-precision reduction check,
``nn.softmax``'s derivative) plus ``no_tracing`` and ``enable_checks``, which
tracing itself obeys.

``ACCEPTED`` lists JAX 0.10.2's options that configure something modjax does not
have (GPU/TPU backends, Pallas, jax2tf, JAX-internal rewrites, XLA auto-tuning):
``config.update`` accepts them with JAX's types and defaults, so a program
written for JAX runs, and they change nothing. The package README lists them.
"""

from __future__ import annotations

from typing import Any

from .config import config

__all__ = [
    "ACCEPTED",
    "DOT_ALGORITHM_PRESETS",
    "PRECISION_NAMES",
    "allow_f16_reductions",
    "auto_pcast",
    "default_matmul_precision",
    "enable_checks",
    "no_tracing",
    "remove_size_one_mesh_axis_from_type",
    "softmax_custom_jvp",
]

#: The precision names ``default_matmul_precision`` takes (jax.lax.Precision's spellings).
PRECISION_NAMES = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32")
#: The dot algorithm preset names it takes too (jax.lax.DotAlgorithmPreset's members).
DOT_ALGORITHM_PRESETS = (
    "ANY_F8_ANY_F8_F32",
    "ANY_F8_ANY_F8_F32_FAST_ACCUM",
    "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
    "F16_F16_F16",
    "F16_F16_F32",
    "BF16_BF16_BF16",
    "BF16_BF16_F32",
    "BF16_BF16_F32_X3",
    "BF16_BF16_F32_X6",
    "BF16_BF16_F32_X9",
    "TF32_TF32_F32",
    "TF32_TF32_F32_X3",
    "F32_F32_F32",
    "F64_F64_F64",
)

default_matmul_precision = config.define_enum_option(
    "default_matmul_precision",
    None,  # type: ignore[arg-type]  # None: each dot_general keeps its own precision
    PRECISION_NAMES + DOT_ALGORITHM_PRESETS,
    env_var="MODJAX_DEFAULT_MATMUL_PRECISION",
    help="The precision (or dot algorithm preset) of matmuls and convolutions called with "
    "precision=None.",
    trace_context=True,
    optional=True,
)

allow_f16_reductions = config.define_bool_option(
    "allow_f16_reductions",
    True,
    help="If False, reduce_sum of a float16 or bfloat16 operand raises ValueError.",
    trace_context=True,
)

softmax_custom_jvp = config.define_bool_option(
    "softmax_custom_jvp",
    False,
    env_var="MODJAX_SOFTMAX_CUSTOM_JVP",
    help="Differentiate nn.softmax with its own JVP rule (no stop_gradient on the maximum).",
    trace_context=True,
)

no_tracing = config.define_bool_option(
    "no_tracing",
    False,
    help="Raise RuntimeError whenever jit (or an eager op) would trace a function.",
)

enable_checks = config.define_bool_option(
    "enable_checks",
    False,
    env_var="MODJAX_ENABLE_CHECKS",
    help="Type-check every jaxpr that tracing produces (check_jaxpr); slow, for debugging.",
)

auto_pcast = config.define_bool_option(
    "auto_pcast",
    True,
    help=(
        "Inside shard_map with check_vma, let operands of one operation vary over different "
        "manual axes (and collectives take invariant operands); if False, raise ValueError."
    ),
    trace_context=True,
)

remove_size_one_mesh_axis_from_type = config.define_bool_option(
    "remove_size_one_mesh_axis_from_type",
    False,
    help="Leave mesh axes of size 1 out of types' shardings and varying manual axes.",
    trace_context=True,
)

# --- accepted without effect ------------------------------------------------------------------

_GPU_TPU = "configures a GPU/TPU backend or its tools; modjax runs on CPU"
_INTERNAL = "selects between JAX-internal implementations; modjax has one"
_XLA_TUNING = "tunes XLA features modjax's CPU compiles do not use"
_JAX2TF = "configures jax2tf, which modjax does not have"
_PALLAS = "configures Pallas/Mosaic kernels, which modjax does not have"
_MULTIHOST = "configures multi-host transfers modjax does not implement"
_DUMPS = "configures JAX's IR dumps and debug output, which modjax does not write"
_NOT_YET = "has a meaning on CPU that modjax does not implement yet (accepted, no effect)"

#: name -> (default, type, reason). The type checks a value set by a program; a tuple
#: of strings is an enum's choices (None allowed where the default is None).
ACCEPTED: dict[str, tuple[Any, Any, str]] = {
    "jax2tf_associative_scan_reductions": (False, bool, _JAX2TF),
    "jax2tf_default_native_serialization": (True, bool, _JAX2TF),
    "backend_target": ("", str, _GPU_TPU),
    "bcoo_cusparse_lowering": (False, bool, _GPU_TPU),
    "captured_constants_report_frames": (0, int, _NOT_YET),
    "captured_constants_warn_bytes": (2000000000, int, _NOT_YET),
    "check_proxy_envs": (True, bool, _GPU_TPU),
    "check_static_indices": (False, bool, _NOT_YET),
    "check_vma": (False, bool, _INTERNAL),
    "compilation_cache_max_size": (-1, int, _NOT_YET),
    "cpu_collectives_implementation": (
        "gloo",
        ("gloo", "mpi", "megascale"),
        "modjax's CPU collectives across processes are gloo's (accepted, no effect)",
    ),
    "cpu_enable_async_dispatch": (True, bool, _NOT_YET),
    "cpu_get_global_topology_timeout_minutes": (5, int, _NOT_YET),
    "cpu_get_local_topology_timeout_minutes": (2, int, _NOT_YET),
    "export_calling_convention_version": (10, int, _NOT_YET),
    "compilation_cache_check_contents": (False, bool, _NOT_YET),
    "compilation_cache_expect_pgle": (False, bool, _XLA_TUNING),
    "compilation_cache_include_metadata_in_key": (False, bool, _NOT_YET),
    "compiler_detailed_logging_min_ops": (10, int, _DUMPS),
    "compiler_enable_remat_pass": (True, bool, _NOT_YET),
    "cross_host_transfer_socket_address": ("", str, _MULTIHOST),
    "cross_host_transfer_timeout_seconds": (None, int, _MULTIHOST),
    "cross_host_transfer_transfer_size": (None, int, _MULTIHOST),
    "cross_host_transport_addresses": ("", str, _MULTIHOST),
    "cuda_visible_devices": ("all", str, _GPU_TPU),
    "custom_vjp3": (False, bool, _INTERNAL),
    "debug_leaked_clients_on_clear_backends": (False, bool, _INTERNAL),
    "debug_log_modules": ("", str, _NOT_YET),
    "disable_bwd_checks": (False, bool, _INTERNAL),
    "disable_most_optimizations": (False, bool, _NOT_YET),
    "disable_vmap_shmap_error": (False, bool, _INTERNAL),
    "disallow_mesh_context_manager": (False, bool, _INTERNAL),
    "distributed_debug": (False, bool, _MULTIHOST),
    "dump_ir_modes": ("stablehlo", str, _NOT_YET),
    "dump_ir_to": ("", str, _NOT_YET),
    "eager_constant_folding": (False, bool, _INTERNAL),
    "embedded_constants_max_bytes": (32, int, _INTERNAL),
    "enable_pgle": (False, bool, _XLA_TUNING),
    "enable_preemption_service": (True, bool, _MULTIHOST),
    "enable_recoverability": (False, bool, _MULTIHOST),
    "error_checking_behavior_divide": ("ignore", ("ignore", "raise"), _NOT_YET),
    "error_checking_behavior_nan": ("ignore", ("ignore", "raise"), _NOT_YET),
    "error_checking_behavior_oob": ("ignore", ("ignore", "raise"), _NOT_YET),
    "exec_time_optimization_effort": (0.0, float, _NOT_YET),
    "experimental_unsafe_xla_runtime_errors": (False, bool, _XLA_TUNING),
    "explicit_x64_dtypes": ("warn", ("allow", "warn", "error"), _NOT_YET),
    "export_ignore_forward_compatibility": (False, bool, _INTERNAL),
    "force_dcn_cross_host_transfers": (False, bool, _MULTIHOST),
    "high_dynamic_range_gumbel": (False, bool, _NOT_YET),
    "hlo_source_file_canonicalization_regex": (None, str, _NOT_YET),
    "include_debug_info_in_dumps": (True, bool, _NOT_YET),
    "include_full_tracebacks_in_locations": (True, bool, _NOT_YET),
    "log_checkpoint_residuals": (False, bool, _NOT_YET),
    "logging_level": ("NOTSET", str, _NOT_YET),
    "memory_fitting_effort": (0.0, float, _NOT_YET),
    "memory_fitting_level": ("O2", ("UNKNOWN", "O0", "O1", "O2", "O3"), _NOT_YET),
    "mock_gpu_topology": ("", str, _GPU_TPU),
    "mock_num_gpu_processes": (0, int, _GPU_TPU),
    "mosaic_allow_hlo": (False, bool, _PALLAS),
    "mutable_array_checks": (True, bool, _INTERNAL),
    "oneapi_visible_devices": ("all", str, _GPU_TPU),
    "optimization_level": ("UNKNOWN", ("UNKNOWN", "O0", "O1", "O2", "O3"), _NOT_YET),
    "pallas_enable_debug_checks": (False, bool, _PALLAS),
    "pallas_poison_buffers": (False, bool, _PALLAS),
    "pallas_use_mosaic_gpu": (True, bool, _PALLAS),
    "pallas_verbose_errors": (False, bool, _PALLAS),
    "persistent_cache_enable_xla_caches": (
        "xla_gpu_per_fusion_autotune_cache_dir",
        str,
        _GPU_TPU,
    ),
    "pgle_aggregation_percentile": (90, int, _XLA_TUNING),
    "pgle_profiling_runs": (3, int, _XLA_TUNING),
    "pjrt_client_create_options": (None, str, _GPU_TPU),
    "pprint_use_color": (True, bool, "modjax prints jaxprs without color"),
    "ragged_dot_use_gpu_pallas_triton_lowering": (False, bool, _GPU_TPU),
    "ragged_dot_use_ragged_dot_instruction": (True, bool, _INTERNAL),
    "refs_to_pins": (False, bool, _INTERNAL),
    "remat3": (False, bool, _INTERNAL),
    "remove_custom_partitioning_ptr_from_cache_key": (False, bool, _INTERNAL),
    "rocm_visible_devices": ("all", str, _GPU_TPU),
    "scan3": (False, bool, _INTERNAL),
    "send_traceback_to_runtime": ("off", ("off", "on", "full"), _DUMPS),
    "serialization_version": (0, int, _INTERNAL),
    "share_binary_between_hosts": (False, bool, _MULTIHOST),
    "share_binary_between_hosts_timeout_ms": (1200000, int, _MULTIHOST),
    "sort_devices_by_process_index": (True, bool, _MULTIHOST),
    "source_url_schema": (None, str, _NOT_YET),
    "threefry_gpu_kernel_lowering": (False, bool, _GPU_TPU),
    "traceback_in_locations_limit": (100, int, _NOT_YET),
    "tracer_error_num_traceback_frames": (5, int, _NOT_YET),
    "use_direct_linearize": (True, bool, _INTERNAL),
    "use_emit_pipeline_primitive": (False, bool, _PALLAS),
    "use_magma": ("auto", ("off", "on", "auto"), _GPU_TPU),
    "use_shardy_partitioner": (True, bool, "modjax always partitions with Shardy"),
    "use_simplified_jaxpr_constants": (False, bool, _INTERNAL),
    "xla_backend": ("", str, _GPU_TPU),
    "xla_profile_version": (0, int, _XLA_TUNING),
}


def _define_accepted() -> None:
    for name, (default, kind, reason) in ACCEPTED.items():
        if isinstance(kind, tuple):
            config.define_enum_option(name, default, kind, help=f"No effect: {reason}.")
        elif kind is bool:
            config.define_bool_option(name, default, help=f"No effect: {reason}.")
        else:
            config.define_typed_option(
                name, default, kind, help=f"No effect: {reason}.", optional=True
            )


_define_accepted()
