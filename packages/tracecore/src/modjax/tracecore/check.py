"""Type checking of jaxprs: scoping, literal types, and each equation's abstract evaluation.

``check_jaxpr`` is the debugging net under every pass: a pass that builds an
ill-typed program is caught here, with the offending equation printed and the
user's source line that produced it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import dtypes
from .core import to_aval
from .effects import Effect, primitive_effects
from .jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, subjaxprs
from .tokens import AbstractToken

__all__ = ["JaxprTypeError", "check_jaxpr"]


class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed or ill-scoped (jax.core.JaxprTypeError)."""

    # Set by check_jaxpr on the way out: the message already names the user's line,
    # or the error comes from a jaxpr held in an equation's params.
    located: bool = False
    nested: bool = False


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Raise JaxprTypeError unless ``jaxpr`` is well scoped and well typed (jax.core.check_jaxpr).

    Check that every variable is bound once (constvars, then invars, then equation
    outputs, in order) before it is read; that each literal's value fits its type;
    that each equation's output types equal its primitive's ``abstract_eval`` of the
    input types (shape, dtype and weak type); that the outputs are defined; and,
    recursively, every jaxpr held in an equation's params (a closed one must have as
    many consts as constvars). Inner jaxprs are closed: they see none of the
    enclosing jaxpr's variables. Each equation's ``effects`` must be those of its
    primitive and params (its own and those of the jaxprs it holds). The error
    names the equation, its source line and what was expected versus found.
    """
    _check(jaxpr, {}, None)


def check_jaxpr_located(
    jaxpr: Jaxpr | ClosedJaxpr, locate: Callable[[JaxprEqn], str | None]
) -> None:
    """Check like ``check_jaxpr``; an error starts with ``locate(eqn)`` of the culprit.

    ``locate`` returns where an equation or a bound variable (of ``jaxpr`` or of a
    jaxpr held in its params) came from, such as ``"line 3, column 5: "`` for parsed text, or None.
    The innermost equation that has a location is the one named.
    """
    _check(jaxpr, {}, locate)


def _check(jaxpr: Jaxpr | ClosedJaxpr, checked: dict[int, Any], locate) -> None:
    if id(jaxpr) in checked:
        return
    checked[id(jaxpr)] = jaxpr  # keeps the id from being reused while we run
    if isinstance(jaxpr, ClosedJaxpr):
        if len(jaxpr.consts) != len(jaxpr.jaxpr.constvars):
            raise JaxprTypeError(
                f"closed jaxpr has {len(jaxpr.consts)} consts for "
                f"{len(jaxpr.jaxpr.constvars)} constvars"
            )
        for i, (var, const) in enumerate(zip(jaxpr.jaxpr.constvars, jaxpr.consts, strict=True)):
            found = _value_aval(const)
            if found is not None and (found.shape, found.dtype) != (var.aval.shape, var.aval.dtype):
                raise JaxprTypeError(
                    f"const {i} of the closed jaxpr has type {_short(found)} but its "
                    f"constvar is declared {_short(var.aval)}"
                )
        jaxpr = jaxpr.jaxpr
    if not isinstance(jaxpr, Jaxpr):
        raise JaxprTypeError(f"expected a Jaxpr or ClosedJaxpr, got {type(jaxpr).__name__}")

    defined: set[Var] = set()

    def bind(var, what: str) -> None:
        if not isinstance(var, Var):
            raise JaxprTypeError(f"{what} is {var!r}, which is not a Var")
        problem = _shape_problem(var.aval)
        if problem:
            location = (locate(var) if locate is not None else None) or ""
            error = JaxprTypeError(f"{location}{what} has type {_short(var.aval)}: {problem}")
            error.located = bool(location)
            raise error
        if isinstance(var, DropVar):
            raise JaxprTypeError(f"{what} is a DropVar `_`, which may only be an equation output")
        if var in defined:
            raise JaxprTypeError(f"{what} ({_var_text(var)}) is already defined")
        defined.add(var)

    for i, var in enumerate(jaxpr.constvars):
        bind(var, f"constvar {i}")
    for i, var in enumerate(jaxpr.invars):
        bind(var, f"invar {i}")

    for index, eqn in enumerate(jaxpr.eqns):
        try:
            _check_eqn(eqn, defined, checked, locate)
        except JaxprTypeError as e:
            if getattr(e, "located", False):
                raise  # an inner equation with a location already said it all
            location = locate(eqn) if locate is not None else None
            where = "in the params of equation" if getattr(e, "nested", False) else "in equation"
            text = _eqn_text(eqn).replace("\n", "\n    ")
            error = JaxprTypeError(
                f"{location or ''}{e.args[0]}\n  {where} {index}: {text}\n"
                f"  from source: {eqn.source_info}"
            )
            error.located = location is not None
            raise error from None

    for i, atom in enumerate(jaxpr.outvars):
        _read(atom, defined, f"output {i} of the jaxpr")


def _check_eqn(eqn: JaxprEqn, defined: set[Var], checked: dict[int, Any], locate) -> None:
    primitive = eqn.primitive
    in_avals = [_read(atom, defined, f"operand {i}") for i, atom in enumerate(eqn.invars)]
    for sub in subjaxprs(eqn.params):
        try:
            _check(sub, checked, locate)
        except JaxprTypeError as e:
            if getattr(e, "located", False):
                raise
            error = JaxprTypeError(e.args[0])
            error.nested = True  # the caller says which equation holds the jaxpr
            raise error from None
    want_effects = primitive_effects(primitive, eqn.params)
    if eqn.effects != want_effects:
        raise JaxprTypeError(
            f"'{primitive.name}' has effects {_effects_text(want_effects)} but the equation "
            f"declares {_effects_text(eqn.effects)}"
        )
    try:
        out = primitive.abstract_eval(*in_avals, **eqn.params)
    except Exception as e:  # whatever the rule raises, the equation is ill-typed
        operands = ", ".join(_short(a) for a in in_avals)
        raise JaxprTypeError(
            f"'{primitive.name}' rejects operands ({operands}): {type(e).__name__}: {e}"
        ) from None
    expected = list(out) if primitive.multiple_results else [out]
    if len(expected) != len(eqn.outvars):
        raise JaxprTypeError(
            f"'{primitive.name}' produces {len(expected)} outputs but the equation binds "
            f"{len(eqn.outvars)}"
        )
    for i, (var, want) in enumerate(zip(eqn.outvars, expected, strict=True)):
        if not isinstance(var, Var):
            raise JaxprTypeError(f"output {i} is {var!r}, which is not a Var")
        if not _same_type(var.aval, want):
            raise JaxprTypeError(
                f"output {i} of '{primitive.name}' is declared {_type_text(var.aval)} but "
                f"the abstract evaluation of its operands gives {_type_text(want)}"
            )
        if isinstance(var, DropVar):
            continue
        if var in defined:
            raise JaxprTypeError(f"output {i} ({_var_text(var)}) is already defined")
        defined.add(var)


_MAX_ELEMENTS = 2**63 - 1  # XLA counts elements in int64


def _shape_problem(aval) -> str | None:
    """Say why an aval's shape cannot be an array's, or return None when it can."""
    shape = getattr(aval, "shape", None)
    if shape is None:
        return None
    size = 1
    for d in shape:
        if not isinstance(d, int | np.integer):
            return None  # a symbolic dimension: checked where it is resolved
        if d < 0:
            return f"dimension {d} is negative"
        size *= int(d)
    if size > _MAX_ELEMENTS:
        return f"{size} elements do not fit in int64"
    return None


def _effects_text(effects) -> str:
    # An effects rule may return what is no Effect (a param read back from text as a
    # string): show it as it is, for the error to say so.
    return (
        "{" + ", ".join(sorted(e.name if isinstance(e, Effect) else repr(e) for e in effects)) + "}"
    )


def _read(atom, defined: set[Var], what: str):
    """Return the aval of ``atom`` after checking it is in scope (or a well-typed literal)."""
    if isinstance(atom, Literal):
        problem = _literal_problem(atom)
        if problem:
            raise JaxprTypeError(
                f"{what} is the literal {atom.val!r} declared {_type_text(atom.aval)}: {problem}"
            )
        return atom.aval
    if not isinstance(atom, Var):
        raise JaxprTypeError(f"{what} is {atom!r}, which is neither a Var nor a Literal")
    if isinstance(atom, DropVar):
        raise JaxprTypeError(f"{what} reads a DropVar `_`, which holds no value")
    if atom not in defined:
        raise JaxprTypeError(
            f"{what} ({_var_text(atom)}) is not defined: it is read before its definition "
            "or is not bound in this jaxpr"
        )
    return atom.aval


# What dtypes a Python scalar literal may stand for (a wider kind is a safe cast).
_PY_KINDS = {
    bool: (np.bool_,),
    int: (np.integer, np.inexact),
    float: (np.inexact,),
    complex: (np.complexfloating,),
}


def _literal_problem(lit: Literal) -> str | None:
    """Say why a literal's value does not fit its aval, or return None when it does."""
    aval, val = lit.aval, lit.val
    if isinstance(val, bool | int | float | complex) and not isinstance(val, np.generic):
        py_type = next(t for t in (bool, int, float, complex) if isinstance(val, t))
        if aval.shape != ():
            return "a Python scalar literal must have shape ()"
        if not any(dtypes.issubdtype(aval.dtype, kind) for kind in _PY_KINDS[py_type]):
            return f"a Python {py_type.__name__} cannot have dtype {aval.dtype}"
        if py_type is int and dtypes.issubdtype(aval.dtype, np.integer):
            info = dtypes.iinfo(aval.dtype)
            if not int(info.min) <= val <= int(info.max):  # type: ignore[operator]  # an int
                return f"{val} is out of range for {aval.dtype}"
        return None
    found = _value_aval(val)
    if found is None:
        return f"a value of type {type(val).__name__} has no abstract value"
    if (found.shape, found.dtype) != (aval.shape, aval.dtype):
        return f"the value has type {_short(found)}"
    return None


def _value_aval(value):
    """Return the aval of a concrete value (or tracer), or None when it has none."""
    try:
        return to_aval(value)
    except Exception:  # a higher layer's value type this layer cannot describe
        return None


def _same_type(a, b) -> bool:
    if type(a) is AbstractToken or type(b) is AbstractToken:
        return a == b
    return (
        tuple(a.shape) == tuple(b.shape)
        and a.dtype == b.dtype
        and bool(getattr(a, "weak_type", False)) == bool(getattr(b, "weak_type", False))
    )


def _short(aval) -> str:
    try:
        return aval.str_short()
    except AttributeError:
        return str(aval)


def _type_text(aval) -> str:
    weak = " (weak type)" if getattr(aval, "weak_type", False) else ""
    return f"{_short(aval)}{weak}"


def _var_text(var: Var) -> str:
    return f"a variable of type {_type_text(var.aval)}"


def _eqn_text(eqn: JaxprEqn) -> str:
    try:
        return repr(eqn)
    except Exception:  # an ill-formed equation may not print; report it anyway
        outs = " ".join(_short(v.aval) for v in eqn.outvars if hasattr(v, "aval"))
        return f"{outs} = {eqn.primitive.name} ({len(eqn.invars)} operands)"
