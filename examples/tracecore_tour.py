"""A tour of modjax.tracecore: trace a function into a jaxpr, inspect it and run it.

This demo uses ``modjax.tracecore`` alone (numpy and ml_dtypes, no XLA): it
declares primitives with numpy implementations, including a custom one, traces
a function, prints and evaluates its jaxpr, parses the printed text back, and
splits the program with partial evaluation.
"""

from __future__ import annotations

import numpy as np

from modjax.tracecore import (
    Primitive,
    ShapedArray,
    call,
    call_p,
    eval_jaxpr,
    get_aval,
    jaxpr_equal,
    make_jaxpr,
    parse_jaxpr,
    partial_eval_jaxpr,
    register_tracer_operator,
)


def result_aval(*avals: ShapedArray) -> ShapedArray:
    """Broadcast the shapes; take the dtype of the first operand that is not a weak scalar."""
    strong = [a for a in avals if not a.weak_type] or list(avals)
    return ShapedArray(np.broadcast_shapes(*(a.shape for a in avals)), strong[0].dtype)


def elementwise(name: str, fn) -> Primitive:
    """Declare an elementwise primitive computed by the numpy function ``fn``."""
    prim = Primitive(name)
    prim.def_abstract_eval(result_aval)
    prim.def_impl(lambda *xs: np.asarray(fn(*xs), dtype=result_aval(*map(get_aval, xs)).dtype))
    return prim


sin_p = elementwise("sin", np.sin)
add_p = elementwise("add", np.add)
mul_p = elementwise("mul", np.multiply)
# A custom primitive: softplus with its own, numerically stable implementation.
softplus_p = elementwise("softplus", lambda x: np.logaddexp(x, 0.0))

register_tracer_operator("__add__", add_p.bind)
register_tracer_operator("__mul__", mul_p.bind)


def layer(w, x):
    """A NumPy-style function: a scaled sine, a nested call and the custom primitive."""
    h = call(lambda a, b: sin_p.bind(a) * b, w, x)
    return softplus_p.bind(h * 2.0 + w)


def main() -> None:
    w = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
    x = np.full(4, 0.5, dtype=np.float32)

    closed = make_jaxpr(layer)(w, x)
    print("The jaxpr of layer:")
    print(closed)
    print("\nWith source lines:")
    print(closed.pretty_print(source_info=True))

    (traced,) = eval_jaxpr(closed.jaxpr, closed.consts, w, x)
    print("\neval_jaxpr:", traced)
    print("direct:    ", layer(w, x))

    # Name the primitives the text may use: another library in the process may
    # declare its own "sin".
    primitives = {p.name: p for p in (sin_p, add_p, mul_p, softplus_p, call_p)}
    parsed = parse_jaxpr(str(closed), consts=closed.consts, primitives=primitives)
    print("\nThe printed text parses back to an equal jaxpr:", jaxpr_equal(parsed, closed))

    known, unknown, _, num_residuals = partial_eval_jaxpr(closed, unknowns=[False, True])
    print(f"\nPartial evaluation with w known and x unknown ({num_residuals} residuals):")
    print("known part:  ", known)
    print("unknown part:", unknown)


if __name__ == "__main__":
    main()
