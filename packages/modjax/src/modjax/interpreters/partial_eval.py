"""Jaxpr tracing and dead-code elimination in JAX's names (jax.interpreters.partial_eval).

``dce_rules`` is modjax.tracecore's table: ``rule(used_outputs, eqn) ->
(used_inputs, new_eqn or None)``, consulted by ``dce_jaxpr`` (and by ``jit``'s
pruning) for equations of a primitive. ``trace_to_jaxpr_dynamic`` traces a flat
``WrappedFun`` (``modjax.tracecore.wrap_init``) to a jaxpr. JAX's known/unknown
partial evaluation API (``PartialVal``, ``trace_to_jaxpr_nounits`` and its rule
tables) is JAX-internal: modjax's partial evaluation has its own rule table,
``modjax.tracecore.partial_eval_rules``, with another signature.
"""

from __future__ import annotations

from collections.abc import Sequence

from modjax.tracecore import JaxprTracer, WrappedFun, dce_rules, trace_to_jaxpr
from modjax.tracecore.dce import dce_call_rule, dce_jaxpr_consts
from modjax.tracecore.dce import dce_jaxpr as _dce_jaxpr

from .._unsupported import Unsupported

__all__ = [
    "DynamicJaxprTracer",
    "JaxprTracer",
    "PartialVal",
    "Val",
    "custom_partial_eval_rules",
    "dce_jaxpr",
    "dce_jaxpr_call_rule",
    "dce_jaxpr_closed_call_rule",
    "dce_jaxpr_consts",
    "dce_rules",
    "partial_eval_jaxpr_custom_rules",
    "trace_to_jaxpr_dynamic",
    "trace_to_jaxpr_nounits",
]

#: The tracer of jaxpr tracing (modjax has one kind; JAX's "dynamic" tracer is it).
DynamicJaxprTracer = JaxprTracer
#: The DCE rule of call-like equations holding a ClosedJaxpr param ``jaxpr``.
dce_jaxpr_closed_call_rule = dce_call_rule


def dce_jaxpr(
    jaxpr, used_outputs: bool | Sequence[bool], instantiate: bool | Sequence[bool] = False
):
    """Prune ``jaxpr`` to ``used_outputs``; return ``(new_jaxpr, used_inputs)`` (``pe.dce_jaxpr``).

    ``used_outputs`` is one flag per output, or one bool for all of them;
    ``instantiate`` keeps inputs even when unused.
    """
    if isinstance(used_outputs, bool):
        used_outputs = [used_outputs] * len(jaxpr.outvars)
    return _dce_jaxpr(jaxpr, used_outputs, instantiate)


def trace_to_jaxpr_dynamic(
    fun: WrappedFun, in_avals: Sequence, *, keep_inputs=None, lower: bool = False,
    auto_dce: bool = False,
):  # fmt: skip
    """Trace flat ``fun`` on ``in_avals``; return ``(jaxpr, out_avals, consts)`` (pe's name).

    ``fun`` is a ``WrappedFun`` (``modjax.tracecore.wrap_init(f)``) taking and
    returning flat lists of arrays; ``consts`` are the values it closed over, one per
    constvar of ``jaxpr``. ``keep_inputs`` (dropping some inputs) is not supported.
    """
    if keep_inputs is not None and not all(keep_inputs):
        raise NotImplementedError("trace_to_jaxpr_dynamic(keep_inputs=...) dropping inputs")
    jaxpr, consts = trace_to_jaxpr(fun, list(in_avals))
    if auto_dce:
        jaxpr, _ = _dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), instantiate=True)
    return jaxpr, [v.aval for v in jaxpr.outvars], list(consts)


_KNOWN_UNKNOWN = (
    "JAX's known/unknown partial evaluation API; modjax's partial evaluation uses "
    "modjax.tracecore.partial_eval_rules and partial_eval_jaxpr"
)
PartialVal = Unsupported("jax.interpreters.partial_eval.PartialVal", _KNOWN_UNKNOWN)
Val = Unsupported("jax.interpreters.partial_eval.Val", _KNOWN_UNKNOWN)
trace_to_jaxpr_nounits = Unsupported(
    "jax.interpreters.partial_eval.trace_to_jaxpr_nounits", _KNOWN_UNKNOWN
)
custom_partial_eval_rules = Unsupported(
    "jax.interpreters.partial_eval.custom_partial_eval_rules", _KNOWN_UNKNOWN
)
partial_eval_jaxpr_custom_rules = Unsupported(
    "jax.interpreters.partial_eval.partial_eval_jaxpr_custom_rules", _KNOWN_UNKNOWN
)
dce_jaxpr_call_rule = Unsupported(
    "jax.interpreters.partial_eval.dce_jaxpr_call_rule",
    "modjax's call primitives hold ClosedJaxprs: use dce_jaxpr_closed_call_rule",
)
