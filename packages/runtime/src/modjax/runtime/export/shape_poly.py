"""Symbolic dimensions: JAX's ``symbolic_shape`` text, its values and checks.

A dimension in an Exported's avals is an ``int`` or a ``DimExpr``: an expression
over dimension variables written as JAX writes them (``b``, ``2*b``, ``b + 1``,
``floordiv(b, 2)``, ``mod(b, 2)``, ``max(a, b)``, ``min(a, b)``, ``-b``). A
deserialized artifact keeps the text; calling it binds each variable from the
actual argument shapes and evaluates the output shapes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from modjax.tracecore.core import InconclusiveDimensionOperation

__all__ = [
    "DimExpr",
    "SymbolicScope",
    "check_one_scope",
    "symbolic_shape",
    "is_symbolic_dim",
    "bind_dim_vars",
    "evaluate_shape",
]

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "max": max,
    "min": min,
}


class SymbolicScope:
    """The scope of dimension variables: symbolic dimensions of one scope go together.

    The counterpart of ``jax.export.SymbolicScope``. ``symbolic_shape`` makes a
    new scope per call unless given one, so the shapes of several arguments must
    share a scope (``symbolic_args_specs`` does); comparing or exporting
    dimensions of different scopes raises JAX's ValueError. ``constraints_str``
    (``"a >= 4"``, ...) are not supported yet: NotImplementedError.
    """

    __slots__ = ("constraints_str", "_where")

    def __init__(self, constraints_str: Sequence[str] = ()):
        if isinstance(constraints_str, str):
            raise ValueError(
                f"The symbolic constraints should be a sequence of strings. Got {constraints_str!r}"
            )
        self.constraints_str = tuple(constraints_str)
        if self.constraints_str:
            raise NotImplementedError(
                f"symbolic shape constraints are not supported yet: {list(self.constraints_str)}"
            )
        from modjax.tracecore import source_info

        frame = source_info.user_frame()
        self._where = str(frame) if frame is not None else "<unknown>"

    def __repr__(self) -> str:
        return f"{id(self)} created at {self._where}"

    __str__ = __repr__

    def _check_same_scope(self, other: DimExpr, when: str, self_desc: str = "") -> None:
        if other.scope is not None and other.scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\n"
                f"Expected {self_desc} scope {self}\n"
                f"and found for '{other}' (unknown) scope {other.scope}\n"
                "See https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#user-specified-symbolic-constraints."
            )


class DimExpr:
    """A symbolic dimension (``jax.export`` dimension expression), compared by its text."""

    __slots__ = ("text", "_tree", "scope")
    _symbolic_dim = True  # tracecore's ShapeDtypeStruct keeps such dimensions as they are

    def __init__(self, text: str, scope: SymbolicScope | None = None):
        self.text = text.strip()
        self._tree = _Parser(self.text).expression_to_end()
        self.scope = scope  # None: read back from an artifact, goes with any scope

    def variables(self) -> set[str]:
        """Return the names of the dimension variables in this expression."""
        return _variables(self._tree)

    def evaluate(self, env: dict[str, int]) -> int:
        """Return the value of the expression for the given variables' values."""
        return _evaluate(self._tree, env)

    @property
    def is_variable(self) -> bool:
        return self._tree[0] == "var"

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, DimExpr) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def bounds(self) -> tuple[float, float]:
        """Return (lowest, highest) values, every dimension variable being at least 1 (as JAX)."""
        return _bounds(self._tree)

    def _compare(self, other, op: str) -> bool:
        """Decide ``self op other`` for every value of the variables, or raise (as JAX does)."""
        if isinstance(other, DimExpr):
            if self.scope is not None:
                self.scope._check_same_scope(other, f"when comparing '{self}' {op} '{other}'")
            other_lo, other_hi = other.bounds()
        elif isinstance(other, int):
            other_lo = other_hi = other
        else:
            return NotImplemented
        lo, hi = self.bounds()
        low, high = lo - other_hi, hi - other_lo  # the range of self - other
        if isinstance(other, DimExpr) and other.text == self.text:
            low = high = 0
        decided = {
            ">=": (low >= 0, high < 0),
            ">": (low > 0, high <= 0),
            "<=": (high <= 0, low > 0),
            "<": (high < 0, low >= 0),
        }[op]
        if decided[0]:
            return True
        if decided[1]:
            return False
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension comparison '{self}' {op} '{other}' is inconclusive.\n"
            "This error arises for comparison operations with shapes that are non-constant, "
            "and the result of the operation cannot be represented as a boolean value for "
            "all values of the symbolic dimensions involved."
        )

    def __ge__(self, other):
        return self._compare(other, ">=")

    def __gt__(self, other):
        return self._compare(other, ">")

    def __le__(self, other):
        return self._compare(other, "<=")

    def __lt__(self, other):
        return self._compare(other, "<")


def check_one_scope(shapes: Sequence[Sequence[Any]], fun_name: str) -> None:
    """Raise JAX's ValueError if the symbolic dimensions of ``shapes`` come from two scopes."""
    first: DimExpr | None = None
    for shape in shapes:
        for d in shape:
            if not isinstance(d, DimExpr) or d.scope is None:
                continue
            if first is None:
                first = d
            else:
                first.scope._check_same_scope(d, f"when exporting {fun_name}")  # type: ignore[union-attr]


def is_symbolic_dim(p: Any) -> bool:
    """Tell whether ``p`` is a symbolic dimension (``jax.export.is_symbolic_dim``)."""
    return isinstance(p, DimExpr)


class _Parser:
    """Recursive descent over ``+ - *``, parentheses, integers, names and calls."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = [t for t in _TOKEN.findall(text) if any(t)]
        self.i = 0

    def error(self, what: str) -> ValueError:
        return ValueError(f"syntax error in symbolic shape {self.text!r}: {what}")

    def peek(self) -> str | None:
        if self.i >= len(self.tokens):
            return None
        number, name, other = self.tokens[self.i]
        return number or name or other

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise self.error("unexpected end")
        self.i += 1
        return token

    def expression_to_end(self):
        tree = self.expression()
        if self.peek() is not None:
            raise self.error(f"unexpected {self.peek()!r}")
        return tree

    def expression(self):
        tree = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            tree = (op, tree, self.term())
        return tree

    def term(self):
        tree = self.factor()
        while self.peek() == "*":
            self.take()
            tree = ("*", tree, self.factor())
        return tree

    def factor(self):
        token = self.take()
        if token == "-":
            return ("neg", self.factor())
        if token == "(":
            tree = self.expression()
            if self.take() != ")":
                raise self.error("missing ')'")
            return tree
        if token.isdigit():
            return ("int", int(token))
        if token[0].isalpha() or token[0] == "_":
            if self.peek() != "(":
                return ("var", token)
            if token not in _FUNCTIONS:
                raise self.error(f"unknown function {token!r}")
            self.take()
            args = [self.expression()]
            while self.peek() == ",":
                self.take()
                args.append(self.expression())
            if self.take() != ")":
                raise self.error("missing ')'")
            return ("call", token, *args)
        raise self.error(f"unexpected {token!r}")


def _variables(tree) -> set[str]:
    if tree[0] == "var":
        return {tree[1]}
    if tree[0] == "int":
        return set()
    start = 2 if tree[0] == "call" else 1
    return set().union(*(_variables(t) for t in tree[start:]))


_BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
_INF = float("inf")


def _bounds(tree) -> tuple[float, float]:
    """Interval of an expression's values with each variable in [1, inf)."""
    kind = tree[0]
    if kind == "int":
        return tree[1], tree[1]
    if kind == "var":
        return 1, _INF
    if kind == "neg":
        lo, hi = _bounds(tree[1])
        return -hi, -lo
    if kind == "call" and tree[1] in ("max", "min"):
        pick = max if tree[1] == "max" else min
        (alo, ahi), (blo, bhi) = _bounds(tree[2]), _bounds(tree[3])
        return pick(alo, blo), pick(ahi, bhi)
    if kind in ("+", "-"):
        (alo, ahi), (blo, bhi) = _bounds(tree[1]), _bounds(tree[2])
        return (alo + blo, ahi + bhi) if kind == "+" else (alo - bhi, ahi - blo)
    if kind == "*":
        (alo, ahi), (blo, bhi) = _bounds(tree[1]), _bounds(tree[2])
        if alo >= 0 and blo >= 0:
            return alo * blo, ahi * bhi
    return -_INF, _INF


def _evaluate(tree, env: dict[str, int]) -> int:
    kind = tree[0]
    if kind == "int":
        return tree[1]
    if kind == "var":
        if tree[1] not in env:
            raise ValueError(f"dimension variable {tree[1]!r} has no value")
        return env[tree[1]]
    if kind == "neg":
        return -_evaluate(tree[1], env)
    if kind == "call":
        return _FUNCTIONS[tree[1]](*(_evaluate(t, env) for t in tree[2:]))
    return _BINARY[kind](_evaluate(tree[1], env), _evaluate(tree[2], env))


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_dim(text: str) -> int | DimExpr:
    """Return an int for an integer text, a DimExpr otherwise."""
    text = text.strip()
    return int(text) if re.fullmatch(r"\d+", text) else DimExpr(text)


def symbolic_shape(
    shape_spec: str | None,
    *,
    constraints: Sequence[str] = (),
    scope: Any = None,
    like: Sequence[int | None] | None = None,
) -> tuple[int | DimExpr, ...]:
    """Parse a shape such as ``"b, 3"`` or ``"(b, 2*b)"`` (``jax.export.symbolic_shape``).

    ``_`` takes the size from ``like``; ``...`` stands for the rest of ``like``.
    ``scope`` (a SymbolicScope) puts the dimensions in an existing scope, else a
    new one is made (with ``constraints``, which are not supported yet).
    """
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    elif not isinstance(scope, SymbolicScope):
        raise TypeError(f"symbolic_shape: scope must be a SymbolicScope, got {scope!r}")
    text = (shape_spec or "").strip()
    if text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1]
    parts = [p.strip() for p in _split_top_level(text)] if text.strip() else []
    if parts and parts[-1] == "":
        parts.pop()  # "b," is a one-dimensional shape
    dims: list[int | DimExpr | None] = []
    for i, part in enumerate(parts):
        if part == "...":
            if like is None or i != len(parts) - 1:
                raise ValueError(
                    f"symbolic_shape {shape_spec!r}: '...' needs `like` and must be last"
                )
            dims.extend(like[i:])
        elif part == "_":
            if like is None or i >= len(like) or like[i] is None:
                raise ValueError(f"symbolic_shape {shape_spec!r}: '_' needs a known size in `like`")
            dims.append(like[i])
        else:
            dim = parse_dim(part)
            if isinstance(dim, DimExpr):
                dim.scope = scope
            dims.append(dim)
    if like is not None and "..." not in parts and len(dims) != len(like):
        raise ValueError(
            f"symbolic_shape {shape_spec!r} has rank {len(dims)}, `like` has rank {len(like)}"
        )
    # A None comes from a size `like` leaves unknown after "...".
    return tuple(dims)  # type: ignore[arg-type]


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += (c == "(") - (c == ")")
        if depth < 0:
            return False
    return depth == 0


def bind_dim_vars(
    expected: Sequence[Sequence[int | DimExpr]], actual: Sequence[Sequence[int]], what: str
) -> dict[str, int]:
    """Return each dimension variable's value, read where it stands alone in ``expected``.

    Every dimension is then checked against ``actual``; a mismatch raises
    ValueError naming ``what`` (the function) and the argument.
    """
    env: dict[str, int] = {}
    for i, (exp_shape, act_shape) in enumerate(zip(expected, actual, strict=True)):
        if len(exp_shape) != len(act_shape):
            raise ValueError(
                f"{what}: argument {i} has shape {tuple(act_shape)}, expected rank "
                f"{len(exp_shape)} ({_shape_text(exp_shape)})"
            )
        for d, a in zip(exp_shape, act_shape, strict=True):
            if isinstance(d, DimExpr) and d.is_variable:
                env.setdefault(d.text, a)
    for i, (exp_shape, act_shape) in enumerate(zip(expected, actual, strict=True)):
        for d, a in zip(exp_shape, act_shape, strict=True):
            value = d.evaluate(env) if isinstance(d, DimExpr) else d
            if value != a:
                raise ValueError(
                    f"{what}: argument {i} has shape {tuple(act_shape)}, expected "
                    f"{_shape_text(exp_shape)}" + (f" with {_env_text(env)}" if env else "")
                )
    return env


def evaluate_shape(shape: Sequence[int | DimExpr], env: dict[str, int]) -> tuple[int, ...]:
    """Return ``shape`` with each symbolic dimension evaluated in ``env``."""
    return tuple(d.evaluate(env) if isinstance(d, DimExpr) else d for d in shape)


def _shape_text(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _env_text(env: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items())


def symbolic_args_specs(args, shapes_specs, constraints: Sequence[str] = (), scope=None):
    """Return ShapeDtypeStructs of ``args`` with symbolic shapes (``export.symbolic_args_specs``).

    ``shapes_specs`` is one shape text for every argument, None (the actual
    shapes), or a pytree prefix of ``args`` with a text (or None) per subtree.
    """
    from modjax.tracecore.abstract import ShapeDtypeStruct, get_aval
    from modjax.tracecore.tree_util import tree_flatten, tree_structure, tree_unflatten

    leaves, tree = tree_flatten(args)
    if scope is None:  # one scope for all the arguments, as JAX
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    if shapes_specs is None or isinstance(shapes_specs, str):
        specs = [shapes_specs] * len(leaves)
    else:
        prefix = tree_structure(shapes_specs, is_leaf=lambda x: x is None or isinstance(x, str))
        per_subtree = tree_flatten(shapes_specs, is_leaf=lambda x: x is None)[0]
        specs = []
        for spec, subtree in zip(per_subtree, prefix.flatten_up_to(args), strict=True):
            specs += [spec] * len(tree_flatten(subtree)[0])
    out = []
    for leaf, spec in zip(leaves, specs, strict=True):
        aval = get_aval(leaf) if not isinstance(leaf, ShapeDtypeStruct) else leaf
        shape = aval.shape if spec is None else symbolic_shape(spec, scope=scope, like=aval.shape)
        out.append(ShapeDtypeStruct(shape, aval.dtype))
    return tree_unflatten(tree, out)
