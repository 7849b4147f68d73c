"""Random programs over the test primitives, for the DCE, inlining and partial-eval tests.

A Program is a DAG of primitive applications (elementwise, multiple-results, literal,
closed-over const, effectful, nested calls, a call holding consts, and an opaque
higher-order primitive with no rules) that ``to_fun`` turns into a Python function.
"""

from __future__ import annotations

import dataclasses

import hypothesis.strategies as st
import numpy as np
from tracecore_test_prims import add_p, cos_p, mul_p, neg_p, sin_p, sub_p, sumdiff_p

from modjax.tracecore.call import call, call_p
from modjax.tracecore.core import Primitive
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tracing import make_jaxpr

f32 = np.dtype("float32")
X = np.linspace(-1.0, 1.0, 3).astype(f32)

# --- test primitives ----------------------------------------------------------------------

LOG: list[str] = []

effect_p = Primitive("test_program_effect")
effect_p.effectful = True


def _effect_impl(x):
    LOG.append("effect")
    return mul_p.impl(x, 2.0)


effect_p.def_impl(_effect_impl)
effect_p.def_abstract_eval(lambda a: a)

# A higher-order primitive with no rules of its own: passes may only look inside it.
opaque_p = Primitive("test_program_opaque")
opaque_p.multiple_results = True
opaque_p.def_impl(lambda *args, body: eval_jaxpr(body.jaxpr, body.consts, *args))
opaque_p.def_abstract_eval(lambda *avals, body: body.out_avals)

UNARY = {"sin": sin_p, "cos": cos_p, "neg": neg_p}
BINARY = {"add": add_p, "sub": sub_p, "mul": mul_p}
CONST = np.array([0.5, -2.0, 3.0], f32)
INNER_CONST = np.array([1.5, 0.25, -1.0], f32)
CLOSED_WITH_CONST = make_jaxpr(lambda a: [add_p.bind(mul_p.bind(a, INNER_CONST), sin_p.bind(a))])(X)


# --- random programs ---------------------------------------------------------------------


@dataclasses.dataclass
class Program:
    """A DAG of primitive applications; operands index the values so far (modulo)."""

    n_in: int
    ops: list
    outs: list
    literal_out: bool


_index = st.integers(0, 10**6)


@st.composite
def programs(draw, n_in=None, depth=0, effects=True, opaque=True):
    """Draw a random Program; ``effects``/``opaque`` allow effectful and rule-less equations."""
    n_in = draw(st.integers(1, 4)) if n_in is None else n_in
    kinds = ["un", "bin", "lit", "sumdiff", "const", "ccall"]
    kinds += ["eff"] if effects else []
    kinds += ["call"] if depth < 2 else []
    kinds += ["opaque"] if depth < 2 and opaque else []
    ops = []
    for _ in range(draw(st.integers(0, 7 if depth == 0 else 4))):
        kind = draw(st.sampled_from(kinds))
        if kind in ("call", "opaque"):
            k = draw(st.integers(1, 3))
            sub = draw(programs(n_in=k, depth=depth + 1, effects=effects, opaque=opaque))
            ops.append((kind, sub, [draw(_index) for _ in range(k)]))
        else:
            names = sorted(UNARY if kind == "un" else BINARY)
            ops.append((kind, draw(st.sampled_from(names)), draw(_index), draw(_index)))
    outs = draw(st.lists(_index, min_size=1, max_size=4))
    return Program(n_in, ops, outs, draw(st.booleans()))


def to_fun(prog: Program):
    def fun(*args):
        env = list(args)

        def pick(i):
            return env[i % len(env)]

        def pick_vector(i):  # None when no value is a vector (inside a call of scalars)
            vectors = [v for v in env if np.shape(v) == (3,)]
            return vectors[i % len(vectors)] if vectors else None

        for op in prog.ops:
            kind = op[0]
            if kind == "un":
                env.append(UNARY[op[1]].bind(pick(op[2])))
            elif kind == "bin":
                env.append(BINARY[op[1]].bind(pick(op[2]), pick(op[3])))
            elif kind == "lit":
                env.append(add_p.bind(pick(op[2]), 2.0))
            elif kind == "sumdiff":
                env.extend(sumdiff_p.bind(pick(op[2]), pick(op[3])))
            elif kind == "const":
                env.append(mul_p.bind(pick(op[2]), CONST))
            elif kind == "eff":
                env.append(effect_p.bind(pick(op[2])))
            elif kind == "ccall":
                if (operand := pick_vector(op[2])) is not None:
                    env.extend(call_p.bind(operand, jaxpr=CLOSED_WITH_CONST, name="cc"))
            elif kind == "call":
                env.extend(call(to_fun(op[1]), *[pick(i) for i in op[2]]))
            else:
                operands = [pick_vector(i) for i in op[2]]
                if None not in operands:
                    body = make_jaxpr(to_fun(op[1]))(*[X] * len(operands))
                    env.extend(opaque_p.bind(*operands, body=body))
        return [pick(i) for i in prog.outs] + ([1.0] if prog.literal_out else [])

    return fun


def trace(prog: Program) -> ClosedJaxpr:
    return make_jaxpr(to_fun(prog))(*[X * (i + 1) for i in range(prog.n_in)])
