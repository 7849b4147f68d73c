"""modjax: NumPy-style programs traced, transformed and compiled with XLA.

``import modjax as jax`` gives the attribute layout of ``jax``: ``jit``,
``make_jaxpr``, ``device_put``, ``numpy``, ``lax``, ``tree``, ``config``, ...
Every name here comes from one of the component packages; this module only
assembles them.
"""

# The component distributions install their own folders under the shared
# ``modjax`` namespace; when they are installed from separate source trees
# (editable workspace installs), extend our path so they are all found.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from modjax import dtypes, errors, lax, numpy, tree, tree_util  # noqa: E402  # noqa: E402
from modjax.runtime import (  # noqa: E402
    Array,
    block_until_ready,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    eval_shape,
    jit,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from modjax.tracecore import ShapeDtypeStruct, config, make_jaxpr  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Array",
    "ShapeDtypeStruct",
    "block_until_ready",
    "config",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "dtypes",
    "errors",
    "eval_shape",
    "jit",
    "lax",
    "local_device_count",
    "local_devices",
    "make_jaxpr",
    "numpy",
    "process_count",
    "process_index",
    "tree",
    "tree_util",
]
