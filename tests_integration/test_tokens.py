"""Tokens as user values (``lax.create_token``, ``lax.after_all``), as in JAX 0.10.2.

Known answers come from JAX 0.10.2 (``/work/jaxref/bin/python``); the printed and
lowered programs are compared in ``test_jax_texts.py``. Where JAX 0.10.2 fails with
an internal error (tokens through ``jvp``, ``cond``, ``while``, ``scan`` carries and
``vmap`` outputs), modjax runs them: a token has no tangent and no batch dimension.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.tracecore import AbstractToken, Token, abstract_token, parse_jaxpr

TOKEN = lax.create_token()


def test_a_token_is_a_value_with_an_empty_buffer_and_the_token_type():
    assert type(TOKEN) is Token and lax.create_token(5) is not TOKEN  # the argument is ignored
    assert TOKEN._buf.shape == (0,) and TOKEN._buf.dtype == np.bool_
    assert TOKEN.block_until_ready() is None and jax.block_until_ready(TOKEN) is TOKEN
    assert jax.typeof(TOKEN) is abstract_token and repr(abstract_token) == "AbstractToken()"
    assert isinstance(jax.typeof(TOKEN), AbstractToken) and hash(abstract_token) is not None
    assert type(lax.after_all(TOKEN, TOKEN)) is Token and type(lax.after_all()) is Token
    assert type(jax.device_put(TOKEN)) is Token
    assert jax.eval_shape(lambda t: lax.after_all(t), TOKEN) == abstract_token
    assert lax.create_token_p.name == "create_token" and lax.after_all_p.name == "after_all"
    assert not lax.create_token_p.multiple_results and not lax.after_all_p.multiple_results


def test_tokens_pass_through_jit_in_pytrees():
    step = jax.jit(lambda t, x: (lax.after_all(t), x + 1))
    for _ in range(2):  # the second call is a cache hit
        token, x = step(TOKEN, 1.0)
        assert type(token) is Token and float(x) == 2.0
    out = jax.jit(lambda d: d)({"a": TOKEN, "b": 1.0})
    assert type(out["a"]) is Token and float(out["b"]) == 1.0
    assert type(jax.jit(lambda: lax.create_token())()) is Token
    assert jax.tree.leaves({"a": TOKEN}) == [TOKEN]
    # a closed-over token is made inside the program (create_token), not passed in
    token, y = jax.jit(lambda x: (lax.after_all(TOKEN), x * jnp.arange(3.0)))(2.0)
    assert type(token) is Token and y.tolist() == [0.0, 2.0, 4.0]


def test_tokens_print_and_parse_back():
    closed = jax.make_jaxpr(lambda t: lax.after_all(t, t))(TOKEN)
    assert str(closed) == "{ lambda ; a:Tok. let b:Tok = after_all a a in (b,) }"
    assert str(parse_jaxpr(str(closed))) == str(closed)
    # a ShapeDtypeStruct-like stand-in: tracing with the aval itself, as JAX allows
    assert "a:Tok" in str(jax.make_jaxpr(lambda t: lax.after_all(t))(abstract_token))


def test_tokens_under_grad_vjp_and_linearize_as_jax():
    assert float(jax.grad(lambda x: (lax.create_token(), x * x)[1])(2.0)) == 4.0
    g, token = jax.grad(lambda x: (x * x, lax.create_token()), has_aux=True)(2.0)
    assert float(g) == 4.0 and type(token) is Token
    assert float(jax.grad(lambda x, t: x * x)(2.0, TOKEN)) == 4.0
    out, bwd = jax.vjp(lambda x: (lax.create_token(), x * 2), 1.0)
    assert type(out[0]) is Token and [float(c) for c in bwd((TOKEN, 1.0))] == [2.0]
    assert type(jax.linearize(lambda x: (lax.create_token(), x * 2), 1.0)[0][0]) is Token
    assert float(jax.grad(jax.checkpoint(lambda x: (x * x, lax.create_token())[0]))(1.0)) == 2.0
    (token, y), (t_dot, y_dot) = jax.jvp(lambda x: (lax.create_token(), x * 2), (1.0,), (1.0,))
    assert type(token) is Token and type(t_dot) is Token and float(y_dot) == 2.0
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda t, x: x * x)(TOKEN, 2.0)


def test_tokens_under_vmap_stay_unbatched():
    token, x = jax.vmap(lambda x: (lax.create_token(), x))(jnp.ones(3))
    assert type(token) is Token and x.shape == (3,)
    token, x = jax.vmap(lambda x, t: (lax.after_all(t), x), in_axes=(0, None))(jnp.ones(3), TOKEN)
    assert type(token) is Token
    with pytest.raises(ValueError, match="rank should be at least 1, but is only 0"):
        jax.vmap(lambda x, t: (lax.after_all(t), x), in_axes=(0, 0))(jnp.ones(3), TOKEN)


def test_tokens_through_control_flow():
    token, ys = lax.scan(lambda c, x: (lax.after_all(c), x * 2), TOKEN, jnp.ones(3))
    assert type(token) is Token and ys.tolist() == [2.0] * 3
    assert type(lax.fori_loop(0, 3, lambda i, c: lax.after_all(c), TOKEN)) is Token
    assert type(lax.cond(True, lambda t: lax.after_all(t), lambda t: t, TOKEN)) is Token
    f = jax.jit(lambda p, t: lax.cond(p, lambda t: lax.after_all(t), lambda t: t, t))
    assert type(f(False, TOKEN)) is Token
    assert "stablehlo.case" in f.lower(True, TOKEN).as_text()
    with pytest.raises(TypeError, match="a token cannot be stacked"):
        lax.scan(lambda c, x: (c, lax.create_token()), 0.0, jnp.ones(3))


def test_token_errors_as_jax():
    for bad in (lambda: lax.after_all(1.0), lambda: lax.after_all(TOKEN, jnp.ones(2))):
        with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
            bad()
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        jax.jit(lambda x: lax.after_all(x))(1.0)
    with pytest.raises(TypeError):
        TOKEN + 1  # noqa: B018
    with pytest.raises(TypeError, match="not a valid"):
        jnp.asarray(TOKEN)
