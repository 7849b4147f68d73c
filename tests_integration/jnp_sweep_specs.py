"""The table of ``modjax.numpy`` functions that the vmap and gradient sweeps run over.

A ``Spec`` names one call of a public ``modjax.numpy`` function on generated
operands. The family modules (``jnp_sweep_specs_*.py``) each add their specs to
``SPECS`` with ``add``; ``EXCLUDED`` names the public callables that take no
array to batch or differentiate (constructors of dtypes, printing, ...), each
with the reason. ``test_jnp_sweeps.py`` checks that every public callable is
in one of the two, then runs ``vmap(f) == loop of f`` and ``check_grads``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

Maker = Callable[[np.random.RandomState], np.ndarray]


@dataclasses.dataclass(frozen=True)
class Spec:
    """One call of a ``modjax.numpy`` function on generated operands.

    ``name`` is the jnp name, optionally followed by a bracketed variant
    (``"sum[axis=1]"``); the part before ``[`` must be a public name of
    ``modjax.numpy``. ``fn`` takes the operands positionally (bind static
    arguments with a lambda). ``args`` make one unbatched operand each, in float64
    for float operands (the vmap sweep casts them to float32; the gradient sweep
    runs with x64). ``diff`` lists the operands ``check_grads`` perturbs (empty:
    not differentiable, only vmap runs); ``order`` is the derivative order checked.
    ``vmap=False`` skips the vmap sweep, ``zero_batch=False`` skips batch size 0
    (only where JAX refuses it too); ``rtol``/``atol`` loosen both checks.
    """

    name: str
    fn: Callable[..., Any]
    args: tuple[Maker, ...]
    diff: tuple[int, ...] = ()
    order: int = 2
    vmap: bool = True
    zero_batch: bool = True
    rtol: float | None = None
    atol: float | None = None

    @property
    def base_name(self) -> str:
        return self.name.split("[", 1)[0]


SPECS: list[Spec] = []
EXCLUDED: dict[str, str] = {}


def add(name, fn, *args, **options):
    """Add a spec; return it (``options`` are ``Spec``'s fields after ``args``)."""
    spec = Spec(name, fn, tuple(args), **options)
    SPECS.append(spec)
    return spec


def exclude(reason, *names):
    """Record public callables that the sweeps skip, with the reason."""
    for name in names:
        EXCLUDED[name] = reason


def floats(*shape, lo=-2.0, hi=2.0, away_from_zero=False):
    """Make float64 values of ``shape`` in [lo, hi] (``away_from_zero``: +-[lo, hi])."""

    def make(rng):
        x = rng.uniform(lo, hi, shape)
        if away_from_zero:
            x = x * rng.choice([-1.0, 1.0], shape)
        return np.asarray(x, np.float64)

    return make


def ints(*shape, lo=-5, hi=5, dtype=np.int32):
    """Make integers of ``shape`` in [lo, hi]."""
    return lambda rng: np.asarray(rng.randint(lo, hi + 1, shape), dtype)


def bools(*shape):
    """Make booleans of ``shape``."""
    return lambda rng: np.asarray(rng.rand(*shape) > 0.5)


def complexes(*shape, lo=-2.0, hi=2.0):
    """Make complex128 values of ``shape`` with parts in [lo, hi]."""
    return lambda rng: np.asarray(
        rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape), np.complex128
    )
