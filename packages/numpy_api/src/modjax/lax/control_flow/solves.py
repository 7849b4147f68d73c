"""``custom_linear_solve`` and ``custom_root``: solvers differentiated implicitly.

A solver's own steps (an iteration, a factorization) are rarely what one wants
to differentiate: the derivative of a solution is defined by the equation it
solves. Both functions here run the user's solver for the value and give it the
derivative of the equation.

``custom_linear_solve`` binds ``custom_linear_solve`` (``linear_solve_p``),
whose operands are the closed-over values of four programs followed by the
leaves of ``b``. Its params are the programs (ClosedJaxprs without consts, or
None when absent) and how many operands each reads:

``custom_linear_solve[const_lengths, matvec, vecmat, solve, transpose_solve]``
    ``const_lengths`` is ``(matvec, vecmat, solve, transpose_solve)`` const counts;
    the operands are those consts in that order, then ``b``. ``solve`` applied to
    its consts and ``b`` gives the outputs (``x``, then any aux leaves).

Its rules: evaluation and lowering run ``solve``; the JVP of ``A x = b`` is
``x_dot = solve(b_dot - A_dot x)``, another ``custom_linear_solve`` (linear in its
``b``); the transpose swaps ``matvec`` with ``vecmat`` and ``solve`` with
``transpose_solve``; batching batches all four programs, with the batched leaves of
``x`` and ``b`` found by a fixpoint so that the programs agree. Partial evaluation
has no rule of its own: with an unknown ``b`` the whole equation is staged, which
is right since its outputs are linear in ``b``. DCE keeps it whole.

``custom_root`` needs no primitive: it is a ``custom_jvp`` function whose primal is
the user's ``solve`` and whose tangent comes from the implicit function theorem,
``x_dot = -(df/dx)^-1 (df/dparams . params_dot)``, with the inverse applied by the
user's ``tangent_solve`` to the linearization of ``f`` at the root.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from modjax.autodiff import (
    Zero,
    add_tangents,
    custom_jvp,
    instantiate_zeros,
    is_undefined_primal,
    jvp_flat,
    jvp_rules,
    linear_transpose,
    linearize,
    transpose_rules,
)
from modjax.batching import AxisData, axis_primitive_batchers, batch_jaxpr_axis, broadcast, moveaxis
from modjax.lowering import lower_jaxpr_inline, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore.core import Primitive
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.tracing import convert_constvars_jaxpr
from modjax.tracecore.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_leaves,
    tree_structure,
    tree_unflatten,
)

from ..elementwise import neg
from .common import abstractify, trace_closed, typematch

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]

# The four programs of a linear solve, in the order of their consts among the operands.
_JAXPR_NAMES = ("matvec", "vecmat", "solve", "transpose_solve")


# --- checks (JAX's messages) --------------------------------------------------------------


def _check_tree(
    func_name: str,
    expected_name: str,
    actual: PyTreeDef,
    expected: PyTreeDef,
    has_aux: bool = False,
) -> PyTreeDef:
    """Raise unless ``actual`` (the result part when ``has_aux``) is ``expected``.

    Return the tree of the aux part (or None without ``has_aux``).
    """
    aux_tree = None
    if has_aux:
        children = actual.children()
        if len(children) != 2:
            raise ValueError(
                f"{func_name}() produced a pytree with structure {actual}, but a pytree "
                "tuple with auxiliary output was expected because has_aux was set to True."
            )
        actual, aux_tree = children
    if actual != expected:
        raise TypeError(
            f"{func_name}() output pytree structure must match {expected_name}, "
            f"got {actual} and {expected}."
        )
    return aux_tree


def _shape_checked(fun: Callable, name: str, b_flat, has_aux: bool) -> Callable:
    """Wrap ``fun`` to raise JAX's ValueError when its result's shapes are not ``b``'s."""
    expected = [np.shape(x) for x in b_flat]

    def check(y):
        actual = [np.shape(leaf) for leaf in tree_leaves(y)]
        if actual != expected:
            raise ValueError(f"{name}() output shapes must match b, got {actual} and {expected}")

    def checked(x):
        y = fun(x)
        check(y)
        return y

    def checked_aux(x):
        # Unpacked as JAX does: a solve that forgets its aux output fails right here.
        y, aux = fun(x)
        check(y)
        return y, aux

    return checked_aux if has_aux else checked


# --- the primitive --------------------------------------------------------------------------

linear_solve_p = Primitive("custom_linear_solve")
linear_solve_p.multiple_results = True


def _split_operands(args, const_lengths):
    """Split operands into the consts of each program (``const_lengths``) and the rest."""
    groups, start = [], 0
    for n in const_lengths:
        groups.append(list(args[start : start + n]))
        start += n
    return groups, list(args[start:])


def _transposed(params: dict) -> dict:
    """The params of the transposed solve: ``matvec``/``vecmat`` and the solves swapped."""
    m, v, s, t = params["const_lengths"]
    return {
        "const_lengths": (v, m, t, s),
        "matvec": params["vecmat"],
        "vecmat": params["matvec"],
        "solve": params["transpose_solve"],
        "transpose_solve": params["solve"],
    }


def _linear_solve_abstract_eval(*avals, const_lengths, matvec, vecmat, solve, transpose_solve):
    groups, b = _split_operands(avals, const_lengths)
    for name, jaxpr, consts in zip(
        _JAXPR_NAMES, (matvec, vecmat, solve, transpose_solve), groups, strict=True
    ):
        if jaxpr is None:
            if consts:
                raise TypeError(f"custom_linear_solve: {len(consts)} consts for no {name}")
            continue
        want = jaxpr.in_avals
        got = [*consts, *b]
        if len(want) != len(got) or not all(map(typematch, want, got)):
            raise TypeError(
                f"custom_linear_solve: the {name} program takes "
                f"({', '.join(a.str_short() for a in want)}) but its operands are "
                f"({', '.join(a.str_short() for a in got)})"
            )
    # The results are solve's: x, then any aux values. (JAX gives x b's types, which
    # would mistype a solve that changes the dtype; the values are solve's either way.)
    return solve.out_avals


def _linear_solve_lowering(ctx, *operands, const_lengths, solve, **_):
    groups, b = _split_operands(operands, const_lengths)
    return lower_jaxpr_inline(ctx, solve, [*groups[2], *b])


linear_solve_p.def_abstract_eval(_linear_solve_abstract_eval)
linear_solve_p.def_impl(functools.partial(apply_primitive, linear_solve_p))
register_lowering(linear_solve_p, _linear_solve_lowering)


def _linear_solve_jvp(primals, tangents, **params):
    # A x = b  =>  A_dot x + A x_dot = b_dot  =>  x_dot = A^-1 (b_dot - A_dot x).
    x = linear_solve_p.bind(*primals, **params)
    const_lengths = params["const_lengths"]
    groups, _ = _split_operands(primals, const_lengths)
    dgroups, b_dot = _split_operands(tangents, const_lengths)
    n = len(b_dot)
    x_vec, aux = x[:n], x[n:]
    rhs = list(b_dot)
    if any(type(t) is not Zero for t in dgroups[0]):
        # The tangent of matvec(x) due to its closed-over values only (x held fixed).
        matvec = params["matvec"]
        _, mv_dot = jvp_flat(
            lambda *a: eval_jaxpr(matvec.jaxpr, matvec.consts, *a),
            [*groups[0], *x_vec],
            [*dgroups[0], *[Zero.from_primal_value(v) for v in x_vec]],
        )
        rhs = [
            r if type(m) is Zero else add_tangents(r, neg(m))
            for r, m in zip(rhs, mv_dot, strict=True)
        ]
    if all(type(r) is Zero for r in rhs):
        return x, [Zero.from_primal_value(v) for v in x]
    rhs = [instantiate_zeros(r) for r in rhs]
    consts = [c for g in groups for c in g]
    x_dot = linear_solve_p.bind(*consts, *rhs, **params)
    # Aux values (solver diagnostics) are not differentiated.
    return x, list(x_dot[:n]) + [Zero.from_primal_value(a) for a in aux]


def _linear_solve_transpose(cts, *args, **params):
    if params["transpose_solve"] is None:
        raise TypeError(
            "transpose_solve required for backwards mode automatic differentiation of "
            "custom_linear_solve"
        )
    const_lengths = params["const_lengths"]
    groups, b = _split_operands(args, const_lengths)
    if any(is_undefined_primal(c) for g in groups for c in g):
        raise NotImplementedError(
            "custom_linear_solve: cannot transpose with respect to the values that matvec, "
            "solve or transpose_solve close over; only b may be linear"
        )
    n = len(b)
    x_ct, aux_ct = cts[:n], cts[n:]
    if any(type(c) is not Zero for c in aux_ct):
        raise NotImplementedError("can't transpose aux values in linear_solve")
    nconsts = sum(const_lengths)
    if all(type(c) is Zero for c in x_ct):
        return [None] * len(args)
    new = _transposed(params)
    m, v, s, t = groups
    b_ct = linear_solve_p.bind(*v, *m, *t, *s, *map(instantiate_zeros, x_ct), **new)[:n]
    return [None] * nconsts + [
        ct if is_undefined_primal(a) else None for a, ct in zip(b, b_ct, strict=True)
    ]


jvp_rules[linear_solve_p] = _linear_solve_jvp
transpose_rules[linear_solve_p] = _linear_solve_transpose


# --- batching -------------------------------------------------------------------------------

# Batched programs with their consts hoisted to leading inputs, by (axis, dims, forced
# outputs): keyed weakly on the program, so that eager calls under vmap reuse one
# batched program (and its compiled executable).
_batched = JaxprCache("linear_solve_batch")


def _batch_program(closed: ClosedJaxpr, axis_data: AxisData, in_bat, out_force):
    """Batch ``closed`` with batched inputs at axis 0; force the ``out_force`` outputs to 0.

    Return ``(program, consts, out_batched)``: the program takes ``(*consts, *inputs)``.
    """
    in_dims = tuple(0 if b else None for b in in_bat)
    out_inst = tuple(0 if f else None for f in out_force)

    def compute():
        batched, out_dims = batch_jaxpr_axis(closed, axis_data, in_dims, out_inst)
        consts = tuple(batched.consts)
        if consts:
            batched = ClosedJaxpr(convert_constvars_jaxpr(batched.jaxpr), ())
        return batched, consts, tuple(d is not None for d in out_dims)

    program, consts, out_bat = _batched.get(
        closed, (axis_data, in_dims, out_inst), compute, lambda v: not has_tracers(v[1])
    )
    return program, list(consts), list(out_bat)


def _linear_solve_batcher(axis_data: AxisData, args, dims, **params):
    const_lengths = params["const_lengths"]
    jaxprs = [params[name] for name in _JAXPR_NAMES]
    groups, b = _split_operands(args, const_lengths)
    gdims, b_dims = _split_operands(dims, const_lengths)
    gbat = [[d is not None for d in g] for g in gdims]
    n = len(b)
    n_aux = len(params["solve"].out_avals) - n

    # One mask serves x and b (same tree, same types): a leaf batched in either is
    # batched in both, so that every program maps batched vectors to batched vectors.
    # Iterate until no program batches a leaf that the mask does not (monotone).
    bat = [d is not None for d in b_dims]
    aux_bat = [False] * n_aux
    for _ in range(n + n_aux + 2):
        new_bat, new_aux = list(bat), list(aux_bat)
        batched = []
        for name, jaxpr, cb in zip(_JAXPR_NAMES, jaxprs, gbat, strict=True):
            if jaxpr is None:
                batched.append(None)
                continue
            aux_force = aux_bat if name == "solve" else [False] * (len(jaxpr.out_avals) - n)
            prog = _batch_program(jaxpr, axis_data, cb + bat, bat + aux_force)
            batched.append(prog)
            out_bat = prog[2]
            new_bat = [a or o for a, o in zip(new_bat, out_bat[:n], strict=True)]
            if name == "solve":
                new_aux = [a or o for a, o in zip(new_aux, out_bat[n:], strict=True)]
        if new_bat == bat and new_aux == aux_bat:
            break
        bat, aux_bat = new_bat, new_aux
    else:  # pragma: no cover - the masks only grow, so this cannot happen
        raise AssertionError("custom_linear_solve batching: no fixpoint")

    if not any(bat) and not any(aux_bat) and all(d is None for d in dims):
        # Nothing is batched (the programs use no named axis): bind as is.
        outs = linear_solve_p.bind(*args, **params)
        return outs, [None] * len(outs)

    operands, new_lengths, new_params = [], [], {}
    for name, jaxpr, prog, g, gd in zip(_JAXPR_NAMES, jaxprs, batched, groups, gdims, strict=True):
        if jaxpr is None:
            new_params[name] = None
            new_lengths.append(0)
            continue
        program, extra, _ = prog
        new_params[name] = program
        moved = [
            x if d is None or d == 0 else moveaxis(x, d, 0) for x, d in zip(g, gd, strict=True)
        ]
        operands += [*extra, *moved]
        new_lengths.append(len(extra) + len(moved))
    for x, d, now in zip(b, b_dims, bat, strict=True):
        if d is None:
            operands.append(broadcast(x, axis_data.size, 0) if now else x)
        else:
            operands.append(x if d == 0 else moveaxis(x, d, 0))
    outs = linear_solve_p.bind(*operands, const_lengths=tuple(new_lengths), **new_params)
    return outs, [0 if b_ else None for b_ in bat + aux_bat]


axis_primitive_batchers[linear_solve_p] = _linear_solve_batcher


# --- custom_linear_solve --------------------------------------------------------------------


def _transpose_one_output(linear_fun: Callable, b) -> Callable:
    """Return the transpose of the linear ``linear_fun`` (of one argument like ``b``)."""
    transpose = linear_transpose(linear_fun, b)

    def vecmat(x):
        (y,) = transpose(x)
        return y

    return vecmat


def custom_linear_solve(
    matvec: Callable,
    b: Any,
    solve: Callable,
    transpose_solve: Callable | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
):
    """Solve ``matvec(x) == b`` with ``solve``, differentiating implicitly (custom_linear_solve).

    ``matvec`` is a linear function on pytrees of ``b``'s structure; ``solve(matvec, b)``
    returns ``x`` with ``matvec(x) == b``, and ``transpose_solve(vecmat, b)`` solves
    with the transposed operator ``vecmat`` (derived from ``matvec``). With
    ``symmetric=True`` the operator is its own transpose and ``solve`` serves for
    both. With ``has_aux`` the solves return ``(x, aux)``; ``aux`` is returned too,
    undifferentiated. Derivatives assume ``x`` solves the equation: the JVP solves
    again with ``solve``; reverse mode needs ``transpose_solve`` (or ``symmetric``).
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve

    b_flat, in_args_tree = tree_flatten((b,))
    b_avals = tuple(abstractify(x) for x in b_flat)
    tree = tree_structure(b)

    def trace(fun, name, aux):
        return trace_closed(_shape_checked(fun, name, b_flat, aux), in_args_tree, b_avals)

    # matvec has no aux output.
    mv = trace(matvec, "matvec", False)
    _check_tree("matvec", "b", mv.out_tree, tree)

    sv = trace(functools.partial(solve, matvec), "solve", has_aux)
    _check_tree("solve", "b", sv.out_tree, tree, has_aux)

    if transpose_solve is None:
        vm = ts = None
    else:
        if symmetric:
            vecmat, vm = matvec, mv
        else:
            vecmat = _transpose_one_output(matvec, b)
            vm = trace_closed(vecmat, in_args_tree, b_avals)
        ts = trace(functools.partial(transpose_solve, vecmat), "transpose_solve", has_aux)
        _check_tree("transpose_solve", "b", ts.out_tree, tree, has_aux)

    traced = (mv, vm, sv, ts)
    consts = [c for t in traced if t is not None for c in t.consts]
    params = {
        name: None if t is None else t.jaxpr for name, t in zip(_JAXPR_NAMES, traced, strict=True)
    }
    const_lengths = tuple(0 if t is None else len(t.consts) for t in traced)
    out_flat = linear_solve_p.bind(*consts, *b_flat, const_lengths=const_lengths, **params)
    return tree_unflatten(sv.out_tree, out_flat)


# --- custom_root ----------------------------------------------------------------------------


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _custom_root(const_lengths, jaxprs, *args):
    (_, solve_consts, _), guess = _split_operands(args, const_lengths)
    solve = jaxprs[1]
    return eval_jaxpr(solve.jaxpr, solve.consts, *solve_consts, *guess)


@_custom_root.defjvp
def _root_jvp(const_lengths, jaxprs, primals, tangents):
    # f(p, x*(p)) = 0 near the root, so  df/dp . p_dot + df/dx . x_dot = 0  and
    # x_dot = -(df/dx)^-1 (df/dp . p_dot): the rhs is the JVP of f in its closed-over
    # values p at the solution, and l_and_s applies tangent_solve with df/dx.
    (f_consts, _, ls_consts), _ = _split_operands(primals, const_lengths)
    (f_dots, _, _), _ = _split_operands(tangents, const_lengths)
    f, _, l_and_s = jaxprs
    out = _custom_root(const_lengths, jaxprs, *primals)
    n = len(f.out_avals)
    solution, aux = list(out[:n]), list(out[n:])
    _, rhs = jvp_flat(lambda *p: eval_jaxpr(f.jaxpr, f.consts, *p, *solution), f_consts, f_dots)
    rhs = [instantiate_zeros(r) for r in rhs]
    solved = eval_jaxpr(l_and_s.jaxpr, l_and_s.consts, *ls_consts, *solution, *rhs)
    solution_dot = [neg(t) for t in solved]
    # Aux values have zero tangents (float0 ones for integer aux, unlike JAX, which fails).
    return solution + aux, solution_dot + [Zero.from_primal_value(a) for a in aux]


def custom_root(
    f: Callable,
    initial_guess: Any,
    solve: Callable,
    tangent_solve: Callable,
    has_aux: bool = False,
):
    """Find a root of ``f`` with ``solve``, differentiating implicitly (custom_root).

    ``solve(f, initial_guess)`` returns ``x`` with ``f(x) == 0`` (``f`` maps a pytree
    like ``initial_guess`` to one of the same structure); it is not differentiated
    itself (it may differentiate ``f``, as Newton's method does). ``tangent_solve(g, y)`` solves the
    linear system ``g(x) == y`` for ``g`` the linearization of ``f`` at the root (for
    scalars, ``lambda g, y: y / g(1.0)``). Derivatives with respect to the values
    ``f`` closes over follow from the implicit function theorem. With ``has_aux``,
    ``solve`` returns ``(x, aux)`` and so does this function (``aux`` undifferentiated).
    """
    guess_flat, in_args_tree = tree_flatten((initial_guess,))
    guess_avals = tuple(abstractify(x) for x in guess_flat)
    in_tree = tree_structure(initial_guess)

    f_traced = trace_closed(f, in_args_tree, guess_avals)
    _check_tree("f", "initial_guess", f_traced.out_tree, in_tree)

    solve_traced = trace_closed(functools.partial(solve, f), in_args_tree, guess_avals)
    _check_tree("solve", "initial_guess", solve_traced.out_tree, in_tree, has_aux)

    def linearize_and_solve(x, b):
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    _, pair_tree = tree_flatten((initial_guess, initial_guess))
    ls_traced = trace_closed(linearize_and_solve, pair_tree, guess_avals * 2)
    _check_tree("tangent_solve", "x", ls_traced.out_tree, in_tree)

    traced = (f_traced, solve_traced, ls_traced)
    const_lengths = tuple(len(t.consts) for t in traced)
    jaxprs = tuple(t.jaxpr for t in traced)
    consts = [c for t in traced for c in t.consts]
    solution_flat = _custom_root(const_lengths, jaxprs, *consts, *guess_flat)
    return tree_unflatten(solve_traced.out_tree, solution_flat)
