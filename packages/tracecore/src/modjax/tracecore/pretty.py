"""Printing jaxprs as text, in JAX's style and in a form ``parse.py`` reads back.

The layout follows ``jax.make_jaxpr``'s output::

    { lambda a:f32[3]; b:f32[3] c:f32[]. let
        d:f32[3] = sin b
        e:f32[3] = call[
          jaxpr={ lambda ; f:f32[3]. let g:f32[3] = cos f in (g,) }
          name=inner
        ] d
      in (e, 3:i32[]) }

with one deliberate difference: a weakly typed value prints a ``~`` before its
dtype (``a:~f32[]``, ``2.0:~f32[]``), so that the text is lossless. Literal
values print as the shortest text that parses back to exactly the same value
of their dtype. Variables are named ``a``, ``b``, ... ``z``, ``ba``, ... in order
of first appearance; nested jaxprs continue the naming with fresh names, except
where a primitive's author declared a nested jaxpr aliased with its equation
(:func:`register_aliased_jaxpr`, as jit's is): its inputs and outputs then take
the names of the equation's operands and results, as in JAX's text. As in JAX's
text too, a result of the printed jaxpr's equations that nothing reads prints as
``_`` (it reads back as a ``DropVar``).
An equation with effects writes them in braces after its primitive's name
(``debug_callback{OrderedDebug}[...] a``), a second addition to JAX's text.

Param values print with :func:`format_param_value` unless the primitive's author
registered a printer for that param (:func:`register_param_printer`); the
matching parser is registered with ``parse.register_param_parser``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import dtypes
from .abstract import MemorySpace
from .effects import primitive_effects
from .jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal
from .state import ref_syntax, unprinted_effects

__all__ = [
    "WIDTH",
    "pp_jaxpr",
    "pp_eqn",
    "register_param_printer",
    "register_param_order",
    "register_aliased_jaxpr",
    "format_param_value",
    "format_scalar",
    "format_aval",
    "format_effects",
    "var_name",
]

# Lines longer than this make a jaxpr print one equation per line.
WIDTH = 80

# (primitive, param name) -> function printing that param's value.
_param_printers: dict[tuple[Any, str], Callable[[Any], str | None]] = {}


def register_param_printer(primitive, param_name: str, fn: Callable[[Any], str | None]) -> None:
    """Print param ``param_name`` of ``primitive``'s equations with ``fn(value) -> str``.

    The text must keep brackets and quotes balanced and must not contain
    `` name=`` at its top level, so that the parser can find where it ends;
    register the inverse with ``parse.register_param_parser`` so it reads back.
    ``fn`` may return None to leave the param out (a default value the rules
    also assume when the param is absent, as a parsed equation has it).
    """
    _param_printers[(primitive, param_name)] = fn


# primitive -> param names printed first (the rest follow in alphabetical order).
_leading_params: dict[Any, tuple[str, ...]] = {}

# primitive -> name of the param holding a jaxpr whose inputs are the equation's
# operands and whose outputs are its results.
_aliased_jaxprs: dict[Any, str] = {}


def register_param_order(primitive, leading: tuple[str, ...]) -> None:
    """Print ``leading`` params of ``primitive``'s equations first, in that order.

    The other params follow in alphabetical order (JAX puts a jit's ``name`` first).
    """
    _leading_params[primitive] = tuple(leading)


def register_aliased_jaxpr(primitive, param_name: str) -> None:
    """Name the jaxpr in param ``param_name`` after the equation it sits in.

    Its inputs print with the names of the equation's operands and its outputs with
    those of the equation's results, where those are distinct variables (JAX's text
    of a nested jit does so); the text still parses back, each jaxpr having its own
    scope.
    """
    _aliased_jaxprs[primitive] = param_name


def var_name(index: int) -> str:
    """Return the printed name of the ``index``-th variable: a, ..., z, ba, bb, ..."""
    chars = []
    while True:
        index, digit = divmod(index, 26)
        chars.append(chr(ord("a") + digit))
        if index == 0:
            return "".join(reversed(chars))


# --- types and scalars -----------------------------------------------------------------


def format_aval(aval) -> str:
    """Return the type text of an aval: ``f32[3,4]``, ``~f32[]`` (weak), ``Ref{f32[3]}``."""
    inner = getattr(aval, "inner_aval", None)
    if inner is not None:  # a mutable array reference (state.AbstractRef)
        return "Ref{" + format_aval(inner) + "}"
    shape = getattr(aval, "shape", None)
    dtype = getattr(aval, "dtype", None)
    if shape is None or dtype is None:  # a token prints 'Tok'
        return aval.str_short(short_dtypes=True) if hasattr(aval, "str_short") else str(aval)
    weak = "~" if getattr(aval, "weak_type", False) else ""
    if (
        getattr(aval, "type_sharding", None) is not None
        or getattr(aval, "vma", None)
        or getattr(aval, "manual_unreduced", None)
        or getattr(aval, "manual_reduced", None)
        or getattr(aval, "memory_space", MemorySpace.Device) is not MemorySpace.Device
    ):
        # f32[8@x,4]: sharded over explicit axes; f32[4]{V:x}: varying manual axes (and
        # {V:x, U:y}: unreduced, {R:x}: reduced ones); f32<host>[4]: in host memory
        return weak + aval.str_short(short_dtypes=True)
    return f"{weak}{dtypes.short_dtype_name(dtype)}[{','.join(str(d) for d in shape)}]"


def _scalar_kind(dt: np.dtype) -> str:
    """Classify a dtype for scalar text: 'b'ool, 'i'nteger, 'f'loat, 'c'omplex or '?'."""
    if dt == np.bool_:
        return "b"
    if dt.kind in "iu":
        return "i"
    if dt.kind in "fc":
        return dt.kind
    if dt.kind == "V" and dt != dtypes.float0:  # ml_dtypes' types
        if dtypes.issubdtype(dt, np.integer):
            return "i"
        if dtypes.issubdtype(dt, np.floating):
            return "f"
    return "?"


def _same_float(x: float, y: float) -> bool:
    if math.isnan(x):
        return math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


def _format_float(x, dt: np.dtype) -> str:
    """Return the shortest text ``s`` with ``dt.type(s) == x`` (inf, -inf, nan spelled so)."""
    value = float(x)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if dt == np.float64:
        return repr(value)
    with np.errstate(all="ignore"):  # short candidates may overflow the dtype
        for digits in range(1, 18):
            text = repr(float(f"{value:.{digits}g}"))
            if _same_float(float(dt.type(text)), value):
                return text
    return repr(value)  # exact: every such dtype's values are float64 values


def _complex_part(text: str) -> str:
    return text[:-2] if text.endswith(".0") else text  # Python writes (1+2j), not (1.0+2.0j)


def format_scalar(value, dtype) -> str:
    """Return the text of a scalar of ``dtype`` that parses back to exactly ``value``.

    Booleans print ``True``/``False``, integers in decimal, floats as the
    shortest decimal that rounds back to the same value of ``dtype`` (``inf``,
    ``-inf``, ``nan``), complex numbers like Python, ``(1+2j)``.
    """
    dt = np.dtype(dtype)
    kind = _scalar_kind(dt)
    if kind == "b":
        return "True" if bool(value) else "False"
    if kind == "i":
        return str(int(value))
    if kind == "f":
        return _format_float(value, dt)
    if kind == "c":
        part = np.dtype(np.float32 if dt == np.complex64 else np.float64)
        value = complex(value)
        re, im = (_complex_part(_format_float(x, part)) for x in (value.real, value.imag))
        return f"({re}{'' if im.startswith('-') else '+'}{im}j)"
    return str(value)


def _format_literal(lit: Literal) -> str:
    aval = lit.aval
    val = lit.val
    if isinstance(val, np.ndarray) and val.shape == ():
        val = val[()]
    if getattr(aval, "weak_type", False) and isinstance(val, bool | int | float | complex):
        text = repr(val)
    else:
        dtype = getattr(aval, "dtype", None)
        text = format_scalar(val, dtype) if dtype is not None else str(val)
    return f"{text}:{format_aval(aval)}"


# --- param values ----------------------------------------------------------------------

_BARE_FORBIDDEN = frozenset(" \t\r\n\f\v'\"()[]{},=#;\\")


def _bare_string_ok(text: str) -> bool:
    if not text or not text.isprintable() or any(c in _BARE_FORBIDDEN for c in text):
        return False
    from .parse import _UNPARSED, _evaluate_param_text

    return _evaluate_param_text(text) is _UNPARSED


def _is_scalar_type(value) -> bool:
    return isinstance(value, type) and issubclass(value, np.generic)


def _format_array(array: np.ndarray) -> str:
    name = dtypes.dtype_name(array.dtype)

    def nested(a):
        if a.ndim == 0:
            return format_scalar(a[()], a.dtype)
        return "[" + ", ".join(nested(sub) for sub in a) + "]"

    shape = f", shape={array.shape}" if array.size == 0 else ""
    return f"array({nested(array)}{shape}, dtype={name})"


def _format_complex_param(value: complex) -> str:
    # Both parts as floats, so that the signs of zeros survive reading back.
    im = value.imag
    sign = "-" if not math.isnan(im) and math.copysign(1.0, im) < 0 else "+"
    return f"({value.real!r}{sign}{abs(im)!r}j)"


def format_param_value(value, *, top: bool = True) -> str:
    """Return the default text of an equation param value (the parser reads it back).

    Tuples print as ``(0,)`` / ``(1, 2)``, dtypes by name (``float32``), numpy
    scalars as ``float32(0.1)``, arrays as ``array([1, 2], dtype=int32)``, strings
    bare when that is unambiguous (``name=<lambda>``) and quoted otherwise;
    ``None``, booleans and numbers like Python. Other objects print with ``str``
    and do not read back. Jaxpr values are printed by :func:`pp_jaxpr` instead.
    """
    if isinstance(value, complex):
        return _format_complex_param(value)
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    if isinstance(value, str):
        return value if top and _bare_string_ok(value) else repr(value)
    if isinstance(value, np.dtype) or _is_scalar_type(value):
        try:
            return dtypes.dtype_name(value)
        except TypeError:
            return str(value)
    if isinstance(value, np.generic):
        return f"{dtypes.dtype_name(value.dtype)}({format_scalar(value, value.dtype)})"
    if isinstance(value, np.ndarray):
        return _format_array(value)
    if isinstance(value, tuple | list):
        items = [format_param_value(v, top=False) for v in value]
        if isinstance(value, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, dict):
        entries = (
            f"{format_param_value(k, top=False)}: {format_param_value(v, top=False)}"
            for k, v in value.items()
        )
        return "{" + ", ".join(entries) + "}"
    if isinstance(value, ClosedJaxpr | Jaxpr):
        return pp_jaxpr(value)
    return str(value)


def format_effects(effects) -> str:
    """Return the text of an equation's effects: ``{Debug,OrderedIO}``, or "" for none."""
    # References' effect is not printed (as in JAX): the parser gives it back from the
    # primitive, as it does every effect of an equation written without braces.
    shown = [e.name for e in effects if e not in unprinted_effects]
    if not shown:
        return ""
    return "{" + ",".join(sorted(shown)) + "}"


# --- layout ----------------------------------------------------------------------------


def _holds_jaxprs(value) -> bool:
    """Tell whether a param value prints as nested jaxprs: one, or a tuple/list of them."""
    if isinstance(value, ClosedJaxpr | Jaxpr):
        return True
    return (
        isinstance(value, tuple | list)
        and bool(value)
        and all(isinstance(v, ClosedJaxpr | Jaxpr) for v in value)
    )


class _Printer:
    """Names variables and lays out lines; one per printed text."""

    def __init__(self, source_info: bool, name_stack: bool, width: int):
        self.names: dict[int, str] = {}
        self.keep: list[Any] = []  # keeps named vars alive so ids stay unique
        self.fresh = 0  # the number of fresh names given
        self.suggested: dict[int, str] = {}  # id(var) -> the name its binder takes
        self.unused: set[int] = set()  # ids of results printed as ``_``
        self.source_info = source_info
        self.name_stack = name_stack
        self.annotate = source_info or name_stack
        self.width = width

    def name(self, var) -> str:
        if isinstance(var, DropVar):
            return "_"
        name = self.names.get(id(var))
        if name is None:
            name = self.names[id(var)] = var_name(self.fresh)
            self.fresh += 1
            self.keep.append(var)
        return name

    def binder(self, var) -> str:
        # A binder always takes a fresh name: a jaxpr held twice (vecmat is matvec for a
        # symmetric linear solve) binds the same variables twice, and the text must read
        # as two programs, as it parses back.
        if id(var) in self.unused:
            return f"_:{format_aval(var.aval)}"
        if not isinstance(var, DropVar):
            self.names.pop(id(var), None)
            suggested = self.suggested.pop(id(var), None)
            if suggested is not None:
                self.names[id(var)] = suggested
                self.keep.append(var)
        return f"{self.name(var)}:{format_aval(var.aval)}"

    def fresh_name(self, var) -> str:
        """Give ``var`` the next fresh name, for its binder to take."""
        name = self.suggested[id(var)] = var_name(self.fresh)
        self.fresh += 1
        return name

    def mark_unused(self, jaxpr: Jaxpr) -> None:
        """Let the equation results ``jaxpr`` never reads print as ``_``, as JAX's do."""
        used = {id(v) for v in jaxpr.outvars if not isinstance(v, Literal)}
        for eqn in reversed(jaxpr.eqns):
            self.unused.update(id(v) for v in eqn.outvars if id(v) not in used)
            used.update(id(v) for v in eqn.invars if not isinstance(v, Literal))

    def suggest_names(self, eqn: JaxprEqn, jaxpr) -> None:
        """Let ``jaxpr``'s binders take the names of ``eqn``'s operands and results.

        Called before ``eqn``'s results are bound, so that a result named here keeps
        that name (JAX's order of naming).
        """
        if isinstance(jaxpr, ClosedJaxpr):
            jaxpr = jaxpr.jaxpr
        pairs: list[tuple[list[Any], list[Any], bool]] = [
            (list(jaxpr.invars), list(eqn.invars), False),
            (list(jaxpr.outvars), list(eqn.outvars), True),
        ]
        if any(len(inner) != len(outer) for inner, outer, _ in pairs):
            return  # a malformed equation prints with fresh names
        for inner_vars, outer_vars, results in pairs:
            used: set[int] = set()
            for inner, outer in zip(inner_vars, outer_vars, strict=True):
                if (
                    isinstance(inner, Literal | DropVar)
                    or isinstance(outer, Literal | DropVar)
                    or id(outer) in self.unused
                    or id(outer) in used
                    or id(inner) in self.suggested
                    or not (results or id(outer) in self.names)
                ):
                    continue
                used.add(id(outer))
                if results:
                    name = self.suggested.get(id(outer)) or self.fresh_name(outer)
                else:
                    name = self.names[id(outer)]
                self.suggested[id(inner)] = name

    def atom(self, atom) -> str:
        if isinstance(atom, Literal):
            return _format_literal(atom)
        return self.name(atom)

    def comment(self, eqn: JaxprEqn) -> str | None:
        if not self.annotate:
            return None
        info = eqn.source_info
        parts = []
        if self.source_info and info is not None and info.frame is not None:
            parts.append(str(info.frame))
        if self.name_stack and info is not None and info.name_stack:
            parts.append(f"[{'/'.join(info.name_stack)}]")
        return " ".join(parts) or None

    # A block is a list of lines, each ``[text, comment]`` with ``text`` indented.

    def jaxpr_block(self, jaxpr, indent: int, prefix: str = "") -> list[list]:
        if isinstance(jaxpr, ClosedJaxpr):
            jaxpr = jaxpr.jaxpr
        const_binders = [self.binder(v) for v in jaxpr.constvars]
        in_binders = [self.binder(v) for v in jaxpr.invars]
        eqn_blocks = [self.eqn_block(eqn, indent + 4) for eqn in jaxpr.eqns]
        outs = [self.atom(v) for v in jaxpr.outvars]
        out_text = "(" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")"

        words = ["{", "lambda"]
        words += const_binders[:-1] + [const_binders[-1] + ";"] if const_binders else [";"]
        words += in_binders[:-1] + [in_binders[-1] + "."] if in_binders else ["."]
        words.append("let")
        lead = " " * indent + prefix
        if not self.annotate and all(len(block) == 1 for block in eqn_blocks):
            eqns = "; ".join(block[0][0].lstrip() for block in eqn_blocks)
            line = f"{lead}{' '.join(words)} {eqns} in {out_text} }}"
            if len(line) <= self.width:
                return [[line, None]]
        lines = [[text, None] for text in self._fill(words, lead, " " * (indent + 4))]
        for block in eqn_blocks:
            lines += block
        lines.append([f"{' ' * (indent + 2)}in {out_text} }}", None])
        return lines

    def _fill(self, words: list[str], lead: str, cont: str) -> list[str]:
        """Join ``words`` with spaces into lines of at most ``width`` columns."""
        lines, line = [], lead + words[0]
        for word in words[1:]:
            if len(line) + 1 + len(word) > self.width and line.strip() not in ("{", "{ lambda"):
                lines.append(line)
                line = cont + word
            else:
                line += " " + word
        lines.append(line)
        return lines

    def ref_index(self, indexer, operands) -> str:
        """``[1:,0]``: a reference equation's index (``state.ref_syntax``), names filled in."""
        ops = iter(operands)
        items = []
        for text in indexer:
            if text == "#":
                items.append(self.atom(next(ops)))
            elif text.startswith("ds(#"):
                items.append("ds(" + self.atom(next(ops)) + text[4:])
            else:
                items.append(text)
        return "[" + ",".join(items) + "]"

    def ref_eqn(self, eqn: JaxprEqn, kind: str) -> str:
        """JAX's syntax of reads and writes: ``b <- a[0]``, ``c, a[0] <- a[0], d``, ``a[0] += d``.

        (The output of a swap is written with its type.)
        """
        n_value = 0 if kind == "get" else 1
        ref, values, index = eqn.invars[0], eqn.invars[1 : 1 + n_value], eqn.invars[1 + n_value :]
        place = self.atom(ref) + self.ref_index(eqn.params["indexer"], index)
        if kind == "get":
            return f"{self.binder(eqn.outvars[0])} <- {place}"
        if kind == "addupdate":
            return f"{place} += {self.atom(values[0])}"
        if isinstance(eqn.outvars[0], DropVar) or id(eqn.outvars[0]) in self.unused:
            return f"{place} <- {self.atom(values[0])}"
        return f"{self.binder(eqn.outvars[0])}, {place} <- {place}, {self.atom(values[0])}"

    def eqn_block(self, eqn: JaxprEqn, indent: int) -> list[list]:
        pad = " " * indent
        kind = ref_syntax.get(eqn.primitive)
        if kind is not None and not self.annotate_effects(eqn):
            return [[pad + self.ref_eqn(eqn, kind), self.comment(eqn)]]
        aliased = _aliased_jaxprs.get(eqn.primitive)
        if aliased is not None and aliased in eqn.params:
            self.suggest_names(eqn, eqn.params[aliased])
        lhs = " ".join(self.binder(v) for v in eqn.outvars)
        name = eqn.primitive.name + format_effects(eqn.effects)
        head = f"{pad}{lhs} = {name}" if lhs else f"{pad}{name}"
        comment = self.comment(eqn)
        params: list[tuple[str, str | None, Any]] = []  # (name, text or None, jaxprs or None)
        leading = [key for key in _leading_params.get(eqn.primitive, ()) if key in eqn.params]
        for key in leading + sorted(set(eqn.params).difference(leading)):
            value = eqn.params[key]
            printer = _param_printers.get((eqn.primitive, key))
            if printer is not None:
                text = printer(value)
                if text is not None:  # None: a default that is not printed
                    params.append((key, text, None))
            elif _holds_jaxprs(value):
                params.append((key, None, value))
            else:
                params.append((key, format_param_value(value), None))
        # Operands are printed after the params, but names follow the text's order.
        nested = any(text is None for _, text, _ in params)
        if not nested:
            operands = " ".join(self.atom(x) for x in eqn.invars)
            inline = head
            if params:
                inline += "[" + " ".join(f"{k}={text}" for k, text, _ in params) + "]"
            if operands:
                inline += " " + operands
            if not params or ("\n" not in inline and len(inline) <= self.width):
                return [[inline, comment]]
        lines = [[head + "[", comment]]
        inner = indent + 2
        for key, text, sub in params:
            if text is not None:
                lines.append([f"{' ' * inner}{key}={text}", None])
            elif isinstance(sub, ClosedJaxpr | Jaxpr):
                lines += self.jaxpr_block(sub, inner, f"{key}=")
            else:
                opening, closing = ("[", "]") if isinstance(sub, list) else ("(", ")")
                lines.append([f"{' ' * inner}{key}={opening}", None])
                for item in sub:
                    lines += self.jaxpr_block(item, inner + 2)
                lines.append([f"{' ' * inner}{closing}", None])
        operands = " ".join(self.atom(x) for x in eqn.invars)
        lines.append([f"{pad}]" + (f" {operands}" if operands else ""), None])
        return lines

    @staticmethod
    def annotate_effects(eqn: JaxprEqn) -> bool:
        # JAX's syntax of a reference equation has no room for effects: an equation whose
        # effects are not exactly the primitive's prints in the general form.
        return eqn.effects != primitive_effects(eqn.primitive, eqn.params)

    def render(self, lines: list[list]) -> str:
        commented = [len(text) for text, comment in lines if comment is not None]
        if not commented:
            return "\n".join(text for text, _ in lines)
        column = max(commented) + 1
        return "\n".join(
            text if comment is None else f"{text.ljust(column)}# {comment}"
            for text, comment in lines
        )


def pp_jaxpr(
    jaxpr: Jaxpr | ClosedJaxpr,
    *,
    source_info: bool = False,
    name_stack: bool = False,
    width: int = WIDTH,
) -> str:
    """Return the text of a jaxpr in JAX's style (``parse.parse_jaxpr`` reads it back).

    With ``source_info`` each equation ends in a comment ``# file:line (function)``,
    with ``name_stack`` in ``[outer/inner]``; the comments are aligned in a column
    and every equation then gets a line of its own. A jaxpr without nested jaxprs
    whose text fits in ``width`` columns prints on one line.
    """
    printer = _Printer(source_info, name_stack, width)
    printer.mark_unused(jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr)
    return printer.render(printer.jaxpr_block(jaxpr, 0))


def pp_eqn(eqn: JaxprEqn, *, source_info: bool = False, name_stack: bool = False) -> str:
    """Return the text of one equation, naming its variables afresh."""
    printer = _Printer(source_info, name_stack, WIDTH)
    return printer.render(printer.eqn_block(eqn, 0))
