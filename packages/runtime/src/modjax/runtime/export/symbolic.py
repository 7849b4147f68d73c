"""Export with symbolic dimensions: dynamic-shape StableHLO from two static traces.

modjax traces static shapes only, so a function exported for a shape such as
``(b, 4)`` is traced twice, with ``b`` bound to two different primes. The two
jaxprs must have the same equations; a dimension (or a literal, such as the
count in a mean) that differs between them must equal the variable in both
traces, and becomes symbolic. The program is then lowered here, one equation at
a time, with ``?`` for symbolic dimensions: the variables' values are read from
the arguments (``get_dimension_size``) and broadcasts to symbolic shapes use
``dynamic_broadcast_in_dim``. Equations whose shapes are all static use their
primitive's own lowering rule; the others must be in ``_RULES`` (elementwise
operations, comparisons, ``dot_general``, reductions, ``broadcast_in_dim``,
``transpose``, ``reshape``/``squeeze`` (``dynamic_reshape``), ``convert_element_type``,
``integer_pow``, ``select_n``) or in a call held by
``jit``/``custom_jvp_call``, which are lowered inline. Anything else raises
NotImplementedError naming the primitive. The module is marked
``jax.uses_shape_polymorphism`` and the Exported ``uses_global_constants``, so that
callers (JAX or modjax) refine its shapes for their arguments before compiling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from modjax.lowering import (
    LoweringRuleContext,
    ModuleContext,
    dense_int_array,
    dtype_to_ir_type,
    func_dialect,
    hlo,
    ir,
    ir_constant,
    lowering_rules,
    make_context,
)
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapeDtypeStruct
from modjax.tracecore.inline import inline_calls
from modjax.tracecore.jaxpr import ClosedJaxpr, DropVar, Literal, jaxpr_equal, subjaxprs

from .shape_poly import DimExpr

__all__ = ["dim_variables", "concrete_spec", "trace_symbolic", "lower_symbolic"]

# Two sizes per dimension variable (distinct primes, unlikely anywhere else).
_SIZES_A = (1009, 1019, 1031, 1039, 1051, 1061)
_SIZES_B = (1013, 1021, 1033, 1049, 1063, 1069)
# Params that restate the output's shape (their symbolic form is the output's shape).
_SHAPE_PARAMS = {"broadcast_in_dim": "shape", "reshape": "new_sizes"}
# Equations lowered as their held jaxpr (param name), applied 1:1 to the operands.
_CALL_PARAMS = {"custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr"}


def _unsupported(what: str) -> NotImplementedError:
    return NotImplementedError(f"export with symbolic dimensions: {what}")


def dim_variables(avals: Sequence) -> list[str]:
    """Return the dimension variables of symbolic shapes, in order (each must stand alone)."""
    names: list[str] = []
    for aval in avals:
        for d in aval.shape:
            if isinstance(d, DimExpr):
                if not d.is_variable:
                    raise _unsupported(f"dimension {d} is not a plain variable")
                if d.text not in names:
                    names.append(d.text)
    if len(names) > len(_SIZES_A):
        raise _unsupported(f"more than {len(_SIZES_A)} dimension variables")
    return names


def concrete_spec(x, sizes: dict[str, int]):
    """Return ``x`` with its symbolic dimensions set to ``sizes`` (other leaves unchanged)."""
    if isinstance(x, ShapeDtypeStruct) and any(isinstance(d, DimExpr) for d in x.shape):
        shape = tuple(sizes[d.text] if isinstance(d, DimExpr) else d for d in x.shape)
        return ShapeDtypeStruct(shape, x.dtype)
    return x


def trace_symbolic(trace: Callable, names: list[str]):
    """Trace twice; return ``(traced, closed, shapes, literals)`` for the symbolic lowering.

    ``trace(sizes)`` traces for the variables' sizes. ``closed`` is the first
    trace's program with calls inlined; ``shapes`` maps id(var) to its shape
    (ints and variable names), ``literals`` maps id(literal) to the variable a
    literal stands for.
    """
    sizes_a = dict(zip(names, _SIZES_A, strict=False))
    sizes_b = dict(zip(names, _SIZES_B, strict=False))
    traced = trace(sizes_a)
    closed_a = inline_calls(traced.jaxpr)
    closed_b = inline_calls(trace(sizes_b).jaxpr)
    variable = {(sizes_a[n], sizes_b[n]): n for n in names}
    shapes: dict[int, tuple] = {}
    literals: dict[int, str] = {}

    def dim(a, b, where):
        if a == b:
            return a
        if (a, b) in variable:
            return variable[(a, b)]
        raise _unsupported(f"{where} has a dimension that is not a dimension variable")

    def bind(vars_a, vars_b, where):
        if len(vars_a) != len(vars_b):
            raise _unsupported(f"the program's structure depends on the dimensions ({where})")
        for va, vb in zip(vars_a, vars_b, strict=True):
            shape_a, shape_b = va.aval.shape, vb.aval.shape
            if len(shape_a) != len(shape_b):
                raise _unsupported(f"a rank depends on the dimensions ({where})")
            shapes[id(va)] = tuple(dim(x, y, where) for x, y in zip(shape_a, shape_b, strict=True))

    def walk(ja, jb):
        bind(ja.constvars, jb.constvars, "a constant")
        bind(ja.invars, jb.invars, "an argument")
        if len(ja.eqns) != len(jb.eqns):
            raise _unsupported("the program's structure depends on the dimensions")
        for ea, eb in zip(ja.eqns, jb.eqns, strict=True):
            name = ea.primitive.name
            if ea.primitive is not eb.primitive:
                raise _unsupported(f"the program's structure depends on the dimensions ({name})")
            for xa, xb in zip(ea.invars, eb.invars, strict=True):
                if isinstance(xa, Literal) and not _same(xa.val, xb.val):
                    key = (_scalar(xa.val), _scalar(xb.val))
                    if key not in variable:
                        raise _unsupported(f"a constant of {name} depends on the dimensions")
                    literals[id(xa)] = variable[key]
            _check_params(ea, eb)
            call = _CALL_PARAMS.get(name)
            if call is not None:
                walk(_open(ea.params[call]), _open(eb.params[call]))
            bind(ea.outvars, eb.outvars, name)
        bind(
            [v for v in ja.outvars if not isinstance(v, Literal)],
            [v for v in jb.outvars if not isinstance(v, Literal)],
            "an output",
        )

    walk(closed_a.jaxpr, closed_b.jaxpr)  # type: ignore[union-attr]  # closed in, closed out
    return traced, closed_a, shapes, literals


def _open(jaxpr):
    if isinstance(jaxpr, ClosedJaxpr):
        if jaxpr.consts:
            raise _unsupported("a held jaxpr with constants")
        return jaxpr.jaxpr
    return jaxpr


def _scalar(value):
    return np.asarray(value).item()


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray | np.generic) or isinstance(b, np.ndarray | np.generic):
        return type(a) is type(b) and bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # values without a plain equality
        return a is b


def _check_params(ea, eb) -> None:
    held = {k for k, v in ea.params.items() if any(True for _ in subjaxprs({k: v}))}
    for key, value in ea.params.items():
        other = eb.params.get(key)
        if key in held:
            if key in (_CALL_PARAMS.get(ea.primitive.name),):
                continue
            if not all(
                jaxpr_equal(x, y)
                for x, y in zip(subjaxprs({key: value}), subjaxprs({key: other}), strict=True)
            ):
                raise _unsupported(f"{ea.primitive.name} holds a jaxpr that depends on them")
        elif _SHAPE_PARAMS.get(ea.primitive.name) == key:
            continue
        elif callable(value) and callable(other):
            continue  # rules of the equation (a custom JVP), not part of the lowered program
        elif not _same(value, other):
            raise _unsupported(f"parameter {key} of {ea.primitive.name} depends on the dimensions")


# --- lowering ---------------------------------------------------------------------------------


class _Lowerer:
    def __init__(self, mctx, shapes, literals, dim_values):
        self.mctx = mctx
        self.shapes = shapes
        self.literals = literals
        self.dim_values = dim_values  # variable -> tensor<i32> value

    def symbolic(self, shape) -> bool:
        return any(isinstance(d, str) for d in shape)

    def tensor_type(self, shape, dtype) -> ir.Type:
        dims = [ir.ShapedType.get_dynamic_size() if isinstance(d, str) else d for d in shape]
        return ir.RankedTensorType.get(dims, dtype_to_ir_type(dtype))

    def shape_value(self, shape) -> ir.Value:
        """A tensor<rank x i32> holding ``shape``'s sizes."""
        i32 = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
        parts = [
            hlo.reshape(i32, self.dim_values[d])
            if isinstance(d, str)
            else ir_constant(np.array([d], np.int32))
            for d in shape
        ]
        return hlo.concatenate(parts, 0) if len(parts) != 1 else parts[0]

    def broadcast(self, value, aval_shape, shape, dtype) -> ir.Value:
        """Broadcast an operand (rank 0 or size-1 dimensions) to ``shape``."""
        if tuple(aval_shape) == tuple(shape):
            return value
        dims = [] if len(aval_shape) == 0 else list(range(len(shape)))
        return hlo.dynamic_broadcast_in_dim(
            self.tensor_type(shape, dtype), value, self.shape_value(shape), dense_int_array(dims)
        )

    def literal(self, lit: Literal) -> ir.Value:
        dtype = lit.aval.dtype
        name = self.literals.get(id(lit))
        if name is None:
            return ir_constant(np.asarray(lit.val, dtype))
        return hlo.convert(
            ir.RankedTensorType.get([], dtype_to_ir_type(dtype)), self.dim_values[name]
        )

    def jaxpr(self, jaxpr, consts, args) -> list:
        env: dict[int, Any] = {}
        for v, c in zip(jaxpr.constvars, consts, strict=True):
            env[id(v)] = ir_constant(np.asarray(c))
        for v, a in zip(jaxpr.invars, args, strict=True):
            env[id(v)] = a

        def read(x):
            return self.literal(x) if isinstance(x, Literal) else env[id(x)]

        for eqn in jaxpr.eqns:
            operands = [read(x) for x in eqn.invars]
            with self.mctx.location(eqn.primitive, eqn.source_info):
                outs = self.equation(eqn, operands)
            for v, out in zip(eqn.outvars, outs, strict=True):
                if not isinstance(v, DropVar):
                    env[id(v)] = out
        return [read(x) for x in jaxpr.outvars]

    def shape_of(self, x):
        return x.aval.shape if isinstance(x, Literal) else self.shapes[id(x)]

    def equation(self, eqn, operands) -> list:
        name = eqn.primitive.name
        in_shapes = [self.shape_of(x) for x in eqn.invars]
        out_shapes = [self.shapes[id(v)] for v in eqn.outvars]
        dynamic = any(id(x) in self.literals for x in eqn.invars if isinstance(x, Literal))
        dynamic = dynamic or any(self.symbolic(s) for s in in_shapes + out_shapes)
        call = _CALL_PARAMS.get(name) or ("jaxpr" if name == "jit" else None)
        if call is not None and dynamic:
            inner = _open(eqn.params[call])
            return self.jaxpr(inner, [], operands)
        if not dynamic:
            rule = lowering_rules.get(eqn.primitive)
            if rule is None:
                raise _unsupported(f"no lowering rule for {name}")
            ctx = LoweringRuleContext(
                self.mctx,
                eqn.primitive,
                [x.aval for x in eqn.invars],
                [v.aval for v in eqn.outvars],
                eqn.source_info,
            )
            out = rule(ctx, *operands, **eqn.params)
            return list(out) if eqn.primitive.multiple_results else [out]
        rule = _RULES.get(name)
        if rule is None:
            raise _unsupported(f"primitive {name} on symbolic shapes is not supported yet")
        out_avals = [v.aval for v in eqn.outvars]
        result = rule(self, eqn, operands, in_shapes, out_shapes[0], out_avals[0].dtype)
        return [result]


def _elementwise(op: Callable) -> Callable:
    def rule(lw, eqn, operands, in_shapes, out_shape, dtype):
        args = [
            lw.broadcast(x, s, out_shape, eqn.invars[i].aval.dtype)
            for i, (x, s) in enumerate(zip(operands, in_shapes, strict=True))
        ]
        return op(*args)

    return rule


def _compare(direction: str) -> Callable:
    def op(x, y):
        element = ir.RankedTensorType(x.type).element_type
        if isinstance(element, ir.FloatType):
            kind = "FLOAT"
        else:
            integer = ir.IntegerType(element)
            kind = "UNSIGNED" if integer.is_unsigned or integer.width == 1 else "SIGNED"
        return hlo.compare(
            x,
            y,
            hlo.ComparisonDirectionAttr.get(direction),
            compare_type=hlo.ComparisonTypeAttr.get(kind),
        )

    return _elementwise(op)


def _convert(lw, eqn, operands, in_shapes, out_shape, dtype):
    return hlo.convert(lw.tensor_type(out_shape, dtype), operands[0])


def _integer_pow(lw, eqn, operands, in_shapes, out_shape, dtype):
    y = eqn.params["y"]
    if not isinstance(y, int) or y < 1:
        raise _unsupported(f"integer_pow with y={y}")
    result = operands[0]
    for _ in range(y - 1):
        result = hlo.multiply(result, operands[0])
    return result


def _select_n(lw, eqn, operands, in_shapes, out_shape, dtype):
    if len(operands) != 3:
        raise _unsupported("select_n with more than two cases")
    pred, false, true = (
        lw.broadcast(x, s, out_shape, eqn.invars[i].aval.dtype)
        for i, (x, s) in enumerate(zip(operands, in_shapes, strict=True))
    )
    return hlo.select(pred, true, false)


def _dot_general(lw, eqn, operands, in_shapes, out_shape, dtype):
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    if any(eqn.invars[i].aval.dtype != dtype for i in range(2)):
        raise _unsupported("dot_general of mixed dtypes")
    numbers = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb),
        rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc),
        rhs_contracting_dimensions=list(rc),
    )
    return hlo.dot_general(lw.tensor_type(out_shape, dtype), *operands, numbers)


def _reduction(combine: Callable, identity: Callable) -> Callable:
    def rule(lw, eqn, operands, in_shapes, out_shape, dtype):
        scalar = ir.RankedTensorType.get([], dtype_to_ir_type(dtype))
        init = ir_constant(np.asarray(identity(dtype), dtype))
        op = hlo.ReduceOp(
            [lw.tensor_type(out_shape, dtype)], [operands[0]], [init], list(eqn.params["axes"])
        )
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.return_([combine(*block.arguments)])
        return op.result

    return rule


def _transpose(lw, eqn, operands, in_shapes, out_shape, dtype):
    return hlo.transpose(operands[0], dense_int_array(list(eqn.params["permutation"])))


def _reshape(lw, eqn, operands, in_shapes, out_shape, dtype):
    """reshape (without a transposition first) and squeeze: a ``dynamic_reshape``."""
    if eqn.primitive.name == "reshape" and eqn.params.get("dimensions") is not None:
        raise _unsupported("reshape with dimensions")
    return hlo.dynamic_reshape(
        lw.tensor_type(out_shape, dtype), operands[0], lw.shape_value(out_shape)
    )


def _broadcast_in_dim(lw, eqn, operands, in_shapes, out_shape, dtype):
    return hlo.dynamic_broadcast_in_dim(
        lw.tensor_type(out_shape, dtype),
        operands[0],
        lw.shape_value(out_shape),
        dense_int_array(list(eqn.params["broadcast_dimensions"])),
    )


def _lowest(dtype):
    return -np.inf if dtypes.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtypes.issubdtype(dtype, np.floating) else np.iinfo(dtype).max


_UNARY = {
    "neg": hlo.negate,
    "sin": hlo.sine,
    "cos": hlo.cosine,
    "tanh": hlo.tanh,
    "exp": hlo.exponential,
    "log": hlo.log,
    "sqrt": hlo.sqrt,
    "rsqrt": hlo.rsqrt,
    "abs": hlo.abs,
    "logistic": hlo.logistic,
    "sign": hlo.sign,
    "floor": hlo.floor,
    "ceil": hlo.ceil,
    "log1p": hlo.log_plus_one,
    "expm1": hlo.exponential_minus_one,
    "not": hlo.not_,
}
_BINARY = {
    "add": hlo.add,
    "add_any": hlo.add,
    "sub": hlo.subtract,
    "mul": hlo.multiply,
    "div": hlo.divide,
    "max": hlo.maximum,
    "min": hlo.minimum,
    "pow": hlo.power,
    "rem": hlo.remainder,
    "and": hlo.and_,
    "or": hlo.or_,
}
_RULES: dict[str, Callable] = {
    **{name: _elementwise(op) for name, op in {**_UNARY, **_BINARY}.items()},
    **{
        name: _compare(direction)
        for name, direction in {
            "eq": "EQ",
            "ne": "NE",
            "lt": "LT",
            "le": "LE",
            "gt": "GT",
            "ge": "GE",
        }.items()
    },
    "convert_element_type": _convert,
    "integer_pow": _integer_pow,
    "select_n": _select_n,
    "dot_general": _dot_general,
    "reduce_sum": _reduction(hlo.add, lambda d: 0),
    "reduce_prod": _reduction(hlo.multiply, lambda d: 1),
    "reduce_max": _reduction(hlo.maximum, _lowest),
    "reduce_min": _reduction(hlo.minimum, _highest),
    "broadcast_in_dim": _broadcast_in_dim,
    "transpose": _transpose,
    "reshape": _reshape,
    "squeeze": _reshape,
}


def lower_symbolic(closed, shapes, literals, names, module_name: str):
    """Lower the traced program with symbolic dimensions; return ``(module, context, outs)``.

    ``outs`` are the symbolic shapes of the results.
    """
    jaxpr = closed.jaxpr
    context = make_context()
    with context, ir.Location.unknown(context):
        module = ir.Module.create()
        module.operation.attributes["sym_name"] = ir.StringAttr.get(module_name)
        mctx = ModuleContext(context, module, ir.SymbolTable(module.operation), module_name)
        lw = _Lowerer(mctx, shapes, literals, {})
        in_types = [lw.tensor_type(shapes[id(v)], v.aval.dtype) for v in jaxpr.invars]
        out_shapes = [
            x.aval.shape if isinstance(x, Literal) else shapes[id(x)] for x in jaxpr.outvars
        ]
        out_types = [
            lw.tensor_type(s, x.aval.dtype) for s, x in zip(out_shapes, jaxpr.outvars, strict=True)
        ]
        main = func_dialect.FuncOp(
            "main", ir.FunctionType.get(in_types, out_types), ip=ir.InsertionPoint(module.body)
        )
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        block = main.add_entry_block()
        with ir.InsertionPoint(block):
            for name in names:
                i, j = next(
                    (i, j)
                    for i, v in enumerate(jaxpr.invars)
                    for j, d in enumerate(shapes[id(v)])
                    if d == name
                )
                lw.dim_values[name] = hlo.get_dimension_size(block.arguments[i], j)
            outs = lw.jaxpr(jaxpr, closed.consts, list(block.arguments))
            outs = [
                o if o.type == t else hlo.convert(t, o)
                for o, t in zip(outs, out_types, strict=True)
            ]
            func_dialect.ReturnOp(outs)
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            raise _unsupported(f"the lowered module does not verify: {e}") from e
    return module, context, out_shapes
