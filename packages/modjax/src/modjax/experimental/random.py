"""``jax.experimental.random``: a stateful generator over JAX's stateless keys.

A :class:`StatefulPRNG` holds a typed key and a counter in a mutable reference
(``modjax.ref``); each draw folds the counter into the key and increments it, so
successive calls give new values eagerly and under jit, as JAX 0.10's does.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence

import numpy as np

import modjax.numpy as jnp
from modjax import random
from modjax.lax.state import new_ref, ref_addupdate, ref_get
from modjax.random._prng import prng_key
from modjax.tracecore import core, dtypes
from modjax.tracecore.state import AbstractRef, Ref
from modjax.tracecore.tree_util import register_dataclass

__all__ = ["StatefulPRNG", "stateful_rng"]


def _size(size, *args) -> tuple[int, ...]:
    if size is None:
        return tuple(np.broadcast_shapes(*(np.shape(a) for a in args)))
    if isinstance(size, int | np.integer):
        return (operator.index(size),)
    return tuple(operator.index(s) for s in size)


@dataclasses.dataclass(frozen=True, slots=True)
class StatefulPRNG:
    """A random generator with implicitly updated state (``jax.experimental.random.StatefulPRNG``).

    Make one with :func:`stateful_rng`. A pytree of its key and its counter reference,
    so it can be passed to jit or vmap (not returned from them, as a reference cannot).
    """

    _base_key: object
    _counter: object

    def __post_init__(self):
        key = self._base_key
        if not (hasattr(key, "dtype") and dtypes.issubdtype(key.dtype, prng_key)):
            raise ValueError(f"Expected base_key to be a typed PRNG key; got {key}")
        counter = self._counter
        is_ref = isinstance(counter, Ref) or isinstance(getattr(counter, "aval", None), AbstractRef)
        if not is_ref:
            raise ValueError(f"Expected counter to be a scalar integer ref; got {counter}")

    def key(self, shape: int | Sequence[int] = ()):
        """Return a new key (or an array of ``shape`` keys), advancing the state."""
        if self._base_key.shape:
            raise ValueError("cannot operate on split stateful generator")
        key = random.fold_in(self._base_key, ref_get(self._counter))
        ref_addupdate(self._counter, ..., 1)
        shape = _size(shape)
        return random.split(key, shape) if shape else key

    def random(self, size=None, dtype=float):
        """Return floats uniform in [0, 1) of shape ``size``."""
        return random.uniform(self.key(), shape=_size(size), dtype=dtype)

    def uniform(self, low=0, high=1, size=None, *, dtype=float):
        """Return floats uniform in [``low``, ``high``) (``size`` defaults to their shape)."""
        shape = _size(size, low, high)
        return random.uniform(self.key(), shape, minval=low, maxval=high, dtype=dtype)

    def normal(self, loc=0, scale=1, size=None, *, dtype=float):
        """Return normal values of mean ``loc`` and standard deviation ``scale``."""
        draw = random.normal(self.key(), _size(size, loc, scale), dtype)
        return (jnp.asarray(loc) + jnp.asarray(scale) * draw).astype(dtype)

    def integers(self, low, high=None, size=None, *, dtype=int):
        """Return integers in [``low``, ``high``) (or [0, ``low``) without ``high``)."""
        if high is None:
            low, high = 0, low
        shape = _size(size, low, high)
        return random.randint(self.key(), shape, minval=low, maxval=high, dtype=dtype)

    def split(self, num: int | Sequence[int]) -> StatefulPRNG:
        """Return one generator holding ``num`` independent ones, to map over with vmap."""
        return StatefulPRNG(self.key(num), new_ref(jnp.zeros(num, dtype=int)))

    def spawn(self, n_children: int) -> list[StatefulPRNG]:
        """Return ``n_children`` independent generators in a list."""
        return [type(self)(key, new_ref(0)) for key in self.key(n_children)]


register_dataclass(StatefulPRNG, data_fields=["_base_key", "_counter"], meta_fields=[])


def stateful_rng(seed=None, *, impl=None) -> StatefulPRNG:
    """Return a generator seeded with ``seed`` (``jax.experimental.random.stateful_rng``).

    Without a seed (allowed outside transformations only) numpy's entropy seeds it.
    ``impl`` names the PRNG implementation, as ``jax.random.key``'s does.
    """
    if seed is None:
        if not isinstance(core.current_trace(), core.EvalTrace):
            raise TypeError(
                "When used within transformed code, jax.experimental.random.stateful_rng() "
                "requires an explicit seed to be set."
            )
        entropy = np.random.SeedSequence().entropy
        seed = np.int64(int(entropy) & np.iinfo(np.int64).max)
    return StatefulPRNG(random.key(seed, impl=impl), new_ref(0))
