"""Vector-space arithmetic on pytrees of arrays, the vectors of the Krylov solvers.

``b`` may be any pytree of arrays (a dict of fields, a tuple of blocks); the
solvers treat it as one vector, the concatenation of its leaves. Inner
products run at HIGHEST precision: on accelerators a default-precision dot
rounds its inputs to bfloat16, which would stall convergence long before
``tol``.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.tracecore.tree_util import tree_leaves, tree_map

_HIGHEST = lax.Precision.HIGHEST


def dot(a, b):
    """Return ``a @ b`` at full precision."""
    return jnp.dot(a, b, precision=_HIGHEST)


def _flat_vdot(x, y):
    return jnp.vdot(x, y, precision=_HIGHEST)


def total(values):
    """Return the sum of ``values`` (scalars, one per leaf)."""
    # Leaves are summed left to right, so a one-leaf tree gives its own value exactly.
    return functools.reduce(operator.add, values)


def vdot(x, y):
    """Return ``<x, y>`` (``x`` conjugated) summed over the leaves."""
    return total(map(_flat_vdot, tree_leaves(x), tree_leaves(y)))


def _real_vdot(x, y):
    # Re <x, y> without the cross terms Re(x) Im(y): the solvers only ask for
    # z^H M z with M Hermitian positive definite, which is real anyway, and
    # a real result keeps the stopping tests real for complex systems.
    out = _flat_vdot(jnp.real(x), jnp.real(y))
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        out = out + _flat_vdot(jnp.imag(x), jnp.imag(y))
    return out


def real_vdot(x, y):
    """Return ``Re <x, y>`` summed over the leaves, a real scalar."""
    return total(map(_real_vdot, tree_leaves(x), tree_leaves(y)))


def norm(x):
    """Return the 2-norm of the concatenated leaves of ``x`` (real)."""
    return jnp.sqrt(real_vdot(x, x))


def add(x, y):
    """Return ``x + y`` leaf by leaf."""
    return tree_map(operator.add, x, y)


def sub(x, y):
    """Return ``x - y`` leaf by leaf."""
    return tree_map(operator.sub, x, y)


def scale(alpha, x):
    """Return ``alpha * x`` for a scalar ``alpha``."""
    return tree_map(lambda leaf: alpha * leaf, x)


def select(pred, x, y):
    """Return ``x`` where the scalar ``pred`` holds, else ``y``, leaf by leaf."""
    return tree_map(lambda a, b: jnp.where(pred, a, b), x, y)


def size(x) -> int:
    """Return the number of scalars in the leaves of ``x``."""
    return sum(math.prod(np.shape(leaf)) for leaf in tree_leaves(x))
