"""A tiny DSL built on modjax.tracecore alone (no jaxlib).

It declares four primitives with numpy implementations, gives traced values the
``+``, ``*`` and ``@`` operators, traces a small model into a jaxpr and runs two
interpreters of the author's own on that jaxpr: one counts floating-point
operations, the other emits a Python source function that computes the same thing.

Run it with ``python examples/custom_dsl.py``.
"""

from __future__ import annotations

import numpy as np

from modjax.tracecore import (
    Literal,
    Primitive,
    ShapedArray,
    eval_jaxpr,
    make_jaxpr,
    register_tracer_operator,
)

# --- the DSL's primitives -------------------------------------------------------------


def _same_shape(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape and x.shape and y.shape:
        raise TypeError(f"shapes {x.shape} and {y.shape} do not match")
    return x if x.shape else y


add_p = Primitive("dsl_add")
add_p.def_impl(np.add)
add_p.def_abstract_eval(_same_shape)

mul_p = Primitive("dsl_mul")
mul_p.def_impl(np.multiply)
mul_p.def_abstract_eval(_same_shape)

relu_p = Primitive("dsl_relu")
relu_p.def_impl(lambda x: np.maximum(x, 0))
relu_p.def_abstract_eval(lambda x: x)

matvec_p = Primitive("dsl_matvec")
matvec_p.def_impl(np.matmul)


@matvec_p.def_abstract_eval
def _matvec_abstract_eval(m: ShapedArray, v: ShapedArray) -> ShapedArray:
    if m.ndim != 2 or v.ndim != 1 or m.shape[1] != v.shape[0]:
        raise TypeError(f"dsl_matvec needs f[m,n] @ f[n], got {m} @ {v}")
    return ShapedArray((m.shape[0],), m.dtype)


register_tracer_operator("__add__", add_p.bind)
register_tracer_operator("__radd__", lambda x, y: add_p.bind(y, x))
register_tracer_operator("__mul__", mul_p.bind)
register_tracer_operator("__rmul__", lambda x, y: mul_p.bind(y, x))
register_tracer_operator("__matmul__", matvec_p.bind)


def relu(x):
    """Apply the DSL's rectifier."""
    return relu_p.bind(x)


# --- interpreters of the author's own ----------------------------------------------------

FLOPS_PER_ELEMENT = {add_p: 1, mul_p: 1, relu_p: 1}


def count_flops(jaxpr) -> int:
    """Count the floating-point operations a jaxpr performs."""
    total = 0
    for eqn in jaxpr.eqns:
        if eqn.primitive is matvec_p:
            rows, cols = eqn.invars[0].aval.shape
            total += 2 * rows * cols
        else:
            total += FLOPS_PER_ELEMENT[eqn.primitive] * eqn.outvars[0].aval.size
    return total


PYTHON_TEMPLATES = {
    add_p: "{0} + {1}",
    mul_p: "{0} * {1}",
    relu_p: "np.maximum({0}, 0)",
    matvec_p: "{0} @ {1}",
}


def emit_python(closed_jaxpr, name: str = "compiled") -> str:
    """Write a Python function (numpy code) computing the same values as the jaxpr."""
    jaxpr = closed_jaxpr.jaxpr
    names: dict[int, str] = {}

    def atom(v):
        return repr(v.val) if isinstance(v, Literal) else names[id(v)]

    for i, var in enumerate(jaxpr.constvars):
        names[id(var)] = f"c{i}"
    for i, var in enumerate(jaxpr.invars):
        names[id(var)] = f"x{i}"
    params = ", ".join(names[id(v)] for v in jaxpr.constvars + jaxpr.invars)
    lines = [f"def {name}({params}):"]
    for i, eqn in enumerate(jaxpr.eqns):
        names[id(eqn.outvars[0])] = f"t{i}"
        expression = PYTHON_TEMPLATES[eqn.primitive].format(*map(atom, eqn.invars))
        lines.append(f"    t{i} = {expression}")
    lines.append(f"    return ({', '.join(atom(v) for v in jaxpr.outvars)},)")
    return "\n".join(lines)


# --- a model in the DSL ---------------------------------------------------------------


def model(weights, bias, x):
    """Compute one dense layer with a rectifier, scaled by 0.5."""
    return relu(weights @ x + bias) * 0.5


def main() -> None:
    rng = np.random.default_rng(0)
    weights = rng.normal(size=(4, 3)).astype(np.float32)
    bias = rng.normal(size=4).astype(np.float32)
    x = rng.normal(size=3).astype(np.float32)

    closed = make_jaxpr(model)(weights, bias, x)
    print("jaxpr of the model:")
    print(closed)
    print("FLOPs:", count_flops(closed.jaxpr))

    source = emit_python(closed)
    print("\ngenerated Python:")
    print(source)
    namespace = {"np": np}
    exec(source, namespace)
    (generated,) = namespace["compiled"](*closed.consts, weights, bias, x)
    (interpreted,) = eval_jaxpr(closed.jaxpr, closed.consts, weights, bias, x)
    direct = model(weights, bias, x)
    np.testing.assert_allclose(generated, direct, rtol=1e-6)
    np.testing.assert_allclose(interpreted, direct, rtol=1e-6)
    print("\ngenerated, interpreted and direct results agree:", direct)


if __name__ == "__main__":
    main()
