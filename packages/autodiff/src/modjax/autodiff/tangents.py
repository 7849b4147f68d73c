"""Tangent values, the rule tables, and the two array primitives autodiff owns.

A tangent (or cotangent) is either an array-like value or a *symbolic zero*
``Zero(aval)``: a promise that the value is zero, which costs nothing to carry
and which rules can skip. Integer and boolean values have tangents of dtype
``float0`` (a zero-size dtype), and those are always symbolic zeros inside the
machinery.

``jvp_rules`` and ``transpose_rules`` are the tables every primitive's author
fills (one line per primitive, next to its declaration); the helpers below
(``defjvp``, ``deflinear``, ...) write the common kinds of rules.

autodiff knows nothing of an array library, yet it must add tangents and make
zeros, so it declares ``add_any_p`` and ``zeros_like_p`` itself, with numpy
implementations. Their lowering to XLA belongs to the runtime package.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.tree_util import register_pytree_node

__all__ = [
    "Zero",
    "SymbolicZero",
    "to_symbolic_zero",
    "from_symbolic_zero",
    "UndefinedPrimal",
    "is_undefined_primal",
    "tangent_dtype",
    "tangent_aval",
    "zeros_like_aval",
    "instantiate_zeros",
    "add_tangents",
    "add_any_p",
    "zeros_like_p",
    "jvp_rules",
    "transpose_rules",
    "JvpRule",
    "TransposeRule",
    "defjvp",
    "defjvp2",
    "defjvp_zero",
    "deflinear",
    "defbilinear",
    "host_to_array",
    "register_host_to_array",
]

# rule(primals, tangents, **params) -> (primal_out, tangent_out). ``tangents`` may hold
# ``Zero``s (never all of them); a rule may return ``Zero`` for a tangent output. For
# ``multiple_results`` primitives both outputs are lists.
JvpRule = Callable[..., tuple]
# rule(cotangent, *args, **params) -> one cotangent or None per arg. Linear args are
# ``UndefinedPrimal(aval)``; the others are values. ``cotangent`` is a list (which may
# hold ``Zero``s) for ``multiple_results`` primitives, else a value (never ``Zero``).
TransposeRule = Callable[..., list]

jvp_rules: dict[Primitive, JvpRule] = {}
transpose_rules: dict[Primitive, TransposeRule] = {}


# How a concrete host value (a Python scalar or numpy array) becomes an array. A
# cotangent that meets no primitive (``grad(lambda x: x)(1.0)``) comes back as the seed
# made on the host, and a JVP tracer may carry host values that ``jvp`` was given.
# Autodiff alone makes no device arrays, so its DSL users keep the host value; the
# runtime installs its ``device_put`` here, so that modjax gives an Array where JAX does
# (see runtime's ``device_put_rules.py``).
_host_to_array: list[Callable] = [lambda x: x]


def register_host_to_array(rule: Callable) -> None:
    """Make autodiff pass concrete host values it hands out through ``rule``.

    ``rule`` takes a host scalar or numpy array (a seed cotangent that met no
    primitive, a primal or tangent ``jvp`` was given) and returns the concrete array
    a user should get; it keeps the dtype and weak type (Python scalars weak, as
    ``jax.device_put``). No JAX counterpart: JAX's autodiff makes device arrays itself.
    """
    _host_to_array[0] = rule


def host_to_array(x):
    """Return host value ``x`` as the registered rule makes it an array (itself by default)."""
    return _host_to_array[0](x)


class Zero:
    """A symbolic zero tangent or cotangent of type ``aval`` (jax's ``ad_util.Zero``).

    Rules receive it in place of an array known to be zero and may return it.
    """

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)

    @staticmethod
    def from_primal_value(value) -> Zero:
        """Return the symbolic zero tangent of a primal value (jax's ``p2tz``)."""
        return Zero(tangent_aval(to_aval(value)))

    def instantiate(self):
        """Return an array of zeros of this type (jax's ``Zero.instantiate``)."""
        return zeros_like_aval(self.aval)

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


# As in JAX, a Zero is a pytree node with no children (its aval is the node's data):
# trees of tangents skip it, and vmapping a function that returns one passes it through.
register_pytree_node(Zero, lambda z: ((), z.aval), lambda aval, _: Zero(aval))


class SymbolicZero(Zero):
    """What ``symbolic_zeros`` custom rules get for an unperturbed value (JAX's ``SymbolicZero``).

    Unlike ``Zero``, it is a pytree leaf, so a rule's ``tree_map`` over its tangents
    or cotangents sees it. Rules may return it; the machinery reads it as a ``Zero``.
    """

    __slots__ = ()

    def __getattr__(self, name):
        # As JAX's: other attributes are the aval's (``weak_type``, ``size``, ...).
        try:
            return getattr(self.aval, name)
        except AttributeError:
            raise AttributeError(f"SymbolicZero has no attribute {name}") from None

    @staticmethod
    def from_primal_value(value) -> SymbolicZero:
        """Return the symbolic zero tangent of a primal value."""
        return SymbolicZero(tangent_aval(to_aval(value)))

    def __repr__(self) -> str:
        return "SymbolicZero"


def to_symbolic_zero(value):
    """Return ``value`` with a ``Zero`` made a ``SymbolicZero``, for a user's rule."""
    return SymbolicZero(value.aval) if type(value) is Zero else value


def from_symbolic_zero(value):
    """Return ``value`` with a ``SymbolicZero`` from a user's rule made a ``Zero``."""
    return Zero(value.aval) if type(value) is SymbolicZero else value


class UndefinedPrimal:
    """A linear input of an equation being transposed (jax's ``ad.UndefinedPrimal``)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x) -> bool:
    """Tell whether ``x`` stands for a linear input in a transpose rule (ad.is_undefined_primal)."""
    return type(x) is UndefinedPrimal


def tangent_dtype(dtype) -> np.dtype:
    """Return the tangent dtype of a primal dtype: itself if inexact, else ``float0``.

    An extended dtype with a ``tangent_dtype`` (``primal_tangent_dtype``) names its own.

    Counterpart of jax's ``core.primal_dtype_to_tangent_dtype``.
    """
    own = getattr(dtype, "tangent_dtype", None)  # an extended dtype naming its tangents
    if own is not None:
        return own
    dt = np.dtype(dtype)
    return dt if dtypes.issubdtype(dt, np.inexact) else dtypes.float0


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Return the type of tangents of values of type ``aval`` (jax's ``to_tangent_aval``).

    A token's tangent type is the token's (as in JAX)."""
    return aval.to_tangent_aval()


def zeros_like_aval(aval: ShapedArray):
    """Return zeros of type ``aval`` (jax's ``zeros_like_aval``); float0 zeros are numpy's."""
    if type(aval) is not AbstractToken and aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return zeros_like_p.bind(aval=aval)  # a token's "zero" is a new token


def instantiate_zeros(tangent):
    """Turn a symbolic ``Zero`` into an array of zeros (ad.instantiate_zeros); keep the rest."""
    if type(tangent) is Zero:
        return zeros_like_aval(tangent.aval)
    return tangent


def add_tangents(x, y):
    """Add two tangents of the same type, skipping symbolic zeros (jax's ``add_tangents``)."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


# --- add_any and zeros_like -------------------------------------------------------------

add_any_p = Primitive("add_any")


def _add_any_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError(
            "add_any: tangents to add must have the same shape and dtype, got "
            f"{x.str_short()} and {y.str_short()}"
        )
    return y if x.weak_type else x


def _add_any_impl(x, y):
    aval = _add_any_abstract_eval(to_aval(x), to_aval(y))
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return np.asarray(np.add(x, y), dtype=aval.dtype)


add_any_p.def_impl(_add_any_impl)
add_any_p.def_abstract_eval(_add_any_abstract_eval)

zeros_like_p = Primitive("zeros_like")


def _zeros_like_impl(*, aval: ShapedArray):
    return np.zeros(aval.shape, aval.dtype)


zeros_like_p.def_impl(_zeros_like_impl)
zeros_like_p.def_abstract_eval(lambda *, aval: aval)


def _add_any_jvp(primals, tangents):
    return add_any_p.bind(*primals), add_tangents(*tangents)


def _add_any_transpose(ct, x, y):
    return [ct if is_undefined_primal(x) else None, ct if is_undefined_primal(y) else None]


jvp_rules[add_any_p] = _add_any_jvp
transpose_rules[add_any_p] = _add_any_transpose
# zeros_like has no operands, so no trace ever asks for its rules; these complete it.
jvp_rules[zeros_like_p] = lambda primals, tangents, *, aval: (
    zeros_like_p.bind(aval=aval),
    Zero(tangent_aval(aval)),
)
transpose_rules[zeros_like_p] = lambda ct, *, aval: []


def _register_aval_param_text() -> None:
    """Print ``zeros_like``'s ``aval`` param as a type (``f32[3]``) and read it back."""
    import re

    from modjax.tracecore.parse import register_param_parser
    from modjax.tracecore.pretty import format_aval, register_param_printer

    pattern = re.compile(r"\s*(~?)(\w+)\[([\d,\s]*)\]\s*")

    def parse(text: str) -> ShapedArray:
        match = pattern.fullmatch(text)
        if match is None:
            raise ValueError(f"expected a type such as f32[3], got {text!r}")
        weak, name, dims = match.groups()
        shape = tuple(int(d) for d in dims.split(",") if d.strip())
        return ShapedArray(shape, dtypes.dtype_from_short_name(name), weak_type=bool(weak))

    register_param_printer(zeros_like_p, "aval", format_aval)
    register_param_parser(zeros_like_p, "aval", parse)


_register_aval_param_text()


# --- helpers for rule authors -----------------------------------------------------------


def _zero_tangents_out(primitive: Primitive, out):
    if primitive.multiple_results:
        return [Zero.from_primal_value(x) for x in out]
    return Zero.from_primal_value(out)


def defjvp(primitive: Primitive, *jvp_fns: Callable | None) -> None:
    """Give ``primitive`` a JVP rule made of one function per operand (jax's ``ad.defjvp``).

    ``jvp_fns[i](g, *primals, **params)`` returns the output tangent due to tangent
    ``g`` of operand ``i``; None marks an operand that is not differentiable. The
    contributions of the operands with nonzero tangents are added.
    """
    jvp_rules[primitive] = functools.partial(_standard_jvp, primitive, jvp_fns, False)


def defjvp2(primitive: Primitive, *jvp_fns: Callable | None) -> None:
    """Give ``primitive`` a ``defjvp`` rule whose functions also get the output (``ad.defjvp2``).

    ``jvp_fns[i](g, ans, *primals, **params)``: useful when the derivative reuses the
    result (for ``exp``, the derivative is ``g * ans``).
    """
    jvp_rules[primitive] = functools.partial(_standard_jvp, primitive, jvp_fns, True)


def _standard_jvp(primitive, jvp_fns, with_ans, primals, tangents, **params):
    ans = primitive.bind(*primals, **params)
    out = Zero.from_primal_value(ans)
    for fn, t in zip(jvp_fns, tangents, strict=False):
        if fn is None or type(t) is Zero:
            continue
        term = fn(t, ans, *primals, **params) if with_ans else fn(t, *primals, **params)
        out = add_tangents(out, term)
    return ans, out


def defjvp_zero(primitive: Primitive) -> None:
    """Declare ``primitive`` non-differentiable: its output tangents are symbolic zeros.

    Integer and boolean outputs get ``float0`` zeros (jax's ``ad.defjvp_zero``).
    """

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        return out, _zero_tangents_out(primitive, out)

    jvp_rules[primitive] = rule


def deflinear(primitive: Primitive, transpose_rule: TransposeRule) -> None:
    """Declare ``primitive`` linear in all operands, with ``transpose_rule`` (``ad.deflinear``).

    The JVP applies the primitive to the tangents (zeros instantiated); the transpose
    rule has the ``transpose_rules`` signature ``rule(ct, *args, **params)``.
    """

    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, _zero_tangents_out(primitive, out)
        return out, primitive.bind(*map(instantiate_zeros, tangents), **params)

    jvp_rules[primitive] = rule
    transpose_rules[primitive] = transpose_rule


def defbilinear(prim: Primitive, lhs_rule: Callable, rhs_rule: Callable) -> None:
    """Declare a binary ``prim`` linear in each operand separately (``ad.defbilinear``).

    Its JVP is ``f(tx, y) + f(x, ty)``. When transposing, ``lhs_rule(ct, x, y, **params)``
    gives the cotangent of ``x`` (an ``UndefinedPrimal``) and ``rhs_rule`` that of ``y``.
    """
    primitive = prim
    defjvp(
        primitive,
        lambda g, x, y, **params: primitive.bind(g, y, **params),
        lambda g, x, y, **params: primitive.bind(x, g, **params),
    )

    def transpose(ct, x, y, **params):
        if is_undefined_primal(x) and is_undefined_primal(y):
            # Only linear_transpose of a function that is not linear gets here (JAX
            # fails an internal assertion).
            raise TypeError(
                f"Cannot transpose '{primitive.name}' of two linear operands (such as "
                "x * x): the function being transposed is not linear in its inputs."
            )
        return [
            lhs_rule(ct, x, y, **params) if is_undefined_primal(x) else None,
            rhs_rule(ct, x, y, **params) if is_undefined_primal(y) else None,
        ]

    transpose_rules[primitive] = transpose
