"""Mutable array references: their type, their effect and state discharge (``jax.Ref``).

A reference is a mutable cell holding an array. Its abstract value is
:class:`AbstractRef` (printed ``Ref{f32[3]}``), wrapping the aval of the array it
holds. Programs read and write references with primitives (``get``, ``swap``,
``addupdate``, ``new_ref``, ``freeze``, ``free_ref``, ``empty_ref``, declared by
``modjax.lax``); every equation of theirs carries :data:`ref_effect`, so
dead-code elimination keeps writes and the effect propagates out of loop bodies
and calls like any other.

XLA has no mutable values, so before a program with references is lowered,
:func:`discharge_state` rewrites it into a pure one: each reference becomes the
value it holds, a read indexes that value, a write makes a new value, and the
final value of every reference the program received is an extra output.
``discharge_rules[p]`` says how an equation of ``p`` does that; primitives that
hold jaxprs (calls, loops, conditionals) register rules that discharge their
bodies in turn.

Outside any transformation a reference is a :class:`Ref` holding a concrete
array; the operations on it (indexing, assignment) are the ``ref_methods``
that ``modjax.lax`` installs, so that this package needs no array library.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from typing import Any

from .abstract import AbstractValue, ShapedArray, get_aval, register_aval_handler
from .effects import Effect
from .jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var

__all__ = [
    "AbstractRef",
    "Ref",
    "ref_effect",
    "ref_methods",
    "discharge_rules",
    "discharge_state",
    "discharged_aval",
    "is_ref_aval",
    "has_refs",
    "ref_syntax",
    "unprinted_effects",
    "register_call_discharge",
    "check_no_ref_outputs",
    "discharging_for_transpose",
]

#: The effect of every equation that allocates, reads or writes a reference.
ref_effect = Effect("Ref")
#: Effects that jaxpr text leaves out (JAX prints none of references' effects); the
#: parser gives them back from each equation's primitive.
unprinted_effects: frozenset = frozenset((ref_effect,))
#: Primitives printed and parsed in JAX's syntax of references, by kind: ``"get"``
#: (``b:f32[] <- a[0]``), ``"swap"`` (``c:f32[], a[0] <- a[0], b``) and ``"addupdate"``
#: (``a[0] += b``); their params are one ``indexer`` (modjax.lax.state's encoding).
ref_syntax: dict[Any, str] = {}


class AbstractRef:
    """The type of a mutable array reference (JAX's ``AbstractRef``): ``Ref{f32[3]}``.

    ``inner_aval`` is the ShapedArray of the array the reference holds; shape,
    dtype and weak type read through to it.
    """

    __slots__ = ("inner_aval", "memory_space", "kind")

    def __init__(self, inner_aval: ShapedArray, memory_space: Any = None, kind: Any = None):
        if isinstance(inner_aval, AbstractRef):
            raise TypeError("a reference cannot hold another reference")
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    ndim = property(lambda self: self.inner_aval.ndim)
    size = property(lambda self: self.inner_aval.size)
    sharding = property(lambda self: None)
    vma = property(lambda self: self.inner_aval.vma)

    def update(self, inner_aval: ShapedArray | None = None, **changes) -> AbstractRef:
        """Return a copy with another inner aval, or the inner aval's fields changed.

        ``update(shape=...)`` types the reference to one slice of it (a scanned
        reference's per-iteration view).
        """
        inner = self.inner_aval if inner_aval is None else inner_aval
        if changes:
            inner = inner.update(**changes)
        return AbstractRef(inner, self.memory_space, self.kind)

    def to_tangent_aval(self):
        """Return this reference's tangent type: itself when its values are inexact.

        Otherwise the ``float0`` type of the values' shape (a reference to integers
        has no tangents to write).
        """
        tangent = self.inner_aval.to_tangent_aval()
        return self if tangent is self.inner_aval else tangent

    def strip_weak_type(self) -> AbstractRef:
        """Return this type holding the strongly typed inner aval."""
        return self.update(self.inner_aval.strip_weak_type())

    def str_short(self, short_dtypes: bool = False) -> str:
        """Return ``'Ref{float32[3]}'``, or with ``short_dtypes`` ``'Ref{f32[3]}'``."""
        return "Ref{" + self.inner_aval.str_short(short_dtypes) + "}"

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractRef and self.inner_aval == other.inner_aval

    def __hash__(self) -> int:
        return hash(("Ref", self.inner_aval))

    def __str__(self) -> str:
        return self.str_short()

    def __repr__(self) -> str:
        return self.str_short()


AbstractValue.register(AbstractRef)


def is_ref_aval(aval: Any) -> bool:
    """Tell whether ``aval`` is the type of a reference."""
    return type(aval) is AbstractRef


def discharged_aval(aval: Any) -> Any:
    """Return the aval a value of ``aval`` has once references are discharged."""
    return aval.inner_aval if type(aval) is AbstractRef else aval


#: How a concrete Ref is read and written; ``modjax.lax`` installs
#: ``get(ref, index)``, ``set(ref, index, value)``, ``repr(ref)`` and ``at(ref)``.
ref_methods: dict[str, Callable[..., Any]] = {}


def _method(name: str) -> Callable[..., Any]:
    try:
        return ref_methods[name]
    except KeyError:
        raise NotImplementedError(
            f"Ref.{name} needs modjax.lax (import modjax.numpy) to read and write arrays"
        ) from None


class _RefMeta(type):
    def __instancecheck__(cls, x) -> bool:
        return type(getattr(x, "aval", None)) is AbstractRef


class Ref(metaclass=_RefMeta):
    """A mutable array reference holding a concrete array (``jax.Ref``).

    Made by ``jax.new_ref``; read with ``ref[index]``, written with
    ``ref[index] = value`` and ``ref[index] += value``. Under a transformation a
    reference is a tracer whose aval is an :class:`AbstractRef`;
    ``isinstance(x, Ref)`` is True for both (tracers register as Refs).
    """

    __slots__ = ("_value", "_aval", "__weakref__")

    def __init__(self, value: Any, aval: AbstractRef | None = None):
        self._value = value
        self._aval = AbstractRef(get_aval(value)) if aval is None else aval

    @property
    def aval(self) -> AbstractRef:
        return self._aval

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    weak_type = property(lambda self: self._aval.weak_type)

    def __getitem__(self, index):
        return _method("get")(self, index)

    def __setitem__(self, index, value):
        _method("set")(self, index, value)

    @property
    def at(self):
        """``ref.at[idx]``: a view of the elements ``ref[idx]`` selects (a TransformedRef)."""
        return _method("at")(self)

    def __len__(self) -> int:
        if not self._aval.shape:
            raise TypeError("len() of unsized object")
        return self._aval.shape[0]

    def __repr__(self) -> str:
        return _method("repr")(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __deepcopy__(self, memo):
        return Ref(self._value, self._aval)


register_aval_handler(Ref, lambda r: r._aval)


def has_refs(jaxpr: Jaxpr | ClosedJaxpr) -> bool:
    """Tell whether ``jaxpr`` takes, makes or uses references (it then needs discharge)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    return (
        ref_effect in jaxpr.effects
        or any(type(v.aval) is AbstractRef for v in jaxpr.constvars)
        or any(type(v.aval) is AbstractRef for v in jaxpr.invars)
    )


# rule(eqn, *invals) -> (new values of the equation's operands, None where unchanged;
# the equation's outputs). Operands that are references arrive as the values they hold.
DischargeRule = Callable[..., tuple[Sequence[Any], Sequence[Any]]]
discharge_rules: dict[Any, DischargeRule] = {}


_for_transpose = contextvars.ContextVar("discharge_for_transpose", default=False)


def discharging_for_transpose() -> bool:
    """Tell whether the discharge under way makes a linear program to transpose.

    Its writes are only transposed, never run: a discharge rule may then write
    at array indices as if they were unique (a scatter whose transpose is a
    gather), as JAX's transposes of reference writes do.
    """
    return _for_transpose.get()


def discharge_state(closed: ClosedJaxpr, *, for_transpose: bool = False) -> ClosedJaxpr:
    """Return ``closed`` without references (JAX's ``discharge_state``).

    Every input or const of reference type becomes an input of the type it
    holds (consts stay consts of the value type, read when the result is built),
    and the program returns, after its own outputs, the final value of each
    reference input in order (the consts' first, as ``convert_constvars_jaxpr``
    orders them). Programs without references are returned unchanged.
    ``for_transpose`` says the result is a linear program to transpose
    (:func:`discharging_for_transpose`).
    """
    if for_transpose and not _for_transpose.get():
        token = _for_transpose.set(True)
        try:
            return discharge_state(closed)
        finally:
            _for_transpose.reset(token)
    from .tracing import trace_to_jaxpr
    from .wrapped_fun import wrap_init

    jaxpr = closed.jaxpr
    if not has_refs(jaxpr):
        return closed
    if any(type(v.aval) is AbstractRef for v in jaxpr.constvars):
        raise ValueError("discharge_state: convert reference consts to inputs first")

    def run(*args):
        outs, finals = eval_discharged(jaxpr, closed.consts, args)
        return [*outs, *finals]

    in_avals = [discharged_aval(v.aval) for v in jaxpr.invars]
    new_jaxpr, consts = trace_to_jaxpr(wrap_init(run, jaxpr.debug_info), in_avals)
    return ClosedJaxpr(new_jaxpr, consts)


def eval_discharged(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]):
    """Evaluate ``jaxpr`` with each reference as the value it holds.

    Return the outputs and the final values of the reference inputs (in order).
    Equations that touch no reference are bound as they are; the others go
    through their ``discharge_rules``.
    """
    env: dict[Var, Any] = {}

    def read(atom):
        return atom.val if type(atom) is Literal else env[atom]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        invals = [read(x) for x in eqn.invars]
        rule = discharge_rules.get(eqn.primitive)
        if rule is None and _touches_refs(eqn):
            raise NotImplementedError(
                f"references used by '{eqn.primitive.name}', which has no state discharge rule"
            )
        if rule is None:
            outs = eqn.primitive.bind(*invals, **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        else:
            new_invals, outs = rule(eqn, *invals)
            for atom, new in zip(eqn.invars, new_invals, strict=True):
                if new is not None and type(atom) is Var:
                    env[atom] = new
        for var, out in zip(eqn.outvars, outs, strict=True):
            env[var] = out
    outs = [read(v) for v in jaxpr.outvars]
    finals = [env[v] for v in jaxpr.invars if type(v.aval) is AbstractRef]
    return outs, finals


def _touches_refs(eqn: JaxprEqn) -> bool:
    return ref_effect in eqn.effects or any(
        type(v.aval) is AbstractRef for v in (*eqn.invars, *eqn.outvars)
    )


def register_call_discharge(primitive, update_params: Callable[..., dict]) -> None:
    """Give a call primitive (params ``jaxpr``, one operand per invar) a discharge rule.

    The rule discharges the called jaxpr; its consts become leading operands and
    ``update_params(params, n_leading, new_jaxpr)`` says how the params follow (a
    ``donated_invars`` flag per new operand, say). Each reference operand then
    receives the call's extra output holding its final value.
    """

    def rule(eqn, *invals):
        from .tracing import convert_constvars_jaxpr  # noqa: PLC0415

        discharged = discharge_state(eqn.params["jaxpr"])
        flat = ClosedJaxpr(convert_constvars_jaxpr(discharged.jaxpr), ())
        params = update_params(eqn.params, len(discharged.consts), flat)
        outs = primitive.bind(*discharged.consts, *invals, **params)
        n_out = len(eqn.outvars)
        finals = iter(outs[n_out:])
        new = [next(finals) if type(v.aval) is AbstractRef else None for v in eqn.invars]
        return new, outs[:n_out]

    discharge_rules[primitive] = rule


def check_no_ref_outputs(
    jaxpr: Jaxpr,
    info: Any,
    traced_for: str,
    out_tree: Any = None,
    n_consts: int = 0,
    arg_names: Sequence[str] | None = None,
) -> None:
    """Raise JAX's ValueError when a traced function returns a reference.

    ``traced_for`` names what traced it (``"jit"``, ``"scan"``, ``"while_body"``,
    ``"fori_loop"``); ``info`` is the function's DebugInfo; ``out_tree`` (the
    outputs' pytree) names the output's tree path; the first ``n_consts`` invars
    are values the function closes over (consts converted to inputs); ``arg_names``
    names the other invars (``info.arg_names`` by default).
    """
    for k, out in enumerate(jaxpr.outvars):
        aval = out.aval
        if type(aval) is not AbstractRef:
            continue
        where = f" at {info.func_src_info}" if info.func_src_info else ""
        path = ""
        if out_tree is not None:
            from .tree_util import keystr, tree_flatten_with_path, tree_unflatten  # noqa: PLC0415

            leaves = tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
            paths = [keystr(p) for p, _ in tree_flatten_with_path(leaves)[0]]
            path = f" at output tree path result{paths[k]}"
        args = jaxpr.invars[n_consts:]
        if out in args:
            i = args.index(out)
            names = info.arg_names if arg_names is None else arg_names
            name = names[i] if names and i < len(names) else f"flat argument {i}"
            origin = f"was passed in as the argument {name}."
        elif out in jaxpr.constvars or out in jaxpr.invars[:n_consts]:
            origin = "was closed over by the function."
        else:
            origin = "was created inside the function."
        raise ValueError(
            f"function {info.func_name}{where} traced for {traced_for} returned a mutable "
            f"array reference of type {aval.str_short()}{path}, but mutable array references "
            f"cannot be returned.\n\nThe returned mutable array {origin}"
        )
