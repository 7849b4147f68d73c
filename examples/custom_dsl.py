"""A DSL author's path end to end: primitives, interpreters, transformations, XLA.

Part 1 needs modjax.tracecore alone (no jaxlib). It declares four primitives with
numpy implementations, gives traced values the ``+``, ``*`` and ``@`` operators,
traces a small model into a jaxpr and runs two interpreters of the author's own on
that jaxpr: one counts floating-point operations, the other emits a Python source
function that computes the same thing.

Part 2 gives the elementwise primitives every other rule (JVP, transpose, batching,
StableHLO lowering) in the tables of modjax.autodiff, modjax.batching and
modjax.lowering, so that a neuron written in the DSL runs under modjax.runtime's
``jit`` (compiled by XLA), ``grad`` and ``vmap``, in any combination. It does not
import modjax.numpy: the DSL's operators stay the DSL's.

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


# --- part 2: every rule, so the DSL runs under jit, grad and vmap -------------------------

step_p = Primitive("dsl_step")  # the derivative of relu: 1 where x > 0, else 0
step_p.def_impl(lambda x: (x > 0).astype(x.dtype))
step_p.def_abstract_eval(lambda x: x)


def register_transformation_rules() -> None:
    """Fill the JVP, transpose, batching and lowering tables for the elementwise primitives."""
    from modjax.autodiff import (
        Zero,
        defjvp_zero,
        instantiate_zeros,
        is_undefined_primal,
        jvp_rules,
        transpose_rules,
    )
    from modjax.batching import batching_rules, bdim_at_front
    from modjax.lowering import hlo, ir_constant, ir_type, register_lowering

    # Lowering: StableHLO ops from jaxlib's MLIR bindings, one rule per primitive.
    def full_shape(ctx, value, aval):
        # The DSL broadcasts 0-d operands; StableHLO wants equal shapes.
        out = ctx.avals_out[0]
        return value if aval.shape == out.shape else hlo.broadcast_in_dim(ir_type(out), value, [])

    def zeros(ctx):
        out = ctx.avals_out[0]
        return ir_constant(np.broadcast_to(np.zeros((), out.dtype), out.shape))

    def binary_lowering(op):
        def rule(ctx, x, y):
            x_aval, y_aval = ctx.avals_in
            return op(full_shape(ctx, x, x_aval), full_shape(ctx, y, y_aval))

        return rule

    register_lowering(add_p, binary_lowering(hlo.add))
    register_lowering(mul_p, binary_lowering(hlo.multiply))
    register_lowering(relu_p, lambda ctx, x: hlo.maximum(x, zeros(ctx)))
    register_lowering(step_p, lambda ctx, x: hlo.sign(hlo.maximum(x, zeros(ctx))))

    # JVP: tangents may be symbolic zeros (never all); rules bind DSL primitives.
    def mul_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        terms = [mul_p.bind(t, other) for t, other in ((tx, y), (ty, x)) if type(t) is not Zero]
        return mul_p.bind(x, y), terms[0] if len(terms) == 1 else add_p.bind(*terms)

    jvp_rules[add_p] = lambda primals, tangents: (
        add_p.bind(*primals),
        add_p.bind(*map(instantiate_zeros, tangents)),
    )
    jvp_rules[mul_p] = mul_jvp
    jvp_rules[relu_p] = lambda primals, tangents: (
        relu_p.bind(primals[0]),
        mul_p.bind(instantiate_zeros(tangents[0]), step_p.bind(primals[0])),
    )
    defjvp_zero(step_p)

    # Transpose: add and mul are linear (mul in one operand at a time).
    def unbroadcast(ct, operand):
        # A 0-d operand that was broadcast would need a sum, which this DSL lacks.
        if operand.aval.shape != np.shape(ct):
            raise TypeError("dsl: transposing a broadcast 0-d operand needs a sum primitive")
        return ct

    transpose_rules[add_p] = lambda ct, x, y: [
        unbroadcast(ct, v) if is_undefined_primal(v) else None for v in (x, y)
    ]
    transpose_rules[mul_p] = lambda ct, x, y: [
        unbroadcast(mul_p.bind(ct, y), x) if is_undefined_primal(x) else None,
        unbroadcast(mul_p.bind(x, ct), y) if is_undefined_primal(y) else None,
    ]

    # Batching: unary rules keep the batch axis; binary ones move it to the front
    # (an unbatched 0-d operand stays as it is: the DSL broadcasts it).
    def unary_batching(prim):
        return lambda args, dims: (prim.bind(*args), dims[0])

    def binary_batching(prim):
        def rule(args, dims):
            size = next(np.shape(a)[d] for a, d in zip(args, dims, strict=True) if d is not None)
            moved = [
                a if d is None and not np.shape(a) else bdim_at_front(a, d, size)
                for a, d in zip(args, dims, strict=True)
            ]
            return prim.bind(*moved), 0

        return rule

    batching_rules[add_p] = binary_batching(add_p)
    batching_rules[mul_p] = binary_batching(mul_p)
    batching_rules[relu_p] = unary_batching(relu_p)
    batching_rules[step_p] = unary_batching(step_p)


def neuron(w, b, x):
    """One scalar neuron in the DSL: half a rectified affine function."""
    return relu(w * x + b) * 0.5


def transformations() -> None:
    """Run the DSL's neuron under jit, grad and vmap, and check the numbers."""
    from modjax.autodiff import grad
    from modjax.batching import vmap
    from modjax.runtime import jit

    register_transformation_rules()
    w, b = np.float32(1.5), np.float32(-1.0)
    xs = np.linspace(-2, 2, 9, dtype=np.float32)
    expected = 0.5 * np.maximum(w * xs + b, 0)
    slopes = np.where(w * xs + b > 0, 0.5 * xs, 0).astype(np.float32)  # d neuron / d w

    print("\nPart 2: the same primitives under modjax.runtime.jit, autodiff.grad, batching.vmap")
    compiled = jit(vmap(neuron, in_axes=(None, None, 0)))
    np.testing.assert_allclose(compiled(w, b, xs), expected, rtol=1e-6)
    print("jit(vmap(neuron)) compiled with XLA:", np.asarray(compiled(w, b, xs)))
    print(compiled.lower(w, b, xs).as_text().split("\n", 1)[1].split("return")[0].strip())
    per_example = jit(vmap(grad(neuron), in_axes=(None, None, 0)))(w, b, xs)
    np.testing.assert_allclose(per_example, slopes, rtol=1e-6)
    print("jit(vmap(grad(neuron))), d/dw per example:", np.asarray(per_example))
    second = grad(grad(neuron, argnums=2), argnums=0)(w, b, np.float32(1.0))
    print("grad(grad(neuron)) d2/dw dx at x=1:", float(second))
    assert float(second) == 0.5
    print("jit, grad and vmap of the DSL agree with numpy")


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
    transformations()


if __name__ == "__main__":
    main()
