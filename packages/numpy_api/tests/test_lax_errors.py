"""Shape and dtype errors of lax: the exception types JAX raises, messages naming the primitive.

Each case runs eagerly and while tracing (the abstract evaluation raises
before anything is compiled).
"""

from __future__ import annotations

import numpy as np
import pytest

from modjax import lax
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

f32 = np.ones((2, 3), np.float32)
i32 = np.ones((2, 3), np.int32)
b = np.ones((2, 3), bool)
c64 = np.ones(3, np.complex64)

CASES = [
    # (description, thunk taking the operands, operands, exception type, text in message)
    ("add shapes", lambda x, y: lax.add(x, y), (f32, np.ones(4, np.float32)), TypeError, "add"),
    ("add dtypes", lambda x, y: lax.add(x, y), (f32, i32), TypeError, "same dtypes"),
    ("add bool", lambda x: lax.add(x, x), (b,), TypeError, "add does not accept dtype bool"),
    (
        "add incompatible",
        lambda x, y: lax.add(x, y),
        (f32, np.ones((3, 3), np.float32)),
        TypeError,
        r"\(2, 3\), \(3, 3\)",
    ),
    ("sin int", lambda x: lax.sin(x), (i32,), TypeError, "sin does not accept dtype int32"),
    ("floor int", lambda x: lax.floor(x), (i32,), TypeError, "floor"),
    ("abs unsigned", lambda x: lax.abs(x), (np.ones(3, np.uint8),), TypeError, "abs"),
    ("cbrt complex", lambda x: lax.cbrt(x), (c64,), TypeError, "cbrt"),
    ("lt complex", lambda x: lax.lt(x, x), (c64,), TypeError, "lt"),
    ("and float", lambda x: lax.bitwise_and(x, x), (f32,), TypeError, "and"),
    ("shift bool", lambda x: lax.shift_left(x, x), (b,), TypeError, "shift_left"),
    ("rem complex", lambda x: lax.rem(x, x), (c64,), TypeError, "rem"),
    ("pow int base", lambda x: lax.pow(x, x), (i32,), TypeError, "pow"),
    (
        "integer_pow negative",
        lambda x: lax.integer_pow(x, -1),
        (i32,),
        TypeError,
        "negative powers",
    ),
    (
        "select float which",
        lambda x: lax.select_n(x, x, x),
        (f32,),
        TypeError,
        "boolean or integer",
    ),
    (
        "select bool 3 cases",
        lambda w, x: lax.select_n(w, x, x, x),
        (b, f32),
        TypeError,
        "> 2 cases",
    ),
    (
        "select shapes",
        lambda w, x, y: lax.select_n(w, x, y),
        (True, f32, np.ones(3, np.float32)),
        TypeError,
        "same shapes",
    ),
    (
        "clamp shape",
        lambda x: lax.clamp(np.ones(2, np.float32), x, 1.0),
        (f32,),
        TypeError,
        "clamp",
    ),
    (
        "broadcast_in_dim",
        lambda x: lax.broadcast_in_dim(x, (4, 3), (0, 1)),
        (f32,),
        TypeError,
        "broadcast_in_dim",
    ),
    (
        "broadcast_in_dim rank",
        lambda x: lax.broadcast_in_dim(x, (2, 3), (0,)),
        (f32,),
        TypeError,
        "broadcast_in_dim",
    ),
    ("reshape size", lambda x: lax.reshape(x, (4,)), (f32,), TypeError, "reshape"),
    ("squeeze", lambda x: lax.squeeze(x, (0,)), (f32,), ValueError, "squeeze"),
    ("squeeze axis", lambda x: lax.squeeze(x, (5,)), (f32,), ValueError, "out of bounds"),
    ("expand_dims axis", lambda x: lax.expand_dims(x, (5,)), (f32,), ValueError, "out of bounds"),
    ("transpose", lambda x: lax.transpose(x, (0, 0)), (f32,), TypeError, "transpose"),
    ("rev", lambda x: lax.rev(x, (2,)), (f32,), TypeError, "rev"),
    ("slice limit", lambda x: lax.slice(x, (0, 0), (3, 3)), (f32,), TypeError, "slice"),
    ("slice start", lambda x: lax.slice(x, (2, 0), (1, 3)), (f32,), TypeError, "slice"),
    (
        "concatenate dtypes",
        lambda x, y: lax.concatenate([x, y], 0),
        (f32, i32),
        TypeError,
        "concatenate",
    ),
    (
        "concatenate shapes",
        lambda x: lax.concatenate([x, lax.slice(x, (0, 0), (1, 2))], 0),
        (f32,),
        TypeError,
        "concatenat",
    ),
    (
        "concatenate ranks",
        lambda x, y: lax.concatenate([x, y], 0),
        (f32, np.ones(3, np.float32)),
        TypeError,
        "dimensions",
    ),
    (
        "pad dtype",
        lambda x: lax.pad(x, np.int32(0), ((0, 0, 0), (0, 0, 0))),
        (f32,),
        TypeError,
        "pad",
    ),
    (
        "pad interior",
        lambda x: lax.pad(x, 0.0, ((0, 0, -1), (0, 0, 0))),
        (f32,),
        ValueError,
        "interior",
    ),
    ("pad config", lambda x: lax.pad(x, 0.0, ((0, 0, 0),)), (f32,), ValueError, "padding_config"),
    ("reduce axes", lambda x: lax.reduce_sum(x, (2,)), (f32,), ValueError, "out-of-bounds"),
    ("reduce dup axes", lambda x: lax.reduce_sum(x, (0, 0)), (f32,), ValueError, "duplicate"),
    ("reduce_sum bool", lambda x: lax.reduce_sum(x, (0,)), (b,), TypeError, "reduce_sum"),
    ("reduce_and float", lambda x: lax.reduce_and(x, (0,)), (f32,), TypeError, "bool or int"),
    ("argmax axis", lambda x: lax.argmax(x, 2, np.int32), (f32,), ValueError, "axis"),
    (
        "argmax empty",
        lambda x: lax.argmax(x, 0, np.int32),
        (np.ones((0, 3), np.float32),),
        ValueError,
        "non-empty",
    ),
    (
        "argmax index dtype",
        lambda x: lax.argmax(x, 0, np.float32),
        (f32,),
        TypeError,
        "index_dtype",
    ),
    (
        "dot contracting",
        lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))),
        (f32, np.ones((4, 2), np.float32)),
        TypeError,
        "dot_general",
    ),
    (
        "dot batch",
        lambda x, y: lax.dot_general(x, y, (((1,), (1,)), ((0,), (0,)))),
        (f32, np.ones((4, 3), np.float32)),
        TypeError,
        "batch",
    ),
    (
        "dot dims",
        lambda x: lax.dot_general(x, x, (((2,), (1,)), ((), ()))),
        (f32,),
        TypeError,
        "dot_general",
    ),
    ("iota dimension", lambda: lax.broadcasted_iota(np.int32, (2, 3), 2), (), ValueError, "iota"),
    ("iota bool", lambda: lax.iota(np.bool_, 3), (), TypeError, "iota"),
]


@pytest.mark.parametrize("fn,args,exc,text", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_errors_eagerly_and_when_tracing(fn, args, exc, text):
    with pytest.raises(exc, match=text):
        fn(*args)
    with pytest.raises(exc, match=text):
        make_jaxpr(fn)(*args)


def test_error_messages_name_shapes_and_dtypes():
    with pytest.raises(TypeError) as info:
        lax.add(f32, i32)
    assert "float32" in str(info.value) and "int32" in str(info.value)
    with pytest.raises(TypeError) as info:
        lax.mul(f32, np.ones((5, 3), np.float32))
    assert "(2, 3)" in str(info.value) and "(5, 3)" in str(info.value)


def test_errors_under_jit():
    with pytest.raises(TypeError, match="add"):
        jit(lambda x, y: lax.add(x, y))(f32, np.ones(4, np.float32))
    with pytest.raises(TypeError, match="reshape"):
        jit(lambda x: lax.reshape(x, (7,)))(f32)
