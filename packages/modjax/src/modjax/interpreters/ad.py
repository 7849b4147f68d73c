"""JVP and transpose rules in JAX's names (jax.interpreters.ad), on modjax.autodiff's tables.

``primitive_jvps`` is modjax's ``jvp_rules`` and ``primitive_transposes`` its
``transpose_rules``, so a rule put in either through this module is the rule
``grad``, ``jvp`` and ``vjp`` use. The rule signatures are JAX's:
``jvp(primals, tangents, **params) -> (primal_out, tangent_out)`` and
``transpose(ct, *args, **params) -> one cotangent or None per operand``.
"""

from __future__ import annotations

from collections.abc import Callable

from modjax.autodiff import (
    JVPTrace,
    JVPTracer,
    UndefinedPrimal,
    Zero,
    add_any_p,
    add_tangents,
    defbilinear,
    defjvp,
    defjvp2,
    instantiate_zeros,
    is_undefined_primal,
    jvp_rules,
    transpose_rules,
    zeros_like_aval,
)
from modjax.autodiff import deflinear as _deflinear
from modjax.tracecore.core import Primitive

from .._unsupported import Unsupported

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "UndefinedPrimal",
    "Zero",
    "add_jaxvals",
    "add_jaxvals_p",
    "add_tangents",
    "defbilinear",
    "defjvp",
    "defjvp2",
    "deflinear",
    "deflinear2",
    "get_primitive_transpose",
    "instantiate_zeros",
    "is_undefined_primal",
    "jvp",
    "linearize",
    "primitive_jvps",
    "primitive_transposes",
    "zeros_like_aval",
]

#: JVP rules by primitive (modjax.autodiff's ``jvp_rules``).
primitive_jvps = jvp_rules
#: Transpose rules by primitive (modjax.autodiff's ``transpose_rules``).
primitive_transposes = transpose_rules
#: The primitive that adds tangents (modjax's ``add_any``).
add_jaxvals_p = add_any_p


def add_jaxvals(x, y):
    """Add two tangent values with the tangent addition primitive (jax's ``ad.add_jaxvals``)."""
    return add_any_p.bind(x, y)


def deflinear(primitive: Primitive, transpose_rule: Callable) -> None:
    """Declare ``primitive`` linear, with ``transpose_rule(ct, **params)`` (jax's ``ad.deflinear``).

    The transpose rule gets the cotangent and the params only (no operands) and
    returns one cotangent per operand; :func:`deflinear2` passes the operands too.
    """
    _deflinear(primitive, lambda ct, *args, **params: transpose_rule(ct, **params))


def deflinear2(primitive: Primitive, transpose_rule: Callable) -> None:
    """Declare ``primitive`` linear, with ``transpose_rule(ct, *args, **params)`` (deflinear2).

    The operands arrive as in any transpose rule: the linear ones as
    ``UndefinedPrimal``.
    """
    _deflinear(primitive, transpose_rule)


def get_primitive_transpose(p: Primitive) -> Callable:
    """Return ``p``'s transpose rule (jax's ``ad.get_primitive_transpose``).

    Raise NotImplementedError naming the primitive when it has none.
    """
    try:
        return transpose_rules[p]
    except KeyError as err:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{p}' not implemented"
        ) from err


_WRAPPED = (
    "JAX's transformation of a linear_util.WrappedFun; use modjax.jvp / modjax.linearize "
    "(or modjax.autodiff.jvp_flat, linearize_flat on flat arrays)"
)
jvp = Unsupported("jax.interpreters.ad.jvp", _WRAPPED)
linearize = Unsupported("jax.interpreters.ad.linearize", _WRAPPED)
