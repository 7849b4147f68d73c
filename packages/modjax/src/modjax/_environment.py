"""Top-level helpers of ``jax`` about arrays, names and the environment.

``live_arrays``, ``copy_to_host_async``, ``typeof``, ``named_call``,
``named_scope``, the deprecated ``host_*`` spellings of ``process_*``, and
``print_environment_info``; each is a thin wrapper over a component package.
"""

from __future__ import annotations

import contextlib
import functools
import platform as _platform
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from modjax import runtime
from modjax.runtime import _xla
from modjax.runtime.memory import MemorySpace
from modjax.tracecore import get_aval, source_info
from modjax.tracecore.tree_util import tree_leaves


def live_arrays(platform: str | None = None) -> list:
    """Return every Array alive on the backend ``platform`` (jax.live_arrays)."""
    return runtime.get_backend(platform).live_arrays()


def copy_to_host_async(x: Any) -> Any:
    """Begin copying the Arrays of ``x`` to the host; return ``x`` (jax.copy_to_host_async)."""
    for leaf in tree_leaves(x):
        if isinstance(leaf, runtime.ArrayImpl):
            leaf.copy_to_host_async()
    return x


def typeof(x: Any):
    """Return the abstract value (``ShapedArray``) of ``x`` (jax.typeof)."""
    return get_aval(x)


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """Trace ``fun`` with ``name`` pushed on the name stack of its equations (jax.named_call)."""
    scope = fun.__name__ if name is None else name

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with source_info.scope_name(scope):
            return fun(*args, **kwargs)

    return named


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Push ``name`` on the name stack of the equations traced inside (jax.named_scope)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    with source_info.scope_name(name):
        yield


def _renamed(old: str, new: str) -> None:
    warnings.warn(
        f"jax.{old} has been renamed to jax.{new}. This alias will eventually be removed; "
        "please update your code.",
        UserWarning,
        stacklevel=3,
    )


def host_count(backend=None) -> int:
    """Deprecated spelling of ``process_count`` (jax.host_count)."""
    _renamed("host_count", "process_count")
    return runtime.process_count()


def host_id(backend=None) -> int:
    """Deprecated spelling of ``process_index`` (jax.host_id)."""
    _renamed("host_id", "process_index")
    return runtime.process_index()


def host_ids(backend=None) -> list[int]:
    """Deprecated: the list of process indices (jax.host_ids)."""
    _renamed("host_ids", "process_indices")
    return list(range(runtime.process_count()))


def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or return) the versions and devices modjax runs with (jax.print_environment_info)."""
    import modjax

    devices = runtime.devices()
    text = "\n".join(
        [
            f"modjax: {modjax.version.modjax_version} (JAX API {modjax.__version__})",
            f"jaxlib: {_xla.jaxlib_version}",
            f"numpy:  {np.__version__}",
            f"python: {sys.version}",
            f"device info: {devices[0].platform}-{len(devices)}, "
            f"{runtime.local_device_count()} local devices",
            f"process_count: {runtime.process_count()}",
            f"platform: {_platform.uname()}",
        ]
    )
    if return_string:
        return text
    print(text)
    return None


#: ``jax.memory``: a namespace holding ``Space``.
memory = types.SimpleNamespace(Space=MemorySpace)
