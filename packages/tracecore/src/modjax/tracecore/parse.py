"""Reading jaxpr text back: the inverse of ``pretty.pp_jaxpr``.

JAX can print a jaxpr but not load one; modjax can. :func:`parse_jaxpr` reads
the text the printer produces (and JAX's own text, whose types are then all
strong) into a ``ClosedJaxpr``; an equation's effects, written in braces after
its primitive (``f{Debug}[...]``), are read back by name (``effects_by_name``),
and without braces they are those the primitive's rule gives::

    { lambda ; a:f32[3] b:~f32[]. let c:f32[3] = mul a b in (c, 2.0:~f32[]) }

Whitespace and line breaks between tokens are free, except that an equation's
operands end at the end of its line (or at ``;``); ``#`` starts a comment that
runs to the end of the line. Primitive names are resolved through
``core.primitives_by_name`` or an explicit ``primitives=`` mapping. Param values
are read by the parser registered for that param with
:func:`register_param_parser`, else by :func:`parse_param_value`; nested
``{ lambda ... }`` params become ``ClosedJaxpr`` values with no consts.
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import core, dtypes
from .abstract import MemorySpace, ShapedArray
from .check import check_jaxpr_located
from .effects import effects_by_name, primitive_effects
from .jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var
from .pretty import _scalar_kind, format_aval
from .state import AbstractRef, ref_syntax, unprinted_effects
from .tokens import abstract_token

__all__ = [
    "JaxprParseError",
    "parse_jaxpr",
    "parse_open_jaxpr",
    "parse_param_value",
    "parse_scalar",
    "register_param_defaults",
    "register_param_parser",
]


class JaxprParseError(ValueError):
    """Jaxpr text that cannot be read; the message gives line, column and an excerpt."""


# (primitive, param name) -> function reading that param's text.
_param_parsers: dict[tuple[Any, str], Callable[[str], Any]] = {}


def register_param_parser(primitive, param_name: str, fn: Callable[[str], Any]) -> None:
    """Read param ``param_name`` of ``primitive``'s equations with ``fn(text) -> value``.

    ``fn`` receives the param's text with comments removed, exactly as far as the
    next param or the closing ``]``; it is the inverse of a printer registered
    with ``pretty.register_param_printer``. Errors it raises are reported with
    the position of the param.
    """
    _param_parsers[(primitive, param_name)] = fn


# primitive -> function giving the params its printer leaves out when at their defaults.
_param_defaults: dict[Any, Callable[[int], dict[str, Any]]] = {}


def register_param_defaults(primitive, fn: Callable[[int], dict[str, Any]]) -> None:
    """Fill in the params ``primitive``'s printer leaves out at their default values.

    ``fn(operand_count)`` returns each such param's default (for example one
    ``False`` per operand); an equation read back gets those its text does not give,
    so rules see the params the printed equation had.
    """
    _param_defaults[primitive] = fn


# --- scalars and param values -------------------------------------------------------------

_DTYPES_BY_NAME: dict[str, np.dtype] = {}


def _dtype_by_name(name: str) -> np.dtype | None:
    if not _DTYPES_BY_NAME:
        for dt in dtypes.supported_dtypes():
            _DTYPES_BY_NAME[dtypes.dtype_name(dt)] = dt
    found = _DTYPES_BY_NAME.get(name)
    if found is None and name in dtypes.NARROW_DTYPE_NAMES and not dtypes.narrow_dtypes_loaded():
        dtypes.load_narrow_dtypes()  # text naming bfloat16 before anything else did
        found = _DTYPES_BY_NAME.get(name)
    return found


dtypes.on_narrow_dtypes_loaded(_DTYPES_BY_NAME.clear)


def parse_scalar(text: str, dtype, weak_type: bool = False):
    """Return the scalar of ``dtype`` that ``text`` denotes (inverse of ``format_scalar``).

    A weakly typed value becomes a Python scalar of the dtype's kind (``bool``,
    ``int``, ``float``, ``complex``); any other a numpy scalar of ``dtype``.
    Accepts ``True``/``False``, decimal numbers, ``inf``, ``-inf``, ``nan`` and
    complex numbers like ``(1+2j)``. Raises ValueError for anything else.
    """
    dt = np.dtype(dtype)
    kind = _scalar_kind(dt)
    text = text.strip()
    if kind == "b":
        if text not in ("True", "False", "1", "0"):
            raise ValueError(f"{text!r} is not a boolean")
        value: bool | int | float | complex = text in ("True", "1")
        return value if weak_type else np.bool_(value)
    if kind == "i":
        value = int(text)
        if weak_type:
            return value
        info = dtypes.iinfo(dt)
        if not info.min <= value <= info.max:
            raise ValueError(f"{value} is out of range for {dtypes.dtype_name(dt)}")
        return dt.type(value)
    if kind == "f":
        value = float(text)
        return value if weak_type else dt.type(text)
    if kind == "c":
        value = complex(text)
        return value if weak_type else dt.type(value)
    raise ValueError(f"cannot read a literal of dtype {dt}")


class _Unparsed:
    """Marker: a param text that is not a value the default reader knows."""


_UNPARSED = _Unparsed()
_SPECIAL_NAMES = {
    "inf": float("inf"),
    "nan": float("nan"),
    "infj": complex(0.0, float("inf")),
    "nanj": complex(0.0, float("nan")),
}


def _evaluate_param_text(text: str):
    """Return the value of a param's text, or ``_UNPARSED``."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return _UNPARSED
    source = text.strip()
    try:
        return _evaluate(tree.body, source)
    except _Fail:
        return _UNPARSED
    except (ValueError, TypeError, OverflowError, ArithmeticError):
        return _UNPARSED


class _Fail(Exception):
    pass


def _evaluate(node, source: str):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(e, source) for e in node.elts)
    if isinstance(node, ast.List):
        return [_evaluate(e, source) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _Fail
        return {
            _evaluate(k, source): _evaluate(v, source)
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.Name):
        if node.id in _SPECIAL_NAMES:
            return _SPECIAL_NAMES[node.id]
        dt = _dtype_by_name(node.id)
        if dt is None:
            raise _Fail
        return dt
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _evaluate(node.operand, source)
        if type(operand) not in (int, float, complex):
            raise _Fail
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        left, right = _evaluate(node.left, source), _evaluate(node.right, source)
        if type(left) not in (int, float) or type(right) is not complex:
            raise _Fail
        imag = right.imag if isinstance(node.op, ast.Add) else -right.imag
        return complex(left, imag)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _evaluate_call(node, source)
    raise _Fail


def _segment(source: str, node) -> str:
    text = ast.get_source_segment(source, node)
    if text is None:
        raise _Fail
    return text


def _evaluate_call(node: ast.Call, source: str):
    name = node.func.id  # type: ignore[attr-defined]  # the caller checked it is a Name
    if name == "array":
        keywords = {k.arg: k.value for k in node.keywords}
        if len(node.args) != 1 or "dtype" not in keywords or set(keywords) - {"dtype", "shape"}:
            raise _Fail
        dt = _evaluate(keywords["dtype"], source)
        if not isinstance(dt, np.dtype):
            raise _Fail

        def build(element):
            if isinstance(element, ast.List):
                return [build(e) for e in element.elts]
            return parse_scalar(_segment(source, element), dt)

        array = np.array(build(node.args[0]), dtype=dt)
        if "shape" in keywords:
            shape = _evaluate(keywords["shape"], source)
            if not isinstance(shape, tuple):
                raise _Fail
            array = array.reshape(shape)
        return array
    dt = _dtype_by_name(name)
    if dt is None or len(node.args) != 1 or node.keywords:
        raise _Fail
    return parse_scalar(_segment(source, node.args[0]), dt)


def parse_param_value(text: str):
    """Return the value of a param's text as the default printer writes it.

    Python literals (tuples, lists, dicts, numbers, strings in quotes, None,
    True/False, ``inf``/``nan``), dtype names (``float32`` gives an ``np.dtype``),
    numpy scalars (``float32(0.1)``) and arrays (``array([1, 2], dtype=int32)``);
    any other text is returned as the (stripped) string itself, e.g. ``<lambda>``.
    Nested jaxprs are read by the jaxpr parser, not here.
    """
    value = _evaluate_param_text(text)
    return text.strip() if value is _UNPARSED else value


# --- the parser ------------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BINDER_AHEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[ \t]*:")
_INT = re.compile(r"[0-9]+")
# The manual axes after a shape: varying, unreduced, reduced (``{V:x, U:(y,z)}``).
_MANUAL_AXES = re.compile(r"\{[VUR]:")
_MANUAL_PART = re.compile(r"([VUR]):(\([^)]*\)|[^,}]+)")
_TOKEN_TYPE = re.compile(r"Tok\b")
# key<fry>, PrimalTangentDType{i8/f32}: extended dtypes (and named ones: dtypes.py)
_DTYPE_NAME = re.compile(
    r"[A-Za-z][A-Za-z0-9_]*(?:<[A-Za-z0-9_]+>|\{[a-z0-9_]+/[a-z0-9_]+\})?(?:<(?:host|any)>)?"
)
# The memory space a type names after its dtype (pretty.format_aval prints all but Device).
_MEMORY_SPACE_SUFFIX = re.compile(r"<(host|any)>$")
# Primitive names may contain dashes (JAX's "scatter-add"); variable names never do.
_PRIMITIVE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")
_ATOM = re.compile(r"[^\s:,;()\[\]{}]+")
# JAX's reference syntax: a place ``a[...]`` starting an equation, a static index item
# (``...``, ``None``, an int, a slice ``1:``/``::2``) ended by ',' or ']', an int.
_REF_PLACE_AHEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
_REF_STATIC_ITEM = re.compile(
    r"(?:\.\.\.|None|-?[0-9]*:-?[0-9]*(?::-?[0-9]*)?|-?[0-9]+)(?=\s*[,\]])"
)
_REF_INT = re.compile(r"-?[0-9]+")
_COMPLEX = re.compile(r"\([^()\s]*\)")
_KEY_AHEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[ \t]*=(?!=)")
_LAMBDA_AHEAD = re.compile(r"\{\s*lambda\b")
_INLINE_WS = " \t\r\f\v"


class _ParseState(threading.local):
    def __init__(self):
        self.primitives: list[Mapping[str, Any] | None] = []


_state = _ParseState()


class _Parser:
    def __init__(self, text: str, primitives: Mapping[str, Any] | None):
        self.text = text
        self.pos = 0
        self.primitives = primitives
        self.scope: dict[str, Var] = {}
        # id(equation or binder Var) -> (it, text position): where the type check points.
        self.positions: dict[int, tuple[Any, int]] = {}

    # -- errors and low-level scanning --

    def location(self, pos: int) -> str:
        """Return ``line L, column C`` of a text position."""
        line_start = self.text.rfind("\n", 0, pos) + 1
        return f"line {self.text.count(chr(10), 0, pos) + 1}, column {pos - line_start + 1}"

    def locate(self, item) -> str | None:
        """Return ``"line L, column C: "`` of a parsed equation or binder (None for another)."""
        entry = self.positions.get(id(item))
        if entry is None or entry[0] is not item:
            return None
        return f"{self.location(entry[1])}: "

    def error(self, message: str, pos: int | None = None) -> JaxprParseError:
        pos = self.pos if pos is None else pos
        pos = min(pos, len(self.text))
        line_start = self.text.rfind("\n", 0, pos) + 1
        line_end = self.text.find("\n", pos)
        if line_end < 0:
            line_end = len(self.text)
        line_no = self.text.count("\n", 0, pos) + 1
        column = pos - line_start + 1
        line = self.text[line_start:line_end]
        start = max(0, column - 1 - 60)
        excerpt = ("..." if start else "") + line[start : start + 100].rstrip()
        caret = " " * (column - 1 - start + (3 if start else 0)) + "^"
        return JaxprParseError(
            f"line {line_no}, column {column}: {message}\n  {excerpt}\n  {caret}"
        )

    def skip(self, newlines: bool = True) -> None:
        """Skip whitespace and comments (and line breaks unless ``newlines`` is False)."""
        text, pos, n = self.text, self.pos, len(self.text)
        while pos < n:
            c = text[pos]
            if c in _INLINE_WS or (newlines and c == "\n"):
                pos += 1
            elif c == "#":
                end = text.find("\n", pos)
                pos = n if end < 0 else end
            else:
                break
        self.pos = pos

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def expect(self, literal: str, what: str | None = None) -> None:
        self.skip()
        if not self.text.startswith(literal, self.pos):
            raise self.error(f"expected {what or repr(literal)}, found {self.found()}")
        self.pos += len(literal)

    def expect_word(self, word: str) -> None:
        self.skip()
        m = _NAME.match(self.text, self.pos)
        if m is None or m.group() != word:
            raise self.error(f"expected '{word}', found {self.found()}")
        self.pos = m.end()

    def found(self) -> str:
        if self.at_end():
            return "the end of the text"
        m = _ATOM.match(self.text, self.pos)
        token = m.group() if m else self.peek()
        return "a line break" if token == "\n" else repr(token[:30])

    def match(self, pattern: re.Pattern, what: str) -> str:
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise self.error(f"expected {what}, found {self.found()}")
        self.pos = m.end()
        return m.group()

    def _skip_balanced(self, pos: int) -> int:
        """Return the position after the bracketed group opening at ``pos`` (or -1)."""
        depth, text, n = 0, self.text, len(self.text)
        while pos < n:
            c = text[pos]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0:
                    return pos + 1
            pos += 1
        return -1

    def at_in_keyword(self) -> bool:
        """Tell whether the ``in`` ending the equations starts here (not a var named ``in``)."""
        text, pos = self.text, self.pos
        if not text.startswith("in", pos):
            return False
        m = _NAME.match(text, pos)
        if m is None or m.group() != "in":
            return False
        saved = self.pos
        self.pos = m.end()
        self.skip()
        if self.peek() != "(":
            self.pos = saved
            return False
        end = self._skip_balanced(self.pos)
        self.pos = end if end >= 0 else len(text)
        self.skip()
        literal = self.peek() == ":"
        self.pos = saved
        return not literal

    # -- grammar --

    def jaxpr(self) -> Jaxpr:
        """jaxpr := '{' 'lambda' binders ';' binders '.' 'let' eqns 'in' atoms '}'."""
        outer_scope, self.scope = self.scope, {}
        try:
            self.expect("{", "'{' opening a jaxpr")
            self.expect_word("lambda")
            constvars = self.binders(";")
            invars = self.binders(".")
            self.expect_word("let")
            eqns = []
            while True:
                self.skip()
                while self.peek() == ";":
                    self.pos += 1
                    self.skip()
                if self.at_end():
                    raise self.error("the jaxpr ends before its 'in (...)' and '}'")
                m = _NAME.match(self.text, self.pos)
                if (
                    m is not None
                    and m.group() == "in"
                    and not _BINDER_AHEAD.match(self.text, self.pos)
                ):
                    break  # 'in' here is the keyword unless it is an output's binder 'in:...'
                if self.peek() == "}":
                    raise self.error("expected 'in (...)' before the '}' closing the jaxpr")
                eqns.append(self.eqn())
            self.expect_word("in")
            outvars = self.out_atoms()
            self.expect("}", "'}' closing the jaxpr")
        finally:
            self.scope = outer_scope
        return Jaxpr(constvars, invars, outvars, eqns)

    def binders(self, terminator: str) -> list[Var]:
        out: list[Var] = []
        while True:
            self.skip()
            if self.peek() == terminator:
                self.pos += 1
                return out
            m = _NAME.match(self.text, self.pos)
            if m is None or (
                m.group() in ("let", "in") and not _BINDER_AHEAD.match(self.text, self.pos)
            ):
                raise self.error(
                    f"expected a binder 'name:type' or '{terminator}', found {self.found()}"
                )
            binder_pos = self.pos
            name, aval = self.binder()
            var = Var(aval)
            self.positions[id(var)] = (var, binder_pos)
            self.define(name, var)
            out.append(var)

    def binder(self) -> tuple[str, Any]:
        name = self.match(_NAME, "a variable name")
        self.expect(":", f"':' and the type of '{name}'")
        return name, self.type()

    def type(self) -> Any:  # a ShapedArray, or abstract_token for 'Tok'
        self.skip()
        if self.text.startswith("Ref{", self.pos):  # a mutable array reference
            self.pos += 4
            inner = self.type()
            if self.peek() != "}":
                raise self.error(f"expected '}}' closing the Ref type, found {self.found()}")
            self.pos += 1
            return AbstractRef(inner)
        weak = self.peek() == "~"
        if weak:
            self.pos += 1
        start = self.pos
        if not weak and _TOKEN_TYPE.match(self.text, self.pos):
            self.pos += 3
            return abstract_token
        name = self.match(_DTYPE_NAME, "a dtype such as f32")
        # f32<host>[3]: the memory space follows the dtype (key<fry><host>[2] too)
        space_match = _MEMORY_SPACE_SUFFIX.search(name)
        space = MemorySpace.Device
        if space_match is not None:
            space = MemorySpace[space_match.group(1).capitalize()]
            name = name[: space_match.start()]
        try:
            dtype = dtypes.dtype_from_short_name(name)
        except ValueError:
            raise self.error(f"unknown dtype '{name}'", start) from None
        self.skip()
        if self.peek() != "[":
            raise self.error(f"expected '[' and the shape after '{name}', found {self.found()}")
        self.pos += 1
        shape = []
        self.skip()
        while self.peek() != "]":
            shape.append(int(self.match(_INT, "a dimension size")))
            self.skip()
            if self.peek() == ",":
                self.pos += 1
                self.skip()
            elif self.peek() != "]":
                raise self.error(f"expected ',' or ']' in a shape, found {self.found()}")
        self.pos += 1
        manual: dict[str, frozenset] = {}
        if _MANUAL_AXES.match(self.text, self.pos):  # {V:x}, {V:(x,y)}, {V:x, U:y}, {R:z}
            end = self.text.find("}", self.pos)
            if end < 0:
                raise self.error("expected '}' closing the manual axes")
            for part in _MANUAL_PART.finditer(self.text[self.pos + 1 : end]):
                names = part.group(2).strip("()")
                manual[part.group(1)] = frozenset(n.strip() for n in names.split(",") if n.strip())
            self.pos = end + 1
        return ShapedArray(
            tuple(shape),
            dtype,
            weak_type=weak,
            vma=manual.get("V", frozenset()),
            memory_space=space,
            manual_unreduced=manual.get("U", frozenset()),
            manual_reduced=manual.get("R", frozenset()),
        )

    def define(self, name: str, var: Var) -> None:
        if name != "_":
            self.scope[name] = var

    def eqn(self) -> JaxprEqn:
        start = self.pos
        out_binders = []
        if _REF_PLACE_AHEAD.match(self.text, self.pos) and self.ref_place_ends_eqn_head():
            return self.ref_eqn(start, [])  # a[0] <- b, a[0] += b
        while _BINDER_AHEAD.match(self.text, self.pos):
            out_binders.append((self.pos, *self.binder()))
            self.skip()
        if out_binders and self.peek() in ("<", ","):  # c <- a[0]; c, a[0] <- a[0], b
            return self.ref_eqn(start, out_binders)
        if out_binders:
            self.expect("=", "'=' after the equation's outputs")
            self.skip()
        name_pos = self.pos
        name = self.match(_PRIMITIVE_NAME, "a primitive name")
        primitive = self.primitive(name, name_pos)
        effects = self.effects() if self.peek() == "{" else None
        params = {}
        self.skip(newlines=False)
        if self.peek() == "[":
            params = self.params(primitive)
        invars = []
        while True:
            self.skip(newlines=False)
            c = self.peek()
            if c in ("", "\n", ";", "}") or self.at_in_keyword():
                break
            invars.append(self.atom())
        if not primitive.multiple_results and len(out_binders) != 1:
            raise self.error(
                f"primitive '{name}' has a single result but the equation binds "
                f"{len(out_binders)} outputs",
                start,
            )
        outvars = []
        for _, out_name, aval in out_binders:
            var = DropVar(aval) if out_name == "_" else Var(aval)
            self.define(out_name, var)
            outvars.append(var)
        defaults = _param_defaults.get(primitive)
        if defaults is not None:
            params = {**defaults(len(invars)), **params}
        if effects is not None and unprinted_effects:  # effects the text leaves out
            effects |= primitive_effects(primitive, params) & unprinted_effects
        eqn = JaxprEqn(primitive, invars, outvars, params, None, effects)
        self.positions[id(eqn)] = (eqn, start)
        return eqn

    # --- JAX's syntax of references' reads and writes (state.ref_syntax) ----------------

    def ref_place_ends_eqn_head(self) -> bool:
        """Tell whether the ``name[...]`` here is a reference place (``<-``/``+=`` follows)."""
        depth, i = 0, self.text.index("[", self.pos)
        while i < len(self.text):
            c = self.text[i]
            if c in "[(":
                depth += 1
            elif c in "])":
                depth -= 1
                if depth == 0:
                    rest = self.text[i + 1 :].lstrip(" \t")
                    return rest.startswith(("<-", "+="))
            elif c == "\n":
                return False
            i += 1
        return False

    def ref_primitive(self, kind: str, pos: int):
        for primitive, k in ref_syntax.items():
            if k == kind:
                return primitive
        raise self.error(f"no primitive reads JAX's reference syntax for '{kind}'", pos)

    def ref_place(self):
        """place := name '[' item (',' item)* ']'; return (ref, indexer, index operands)."""
        ref = self.atom_name()
        self.expect("[", "'[' opening a reference's index")
        indexer: list[str] = []
        operands: list = []
        while True:
            self.skip(newlines=False)
            m = _REF_STATIC_ITEM.match(self.text, self.pos)
            if m is not None:
                indexer.append(m.group(0))
                self.pos = m.end()
            elif self.text.startswith("ds(", self.pos):
                self.pos += 3
                m = _REF_INT.match(self.text, self.pos)
                if m is not None and self.text[m.end()] == ",":
                    head = m.group(0)
                    self.pos = m.end()
                else:
                    operands.append(self.atom())
                    head = "#"
                end = self.text.index(")", self.pos)
                indexer.append(f"ds({head}{self.text[self.pos : end]})")
                self.pos = end + 1
            else:
                operands.append(self.atom())
                indexer.append("#")
            self.skip(newlines=False)
            if self.peek() == "]":
                self.pos += 1
                return ref, tuple(indexer), operands
            self.expect(",", "',' or ']' in a reference's index")

    def atom_name(self):
        start = self.pos
        name = self.match(_NAME, "a reference variable")
        var = self.scope.get(name)
        if var is None:
            raise self.error(f"undefined variable '{name}'", start)
        return var

    def ref_eqn(self, start: int, out_binders: list) -> JaxprEqn:
        """An equation in JAX's reference syntax: a get, a swap or an addupdate."""
        if not out_binders:
            ref, indexer, index = self.ref_place()
            self.skip(newlines=False)
            outvars: list | None
            if self.text.startswith("+=", self.pos):
                kind, outvars = "addupdate", []
            else:
                self.expect("<-", "'<-' or '+=' after a reference place")
                kind, outvars = "swap", None
            self.skip(newlines=False)
            if kind == "addupdate":
                self.pos += 2
                self.skip(newlines=False)
            value = self.atom()
            primitive = self.ref_primitive(kind, start)
            if outvars is None:
                aval = primitive.abstract_eval(
                    ref.aval, value.aval, *(x.aval for x in index), indexer=indexer
                )
                outvars = [DropVar(aval)]
            invars = [ref, value, *index]
        elif self.peek() == "<":
            self.expect("<-", "'<-' after the read's output")
            self.skip(newlines=False)
            ref, indexer, index = self.ref_place()
            kind, invars = "get", [ref, *index]
            primitive = self.ref_primitive(kind, start)
            outvars = None
        else:
            self.expect(",", "',' before the swapped place")
            self.skip(newlines=False)
            ref, indexer, index = self.ref_place()
            self.skip(newlines=False)
            self.expect("<-", "'<-' in a swap")
            self.skip(newlines=False)
            self.ref_place()  # the same place again, as JAX prints it
            self.skip(newlines=False)
            self.expect(",", "',' before the swapped-in value")
            self.skip(newlines=False)
            value = self.atom()
            kind, invars = "swap", [ref, value, *index]
            primitive = self.ref_primitive(kind, start)
            outvars = None
        if outvars is None:
            if len(out_binders) != 1:
                raise self.error(f"a reference {kind} binds one output", start)
            _, out_name, aval = out_binders[0]
            var = DropVar(aval) if out_name == "_" else Var(aval)
            self.define(out_name, var)
            outvars = [var]
        eqn = JaxprEqn(primitive, invars, outvars, {"indexer": indexer}, None, None)
        self.positions[id(eqn)] = (eqn, start)
        return eqn

    def effects(self) -> frozenset:
        """effects := '{' name (',' name)* '}' right after the primitive's name."""
        start = self.pos
        end = self.text.find("}", start)
        if end < 0:
            raise self.error("the effects opened by '{' are not closed by '}'", start)
        found = []
        for name in self.text[start + 1 : end].split(","):
            effect = effects_by_name.get(name.strip())
            if effect is None:
                raise self.error(f"unknown effect '{name.strip()}'", start + 1)
            found.append(effect)
        self.pos = end + 1
        return frozenset(found)

    def primitive(self, name: str, pos: int):
        if self.primitives is not None:
            primitive = self.primitives.get(name)
            if primitive is None:
                raise self.error(f"unknown primitive '{name}' (not in the primitives= given)", pos)
            return primitive
        found: list[core.Primitive] = []
        for p in core.primitives_by_name.get(name, ()):
            if not any(p is q for q in found):
                found.append(p)
        if not found:
            raise self.error(f"unknown primitive '{name}'", pos)
        if len(found) > 1:
            raise self.error(
                f"{len(found)} different primitives are named '{name}'; pass "
                "parse_jaxpr(..., primitives={name: primitive, ...}) to choose",
                pos,
            )
        return found[0]

    def params(self, primitive) -> dict[str, Any]:
        self.pos += 1  # '['
        params: dict[str, Any] = {}
        while True:
            self.skip()
            if self.peek() == "]":
                self.pos += 1
                return params
            key_pos = self.pos
            if _NAME.match(self.text, self.pos) is None:
                raise self.error(f"expected a param 'name=value' or ']', found {self.found()}")
            key = self.match(_NAME, "a param name")
            if key in params:
                raise self.error(f"param '{key}' is given twice", key_pos)
            self.expect("=", f"'=' after param name '{key}'")
            self.skip(newlines=False)
            params[key] = self.param_value(primitive, key)

    def param_value(self, primitive, key: str):
        start = self.pos
        fn = _param_parsers.get((primitive, key))
        if fn is None:
            if _LAMBDA_AHEAD.match(self.text, self.pos):
                return self.nested_jaxpr(key)
            if self.peek() in "([":
                saved = self.pos
                closing = ")" if self.peek() == "(" else "]"
                self.pos += 1
                self.skip()
                if _LAMBDA_AHEAD.match(self.text, self.pos):
                    items = []
                    while True:
                        self.skip()
                        if self.peek() == ",":
                            self.pos += 1
                            continue
                        if self.peek() == closing:
                            self.pos += 1
                            break
                        if not _LAMBDA_AHEAD.match(self.text, self.pos):
                            raise self.error(
                                f"expected a nested jaxpr or '{closing}' in param '{key}', "
                                f"found {self.found()}"
                            )
                        items.append(self.nested_jaxpr(key))
                    return tuple(items) if closing == ")" else items
                self.pos = saved
        text = self.raw_value(key)
        if not text:
            raise self.error(f"param '{key}' has no value", start)
        if fn is None:
            return parse_param_value(text)
        try:
            return fn(text)
        except Exception as e:
            raise self.error(f"cannot read param '{key}': {type(e).__name__}: {e}", start) from e

    def nested_jaxpr(self, key: str) -> ClosedJaxpr:
        start = self.pos
        jaxpr = self.jaxpr()
        if jaxpr.constvars:
            raise self.error(
                f"the jaxpr in param '{key}' has constvars, whose values are not part of the "
                "text; register a param parser (e.g. parse_open_jaxpr) for it",
                start,
            )
        return ClosedJaxpr(jaxpr, ())

    def raw_value(self, key: str) -> str:
        """Scan a param value up to the next ``name=`` or ``]``; return it without comments."""
        text, n = self.text, len(self.text)
        pos, depth, pieces, piece_start = self.pos, 0, [], self.pos
        start = pos
        while pos < n:
            c = text[pos]
            if c in "'\"":
                end = pos + 1
                while end < n and text[end] != c:
                    end += 2 if text[end] == "\\" else 1
                if end >= n:
                    raise self.error(f"unterminated string in param '{key}'", pos)
                pos = end + 1
                continue
            if c == "#" and (pos == start or text[pos - 1] in " \t\n"):
                pieces.append(text[piece_start:pos])
                end = text.find("\n", pos)
                pos = piece_start = n if end < 0 else end
                continue
            if c in "([{":
                depth += 1
            elif c in ")}" or (c == "]" and depth > 0):
                depth -= 1
                if depth < 0:
                    raise self.error(f"unbalanced '{c}' in param '{key}'", pos)
            elif c == "]" and depth == 0:
                break
            elif c in " \t\r\n" and depth == 0:
                # The value ends where the next 'name=' or the closing ']' begins.
                self.pos = pos
                self.skip()
                if self.peek() == "]" or _KEY_AHEAD.match(text, self.pos):
                    break
            pos += 1
        else:
            raise self.error(f"param '{key}' is not closed by ']'", start)
        pieces.append(text[piece_start:pos])
        self.pos = pos
        return "".join(pieces).strip()

    def atom(self):
        start = self.pos
        if self.peek() == "(":
            token = self.match(_COMPLEX, "a complex literal such as (1+2j)")
        else:
            token = self.match(_ATOM, "a variable or a literal")
        self.skip(newlines=False)
        if self.peek() != ":":
            if token.startswith("("):
                raise self.error(f"the literal {token} needs a type, as in {token}:c64[]", start)
            var = self.scope.get(token)
            if var is None:
                raise self.error(f"undefined variable '{token}'", start)
            return var
        self.pos += 1
        type_pos = self.pos
        aval = self.type()
        if aval.shape != ():
            raise self.error(f"a literal must be a scalar, not {format_aval(aval)}", type_pos)
        try:
            value = parse_scalar(token, aval.dtype, aval.weak_type)
        except (ValueError, TypeError, OverflowError) as e:
            raise self.error(f"bad literal '{token}': {e}", start) from None
        return Literal(value, aval)

    def out_atoms(self) -> list:
        self.expect("(", "'(' and the jaxpr's outputs")
        outs: list[Any] = []
        while True:
            self.skip()
            if self.peek() == ")":
                self.pos += 1
                return outs
            outs.append(self.atom())
            self.skip()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != ")":
                raise self.error(f"expected ',' or ')' in the outputs, found {self.found()}")


def _run(text: str, primitives: Mapping[str, Any] | None) -> tuple[Jaxpr, _Parser]:
    if not isinstance(text, str):
        raise TypeError(f"parse_jaxpr takes the text of a jaxpr, got {type(text).__name__}")
    if primitives is None and _state.primitives:
        primitives = _state.primitives[-1]  # a param parser reading a nested jaxpr
    parser = _Parser(text, primitives)
    _state.primitives.append(primitives)
    try:
        parser.skip()
        if parser.at_end():
            raise parser.error("empty text: expected a jaxpr '{ lambda ... }'")
        jaxpr = parser.jaxpr()
        parser.skip()
        if not parser.at_end():
            raise parser.error(f"unexpected text after the jaxpr: {parser.found()}")
    finally:
        _state.primitives.pop()
    return jaxpr, parser


def parse_jaxpr(
    text: str,
    consts: Sequence[Any] = (),
    primitives: Mapping[str, Any] | None = None,
    *,
    check: bool = True,
) -> ClosedJaxpr:
    """Read the text of a jaxpr into a ClosedJaxpr (the inverse of ``str(closed_jaxpr)``).

    ``consts`` gives one value per constvar, in order: the values of constants
    are not part of the text. Primitive names are looked up in ``primitives``
    (name -> Primitive) when given, else among every primitive declared in the
    process (``core.primitives_by_name``). Raises JaxprParseError (a ValueError)
    with the line, column and an excerpt of the text when it cannot be read.

    The result is type-checked (``check_jaxpr``: each equation's declared output
    types against its primitive's abstract evaluation of the operand types, its
    params and operand count, scoping, shapes): an ill-typed program raises
    JaxprTypeError (a TypeError) naming the line and column of the equation.
    ``check=False`` skips this, for tools that want the raw syntax.
    """
    jaxpr, parser = _run(text, primitives)
    consts = list(consts)
    if len(consts) != len(jaxpr.constvars):
        types = " ".join(format_aval(v.aval) for v in jaxpr.constvars)
        raise ValueError(
            f"the jaxpr text declares {len(jaxpr.constvars)} constvars ({types}) but "
            f"{len(consts)} consts were given; constant values are not part of the text, "
            "so pass them as parse_jaxpr(text, consts=closed_jaxpr.consts)"
        )
    closed = ClosedJaxpr(jaxpr, consts)
    if check:
        _type_check(closed, parser)
    return closed


def parse_open_jaxpr(
    text: str, primitives: Mapping[str, Any] | None = None, *, check: bool = True
) -> Jaxpr:
    """Read the text of a jaxpr into a Jaxpr, leaving its constvars unbound.

    Register it as the parser of a param that holds a ``Jaxpr`` rather than a
    ``ClosedJaxpr``: ``register_param_parser(remat_p, "jaxpr", parse_open_jaxpr)``.
    Inside such a parse the enclosing ``primitives=`` mapping is used, and the
    enclosing parse type-checks the whole program; alone, the result is
    type-checked as by :func:`parse_jaxpr` unless ``check=False``.
    """
    nested = bool(_state.primitives)
    jaxpr, parser = _run(text, primitives)
    if check and not nested:
        _type_check(jaxpr, parser)
    return jaxpr


def _type_check(jaxpr, parser: _Parser) -> None:
    """Type-check a parsed program; errors start with the line and column of the equation."""
    check_jaxpr_located(jaxpr, parser.locate)
