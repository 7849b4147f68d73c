"""Lowering jaxprs to StableHLO: the rule table, the contexts, functions and modules.

A jaxpr lowers equation by equation: each primitive's rule, found in
``lowering_rules``, receives a ``LoweringRuleContext`` and the MLIR values of the
operands, emits StableHLO ops at the current insertion point and returns the
values of the results. Every op an equation emits carries the equation's source
location (``loc("name/stack/prim"("file.py":line:0))``). The entry function is
the public ``main``; inner jaxprs of call-like primitives become private
functions, one per jaxpr object (``call_jaxpr``).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.call import call_p
from modjax.tracecore.core import Primitive
from modjax.tracecore.effects import Effect, no_effects, ordered_effects
from modjax.tracecore.jaxpr import ClosedJaxpr, Jaxpr, Literal
from modjax.tracecore.sharding_types import without_sharding_types
from modjax.tracecore.source_info import SourceInfo
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.tracing import trace_to_jaxpr
from modjax.tracecore.wrapped_fun import wrap_init

from . import _mlir
from ._mlir import ir

__all__ = [
    "lowering_rules",
    "platform_lowering_rules",
    "register_lowering",
    "LoweringError",
    "ModuleContext",
    "LoweringRuleContext",
    "LoweredModule",
    "call_jaxpr",
    "jaxpr_function",
    "call_lowering",
    "lower_jaxpr_inline",
    "lower_fun",
    "lower_jaxpr_to_module",
    "sdy_mesh_symbol",
    "tokens_in",
    "set_tokens",
    "region_tokens",
]

# Frames of this package are never the "user's line" of an equation.
source_info_util.register_exclusion(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# --- rule tables ----------------------------------------------------------------------------

#: The lowering rule of each primitive, for every platform.
lowering_rules: dict[Primitive, Callable] = {}
#: Rules that apply on one platform only (``"cpu"``, ``"cuda"``, ...); they win over
#: ``lowering_rules`` when lowering for that platform.
platform_lowering_rules: dict[str, dict[Primitive, Callable]] = {}


def register_lowering(primitive: Primitive, rule: Callable, platform: str | None = None):
    """Register ``rule`` as the lowering of ``primitive`` (jax.interpreters.mlir.register_lowering).

    ``rule(ctx, *operands, **params)`` gets a ``LoweringRuleContext`` and one
    ``ir.Value`` per operand, and returns an ``ir.Value`` (a sequence of them when
    ``primitive.multiple_results``). With ``platform``, the rule is used only when
    lowering for that platform, in preference to the generic one. Returns ``rule``.
    """
    table = lowering_rules if platform is None else platform_lowering_rules.setdefault(platform, {})
    table[primitive] = rule
    return rule


class LoweringError(Exception):
    """A jaxpr could not be lowered: a rule failed or a primitive has none.

    ``primitive`` and ``source_info`` name the equation; the original exception,
    if any, is the ``__cause__``. When a rule raised a ValueError, TypeError or
    NotImplementedError (a user's mistake, like an algorithm the platform lacks), the
    LoweringError is an instance of that class too, as JAX raises the rule's error.
    """

    def __init__(self, message: str, primitive: Primitive | None = None, source_info=None):
        super().__init__(message)
        self.primitive = primitive
        self.source_info = source_info


# --- contexts ---------------------------------------------------------------------------------


def sdy_mesh_symbol(position: int) -> str:
    """Return the symbol of a module's ``position``-th Shardy mesh (``mesh``, ``mesh_0``, ...)."""
    return "mesh" if position == 0 else f"mesh_{position - 1}"


class ModuleContext:
    """What the lowering of one module shares (JAX's ``mlir.ModuleContext``).

    ``context`` (the ``ir.Context``), ``module``, its ``symbol_table``, the
    ``platform`` lowered for, and ``lowered_jaxprs``: the private functions
    already made for inner jaxprs, by jaxpr object. ``placement`` is where the
    program will run as its caller describes it (runtime gives a Device or an
    SpmdTarget; None when unknown), for rules that need the devices (JAX's
    ``axis_context``); ``keepalive`` holds objects the compiled program refers to
    by address, kept alive with the LoweredModule (JAX's ``add_keepalive``);
    ``shard_groups`` counts the sharding groups made so far (``shard_alike``).
    """

    __slots__ = (
        "context",
        "module",
        "symbol_table",
        "module_name",
        "platform",
        "lowered_jaxprs",
        "platform_rules",
        "host_callbacks",
        "tokens",
        "partitioning",
        "sdy_meshes",
        "placement",
        "keepalive",
        "shard_groups",
        "_locations",
    )

    def __init__(
        self,
        context,
        module,
        symbol_table,
        module_name: str,
        platform: str = "cpu",
        placement: Any = None,
    ):
        self.context = context
        self.module = module
        self.symbol_table = symbol_table
        self.module_name = module_name
        self.platform = platform
        self.lowered_jaxprs: dict[int, tuple[Any, str, list]] = {}
        self.platform_rules = platform_lowering_rules.get(platform)
        # Python callables the compiled program calls back (custom calls index this list).
        self.host_callbacks: list = []
        # The current token of each ordered effect at the insertion point being lowered.
        self.tokens: dict[Effect, ir.Value] = {}
        # None for one device; "gspmd" or "shardy" when XLA partitions the program.
        self.partitioning: str | None = None
        # Shardy meshes declared in the module: (axis name, size) pairs -> symbol name.
        self.sdy_meshes: dict[tuple, str] = {}
        self.placement = placement
        self.keepalive: list = []
        # Sharding groups (shard_alike) numbered per module, so its text is deterministic.
        self.shard_groups = 0
        self._locations: dict[tuple[str, Any], ir.Location] = {}

    def sdy_mesh_name(self, axes: Sequence[tuple[str, int]]) -> str:
        """Return the symbol of the Shardy mesh with ``axes``, declaring it on first use.

        As JAX 0.10 names them: ``mesh`` first, then ``mesh_0``, ``mesh_1``, ...
        (one program may use several meshes over the same devices).
        """
        key = tuple((str(a), int(n)) for a, n in axes)
        name = self.sdy_meshes.get(key)
        if name is None:
            name = sdy_mesh_symbol(len(self.sdy_meshes))
            _mlir.sdy_mesh_op(self.module, name, key, after=len(self.sdy_meshes))
            self.sdy_meshes[key] = name
        return name

    def add_keepalive(self, obj) -> None:
        """Keep ``obj`` alive as long as the lowered module (the program refers to it)."""
        self.keepalive.append(obj)

    def location(self, primitive: Primitive, info: SourceInfo | None) -> ir.Location:
        """Return the MLIR location of an equation of ``primitive`` from ``info``."""
        key = (primitive.name, info)
        loc = self._locations.get(key)
        if loc is None:
            if info is None:
                loc = _mlir.name_location(primitive.name)
            else:
                name = "/".join((*info.name_stack, primitive.name))
                frame = info.frame
                if frame is None:
                    loc = _mlir.name_location(name)
                else:
                    loc = _mlir.file_location(
                        name, frame.file_name, frame.line, frame.function_name
                    )
            self._locations[key] = loc
        return loc


class LoweringRuleContext:
    """What a lowering rule knows about its equation (JAX's ``mlir.LoweringRuleContext``).

    ``primitive``, ``avals_in`` and ``avals_out`` (lists of ShapedArray),
    ``source_info`` (the equation's SourceInfo, or None), ``module_ctx`` and
    ``effects`` (the equation's; a rule of a higher-order primitive threads the
    tokens of the ordered ones through its regions, see ``tokens_in``).
    """

    __slots__ = ("module_ctx", "primitive", "avals_in", "avals_out", "source_info", "effects")

    def __init__(
        self, module_ctx, primitive, avals_in, avals_out, source_info=None, effects=no_effects
    ):
        self.module_ctx: ModuleContext = module_ctx
        self.primitive: Primitive | None = primitive
        self.avals_in: list = avals_in
        self.avals_out: list = avals_out
        self.source_info: SourceInfo | None = source_info
        self.effects: frozenset = effects

    @property
    def module_context(self) -> ModuleContext:
        """The module's context, under JAX's name for it (rules written for JAX read this)."""
        return self.module_ctx

    def replace(self, **changes) -> LoweringRuleContext:
        """Return a copy with some fields replaced (e.g. ``avals_in`` for a sub-lowering)."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return LoweringRuleContext(**fields)

    def __repr__(self) -> str:
        return (
            f"LoweringRuleContext({self.primitive}, avals_in={_avals_str(self.avals_in)}, "
            f"avals_out={_avals_str(self.avals_out)})"
        )


# --- errors -------------------------------------------------------------------------------------


def _avals_str(avals) -> str:
    return ", ".join(a.str_short() if hasattr(a, "str_short") else str(a) for a in avals)


def _where(info: SourceInfo | None) -> str:
    if info is None or info.frame is None:
        return "an unknown source line"
    frame = info.frame
    where = f"{frame.file_name}:{frame.line} ({frame.function_name})"
    return f"{where} [{'/'.join(info.name_stack)}]" if info.name_stack else where


# A rule's user-facing error keeps its class: JAX raises a lowering rule's ValueError
# (an unsupported dot algorithm on CPU, say) as it is, so a LoweringError wrapping one
# is also a ValueError (and likewise for TypeError and NotImplementedError).
_USER_ERRORS = (NotImplementedError, TypeError, ValueError)
_user_error_classes: dict[type, type] = {}


def _lowering_error_class(cause: BaseException | None) -> type[LoweringError]:
    for base in _USER_ERRORS:
        if isinstance(cause, base):
            cls = _user_error_classes.get(base)
            if cls is None:
                cls = type("LoweringError", (LoweringError, base), {"__module__": __name__})
                _user_error_classes[base] = cls
            return cls
    return LoweringError


def _eqn_error(eqn, what: str, cause: BaseException | None = None) -> LoweringError:
    avals_in = [x.aval for x in eqn.invars]
    avals_out = [v.aval for v in eqn.outvars]
    message = (
        f"{what}\n  equation: {eqn.primitive.name} on ({_avals_str(avals_in)}) -> "
        f"({_avals_str(avals_out)})\n  at {_where(eqn.source_info)}"
    )
    return _lowering_error_class(cause)(message, eqn.primitive, eqn.source_info)


def _missing_rule_error(eqn) -> LoweringError:
    return _eqn_error(
        eqn,
        f"No lowering rule for primitive '{eqn.primitive.name}': register one with "
        "modjax.lowering.register_lowering(primitive, rule).",
    )


# --- lowering a jaxpr ---------------------------------------------------------------------------


def _split(jaxpr: ClosedJaxpr | Jaxpr) -> tuple[Jaxpr, list]:
    if isinstance(jaxpr, ClosedJaxpr):
        return jaxpr.jaxpr, jaxpr.consts
    if jaxpr.constvars:
        raise TypeError(
            f"an open Jaxpr with {len(jaxpr.constvars)} constvars cannot be lowered: "
            "close it (ClosedJaxpr) with the values of its consts"
        )
    return jaxpr, []


def _const_value(value: Any, aval) -> ir.Value:
    if type(aval) is AbstractToken:  # a token known when tracing: a new one, as in JAX
        return _mlir.create_token()
    if aval.dtype == dtypes.float0:
        return _mlir.ir_constant(np.zeros(aval.shape, np.bool_))
    array = np.asarray(value, dtype=aval.dtype)
    if array.shape != aval.shape:
        raise ValueError(f"its shape is {array.shape}")
    return _mlir.ir_constant(array)


def _literal_value(literal: Literal) -> ir.Value:
    aval = literal.aval
    if aval.dtype == dtypes.float0:
        return _mlir.ir_constant(np.zeros(aval.shape, np.bool_))
    return _mlir.ir_constant(np.asarray(literal.val, dtype=aval.dtype))


def _check_results(eqn, out: Any, avals_out: list) -> list:
    primitive = eqn.primitive
    if primitive.multiple_results:
        try:
            if _mlir.is_value(out):
                raise TypeError
            outs = list(out)
        except TypeError:
            raise _eqn_error(
                eqn,
                f"The lowering rule of '{primitive.name}' (multiple_results) must return a "
                f"sequence of ir.Value, got {type(out).__name__}.",
            ) from None
    else:
        outs = [out]
    if len(outs) != len(avals_out):
        raise _eqn_error(
            eqn,
            f"The lowering rule of '{primitive.name}' returned {len(outs)} values for "
            f"{len(avals_out)} results.",
        )
    for i, (value, aval) in enumerate(zip(outs, avals_out, strict=True)):
        if not _mlir.is_value(value):
            converted = _mlir.as_value(value)
            if converted is None:
                raise _eqn_error(
                    eqn,
                    f"The lowering rule of '{primitive.name}' returned a "
                    f"{type(value).__name__} for result {i}, not an ir.Value.",
                )
            outs[i] = value = converted
        expected = _mlir.ir_type(aval)
        if value.type != expected:
            raise _eqn_error(
                eqn,
                f"The lowering rule of '{primitive.name}' returned a value of type "
                f"{value.type} for result {i}, whose aval {aval.str_short()} needs {expected}.",
            )
    return outs


def _lower_jaxpr(mctx: ModuleContext, jaxpr: Jaxpr, consts: Sequence, args: Sequence) -> list:
    """Emit the ops of ``jaxpr`` at the current insertion point; return its outputs' values."""
    if len(args) != len(jaxpr.invars):
        raise ValueError(f"the jaxpr takes {len(jaxpr.invars)} operands, got {len(args)}")
    env: dict[Any, ir.Value] = dict(zip(jaxpr.invars, args, strict=True))
    for i, (var, const) in enumerate(zip(jaxpr.constvars, consts, strict=True)):
        try:
            env[var] = _const_value(const, var.aval)
        except Exception as err:
            raise LoweringError(
                f"Cannot embed const {i} (a {type(const).__name__}) as a constant of type "
                f"{var.aval.str_short()}: {type(err).__name__}: {err}"
            ) from err
    rules = lowering_rules
    platform_rules = mctx.platform_rules
    ir_type = _mlir.ir_type
    Value = ir.Value  # noqa: N806
    location = mctx.location
    compute_state = _mlir.lowering_compute_type
    for eqn in jaxpr.eqns:
        primitive = eqn.primitive
        rule = platform_rules.get(primitive) if platform_rules else None
        if rule is None:
            rule = rules.get(primitive)
            if rule is None:
                raise _missing_rule_error(eqn)
        info = eqn.source_info
        invars = eqn.invars
        avals_out = [v.aval for v in eqn.outvars]
        compute_type = None if info is None else info.compute_type
        outer_compute_type = compute_state.value
        if compute_type is not outer_compute_type:
            compute_state.value = compute_type
        with location(primitive, info):
            try:
                operands = [_literal_value(x) if type(x) is Literal else env[x] for x in invars]
                ctx = LoweringRuleContext(
                    mctx, primitive, [x.aval for x in invars], avals_out, info, eqn.effects
                )
                out = rule(ctx, *operands, **eqn.params)
            except LoweringError:
                raise
            except Exception as err:
                raise _eqn_error(
                    eqn, f"Lowering '{primitive.name}' failed: {type(err).__name__}: {err}", err
                ) from err
            finally:
                if compute_type is not outer_compute_type:
                    compute_state.value = outer_compute_type
        if (
            not primitive.multiple_results
            and isinstance(out, Value)
            and out.type == ir_type(avals_out[0])
        ):
            env[eqn.outvars[0]] = out  # the common case, checked inline
            outs = [out]
        else:
            outs = _check_results(eqn, out, avals_out)
            for var, value in zip(eqn.outvars, outs, strict=True):
                env[var] = value
        if compute_type is not None:
            _mlir.mark_compute_type(outs, compute_type)
        if info is not None and info.xla_metadata:
            _mlir.mark_frontend_attributes(
                outs, _mlir.xla_metadata_attrs(info.xla_metadata), keep_existing=True
            )
    return [_literal_value(x) if type(x) is Literal else env[x] for x in jaxpr.outvars]


def _context_of(ctx) -> ModuleContext:
    return ctx if isinstance(ctx, ModuleContext) else ctx.module_ctx


def lower_jaxpr_inline(ctx, closed_jaxpr: ClosedJaxpr | Jaxpr, operands: Sequence) -> list:
    """Emit the ops of ``closed_jaxpr`` on ``operands`` in place (JAX's ``mlir.jaxpr_subcomp``).

    For rules that lower an inner program into a region (cond branches, loop
    bodies) or inline a call. ``ctx`` is a LoweringRuleContext or ModuleContext;
    the consts are embedded as constants. Returns the output values.
    """
    jaxpr, consts = _split(closed_jaxpr)
    return _lower_jaxpr(_context_of(ctx), jaxpr, consts, list(operands))


def call_jaxpr(ctx, closed_jaxpr: ClosedJaxpr | Jaxpr, operands: Sequence, name: str = "call"):
    """Lower ``closed_jaxpr`` as a private function and call it (JAX's ``mlir.call_lowering``).

    The function is made once per jaxpr object and module (a second call of the
    same ClosedJaxpr calls the same function); its name is ``name``, made unique.
    ``ctx`` is a LoweringRuleContext or ModuleContext. Returns the call's results.
    """
    jaxpr, _ = _split(closed_jaxpr)
    if len(operands) != len(jaxpr.invars):
        raise ValueError(
            f"call of '{name}': the jaxpr takes {len(jaxpr.invars)} operands, got {len(operands)}"
        )
    symbol, out_types, effects = _function_of(_context_of(ctx), closed_jaxpr, name)
    n = len(effects)
    results = _mlir.function_call(symbol, out_types, tokens_in(ctx, effects) + list(operands))
    set_tokens(ctx, effects, results[:n])
    return results[n:]


def jaxpr_function(ctx, closed_jaxpr: ClosedJaxpr | Jaxpr, name: str) -> str:
    """Lower ``closed_jaxpr`` as a private function of the module; return its symbol name.

    For ops that name a function rather than call it (``stablehlo.composite``'s
    decomposition). The jaxpr must have no ordered effects (they would need tokens).
    """
    jaxpr, _ = _split(closed_jaxpr)
    if ordered_effects(jaxpr.effects):
        raise NotImplementedError(
            f"'{name}': a function with ordered effects cannot be lowered on its own"
        )
    return _function_of(_context_of(ctx), closed_jaxpr, name)[0]


def _function_of(mctx, closed_jaxpr, name: str):
    """The private function lowering ``closed_jaxpr`` (made once per module): its symbol,
    result types and ordered effects; ordered effects thread tokens, first."""
    jaxpr, consts = _split(closed_jaxpr)
    effects = ordered_effects(jaxpr.effects)
    n = len(effects)
    entry = mctx.lowered_jaxprs.get(id(closed_jaxpr))
    if entry is None:
        # An ordered effect inside: the function takes and returns its token (first).
        tokens = [_mlir.token_type()] * n
        in_types = tokens + _mlir.ir_types(jaxpr.in_avals)
        out_types = tokens + _mlir.ir_types([x.aval for x in jaxpr.outvars])
        _, symbol, block = _mlir.new_function(
            mctx.module, mctx.symbol_table, name or "call", in_types, out_types, public=False
        )
        with _mlir.insertion_point(block), _token_scope(mctx):
            arguments = list(block.arguments)
            mctx.tokens.update(zip(effects, arguments[:n], strict=True))
            outs = _lower_jaxpr(mctx, jaxpr, consts, arguments[n:])
            _mlir.function_return([mctx.tokens[e] for e in effects] + outs)
        # The jaxpr is kept in the entry so that its id cannot be reused meanwhile.
        entry = mctx.lowered_jaxprs[id(closed_jaxpr)] = (closed_jaxpr, symbol, out_types)
    _, symbol, out_types = entry
    return symbol, out_types, effects


class _token_scope:  # noqa: N801 - used like a function in a ``with``
    """Keep the enclosing tokens while a separate function or region is lowered."""

    __slots__ = ("mctx", "saved")

    def __init__(self, mctx: ModuleContext):
        self.mctx = mctx

    def __enter__(self):
        self.saved = self.mctx.tokens
        self.mctx.tokens = dict(self.saved)

    def __exit__(self, *exc):
        self.mctx.tokens = self.saved


def tokens_in(ctx, effects: Sequence[Effect]) -> list:
    """Return the current token of each of ``effects`` (ordered effects, in order).

    A rule that lowers an inner program into a region threads these through it:
    pass them in as extra region arguments, ``set_tokens`` to those arguments
    before lowering the body, return ``tokens_in`` after it, and ``set_tokens``
    to the op's results.
    """
    mctx = _context_of(ctx)
    out = []
    for effect in effects:
        token = mctx.tokens.get(effect)
        if token is None:  # lowered outside a program that threads it (e.g. alone)
            token = mctx.tokens[effect] = _mlir.new_token()
        out.append(token)
    return out


def set_tokens(ctx, effects: Sequence[Effect], tokens: Sequence) -> None:
    """Make ``tokens`` the current tokens of ``effects`` (after an op that produced them)."""
    _context_of(ctx).tokens.update(zip(effects, tokens, strict=True))


def region_tokens(ctx):
    """A ``with`` block for lowering a region: its tokens do not leak to the enclosing code."""
    return _token_scope(_context_of(ctx))


def call_lowering(ctx: LoweringRuleContext, *operands, jaxpr, name: str | None = None, **_):
    """Lower a call-like equation, whose program is its ``jaxpr`` param (JAX's ``_call_lowering``).

    Register it for any primitive applying ``jaxpr`` 1:1 to its operands:
    ``register_lowering(my_call_p, call_lowering)``.
    """
    return call_jaxpr(ctx, jaxpr, operands, name or "call")


register_lowering(call_p, call_lowering)


def lower_fun(fun: Callable, multiple_results: bool = False) -> Callable:
    """Return a lowering rule that lowers ``fun``'s program inline (JAX's ``mlir.lower_fun``).

    ``fun(*operands, **params)`` is written with primitives (``bind``); the rule
    traces it on the equation's input avals and lowers the resulting jaxpr in
    place, so a composite primitive needs no StableHLO of its own. Its equations
    carry the location of the equation being lowered.
    """

    def rule(ctx: LoweringRuleContext, *operands, **params):
        def flat_fun(*args):
            out = fun(*args, **params)
            return list(out) if multiple_results else [out]

        # The helper's types only serve to emit operations (see without_sharding_types).
        with source_info_util.user_context(ctx.source_info), without_sharding_types():
            jaxpr, consts = trace_to_jaxpr(wrap_init(flat_fun), ctx.avals_in)
        outs = _lower_jaxpr(ctx.module_ctx, jaxpr, consts, list(operands))
        return outs if multiple_results else outs[0]

    rule.__name__ = f"lower_fun({getattr(fun, '__name__', 'fun')})"
    return rule


# --- modules -------------------------------------------------------------------------------------


class LoweredModule:
    """A StableHLO module lowered from a jaxpr, ready for XLA (what JAX's ``Lowered`` wraps).

    ``module`` (ir.Module) and its ``context``, ``module_name``, ``in_avals``,
    ``out_avals``, ``donated_args`` (a bool per argument) and
    ``input_output_aliases`` (per argument, the output index it is aliased to, or
    None), ``num_partitions`` and ``num_replicas``, ``ordered_effects`` (``main``
    takes and returns one token per ordered effect, before the other arguments and
    results) and ``host_callbacks`` (the Python callables the program calls). The
    module belongs to the context of the thread that lowered it: print or
    serialize it from that thread (or after that thread is done lowering).
    """

    __slots__ = (
        "module",
        "context",
        "module_name",
        "in_avals",
        "out_avals",
        "donated_args",
        "input_output_aliases",
        "num_partitions",
        "num_replicas",
        "ordered_effects",
        "host_callbacks",
        "keepalive",
    )

    def __init__(self, module, context, module_name, in_avals, out_avals, donated_args,
                 input_output_aliases, num_partitions=1, num_replicas=1, ordered_effects=(),
                 host_callbacks=(), keepalive=()):  # fmt: skip
        self.module = module
        self.context = context
        self.module_name: str = module_name
        self.in_avals: tuple = tuple(in_avals)
        self.out_avals: tuple = tuple(out_avals)
        self.donated_args: tuple[bool, ...] = tuple(donated_args)
        self.input_output_aliases: tuple[int | None, ...] = tuple(input_output_aliases)
        self.num_partitions = num_partitions
        self.num_replicas = num_replicas
        # One token argument and result of ``main`` per ordered effect, before the others.
        self.ordered_effects: tuple[Effect, ...] = tuple(ordered_effects)
        # What ``compile_and_load(..., host_callbacks=)`` needs, in custom-call index order.
        self.host_callbacks: tuple = tuple(host_callbacks)
        # Objects the program refers to by address (callbacks XLA calls while compiling).
        self.keepalive: tuple = tuple(keepalive)

    def as_text(self, debug_info: bool = False) -> str:
        """Return the module as StableHLO text (``jax.stages.Lowered.as_text``).

        With ``debug_info``, each op is followed by its ``loc(...)``: the user's
        file and line and the name stack of the equation it came from.
        """
        return _mlir.module_text(self.module, debug_info)

    def as_bytecode(self) -> bytes:
        """Return the module as MLIR bytecode (compact; XLA's compile accepts it)."""
        return _mlir.module_bytecode(self.module)

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return (
            f"LoweredModule({self.module_name}: ({_avals_str(self.in_avals)}) -> "
            f"({_avals_str(self.out_avals)}))"
        )


def _per_arg(what: str, values: Sequence | None, count: int, default):
    if values is None:
        return [default] * count
    values = list(values)
    if len(values) != count:
        raise ValueError(f"{what} has {len(values)} entries for {count} values")
    return values


def _input_output_aliases(in_avals, out_avals, donated, result_shardings) -> list:
    """Pair each donated argument with the first unclaimed output of the same shape and dtype.

    As JAX does, an output whose sharding is left unspecified (while others are
    given) is not aliased; the argument is then only marked as a buffer donor.
    """
    waiting: dict[tuple, deque[int]] = {}
    for i, (aval, is_donated) in enumerate(zip(in_avals, donated, strict=True)):
        if is_donated:
            waiting.setdefault((aval.shape, aval.dtype), deque()).append(i)
    aliases: list[int | None] = [None] * len(in_avals)
    if not waiting:
        return aliases
    for j, aval in enumerate(out_avals):
        if result_shardings is not None and result_shardings[j] is None:
            continue
        queue = waiting.get((aval.shape, aval.dtype))
        if queue:
            aliases[queue.popleft()] = j
    return aliases


def lower_jaxpr_to_module(
    closed_jaxpr: ClosedJaxpr,
    *,
    module_name: str = "jit_fun",
    donated_args: Sequence[bool] | None = None,
    arg_shardings: Sequence[str | None] | None = None,
    result_shardings: Sequence[str | None] | None = None,
    num_partitions: int = 1,
    num_replicas: int = 1,
    platform: str = "cpu",
    sdy_mesh: Sequence[tuple[str, int]] | None = None,
    sdy_meshes: Sequence[Sequence[tuple[str, int]]] = (),
    arg_memory_kinds: Sequence[str | None] | None = None,
    result_memory_kinds: Sequence[str | None] | None = None,
    result_placements: Sequence[str | None] | None = None,
    placement: Any = None,
) -> LoweredModule:
    """Lower a ClosedJaxpr to a StableHLO module (JAX's ``mlir.lower_jaxpr_to_module``).

    ``main`` takes the jaxpr's inputs and returns its outputs; the consts are
    embedded as constants. ``donated_args`` (a bool per input) marks donated
    inputs: one that matches an output's shape and dtype gets
    ``tf.aliasing_output = <output>``, any other ``jax.buffer_donor = true``.
    ``arg_shardings``/``result_shardings`` give per value an ``mhlo.sharding``
    string (``"{replicated}"``, ...), a Shardy ``#sdy.sharding<@mesh, [...]>``
    attribute, or None; ``sdy_mesh`` (axis names and sizes) declares the Shardy
    mesh ``@mesh`` those refer to, and ``sdy_meshes`` further meshes over the
    same devices, ``@mesh_0``, ``@mesh_1``, ... in order (``sdy_mesh_symbol``).
    ``num_partitions``/``num_replicas`` become module attributes when above 1.
    ``arg_memory_kinds``/``result_memory_kinds`` (a memory kind or None per
    value) become ``mhlo.memory_kind`` attributes; ``result_placements`` (a
    memory kind or None per result) moves a result into that memory with an
    ``annotate_device_placement`` custom call, as JAX lowers ``out_shardings``
    in another memory kind. ``platform`` selects platform rules; ``placement``
    (where the program runs, see ``ModuleContext``) is for rules that need it.
    An ordered effect of the jaxpr adds a token argument and result to ``main``
    (first, in the order of ``LoweredModule.ordered_effects``), so that the
    runtime orders effects across calls. Raises LoweringError naming the failing
    equation and its source line.
    """
    jaxpr, consts = _split(closed_jaxpr)
    effects = ordered_effects(jaxpr.effects)
    n_tokens = len(effects)
    in_avals = [v.aval for v in jaxpr.invars]
    out_avals = [x.aval for x in jaxpr.outvars]
    donated = [bool(d) for d in _per_arg("donated_args", donated_args, len(in_avals), False)]
    in_shardings = _per_arg("arg_shardings", arg_shardings, len(in_avals), None)
    out_shardings = _per_arg("result_shardings", result_shardings, len(out_avals), None)
    aliases = _input_output_aliases(
        in_avals, out_avals, donated, None if result_shardings is None else out_shardings
    )
    in_kinds = _per_arg("arg_memory_kinds", arg_memory_kinds, len(in_avals), None)
    out_kinds = _per_arg("result_memory_kinds", result_memory_kinds, len(out_avals), None)
    placements = _per_arg("result_placements", result_placements, len(out_avals), None)
    with _mlir.lowering_scope() as context, _mlir.unknown_location():
        module_attrs = {}
        if num_partitions > 1:
            module_attrs["mhlo.num_partitions"] = _mlir.i32_attr(num_partitions)
        if num_replicas > 1:
            module_attrs["mhlo.num_replicas"] = _mlir.i32_attr(num_replicas)
        module, symbol_table = _mlir.new_module(module_name, module_attrs)
        mctx = ModuleContext(context, module, symbol_table, module_name, platform, placement)
        if sdy_mesh is not None:
            for axes in (sdy_mesh, *sdy_meshes):
                mctx.sdy_mesh_name(axes)
        if num_partitions > 1:
            mctx.partitioning = "shardy" if sdy_mesh is not None else "gspmd"

        arg_attrs: list[dict] = [{} for _ in in_avals]
        for attrs, is_donated, alias, sharding in zip(
            arg_attrs, donated, aliases, in_shardings, strict=True
        ):
            if alias is not None:
                attrs["tf.aliasing_output"] = _mlir.i32_attr(alias + n_tokens)
            elif is_donated:
                attrs["jax.buffer_donor"] = _mlir.bool_attr(True)
            if sharding is not None:
                key, value = _mlir.sharding_attr(sharding)
                attrs[key] = value
        result_attrs = [dict([_mlir.sharding_attr(s)]) if s else {} for s in out_shardings]
        for attrs, kind in zip((*arg_attrs, *result_attrs), (*in_kinds, *out_kinds), strict=True):
            if kind is not None:
                attrs["mhlo.memory_kind"] = _mlir.string_attr(kind)
        arg_names = getattr(jaxpr.debug_info, "arg_names", None)
        arg_locs = None
        if arg_names is not None and len(arg_names) == len(in_avals) and in_avals:
            arg_locs = [_mlir.name_location(name) for name in arg_names]
        tokens = [_mlir.token_type()] * n_tokens
        if n_tokens:
            token_attrs = [{"jax.token": _mlir.bool_attr(True)} for _ in range(n_tokens)]
            arg_attrs = token_attrs + arg_attrs
            result_attrs = token_attrs + result_attrs
            if arg_locs is not None:
                arg_locs = [_mlir.name_location("token")] * n_tokens + arg_locs

        _, _, block = _mlir.new_function(
            module,
            symbol_table,
            "main",
            tokens + _mlir.ir_types(in_avals),
            tokens + _mlir.ir_types(out_avals),
            public=True,
            arg_attrs=arg_attrs,
            result_attrs=result_attrs,
            arg_locs=arg_locs,
        )
        with _mlir.insertion_point(block):
            arguments = list(block.arguments)
            mctx.tokens.update(zip(effects, arguments[:n_tokens], strict=True))
            outs = _lower_jaxpr(mctx, jaxpr, consts, arguments[n_tokens:])
            outs = [
                out if kind is None else _mlir.annotate_device_placement(out, kind)
                for out, kind in zip(outs, placements, strict=True)
            ]
            _mlir.function_return(tokens_in(mctx, effects) + outs)
        problems = _mlir.verify(module)
    if problems is not None:
        raise LoweringError(f"The StableHLO module '{module_name}' does not verify:\n{problems}")
    return LoweredModule(
        module,
        context,
        module_name,
        in_avals,
        out_avals,
        donated,
        aliases,
        num_partitions,
        num_replicas,
        effects,
        mctx.host_callbacks,
        mctx.keepalive,
    )
