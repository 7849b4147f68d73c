"""What the control-flow primitives share: tracing user functions, and their type checks.

Every construct (cond, while, scan, ...) traces the user's Python functions
once to a ``ClosedJaxpr`` whose closed-over values are hoisted to leading
operands (``trace_closed``): the inner program has no consts, so it prints and
parses back, and the enclosing trace sees every value (tracers of outer
transformations included). The traced program is memoized on the function
object and the input types, so an eager loop called again with the same
function reuses its program, and with it the compiled executable.

The checks raise the TypeErrors JAX raises, naming pytree paths and both types.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from modjax.tracecore.abstract import ShapedArray, sharding_entries
from modjax.tracecore.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.sharding_types import order_axes
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten_with_path,
    tree_unflatten,
)
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun_nokwargs, wrap_init

__all__ = [
    "Traced",
    "trace_closed",
    "abstractify",
    "func_description",
    "check_tree_and_avals",
    "check_carry_type",
    "promote_weak_carry",
    "leaf_paths",
    "join_consts",
    "jaxpr_with_leading_inputs",
    "typematch",
]


class Traced:
    """A traced user function: its program (no consts), the hoisted consts, its output tree."""

    __slots__ = ("jaxpr", "consts", "out_tree")

    def __init__(self, jaxpr: ClosedJaxpr, consts: list, out_tree: PyTreeDef):
        self.jaxpr = jaxpr
        self.consts = consts
        self.out_tree = out_tree

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals


# Traced programs, weakly by the user's function; keyed by input tree and types.
_traced = JaxprCache("control_flow_trace")


def abstractify(x) -> ShapedArray:
    """Return the aval a loop or branch traces the leaf ``x`` with."""
    return arg_aval(x)


def trace_closed(fun: Callable, in_tree: PyTreeDef, in_avals: Sequence[ShapedArray]) -> Traced:
    """Trace ``fun`` (taking the pytree ``in_tree`` of ``in_avals`` positionally) once.

    The result's jaxpr takes ``(*consts, *flat_inputs)`` and returns the flat outputs;
    ``consts`` are the values ``fun`` closed over (concrete arrays or tracers of
    enclosing traces). Memoized per function object and input types while the
    consts hold no tracers (JAX's ``_initial_style_jaxpr`` cache).
    """
    in_avals = tuple(in_avals)

    def compute() -> Traced:
        args = tree_unflatten(in_tree, in_avals)
        info = debug_info(fun, args if isinstance(args, tuple) else (args,))
        flat_fun, out_tree = flatten_fun_nokwargs(wrap_init(fun, info), in_tree)
        jaxpr, consts = trace_to_jaxpr(flat_fun, in_avals)
        closed = ClosedJaxpr(convert_constvars_jaxpr(jaxpr), ())
        return Traced(closed, list(consts), out_tree.val)

    try:
        return _traced.get(fun, (in_tree, in_avals), compute, lambda t: not has_tracers(t.consts))
    except TypeError:  # a callable that cannot be weakly referenced: trace every time
        return compute()


def func_description(fun: Callable) -> str:
    """Name ``fun`` and where it is defined, as JAX's errors do (``f at file.py:12``)."""
    info = debug_info(fun)
    where = f" at {info.func_src_info}" if info.func_src_info else ""
    return f"{info.func_name}{where}"


def leaf_paths(tree: PyTreeDef, prefix: str) -> list[str]:
    """Name each leaf of ``tree`` as ``prefix`` followed by its key path (``carry[0]['a']``)."""
    leaves = tree_unflatten(tree, [0] * tree.num_leaves)
    return [prefix + keystr(path) for path, _ in tree_flatten_with_path(leaves)[0]]


def typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Tell whether two avals agree in type, weak types aside (``core.typematch``).

    Shape, dtype, varying manual axes (inside shard_map with ``check_vma``) and,
    when both types are on a mesh with explicit axes, their shardings (JAX compares
    them there; a type with no mesh, None here, matches any).
    """
    if type(a) is AbstractToken or type(b) is AbstractToken:
        return a == b
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and _vma(a) == _vma(b)
        and _same_type_sharding(a, b)
    )


def _same_type_sharding(a: ShapedArray, b: ShapedArray) -> bool:
    sa, sb = getattr(a, "type_sharding", None), getattr(b, "type_sharding", None)
    if sa is None or sb is None or sa is sb:
        return True
    mesh_a = getattr(sa.mesh, "abstract_mesh", sa.mesh)  # a concrete Mesh or an AbstractMesh
    mesh_b = getattr(sb.mesh, "abstract_mesh", sb.mesh)
    return mesh_a == mesh_b and _spec_axes(a) == _spec_axes(b)


def _spec_axes(aval: ShapedArray) -> tuple:
    return tuple((e,) if isinstance(e, str) else tuple(e or ()) for e in sharding_entries(aval))


def _vma(aval) -> frozenset:
    return getattr(aval, "vma", frozenset())


def _mismatch_extra(a: ShapedArray, b: ShapedArray) -> str:
    parts = []
    if a.dtype != b.dtype:
        parts.append("the dtypes do not match")
    if a.shape != b.shape:
        parts.append("the shapes do not match")
    if _vma(a) != _vma(b):
        parts.append("the manual axis types do not match")
    if not parts:
        return ""
    if len(parts) == 1:
        return ", so " + parts[0]
    return ", so " + ", ".join(parts[:-1]) + ", and " + parts[-1]


def _structure_difference(name1: str, tree1: PyTreeDef, name2: str, tree2: PyTreeDef) -> str:
    """Say how two output structures differ at the root, as JAX's messages do."""
    root1 = tree_unflatten(tree1, [0] * tree1.num_leaves)
    root2 = tree_unflatten(tree2, [0] * tree2.num_leaves)
    leaf1, leaf2 = tree1.num_nodes == 1, tree2.num_nodes == 1
    if leaf1 or leaf2 or type(root1) is not type(root2):
        kind1 = "a pytree leaf" if leaf1 else f"a {type(root1)}"
        kind2 = "a pytree leaf" if leaf2 else f"a {type(root2)}"
        return (
            f"{name1} output is {kind1} but {name2} output is {kind2}, so their Python "
            "types differ."
        )
    if isinstance(root1, tuple | list) and len(root1) != len(root2):
        kind = type(root1).__name__
        return (
            f"{name1} output is a {kind} of length {len(root1)} but {name2} output is a "
            f"{kind} of length {len(root2)}, so the lengths do not match."
        )
    if tree1.node_data() != tree2.node_data():
        return (
            f"{name1} output is a {type(root1)} with pytree metadata {_metadata(tree1)} but "
            f"{name2} output is a {type(root2)} with pytree metadata {_metadata(tree2)}, so "
            "the pytree node metadata does not match."
        )
    return f"{name1} output has structure {tree1} but {name2} output has structure {tree2}."


def _carry_structure_difference(name: str, in_tree: PyTreeDef, out_tree: PyTreeDef) -> str:
    """Say how a body's carry output differs in structure from its carry input."""
    detail = _structure_difference("in", in_tree, "out", out_tree)
    detail = detail.replace("in output is", f"The input carry {name} is", 1)
    return detail.replace("out output is", "the corresponding component of the carry output is")


def _metadata(tree: PyTreeDef):
    data = tree.node_data()
    return data[1] if isinstance(data, tuple) and len(data) == 2 else data


def check_tree_and_avals(
    what: str,
    names: tuple[str, str],
    descriptions: tuple[str, str],
    trees: tuple[PyTreeDef, PyTreeDef],
    avals: tuple[Sequence[ShapedArray], Sequence[ShapedArray]],
) -> None:
    """Raise TypeError unless two outputs (of branches, say) agree in tree, shapes and dtypes.

    ``names`` are how the message calls the two functions (``true_fun``), and
    ``descriptions`` say what and where they are; weak types may differ.
    """
    name1, name2 = names
    header = f"{name1} is {descriptions[0]}\n{name2} is {descriptions[1]}\n\n"
    if trees[0] != trees[1]:
        detail = _structure_difference(name1, trees[0], name2, trees[1])
        raise TypeError(
            f"{what.replace('branches', 'branch outputs')} must have the same pytree "
            f"structure, but they differ:\n\n{header}{detail}\n\nRevise {name1} and/or "
            f"{name2} so that they have the same pytree structure."
        )
    paths = leaf_paths(trees[0], "")
    diffs = [
        f"the output of {name1}{path} has type {a.str_short()} but the corresponding output "
        f"of {name2} has type {b.str_short()}{_mismatch_extra(a, b)}"
        for path, a, b in zip(paths, avals[0], avals[1], strict=True)
        if not typematch(a, b)
    ]
    if diffs:
        if len(diffs) == 1:
            listed = diffs[0][0].upper() + diffs[0][1:] + ".\n"
        else:
            listed = "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"
        raise TypeError(
            f"{what} must have equal output types but they differ.\n\n{header}{listed}\n"
            + _branch_pvary_hint(names, paths, avals)
            + f"Revise {name1} and/or {name2} so that all output types match."
        )


def _branch_pvary_hint(names, paths, avals) -> str:
    """JAX's ``pcast`` suggestion for branch outputs that differ in varying manual axes.

    As JAX 0.10.2 words it, including its choice of axes (those the *other* branch
    lacks, so often ``()``).
    """
    fixes = [
        f"applying `jax.lax.pcast(..., {order_axes(_vma(a1) - _vma(a2))}, to='varying')` to "
        f"the output of {n}{path}"
        for path, b1, b2 in zip(paths, avals[0], avals[1], strict=True)
        for n, a1, a2 in ((names[0], b2, b1), (names[1], b1, b2))
        if not typematch(a1, a2) and _vma(a1) != _vma(a2) and _vma(a2) - _vma(a1)
    ]
    if not fixes:
        return ""
    if len(fixes) == 1:
        hint = f"This might be fixed by {fixes[0]}.\n"
    else:
        hint = "This might be fixed by:\n" + "\n".join(f"  * {d};" for d in fixes[:-1])
        hint += f"\n  * {fixes[-1]}.\n"
    return (
        hint + "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more "
        "information.\n\n"
    )


def check_carry_type(
    name: str,
    in_tree: PyTreeDef,
    in_avals: Sequence[ShapedArray],
    out_tree: PyTreeDef,
    out_avals: Sequence[ShapedArray],
    carry_name: str = "carry",
) -> None:
    """Raise TypeError unless a loop body's carry output matches its carry input.

    Shapes and dtypes must agree; weak types may differ (JAX's ``_check_carry_type``).
    ``name`` is the function, e.g. ``"scan body function"``.
    """
    paths = leaf_paths(in_tree, carry_name)
    if in_tree != out_tree:
        raise TypeError(
            f"{name} carry input and carry output must have the same pytree structure, "
            f"but they differ:\n\n{_carry_structure_difference(carry_name, in_tree, out_tree)}"
            "\n\nRevise the function so that the carry output has the same pytree structure "
            "as the carry input."
        )
    diffs = [
        f"{_carry_component(path, carry_name)} has type {a.str_short()} but the corresponding "
        f"output carry component has type {b.str_short()}{_mismatch_extra(a, b)}"
        for path, a, b in zip(paths, in_avals, out_avals, strict=True)
        if not typematch(a, b)
    ]
    if diffs:
        raise TypeError(
            f"{name} carry input and carry output must have equal types, but they "
            f"differ:\n\n{_listed(diffs)}\n{_pvary_hint(paths, in_avals, out_avals, carry_name)}"
            "Revise the function so that all output types match the corresponding input types."
        )


def _listed(items: list[str]) -> str:
    """One item as a sentence, several as a bulleted list, as JAX's messages list them."""
    if len(items) == 1:
        return items[0][0].upper() + items[0][1:] + ".\n"
    return "\n".join(f"  * {d};\n" for d in items[:-1]) + f"  * {items[-1]}.\n"


def _pvary_hint(paths, in_avals, out_avals, carry_name: str) -> str:
    """Suggest ``pcast`` for carries that turned varying over manual axes (JAX's hint)."""
    fixes = [
        f"applying `jax.lax.pcast(..., {order_axes(_vma(b) - _vma(a))}, to='varying')`, to "
        f"the initial carry value corresponding to {_carry_component(path, carry_name)}"
        for path, a, b in zip(paths, in_avals, out_avals, strict=True)
        if not typematch(a, b) and _vma(b) - _vma(a)
    ]
    if not fixes:
        return ""
    if len(fixes) == 1:
        hint = f"This might be fixed by {fixes[0]}.\n"
    else:
        hint = "This might be fixed by:\n" + "\n".join(f"  * {d};\n" for d in fixes[:-1])
        hint += f"  * {fixes[-1]}.\n"
    return (
        hint + "See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more "
        "information.\n\n"
    )


def _carry_component(path: str, carry_name: str) -> str:
    if path == carry_name:
        return f"the input carry {carry_name}"
    return f"the input carry component {path}"


def promote_weak_carry(
    values: list, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray]
) -> bool:
    """Make weakly typed carry leaves strong, of the dtype the body gives; tell if any changed.

    A weak initial value (``0`` in ``fori_loop(0, n, lambda i, acc: acc + x[i], 0)``)
    whose body result is of another dtype takes the result's dtype, strongly typed, as
    in JAX; the caller traces the body again. One whose body result has its dtype but
    is strong stays weak, as in JAX (whose carry check ignores weak types): the loop's
    carry goes in weak and comes out strong, so a ``y`` stacked from the carry is weak.
    ``values`` is updated in place.
    """
    from ..elementwise import _convert_element_type

    changed = False
    for i, (a, b) in enumerate(zip(in_avals, out_avals, strict=True)):
        if getattr(a, "weak_type", False) and a.shape == b.shape and a.dtype != b.dtype:
            values[i] = _convert_element_type(values[i], b.dtype, weak_type=False)
            changed = True
    return changed


def join_consts(traced: Sequence[Traced]) -> tuple[list, list[ClosedJaxpr]]:
    """Give several traced functions one shared list of consts (cond's branches).

    Return the consts (each distinct value once, by identity) and each program
    rewritten to take all of them as its leading inputs, ignoring those it does not read.
    """
    consts: list = []
    index: dict[int, int] = {}
    for t in traced:
        for c in t.consts:
            if id(c) not in index:
                index[id(c)] = len(consts)
                consts.append(c)
    const_avals = [abstractify(c) for c in consts]
    jaxprs = []
    for t in traced:
        positions = [index[id(c)] for c in t.consts]
        jaxprs.append(jaxpr_with_leading_inputs(t.jaxpr, const_avals, positions))
    return consts, jaxprs


def jaxpr_with_leading_inputs(
    closed: ClosedJaxpr, avals: Sequence[ShapedArray], positions: Sequence[int]
) -> ClosedJaxpr:
    """Return ``closed`` taking ``len(avals)`` new leading inputs in place of its first ones.

    Its first ``len(positions)`` inputs become the new inputs at ``positions``; the
    other new inputs are unused.
    """
    j = closed.jaxpr
    n_old = len(positions)
    if n_old == len(avals) and list(positions) == list(range(n_old)):
        return closed
    new_vars = [Var(a) for a in avals]
    substitute = {}
    for old, pos in zip(j.invars[:n_old], positions, strict=True):
        substitute[old] = new_vars[pos]
    renamed = _rename(j, substitute)
    return ClosedJaxpr(renamed.replace(invars=new_vars + renamed.invars[n_old:]), closed.consts)


def _rename(jaxpr: Jaxpr, substitute: dict) -> Jaxpr:
    if not substitute:
        return jaxpr

    def atom(a):
        return a if isinstance(a, Literal) else substitute.get(a, a)

    eqns = [eqn.replace(invars=[atom(a) for a in eqn.invars]) for eqn in jaxpr.eqns]
    return jaxpr.replace(
        invars=[substitute.get(v, v) for v in jaxpr.invars],
        outvars=[atom(a) for a in jaxpr.outvars],
        eqns=eqns,
    )
