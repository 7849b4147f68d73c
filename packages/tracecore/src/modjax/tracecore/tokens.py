"""Tokens: values that order side effects (JAX's ``core.Token`` and ``AbstractToken``).

A token carries no data; a program passes it from one effectful operation to the
next so that XLA keeps them in that order (``lax.create_token``, ``lax.after_all``).
Its abstract value is the one ``abstract_token``, printed ``Tok`` in jaxprs and
lowered to ``!stablehlo.token``. At run time a token is held as a ``Token`` around
a device buffer (an empty bool array, as in JAX), which the runtime passes to and
takes back from compiled programs.
"""

from __future__ import annotations

from typing import Any

from .abstract import AbstractValue, register_aval_handler

__all__ = ["AbstractToken", "abstract_token", "Token", "is_token_aval"]


class AbstractToken:
    """The abstract value of a token (``jax.core.AbstractToken``); ``abstract_token`` is the one."""

    __slots__ = ()

    def str_short(self, short_dtypes: bool = False) -> str:
        """Return ``'Tok'``, the token's type in jaxprs."""
        return "Tok"

    def to_tangent_aval(self) -> AbstractToken:
        """A token's tangent is a token (as in JAX)."""
        return self

    def strip_weak_type(self) -> AbstractToken:
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AbstractToken)

    def __hash__(self) -> int:
        return hash(AbstractToken)

    def __repr__(self) -> str:
        return "AbstractToken()"

    def __reduce__(self):
        return (_the_token, ())


AbstractValue.register(AbstractToken)
abstract_token = AbstractToken()


def _the_token() -> AbstractToken:
    return abstract_token


def is_token_aval(aval: Any) -> bool:
    """Tell whether ``aval`` is the token's abstract value."""
    return type(aval) is AbstractToken


class Token:
    """A concrete token (``jax.core.Token``): ``_buf`` is the device buffer standing for it."""

    __slots__ = ("_buf",)

    def __init__(self, buf: Any):
        self._buf = buf

    @property
    def aval(self) -> AbstractToken:
        """The token's abstract value, ``abstract_token``."""
        return abstract_token

    def block_until_ready(self) -> None:
        """Wait until the program that produced this token has run (returns None, as JAX's)."""
        self._buf.block_until_ready()


register_aval_handler(Token, lambda _: abstract_token)
register_aval_handler(AbstractToken, lambda aval: aval)  # make_jaxpr(f)(abstract_token)
