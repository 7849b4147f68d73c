"""``sparsify`` rules for primitives that hold programs: jit, cond, while, scan, custom_jvp.

Each rule re-stages its inner programs over the flat buffers of its operands (a BCOO
flattens to ``data`` and ``indices``): the program is interpreted with ``eval_sparse``
inside the matching public function (``jit``, ``lax.switch``, ``lax.while_loop``,
``lax.scan``), so the result stays one compiled call or loop, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modjax import lax
from modjax.experimental.sparse._sparsify_bcsr import sparse_rules_bcsr
from modjax.experimental.sparse._sparsify_eval import eval_sparse
from modjax.experimental.sparse._sparsify_rules import is_sparse, sparse_rules
from modjax.runtime.jit import jit
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten

__all__: list[str] = []


class _FlatProgram:
    """``closed`` as a function of flat buffers: unflatten, interpret sparsely, flatten.

    ``lead`` are values (sparse or dense) passed before the flat ones, closed over;
    ``out_tree`` is the treedef of the outputs once it has run.
    """

    def __init__(self, closed: ClosedJaxpr, in_tree, lead: Sequence[Any] = ()):
        self.closed, self.in_tree, self.lead = closed, in_tree, list(lead)
        self.out_tree = None

    def run(self, flat: Sequence[Any]) -> list[Any]:
        values = [*self.lead, *tree_unflatten(self.in_tree, list(flat))]
        outs = eval_sparse(self.closed.jaxpr, self.closed.consts, values)
        out_flat, self.out_tree = tree_flatten(outs)
        return out_flat


def _jit_rule(primitive, *values, jaxpr, name, donated_invars=(), keep_unused=False, **params):
    if any(donated_invars):
        raise NotImplementedError("sparse xla_call with donated_invars")
    flat, in_tree = tree_flatten(list(values))
    program = _FlatProgram(jaxpr, in_tree)

    def call(*flat_args):
        return program.run(flat_args)

    call.__name__ = call.__qualname__ = name
    out = jit(call, keep_unused=keep_unused)(*flat)
    return tree_unflatten(program.out_tree, out)


def _cond_rule(primitive, index, *operands, branches, **params):
    if is_sparse(index):
        raise NotImplementedError(
            "sparse rule for cond with a sparse predicate is not implemented."
        )
    flat, in_tree = tree_flatten(list(operands))
    programs = [_FlatProgram(branch, in_tree) for branch in branches]
    out = lax.switch(index, [lambda *xs, p=p: p.run(xs) for p in programs], *flat)
    first = programs[0].out_tree
    for i, program in enumerate(programs[1:], start=1):
        if program.out_tree != first:
            raise TypeError(
                "sparsified true_fun output must have same type structure as sparsified "
                f"false_fun output, but there are differences: branch 0 gives {first}, "
                f"branch {i} gives {program.out_tree}"
            )
    return tree_unflatten(first, out)


def _while_rule(primitive, *values, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    cond_consts = values[:cond_nconsts]
    body_consts = values[cond_nconsts : cond_nconsts + body_nconsts]
    init = values[cond_nconsts + body_nconsts :]
    flat, in_tree = tree_flatten(list(init))
    cond = _FlatProgram(cond_jaxpr, in_tree, cond_consts)
    body = _FlatProgram(body_jaxpr, in_tree, body_consts)

    def cond_fun(carry):
        (pred,) = cond.run(carry)
        return pred

    out = lax.while_loop(cond_fun, lambda carry: body.run(carry), flat)
    return tree_unflatten(body.out_tree, out)


def _scan_rule(primitive, *values, jaxpr, num_consts, num_carry, length, reverse, unroll, **_):
    consts = values[:num_consts]
    carry = list(values[num_consts : num_consts + num_carry])
    xs = list(values[num_consts + num_carry :])
    if any(is_sparse(x) for x in xs):
        raise NotImplementedError("sparse rule for scan with x values.")
    carry_flat, _ = tree_flatten(carry)
    # The program's flat inputs: the carry's buffers, then one slice of each (dense) x.
    program = _FlatProgram(jaxpr, tree_flatten([*carry, *xs])[1], consts)
    carry_out_tree = []

    def step(flat, x_slices):
        out_flat = program.run([*flat, *x_slices])
        outs = tree_unflatten(program.out_tree, out_flat)
        if any(is_sparse(y) for y in outs[num_carry:]):
            raise NotImplementedError("sparse rule for scan with sparse y values.")
        new_flat, tree = tree_flatten(outs[:num_carry])
        carry_out_tree.append(tree)
        return new_flat, outs[num_carry:]

    final, ys = lax.scan(step, carry_flat, xs, length=length, reverse=reverse, unroll=unroll)
    return [*tree_unflatten(carry_out_tree[-1], final), *ys]


def _custom_jvp_rule(primitive, *values, call_jaxpr, **params):
    # Only the primal function runs under sparsify; its custom derivative is not used.
    return eval_sparse(call_jaxpr.jaxpr, call_jaxpr.consts, list(values))


sparse_rules["jit"] = _jit_rule
sparse_rules["cond"] = _cond_rule
sparse_rules["while"] = _while_rule
sparse_rules["scan"] = _scan_rule
sparse_rules["custom_jvp_call"] = _custom_jvp_rule
sparse_rules_bcsr["custom_jvp_call"] = _custom_jvp_rule
