"""jit: compile a Python function with XLA (``jax.jit``).

The path of a call (design.md, "the path of a jitted call"), by module:

1. *Fast path* (``fast_path_cpp``, the default). Outside any transformation the
   call goes to jaxlib's C++ ``PjitFunction`` (``cpp_dispatch`` is the contract
   with it): it flattens the arguments, computes each leaf's signature (shape,
   dtype, weak type, sharding, committed) and on a hit runs the executable
   without Python. With the option ``cpp_dispatch`` off, ``fast_path_python``
   keys dicts on each Array's shared aval and sharding object instead.
2. *Miss* (``jit_function``, ``arguments``). Static arguments are separated
   (and must be hashable), the leaves flattened with tracecore's pytrees and
   turned into avals (numpy arrays canonicalized, Python scalars weakly typed);
   tracecore traces the function into a ClosedJaxpr; ``compile_jaxpr`` prunes,
   lowers (modjax.lowering) and compiles it (``compile_or_get_cached``); the
   run's leaves are put on the device; the fast path learns the new entry.
3. *Under a transformation* (an outer jit, make_jaxpr, grad, vmap...), the
   call binds ``jit_p`` (``jit_primitive``) with the traced program: a nested
   jit is one call equation of the outer jaxpr, lowered as a call (not compiled
   separately).

Ahead-of-time stages are in ``stages``, ``eval_shape`` in its own module.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from modjax.tracecore.wrapped_fun import check_callable

from . import cpp_dispatch
from .backends import local_devices
from .eval_shape import eval_shape
from .fast_path_cpp import cpp_wrapper
from .fast_path_python import python_wrapper
from .jit_function import JitFunction, clear_caches
from .jit_primitive import jit_p
from .sharding import SingleDeviceSharding
from .stages import Compiled, Lowered, Traced, aot_lower, aot_trace, jit_eval_shape

__all__ = [
    "jit",
    "jit_p",
    "eval_shape",
    "Traced",
    "Lowered",
    "Compiled",
    "clear_caches",
]


class _NotSpecified:
    """The default of jit's ``fun``: no function yet, so ``jit(...)`` is a decorator."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not-specified>"


_NOT_SPECIFIED: Any = _NotSpecified()


def jit(
    fun: Callable = _NOT_SPECIFIED,
    /,
    *,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    device: Any = None,
    backend: str | None = None,
    inline: bool = False,
    compiler_options: dict[str, Any] | None = None,
) -> Callable:
    """Return a version of ``fun`` compiled with XLA on first use per signature (``jax.jit``).

    Arguments are pytrees of Arrays, numpy arrays and Python scalars (traced as
    weakly typed values). ``static_argnums``/``static_argnames`` name arguments
    passed to ``fun`` as Python values: they must be hashable and each new value
    compiles anew. ``donate_argnums``/``donate_argnames`` name arguments whose
    buffers the computation may reuse; they are deleted by the call. Unused
    arguments are pruned from the compiled program unless ``keep_unused``.
    Under another transformation the call becomes one ``jit`` equation (or, with
    ``inline=True``, its equations are inlined). The result also offers
    ``.trace``, ``.lower`` and ``.eval_shape`` (ahead-of-time compilation) and
    ``.clear_cache()``. ``in_shardings``/``out_shardings`` are Shardings, or pytree
    prefixes of the positional arguments / of the output with Shardings and None
    (unspecified: committed inputs keep theirs, XLA chooses the rest); with a
    multi-device sharding the program is partitioned over its devices.
    ``device``/``backend`` (deprecated, as in JAX) run the program on that device,
    or on the first device of that backend, moving every argument there.
    ``compiler_options`` are XLA's flags by name, used for every compilation.
    Without ``fun``, return a decorator that applies these options.
    """
    if fun is _NOT_SPECIFIED:
        options = {k: v for k, v in locals().items() if k != "fun"}
        return lambda f: jit(f, **options)
    check_callable(fun)
    if device is not None or backend is not None:
        in_shardings, out_shardings = _device_shardings(
            device, backend, in_shardings, out_shardings
        )
    fn = JitFunction(
        fun,
        static_argnums,
        static_argnames,
        donate_argnums,
        donate_argnames,
        keep_unused,
        inline,
        in_shardings,
        out_shardings,
        compiler_options,
    )
    wrapped: Any  # a function object that carries the attributes set below
    if cpp_dispatch.cpp_dispatch.value and cpp_dispatch.available:
        wrapped = cpp_wrapper(fn)
    else:
        wrapped = python_wrapper(fn)
    with contextlib.suppress(AttributeError, TypeError):  # callables without a __name__
        functools.update_wrapper(wrapped, fun)
    wrapped.__dict__.pop("_jit", None)
    wrapped._jit = fn
    wrapped.trace = functools.partial(aot_trace, fn)
    wrapped.lower = functools.partial(aot_lower, fn)
    wrapped.eval_shape = functools.partial(jit_eval_shape, fn)
    wrapped.clear_cache = fn.clear_cache
    wrapped._cache_size = lambda: len(fn.executables)
    wrapped._stats = fn.stats
    return wrapped


def _device_shardings(device, backend, in_shardings, out_shardings):
    """Return the in/out shardings that pin a jit to ``device`` or ``backend``'s first device."""
    warnings.warn(
        "backend and device argument on jit is deprecated. You can use "
        '`jax.device_put(..., jax.local_devices(backend="cpu")[0])` on the inputs to the '
        "jitted function to get the same behavior.",
        DeprecationWarning,
        stacklevel=3,
    )
    if device is not None and backend is not None:
        raise ValueError(
            "can't specify both a device and a backend for jit, "
            f"got device={device!r} and backend={backend!r}"
        )
    if in_shardings is not None:
        raise ValueError(
            "If backend or device is specified on jit, then in_shardings should not be specified."
        )
    if out_shardings is not None:
        raise ValueError(
            "If backend or device is specified on jit, then out_shardings should not be specified."
        )
    if device is None:
        device = local_devices(backend=backend)[0]
    elif not hasattr(device, "client"):
        raise TypeError(f"jit: device must be a Device, got {device!r}")
    pinned = SingleDeviceSharding(device)
    return pinned, pinned
