"""modjax: NumPy-style programs traced, transformed and compiled with XLA.

``import modjax as jax`` gives the attribute layout of ``jax``: ``jit``, ``grad``,
``vmap``, ``jacfwd``, ``make_jaxpr``, ``device_put``, ``numpy``, ``lax``, ``tree``,
``config``, ...
Every name here comes from one of the component packages; this module only
assembles them.
"""

# The component distributions install their own folders under the shared
# ``modjax`` namespace; when they are installed from separate source trees
# (editable workspace installs), extend our path so they are all found.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from modjax import (  # noqa: E402
    ad_checkpoint,
    custom_batching,
    custom_derivatives,
    debug,
    distributed,
    dtypes,
    errors,
    lax,
    numpy,
    random,
    ref,
    sharding,
    stages,
    tree,
    tree_util,
    typing,
)
from modjax._ad import ad  # noqa: E402
from modjax._environment import (  # noqa: E402
    copy_to_host_async,
    host_count,
    host_id,
    host_ids,
    live_arrays,
    memory,
    named_call,
    named_scope,
    print_environment_info,
    typeof,
)
from modjax._jax_alias import install_jax_alias  # noqa: E402
from modjax.autodiff import (  # noqa: E402
    checkpoint,
    checkpoint_policies,
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_vjp,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    remat,
    value_and_grad,
    vjp,
)
from modjax.batching import vmap  # noqa: E402
from modjax.lax.callbacks import pure_callback  # noqa: E402
from modjax.numpy._indexing import ds  # noqa: E402  (jax.ds: dynamic slices in indexing)
from modjax.random._key_reuse import debug_key_reuse  # noqa: E402  (jax.debug_key_reuse)
from modjax.random._keys import enable_custom_prng, legacy_prng_key  # noqa: E402
from modjax.random._prng import (  # noqa: E402  (jax.default_prng_impl, a context manager)
    default_prng_impl_option as default_prng_impl,
)
from modjax.random._threefry import threefry_partitionable  # noqa: E402
from modjax.ref import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: E402
from modjax.runtime import (  # noqa: E402
    Shard,
    block_until_ready,
    clear_caches,
    debug_infs,
    debug_nans,
    default_backend,
    device_count,
    device_get,
    devices,
    disable_jit,
    effects_barrier,
    eval_shape,
    explain_cache_misses,
    fwd_and_bwd,
    jit,
    local_device_count,
    local_devices,
    process_count,
    process_index,
    process_indices,
)
from modjax.runtime import explicit_device_put as device_put  # noqa: E402  (explicit transfers)
from modjax.runtime.backends import Device  # noqa: E402
from modjax.runtime.executable import no_execution  # noqa: E402
from modjax.runtime.guards import (  # noqa: E402
    array_garbage_collection_guard,
    thread_guard,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from modjax.sharding import (  # noqa: E402
    NamedSharding,
    P,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    pmap,
    reshard,
    set_mesh,
    shard_map,
    smap,
)
from modjax.tracecore import (  # noqa: E402
    Array,
    ShapeDtypeStruct,
    check_tracer_leaks,
    checking_leaks,
    config,
    ensure_compile_time_eval,
    make_jaxpr,
)
from modjax.tracecore.dtypes import float0  # noqa: E402
from modjax.tracecore.options import (  # noqa: E402
    allow_f16_reductions,
    default_matmul_precision,
    enable_checks,
    no_tracing,
    softmax_custom_jvp,
)

# The configuration options users switch for a block (``with jax.enable_x64(True):``).
enable_x64 = config.option("enable_x64")
log_compiles = config.option("log_compiles")
make_user_context = config.make_user_context
jax2tf_associative_scan_reductions = config.option("jax2tf_associative_scan_reductions")
default_device = config.option("default_device")
numpy_dtype_promotion = config.option("numpy_dtype_promotion")
numpy_rank_promotion = config.option("numpy_rank_promotion")
auto_pcast = config.option("auto_pcast")
remove_size_one_mesh_axis_from_type = config.option("remove_size_one_mesh_axis_from_type")

from modjax.version import __version__, __version_info__  # noqa: E402  (JAX's API version)

__all__ = [
    "Ref",
    "ad",
    "empty_ref",
    "free_ref",
    "freeze",
    "new_ref",
    "ref",
    "core",
    "jax2tf_associative_scan_reductions",
    "make_user_context",
    "monitoring",
    "ds",
    "memory",
    "ops",
    "version",
    "allow_f16_reductions",
    "array_garbage_collection_guard",
    "default_device",
    "default_matmul_precision",
    "enable_checks",
    "no_execution",
    "no_tracing",
    "softmax_custom_jvp",
    "thread_guard",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
    "custom_gradient",
    "Device",
    "Shard",
    "clear_caches",
    "copy_to_host_async",
    "dlpack",
    "enable_x64",
    "ensure_compile_time_eval",
    "float0",
    "host_count",
    "host_id",
    "host_ids",
    "image",
    "live_arrays",
    "log_compiles",
    "named_call",
    "named_scope",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "auto_pcast",
    "remove_size_one_mesh_axis_from_type",
    "print_environment_info",
    "profiler",
    "stages",
    "typeof",
    "Array",
    "P",
    "make_mesh",
    "pmap",
    "NamedSharding",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "process_indices",
    "reshard",
    "set_mesh",
    "shard_map",
    "smap",
    "sharding",
    "distributed",
    "ShapeDtypeStruct",
    "ad_checkpoint",
    "block_until_ready",
    "checkpoint",
    "check_tracer_leaks",
    "checking_leaks",
    "checkpoint_policies",
    "closure_convert",
    "config",
    "custom_batching",
    "custom_derivatives",
    "custom_jvp",
    "custom_vjp",
    "debug",
    "debug_infs",
    "debug_key_reuse",
    "default_prng_impl",
    "enable_custom_prng",
    "legacy_prng_key",
    "threefry_partitionable",
    "debug_nans",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "disable_jit",
    "dtypes",
    "effects_barrier",
    "errors",
    "eval_shape",
    "experimental",
    "explain_cache_misses",
    "export",
    "flatten_util",
    "grad",
    "hessian",
    "install_jax_alias",
    "fwd_and_bwd",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linear_transpose",
    "linearize",
    "local_device_count",
    "local_devices",
    "make_jaxpr",
    "nn",
    "numpy",
    "random",
    "scipy",
    "process_count",
    "process_index",
    "pure_callback",
    "remat",
    "test_util",
    "tree",
    "tree_util",
    "typing",
    "value_and_grad",
    "vjp",
    "vmap",
]


# Submodules a program reaches as attributes (``jax.scipy.special``, ``jax.nn``) but
# that most programs never use: imported on first access, so ``import modjax`` does
# not pay for them. Their primitives and rules are declared in them, so they are
# registered before anything can bind them.
_LAZY_SUBMODULES = frozenset(
    {
        "_src",  # read by libraries as jax._src.<module> without an import
        "api_util",
        "dlpack",
        "experimental",
        "export",
        "ffi",
        "flatten_util",
        "image",
        "interpreters",
        "lib",
        "core",
        "monitoring",
        "nn",
        "ops",
        "profiler",
        "scipy",
        "test_util",
        "version",
    }
)


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"modjax.{name}")  # also binds it as our attribute
    raise AttributeError(f"module 'modjax' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY_SUBMODULES})
