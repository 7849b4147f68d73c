"""``platform_dependent``: per-platform code, chosen when the program is lowered.

``platform_index[platforms]`` is the index of the branch for the platform being lowered
for (its lowering is that constant; a platform without a branch or default raises
NotImplementedError, as in JAX); a ``cond`` on it picks the branch. Eagerly the index is
known, so the branch runs directly.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from modjax.lowering import ir_constant, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, Tracer

from .conditionals import _bind_cond

__all__ = ["platform_dependent", "platform_index_p"]

platform_index_p = Primitive("platform_index")
platform_index_p.def_impl(partial(apply_primitive, platform_index_p))
platform_index_p.def_abstract_eval(lambda *, platforms: ShapedArray((), np.dtype(np.int32)))


def _platform_index_lowering(ctx, *, platforms):
    platform = ctx.module_ctx.platform
    default = None
    for i, names in enumerate(platforms):
        if names is None:
            default = i
        elif platform in names:
            return ir_constant(np.int32(i))
    if default is None:
        raise NotImplementedError(
            f"MLIR translation rule for primitive 'platform_index(platforms={platforms})' not "
            f"found for platform {platform}"
        )
    return ir_constant(np.int32(default))


register_lowering(platform_index_p, _platform_index_lowering)


def platform_dependent(*args, default=None, **per_platform):
    """Return ``per_platform[platform](*args)`` on that platform (jax.lax.platform_dependent).

    Keywords name platforms (``cpu``, ``tpu``, ``cuda``, ``rocm``); ``default`` serves
    the others. Every branch is traced; the choice is made when the program is lowered
    (eagerly, at once), so the compiler never sees a conditional. A platform with no
    branch and no default raises NotImplementedError when lowered.
    """
    groups: list[tuple[list[str], object]] = []
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for names, b in groups:
            if b == branch:  # one branch for several platforms
                names.append(name)
                break
        else:
            groups.append(([name], branch))
    platforms: tuple = tuple(tuple(names) for names, _ in groups)
    branches = [b for _, b in groups]
    if default is not None:
        if not callable(default):
            raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
        branches.append(default)
        platforms = (*platforms, None)
    index = platform_index_p.bind(platforms=platforms)
    if not isinstance(index, Tracer):
        return branches[int(index)](*args)
    return _bind_cond(
        index,
        tuple(branches),
        "platform_dependent branches",
        [(0, "branch 0", i, f"branch {i}") for i in range(1, len(branches))],
        args,
    )
