"""Linearization: JVP with the primals computed now and the tangents staged into a jaxpr.

``linearize_flat`` runs the function under a ``JVPTrace`` whose parent is a
``LinearizeTrace``: a jaxpr trace that records only the equations that depend on
its own tracers (the tangent inputs) and binds every other equation under its
own parent. Primal values therefore stay concrete (Python control flow on them
works under ``grad``, as in JAX), and the recorded jaxpr is the linear map from
input tangents to output tangents; the known values it reads become its consts:
the *residuals*.

Higher-order primitives with some known and some unknown operands (calls,
``checkpoint``) are split by tracecore's equation-level ``partial_eval_rules``:
the known equation runs now, the unknown one is recorded. That is where
``partial_eval_jaxpr`` and remat policies come in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.core import current_trace, set_current_trace, to_aval
from modjax.tracecore.dce import dce_jaxpr_consts
from modjax.tracecore.jaxpr import ClosedJaxpr, DropVar, JaxprEqn, Literal, Var
from modjax.tracecore.partial_eval import partial_eval_rules
from modjax.tracecore.tracing import JaxprTrace, JaxprTracer

from .jvp import jvp_flat
from .tangents import Zero, tangent_aval

__all__ = ["LinearizeTrace", "linearize_flat", "bind_staged_tangent"]


class LinearizeTrace(JaxprTrace):
    """A jaxpr trace that stages only what depends on its own (unknown) tracers.

    Counterpart of jax's partial-evaluation ``JaxprTrace`` with known primals (the
    tangent trace of ``ad.LinearizeTrace``).
    """

    __slots__ = ()
    stages_linear_map = True

    def process_primitive(self, primitive, args, params):
        """Bind ``primitive`` now if all operands are known; else record (or split) it."""
        unknowns = [type(a) is JaxprTracer and a._trace is self for a in args]
        if not any(unknowns):
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        rule = partial_eval_rules.get(primitive)
        if rule is None:
            return super().process_primitive(primitive, args, params)
        return self._split(rule, primitive, args, unknowns, params)

    def _split(self, rule, primitive, args, unknowns, params):
        """Run the known part of a higher-order equation now and record the unknown part."""
        in_vars = [a.var if unk else Var(to_aval(a)) for a, unk in zip(args, unknowns, strict=True)]
        out = primitive.abstract_eval(*[v.aval for v in in_vars], **params)
        out_avals = out if primitive.multiple_results else [out]
        out_vars = [Var(aval) for aval in out_avals]
        eqn = JaxprEqn(primitive, in_vars, out_vars, params, source_info_util.current())
        known_eqn, staged_eqn, out_unknowns = rule(eqn, unknowns, None)

        env = {v: a for v, a, unk in zip(in_vars, args, unknowns, strict=True) if not unk}
        if known_eqn is not None:
            vals = [a.val if type(a) is Literal else env[a] for a in known_eqn.invars]
            with set_current_trace(self.parent):
                outs = known_eqn.primitive.bind(*vals, **known_eqn.params)
            if not known_eqn.primitive.multiple_results:
                outs = [outs]
            env.update(zip(known_eqn.outvars, outs, strict=True))
        if staged_eqn is not None:
            invars = [
                self.to_atom(env[a]) if type(a) is not Literal and a in env else a
                for a in staged_eqn.invars
            ]
            staged_unknown = {v for v, u in zip(out_vars, out_unknowns, strict=True) if u}
            outvars = [v if v in staged_unknown else DropVar(v.aval) for v in staged_eqn.outvars]
            self.eqns.append(staged_eqn.replace(invars=invars, outvars=outvars))
        results = [
            JaxprTracer(self, v.aval, v) if unk else env[v]
            for v, unk in zip(out_vars, out_unknowns, strict=True)
        ]
        return results if primitive.multiple_results else results[0]


def bind_staged_tangent(primitive, *args, **params):
    """Bind ``primitive`` to make a tangent from known values, recorded when linearizing.

    A JVP rule calls this for a tangent that must be part of the linear program even
    though nothing unknown flows into it: the tangent reference ``new_ref`` makes for a
    value that is not differentiated (JAX's tangent trace stages it likewise). Writes of
    differentiated values into it are recorded, so reading it now would miss them.
    Outside linearization this is ``primitive.bind``.
    """
    trace = current_trace()
    if type(trace) is LinearizeTrace:
        return JaxprTrace.process_primitive(trace, primitive, args, params)
    return primitive.bind(*args, **params)


def linearize_flat(fun: Callable, primals: Sequence, *, has_aux: bool = False):
    """Linearize flat ``fun`` at ``primals`` (jax's ``ad.linearize``).

    Return ``(primals_out, linear, in_nonzeros, out_nonzeros)``: ``linear`` is a
    ClosedJaxpr whose consts are the residuals, taking the tangents of the inputs
    where ``in_nonzeros`` (the differentiable ones) and returning the tangents of
    the outputs where ``out_nonzeros`` (the others are symbolic zeros). With
    ``has_aux``, ``fun`` returns ``(outs, aux)`` and the primal values of ``aux`` come
    back as a fifth result.
    """
    trace = LinearizeTrace()
    try:
        avals = [to_aval(p) for p in primals]
        in_nonzeros = [dtypes.issubdtype(a.dtype, np.inexact) for a in avals]
        tangents = [
            trace.new_arg(a) if nz else Zero(tangent_aval(a))
            for a, nz in zip(avals, in_nonzeros, strict=True)
        ]
        with set_current_trace(trace):
            primals_out, tangents_out, *aux = jvp_flat(fun, primals, tangents, has_aux=has_aux)
        for p in primals_out:
            if type(p) is JaxprTracer and p._trace is trace:
                raise ValueError(
                    "Linearization failed to produce known values for all output primals: "
                    "an output depends on a tangent. This is typically caused by "
                    "differentiating a function that uses an operation that does not "
                    "support reverse-mode differentiation."
                )
        out_nonzeros = [type(t) is not Zero for t in tangents_out]
        jaxpr, consts = trace.to_jaxpr([t for t in tangents_out if type(t) is not Zero])
    finally:
        trace.invalidate()
    jaxpr, used_consts, _ = dce_jaxpr_consts(jaxpr, [True] * len(jaxpr.outvars), instantiate=True)
    consts = [c for c, used in zip(consts, used_consts, strict=True) if used]
    return primals_out, ClosedJaxpr(jaxpr, consts), in_nonzeros, out_nonzeros, *aux
