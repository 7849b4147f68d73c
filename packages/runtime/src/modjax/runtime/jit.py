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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from modjax.tracecore.wrapped_fun import check_callable

from . import cpp_dispatch
from .eval_shape import eval_shape
from .fast_path_cpp import cpp_wrapper
from .fast_path_python import python_wrapper
from .jit_function import JitFunction, clear_caches
from .jit_primitive import jit_p
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


def jit(
    fun: Callable,
    *,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
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
    """
    check_callable(fun)
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
