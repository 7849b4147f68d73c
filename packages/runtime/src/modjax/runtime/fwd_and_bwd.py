"""``fwd_and_bwd``: ``vjp`` split into a forward and a backward function, both jitted.

It joins autodiff's ``vjp`` with ``jit``, so it lives in the lowest package that has
both: here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from modjax.autodiff import vjp
from modjax.autodiff.api import argnums_partial, ensure_index
from modjax.tracecore.wrapped_fun import check_callable

from .jit import jit

__all__ = ["fwd_and_bwd"]


def fwd_and_bwd(
    fun: Callable, argnums: int | Sequence[int], has_aux: bool = False, jitted: bool = True
) -> tuple[Callable, Callable]:
    """Return ``fwd`` and ``bwd``: ``vjp`` split in two reusable functions (jax.fwd_and_bwd).

    ``fwd(*args)`` returns ``(fun(*args), residuals)`` (plus ``aux`` with
    ``has_aux``), the residuals being ``vjp``'s pullback (a pytree); ``bwd(residuals,
    cotangent)`` returns the cotangents of the arguments at ``argnums`` (one, not a
    tuple, for an int). With ``jitted`` (the default) both are jitted, so ``bwd``
    compiles once however often it is called.
    """
    check_callable(fun)
    argnums = ensure_index(argnums)

    def fwd(*args, **kwargs):
        f_partial, dyn_args = argnums_partial(fun, argnums, args, kwargs)
        return vjp(f_partial, *dyn_args, has_aux=has_aux)

    def bwd(f_vjp, outgrad):
        cotangents = f_vjp(outgrad)
        return cotangents[0] if isinstance(argnums, int) else cotangents

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
