"""Abstract evaluation and lowering, each against the eager implementation."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from modjax.runtime import jit
from modjax.tracecore.core import to_aval

from ._cases import Case
from ._compare import as_list, assert_same_type, assert_values_close

__all__ = ["check_abstract_eval", "check_lowering", "eager", "jitted", "shared_programs"]


def eager(prim, case: Case) -> list:
    """Run ``prim`` on the case's concrete operands (its impl); return the list of outputs."""
    return as_list(prim, prim.bind(*case.args, **case.params))


def check_abstract_eval(prim, case: Case, draw) -> None:
    """Check that the abstract evaluation gives each eager output's shape, dtype and weak type."""
    avals = [to_aval(a) for a in case.args]
    predicted = as_list(prim, prim.abstract_eval(*avals, **case.params))
    outs = eager(prim, case)
    if len(predicted) != len(outs):
        raise AssertionError(f"{len(predicted)} output avals for {len(outs)} outputs")
    for i, (aval, out) in enumerate(zip(predicted, outs, strict=True)):
        assert_same_type(aval, out, f"output {i}: abstract eval vs impl")


def _param_key(params: dict) -> Any:
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:  # arrays or lists among the params: their text stands for them
        return repr(sorted(params.items(), key=lambda item: item[0]))


# Jitted functions by (primitive, params, what they compute), for one check_primitive
# call: jit's own cache then keeps one executable per operand types, so examples that
# differ only in values share it. A later call starts afresh: rules may have changed.
_jitted: dict[tuple, Any] = {}


@contextlib.contextmanager
def shared_programs():
    """Share jitted programs between the examples of one check (and forget them after)."""
    _jitted.clear()
    try:
        yield
    finally:
        _jitted.clear()


def jitted(prim, params: dict, what: Any = "bind", build: Callable | None = None):
    """Return a shared jitted function of ``prim`` with ``params``.

    ``what`` names it among the functions of one (primitive, params) and ``build``
    makes the plain function (default: the bind itself).
    """
    key = (prim, _param_key(params), what)
    fn = _jitted.get(key)
    if fn is None:
        if build is None:

            def build():
                return lambda *args: prim.bind(*args, **params)

        plain = build()
        plain.__name__ = prim.name.replace("-", "_")
        fn = _jitted[key] = jit(plain)
    return fn


def check_lowering(prim, case: Case, draw) -> None:
    """Check that the compiled program (``jit``) computes what the impl computes."""
    compiled = as_list(prim, jitted(prim, case.params)(*case.args))
    outs = eager(prim, case)
    for i, (c, e) in enumerate(zip(compiled, outs, strict=True)):
        assert_same_type(c, e, f"output {i}: jit vs impl")
        assert_values_close(c, e, f"output {i}: jit vs impl")
