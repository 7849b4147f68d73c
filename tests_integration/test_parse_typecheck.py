"""parse_jaxpr checks the lax programs it reads: ill-typed texts raise, real ones read back."""

import numpy as np
import pytest

import modjax
import modjax.numpy as jnp
from modjax import errors, lax
from modjax.tracecore import eval_jaxpr, jaxpr_equal, parse_jaxpr

ILL_TYPED = [
    "{ lambda ; a:f32[3] b:i32[3]. let\n    c:f32[3] = mul a b\n  in (c,) }",
    "{ lambda ; a:f32[3] b:f32[3]. let\n    c:i32[3] = mul a b\n  in (c,) }",
    "{ lambda ; a:f32[3]. let\n    c:f32[3] = mul a\n  in (c,) }",
    "{ lambda ; a:f32[3]. let\n    c:f32[3] = reduce_sum[axes=(0,) foo=1] a\n  in (c,) }",
]


@pytest.mark.parametrize("text", ILL_TYPED)
def test_ill_typed_lax_text_raises_jaxpr_type_error_at_line_2(text):
    with pytest.raises(errors.JaxprTypeError, match=r"^line 2, column 5: "):
        parse_jaxpr(text)
    parse_jaxpr(text, check=False)  # raw syntax, for tools that want it


def _programs():
    x = jnp.arange(4.0)

    def scanned(v):
        return lax.scan(lambda c, y: (c * y + 1.0, c), 0.0, v)

    return [
        modjax.make_jaxpr(modjax.jit(modjax.grad(lambda v: jnp.sum(jnp.sin(v) * v))))(x),
        modjax.make_jaxpr(scanned)(x),
        modjax.make_jaxpr(modjax.vmap(lambda v: lax.cond(v > 1.0, jnp.cos, jnp.exp, v)))(x),
        modjax.make_jaxpr(lambda v: v.astype(jnp.int32)[::2] + 3)(x),
    ]


def test_printed_lax_programs_round_trip_type_checked():
    for closed in _programs():
        back = parse_jaxpr(str(closed), consts=closed.consts)
        assert jaxpr_equal(back, closed), str(closed)
        assert str(back) == str(closed)
        np.testing.assert_equal(
            np.asarray(eval_jaxpr(back.jaxpr, back.consts, jnp.arange(4.0))[0]),
            np.asarray(eval_jaxpr(closed.jaxpr, closed.consts, jnp.arange(4.0))[0]),
        )
