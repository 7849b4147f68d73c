"""Tokens as user values: ``create_token`` and ``after_all`` (JAX's experimental token API).

A token orders side effects: an operation that takes one runs after the operations
that produced it. ``create_token`` makes a token that depends on nothing and
``after_all`` one that depends on all of its operands. Tokens have no derivative
and no batch dimension: under ``grad`` their tangent is a symbolic zero and under
``vmap`` they stay unbatched.
"""

from __future__ import annotations

from functools import partial

from modjax.autodiff import Zero, jvp_rules
from modjax.batching import batching_rules, not_mapped
from modjax.lowering import hlo, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore.core import Primitive
from modjax.tracecore.tokens import abstract_token, is_token_aval

__all__ = ["create_token", "create_token_p", "after_all", "after_all_p"]

create_token_p = Primitive("create_token")
create_token_p.def_abstract_eval(lambda *_: abstract_token)
create_token_p.def_impl(partial(apply_primitive, create_token_p))


def _after_all_abstract_eval(*operands):
    if not all(is_token_aval(x) for x in operands):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


after_all_p = Primitive("after_all")
after_all_p.def_abstract_eval(_after_all_abstract_eval)
after_all_p.def_impl(partial(apply_primitive, after_all_p))

register_lowering(create_token_p, lambda ctx: hlo.create_token())
register_lowering(after_all_p, lambda ctx, *tokens: hlo.after_all(list(tokens)))


def _token_jvp(primitive, primals, tangents):
    return primitive.bind(*primals), Zero(abstract_token)


jvp_rules[create_token_p] = partial(_token_jvp, create_token_p)
jvp_rules[after_all_p] = partial(_token_jvp, after_all_p)
batching_rules[create_token_p] = lambda args, dims: (create_token_p.bind(), not_mapped)
batching_rules[after_all_p] = lambda args, dims: (after_all_p.bind(*args), not_mapped)


def create_token(_=None):
    """Return a new token that depends on nothing (jax.lax.create_token).

    The argument is ignored, as in JAX, where it exists for backward compatibility.
    """
    return create_token_p.bind()


def after_all(*operands):
    """Return a token that depends on every token in ``operands`` (jax.lax.after_all).

    Raises TypeError when an operand is not a token.
    """
    return after_all_p.bind(*operands)
