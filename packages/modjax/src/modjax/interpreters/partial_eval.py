"""Jaxpr tracing and dead-code elimination in JAX's names (jax.interpreters.partial_eval).

``dce_rules`` is modjax.tracecore's table: ``rule(used_outputs, eqn) ->
(used_inputs, new_eqn or None)``, consulted by ``dce_jaxpr`` (and by ``jit``'s
pruning) for equations of a primitive. ``trace_to_jaxpr_dynamic`` traces a flat
``WrappedFun`` (``modjax.tracecore.wrap_init``) to a jaxpr.
``trace_to_jaxpr_nounits`` traces one whose inputs are partly known
(``PartialVal``s), computes what does not depend on the unknown inputs now, and
returns the program of the rest (flax's ``nn.scan`` finds its loop-invariant
outputs so). JAX's rule tables of that partial evaluation are JAX-internal:
modjax's has its own table, ``modjax.tracecore.partial_eval_rules``, with another
signature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modjax.tracecore import (
    ClosedJaxpr,
    Jaxpr,
    JaxprTracer,
    WrappedFun,
    dce_rules,
    eval_jaxpr,
    partial_eval_jaxpr,
    trace_to_jaxpr,
)
from modjax.tracecore.core import to_aval
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


#: A value of a program being partially evaluated (``jax.interpreters.partial_eval.Val``).
Val = Any


class PartialVal(tuple):
    """A partly known value: ``(aval, None)`` unknown, ``(None, value)`` known (pe.PartialVal)."""

    __slots__ = ()

    def __new__(cls, xs):
        aval, const = xs
        return tuple.__new__(cls, (aval, const))

    @classmethod
    def known(cls, const) -> PartialVal:
        """A value known now."""
        return cls((None, const))

    @classmethod
    def unknown(cls, aval) -> PartialVal:
        """A value of which only the type ``aval`` is known."""
        return cls((aval, None))

    def is_known(self) -> bool:
        """Tell whether the value is known."""
        return self[0] is None

    def get_known(self):
        """The known value, or None."""
        return self[1] if self[0] is None else None

    def get_aval(self):
        """The type of the value, known or not."""
        return to_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(
    fun: WrappedFun, pvals: Sequence[PartialVal], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Trace ``fun`` on partly known inputs; return ``(jaxpr, out_pvals, consts)`` (pe's name).

    Whatever does not depend on an unknown input is computed now: such an output is
    a known PartialVal (unless ``instantiate``, one bool or one per output, makes it
    unknown). ``jaxpr`` computes the unknown outputs from the unknown inputs; its
    constvars, bound to ``consts``, are the known values it reads. Unlike JAX's, the
    function is traced with every input abstract, so a known input cannot steer
    Python control flow inside it.
    """
    pvals = [PartialVal(pv) for pv in pvals]
    jaxpr, consts = trace_to_jaxpr(fun, [pv.get_aval() for pv in pvals])
    unknowns = [not pv.is_known() for pv in pvals]
    known, unknown, out_unknowns, num_residuals = partial_eval_jaxpr(
        ClosedJaxpr(jaxpr, consts), unknowns, instantiate
    )
    known_inputs = [pv.get_known() for pv in pvals if pv.is_known()]
    known_outs = eval_jaxpr(known.jaxpr, known.consts, *known_inputs)
    num_known = len(known_outs) - num_residuals
    known_values, residuals = iter(known_outs[:num_known]), known_outs[num_known:]
    out_pvals = [
        PartialVal.unknown(var.aval) if is_unknown else PartialVal.known(next(known_values))
        for var, is_unknown in zip(jaxpr.outvars, out_unknowns, strict=True)
    ]
    inner = unknown.jaxpr
    residual_vars, unknown_vars = inner.invars[:num_residuals], inner.invars[num_residuals:]
    program = Jaxpr(
        [*inner.constvars, *residual_vars],
        unknown_vars,
        inner.outvars,
        inner.eqns,
        inner.debug_info,
    )
    return program, out_pvals, [*unknown.consts, *residuals]


_KNOWN_UNKNOWN = (
    "JAX's rule tables of known/unknown partial evaluation; modjax's partial evaluation "
    "uses modjax.tracecore.partial_eval_rules"
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
