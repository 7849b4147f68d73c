"""``set_xla_metadata``: XLA frontend attributes on the ops of a block or of one value.

As a context manager (or decorator) it makes the equations traced inside carry
the given ``name=value`` pairs (tracecore's ``SourceInfo.xla_metadata``; the block
is part of jit's trace context); lowering adds them to ``mhlo.frontend_attributes``
of the ops that compute each equation's results, an op's own attributes winning.
Given a value, ``xla_metadata_value_p`` marks the op that computes that value.
The values are kept as given and become text when lowered (bools in lower case), as
JAX's.
"""

from __future__ import annotations

import functools

from modjax.autodiff.tangents import deflinear
from modjax.batching import batching_rules
from modjax.lowering import register_lowering
from modjax.lowering._mlir import mark_frontend_attributes, xla_metadata_attrs
from modjax.tracecore import core
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.config import config
from modjax.tracecore.tree_util import tree_map

from .dispatch import apply_primitive

__all__ = ["set_xla_metadata", "xla_metadata_value_p"]

# jit keys its traces on the metadata in force (JAX's xla_metadata_context_manager).
_context = config.make_user_context(None, name="xla_metadata")


def _pairs(updates: dict, base: tuple | None = None) -> tuple[tuple[str, object], ...]:
    merged = dict(base or ())
    merged.update(updates)
    return tuple(sorted(merged.items()))


xla_metadata_value_p = core.Primitive("xla_metadata_value")
xla_metadata_value_p.def_abstract_eval(lambda x, *, xla_metadata_kvs: x)
xla_metadata_value_p.def_impl(
    lambda x, *, xla_metadata_kvs: apply_primitive(
        xla_metadata_value_p, x, xla_metadata_kvs=xla_metadata_kvs
    )
)


def _value_lowering(ctx, x, *, xla_metadata_kvs):
    mark_frontend_attributes([x], xla_metadata_attrs(xla_metadata_kvs), keep_existing=True)
    return x


register_lowering(xla_metadata_value_p, _value_lowering)
deflinear(xla_metadata_value_p, lambda ct, x, **params: [ct])
batching_rules[xla_metadata_value_p] = lambda args, dims, **params: (
    xla_metadata_value_p.bind(args[0], **params),
    dims[0],
)


class _Wrapped:
    """A function decorated by a metadata block: each call (and method call) runs in it."""

    def __init__(self, fun, block):
        self._fun = fun
        self._block = block
        # Not the function's __dict__: its methods (a jitted function's .lower) must go
        # through __getattr__, which runs them in the block.
        functools.update_wrapper(self, fun, updated=())

    def __call__(self, *args, **kwargs):
        with self._block:
            return self._fun(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._fun, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        def in_block(*args, **kwargs):
            with self._block:
                return attr(*args, **kwargs)

        return in_block


class XlaMetadataContextManager:
    """The block ``set_xla_metadata(**pairs)`` returns: a context manager and a decorator."""

    __slots__ = ("updates", "_exits")

    def __init__(self, updates: dict):
        self.updates = updates
        self._exits: list = []

    def __enter__(self):
        if not self.updates:
            return
        pairs = _pairs(self.updates, source_info_util.current_xla_metadata())
        stack = [_context(pairs), source_info_util.xla_metadata(pairs)]
        for manager in stack:
            manager.__enter__()
        self._exits.append(stack)

    def __exit__(self, *exc):
        if not self.updates:
            return
        for manager in reversed(self._exits.pop()):
            manager.__exit__(*exc)

    def __call__(self, fun):
        return _Wrapped(fun, self)


def set_xla_metadata(x=None, **kwargs):
    """Attach XLA metadata (frontend attributes) to ops (``jax.experimental.xla_metadata``).

    Without ``x``, return a context manager (also a decorator): the ops of the
    computations traced inside get ``kwargs`` as attributes (nested blocks merge, the
    inner one winning). With ``x`` (a pytree), return it with the ops computing its
    leaves marked.
    """
    if x is None:
        return XlaMetadataContextManager(kwargs)
    pairs = _pairs(kwargs)
    return tree_map(lambda v: xla_metadata_value_p.bind(v, xla_metadata_kvs=pairs), x)
