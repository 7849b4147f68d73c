"""Forward mode: the JVP trace, JVP of jaxprs, and the JVP rule of call-like primitives.

A ``JVPTracer`` pairs a primal value with its tangent. ``JVPTrace.process_primitive``
unpacks its own tracers (every other value is a constant, with a zero tangent),
and runs the primitive's rule from ``jvp_rules`` under its parent trace, so that
the primal and tangent computations are themselves traced, differentiated or
evaluated by whatever transformation was current before. Symbolic zeros flow
through: a primitive none of whose operands has a tangent is just bound again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.core import (
    EvalTrace,
    Primitive,
    Trace,
    Tracer,
    set_current_trace,
    short_repr,
    to_aval,
)
from modjax.tracecore.dce import default_params_updater
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.leaks import check_leaks, check_tracer_leaks
from modjax.tracecore.tracing import convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.wrapped_fun import wrap_init

from .tangents import Zero, host_to_array, instantiate_zeros, jvp_rules, tangent_aval

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "jvp_flat",
    "jvp_jaxpr",
    "jvp_call_rule",
    "rules_with_user_code",
    "always_differentiated",
    "with_array_values",
]

# Primitives whose JVP rule runs the user's own Python code (custom_jvp, custom_vjp):
# their equations keep pointing at the user's rule instead of at the call site.
rules_with_user_code: set[Primitive] = set()
# Primitives whose JVP rule runs even when no operand is perturbed: those that make
# state (a reference made under jvp is differentiated, so a perturbed value may be
# written into it later, as in JAX).
always_differentiated: set[Primitive] = set()


class JVPTracer(Tracer):
    """A primal value with a (nonzero) tangent, owned by one JVPTrace (ad.JVPTracer)."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        """Return the abstract value of the primal."""
        return to_aval(self.primal)

    def to_concrete_value(self):
        """Return the primal's concrete value, if the traces below know it."""
        primal = self.primal
        if isinstance(primal, Tracer):
            return primal.to_concrete_value()
        return primal

    def _origin(self) -> str:
        primal = self.primal
        return primal._origin() if isinstance(primal, Tracer) else ""

    def _short_repr(self) -> str:
        # Under grad the tangent is staged into the linear jaxpr (JAX's GradTracer
        # shows only its type); under jvp it is a value like the primal.
        tangent = self.tangent
        if isinstance(tangent, Tracer) and getattr(tangent._trace, "stages_linear_map", False):
            typeof_tangent = to_aval(tangent).str_short(short_dtypes=True)
            return f"GradTracer(primal={short_repr(self.primal)}, typeof(tangent)={typeof_tangent})"
        return f"JVPTracer(primal={short_repr(self.primal)}, tangent={short_repr(tangent)})"


class JVPTrace(Trace):
    """Forward-mode differentiation of every primitive bound while it is current (ad.JVPTrace)."""

    __slots__ = ()

    def to_primal_tangent(self, value):
        """Split ``value`` into (primal, tangent); values of other traces have zero tangent."""
        if type(value) is JVPTracer and value._trace is self:
            return value.primal, value.tangent
        return value, Zero(tangent_aval(to_aval(value)))

    def process_primitive(self, primitive, args, params):
        """Bind ``primitive``'s JVP rule under the parent trace; wrap its outputs."""
        primals, tangents = [], []
        nonzero = False
        for arg in args:
            if type(arg) is JVPTracer and arg._trace is self:
                primal, tangent = arg.primal, arg.tangent
                if (_is_host_value(primal) or _is_host_value(tangent)) and (
                    primitive not in rules_with_user_code  # custom rules see what jvp got
                ):
                    arg = with_array_values(arg)
                    primal, tangent = arg.primal, arg.tangent
                primals.append(primal)
                tangents.append(tangent)
                nonzero = True
            else:
                primals.append(arg)
                tangents.append(None)
        if not nonzero and primitive not in always_differentiated:
            with set_current_trace(self.parent):
                return primitive.bind(*primals, **params)
        # Tuples, as JAX hands a rule its primals and tangents: rules written for JAX
        # use them as pytree prefixes (equinox's vmap of its rules).
        tangents = tuple(
            [
                Zero(tangent_aval(to_aval(p))) if t is None else t
                for p, t in zip(primals, tangents, strict=True)
            ]
        )
        primals = tuple(primals)
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(
                f"Differentiation rule for '{primitive.name}' not implemented "
                "(register one in modjax.autodiff.jvp_rules)"
            )
        with set_current_trace(self.parent):
            if primitive in rules_with_user_code:
                primal_out, tangent_out = rule(primals, tangents, **params)
            else:
                with _at_user_line():
                    primal_out, tangent_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return [self.new_tracer(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.new_tracer(primal_out, tangent_out)

    def new_tracer(self, primal, tangent):
        """Pair ``primal`` with ``tangent``; a zero (or float0) tangent leaves the primal bare."""
        if type(tangent) is Zero or getattr(tangent, "dtype", None) == dtypes.float0:
            return primal
        return JVPTracer(self, primal, tangent)


_HOST_SCALAR_TYPES = frozenset({float, int, complex, bool, np.ndarray})


def _is_host_value(value) -> bool:
    return type(value) in _HOST_SCALAR_TYPES or isinstance(value, np.generic)


def with_array_values(value):
    """Return ``value``, or for a JVP tracer over host values, one over arrays.

    ``jvp``/``grad`` leave the Python scalars and numpy arrays they are given as they
    are. JAX's jnp functions are jitted, so an operation on such a tracer hands back
    one whose primal and tangent are Arrays, even where the derivative passes a
    tangent through (``x + 1``) or nothing is bound (``jnp.asarray``, a cast to the
    same type). modjax's are not jitted: the JVP trace calls this before a primitive's
    rule, and jnp calls it where it would return the tracer as it is. Evaluated
    eagerly only (under ``jvp``, or ``grad``'s known values): a staged host value is
    a literal of the program. No JAX counterpart.
    """
    if type(value) is not JVPTracer:
        return value
    primal, tangent = value.primal, value.tangent
    if not (_is_host_value(primal) or _is_host_value(tangent)):
        return value
    below = value._trace.parent
    while getattr(below, "stages_linear_map", False):  # grad: known values are evaluated
        below = below.parent
    if type(below) is not EvalTrace:
        return value
    return JVPTracer(
        value._trace,
        host_to_array(primal) if _is_host_value(primal) else primal,
        host_to_array(tangent) if _is_host_value(tangent) else tangent,
    )


def _at_user_line():
    """Make equations traced by a rule record the user's line, not the rule's.

    Rules of a DSL live in the author's files, which are user code to the frame
    walker; pinning the frame keeps derived equations pointing at the user's program.
    """
    info = source_info_util.current()
    # current() puts the names in force first; the rest are the pinned equation's own.
    own = source_info_util.NameStack(info.name_stack[len(source_info_util.name_stack()) :])
    return source_info_util.user_context(info._replace(name_stack=own))


def jvp_flat(fun: Callable, primals: Sequence, tangents: Sequence, *, has_aux: bool = False):
    """Run flat ``fun`` on JVP tracers; return ``(primals_out, tangents_out)`` (ad.jvp).

    ``tangents`` may hold ``Zero``s (and float0 arrays, treated as zeros); output
    tangents may be ``Zero``. With ``has_aux``, ``fun`` returns ``(outs, aux)`` (flat
    lists) and the primal values of ``aux`` come back as a third result.
    """
    trace = JVPTrace()
    args = []
    for p, t in zip(primals, tangents, strict=True):
        if type(t) is Zero or getattr(t, "dtype", None) == dtypes.float0:
            args.append(p)
        else:
            args.append(JVPTracer(trace, p, t))
    try:
        with set_current_trace(trace), source_info_util.transform_name("jvp"):
            outs = fun(*args)
        outs, aux = outs if has_aux else (outs, ())
        primals_out, tangents_out = [], []
        for out in outs:
            p, t = trace.to_primal_tangent(out)
            primals_out.append(p)
            tangents_out.append(t)
        aux = [a.primal if type(a) is JVPTracer and a._trace is trace else a for a in aux]
    finally:
        trace.invalidate()
    if check_tracer_leaks.value:
        args = outs = out = None  # our own references are not leaks
        check_leaks(trace)
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


# JVPs of programs, by (nonzero tangents, instantiate); see tracecore's jaxpr_cache.
_jvp_jaxprs = JaxprCache("jvp")


def jvp_jaxpr(
    closed: ClosedJaxpr, nonzeros: Sequence[bool], instantiate: bool | Sequence[bool] = False
) -> tuple[ClosedJaxpr, list[bool]]:
    """Return the JVP of ``closed`` and which of its output tangents are nonzero.

    The new jaxpr takes ``(*primals, *nonzero_tangents)`` (tangents only of inputs where
    ``nonzeros`` is True) and returns ``(*primal_outs, *nonzero_tangent_outs)``;
    ``instantiate`` forces output tangents to be materialized (jax's ``ad.jvp_jaxpr``).
    The result is derived once per ``closed`` object and flags (cached weakly).
    """
    nonzeros = tuple(nonzeros)
    n_out = len(closed.out_avals)
    instantiate = (instantiate,) * n_out if isinstance(instantiate, bool) else tuple(instantiate)
    jvp_closed, out_nonzeros = _jvp_jaxprs.get(
        closed,
        (nonzeros, instantiate),
        lambda: _jvp_jaxpr(closed, nonzeros, instantiate),
        lambda value: not has_tracers(value[0].consts),
    )
    return jvp_closed, list(out_nonzeros)


def _jvp_jaxpr(closed: ClosedJaxpr, nonzeros: tuple, instantiate: tuple):
    n_in = len(closed.in_avals)
    in_avals = list(closed.in_avals) + [
        tangent_aval(a) for a, nz in zip(closed.in_avals, nonzeros, strict=True) if nz
    ]
    out_nonzeros: list[bool] = []

    def fun(*args):
        primals, nz_tangents = args[:n_in], iter(args[n_in:])
        tangents = [
            next(nz_tangents) if nz else Zero(tangent_aval(a))
            for a, nz in zip(closed.in_avals, nonzeros, strict=True)
        ]
        outs_p, outs_t = jvp_flat(
            lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), primals, tangents
        )
        outs_t = [
            instantiate_zeros(t) if inst else t for t, inst in zip(outs_t, instantiate, strict=True)
        ]
        out_nonzeros[:] = [type(t) is not Zero for t in outs_t]
        return outs_p + [t for t in outs_t if type(t) is not Zero]

    jaxpr, consts = trace_to_jaxpr(wrap_init(fun, closed.jaxpr.debug_info), in_avals)
    return ClosedJaxpr(jaxpr, consts), tuple(out_nonzeros)


def _call_jvp_jaxpr(closed: ClosedJaxpr, nonzeros: tuple):
    """Return the JVP of a call's program with its consts as leading operands (cached)."""

    def compute():
        jvp_closed, out_nonzeros = jvp_jaxpr(closed, nonzeros)
        consts = jvp_closed.consts
        if consts:  # closed-over values become leading operands, seen by the outer traces
            jvp_closed = ClosedJaxpr(convert_constvars_jaxpr(jvp_closed.jaxpr), ())
        return jvp_closed, tuple(consts), tuple(out_nonzeros)

    return _jvp_jaxprs.get(
        closed, ("call", nonzeros), compute, lambda value: not has_tracers(value[1])
    )


def jvp_call_rule(primitive: Primitive, primals, tangents, *, update_params=None, **params):
    """Differentiate a call-like equation: bind a call of the JVP of its ``jaxpr`` param.

    Counterpart of jax's ``JVPTrace.process_call`` for ``closed_call``/``pjit``.

    Usable for any primitive whose ``jaxpr`` param (a ClosedJaxpr) is applied 1:1 to its
    operands; register it with ``register_call_rules``. Only nonzero tangents become
    operands. ``update_params(params, in_map, out_map, new_jaxpr)`` fixes params that
    describe operands or results (tracecore's ``ParamsUpdater``; tangent operands and
    results are new, ``None`` in the maps). The JVP of a program is derived once per
    program and set of nonzero tangents.
    """
    closed: ClosedJaxpr = params["jaxpr"]
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    jvp_closed, consts, out_nonzeros = _call_jvp_jaxpr(closed, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    n_out = len(closed.out_avals)
    in_map = [None] * len(consts) + list(range(len(primals))) + [None] * len(nz_tangents)
    out_map = list(range(n_out)) + [None] * sum(out_nonzeros)
    new_params = (update_params or default_params_updater)(params, in_map, out_map, jvp_closed)
    outs = primitive.bind(*consts, *primals, *nz_tangents, **new_params)
    primals_out, nz_out = outs[:n_out], iter(outs[n_out:])
    tangents_out = [
        next(nz_out) if nz else Zero(tangent_aval(to_aval(p)))
        for p, nz in zip(primals_out, out_nonzeros, strict=True)
    ]
    return primals_out, tangents_out
