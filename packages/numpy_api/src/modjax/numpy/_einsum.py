"""``einsum`` and ``einsum_path``: Einstein summation with a contraction-order search.

An einsum is evaluated as a sequence of pairwise contractions, each one
``lax.dot_general`` (labels shared by the pair and still needed later are
batch dimensions, the others are contracted), so no outer product is ever
materialized unless the expression asks for one. Before that, each operand
is simplified on its own: repeated labels (``"ii->i"``) become a diagonal (a
strided slice), size-1 dimensions that broadcast against larger ones are
dropped, and labels nobody else needs are summed out. Each pairwise contraction
orders its operands, dimensions and result as JAX's einsum does (through
opt_einsum), so the dot_generals, and the bits XLA computes from them, are JAX's.

The order of the pairwise contractions is a *path*, in numpy's and
opt_einsum's format: a list of tuples of positions in the current operand
list; the contracted operands are removed and the result is appended. Paths
are searched here, against a FLOP count:

* ``"greedy"``: repeatedly contract the pair whose result is smallest
  relative to its inputs (ties: fewest FLOPs), preferring pairs that share
  a label;
* ``"optimal"``: an exhaustive search over all contraction trees by dynamic
  programming over subsets of operands (3**n work, used up to 12 operands;
  more fall back to greedy);
* ``True``/``"auto"`` picks optimal up to 5 operands and greedy beyond;
  ``False`` contracts left to right; an explicit path is used as given.
"""

from __future__ import annotations

import functools
import math
import string
from collections.abc import Sequence
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.lax.dot import contract_with_out_sharding
from modjax.lax.elementwise import _convert_element_type

from ._products import diagonal_of_axes
from ._util import (
    ARRAY_TYPES,
    aval,
    canonical_dtype,
    check_arraylike,
    from_jax_array_protocol,
    promote_dtypes,
)

__all__ = ["einsum", "einsum_path"]

_LETTERS = string.ascii_letters
_MAX_OPTIMAL = 12


# --- parsing --------------------------------------------------------------------------------


def _interleaved(args: tuple) -> tuple[str, list]:
    """Turn ``einsum(op0, sub0, op1, sub1, ..., [out])`` into a subscripts string and operands."""
    operands, terms = [], []
    args = list(args)
    out = None
    if len(args) % 2 == 1:
        out = args.pop()
    for i in range(0, len(args), 2):
        operands.append(args[i])
        terms.append(_sublist_text(args[i + 1]))
    text = ",".join(terms)
    if out is not None:
        text += "->" + _sublist_text(out)
    return text, operands


def _sublist_text(sublist: Sequence) -> str:
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append("...")
        else:
            i = int(s)
            if not 0 <= i < len(_LETTERS):
                raise ValueError(f"einsum sublist labels must be in [0, 52), got {s}")
            out.append(_LETTERS[i])
    return "".join(out)


def _parse_term(term: str, ndim: int, position: int, n_ellipsis: int | None) -> list[str]:
    """Return the labels of one operand's dimensions; ellipsis dims get labels ``"...k"``."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"Invalid Einstein sum subscript {term!r}: at most one ellipsis '...'")
    head, _, tail = term.partition("...")
    if "..." not in term:
        if len(term) != ndim:
            raise ValueError(
                f"Einstein sum subscript '{term}' does not contain the correct number of "
                f"indices for operand {position}."
            )
        return list(term)
    count = ndim - len(head) - len(tail)
    if count < 0:
        raise ValueError(
            f"Einstein sum subscript '{term}' does not contain the correct number of indices "
            f"for operand {position}."
        )
    total = count if n_ellipsis is None else n_ellipsis
    return list(head) + [f"...{k}" for k in range(total - count, total)] + list(tail)


class _Spec:
    """A parsed einsum: the labels of each input, of the output, and the size of each label."""

    def __init__(self, subscripts: str, shapes: list[tuple[int, ...]]):
        text = subscripts.replace(" ", "")
        inputs, arrow, output = text.partition("->")
        if "-" in inputs + output or ">" in inputs + output:
            raise ValueError(f"Invalid einsum subscripts {subscripts!r}: misplaced '->'")
        terms = inputs.split(",")
        if len(terms) != len(shapes):
            raise ValueError(
                f"Number of einsum subscripts, {len(terms)}, must be equal to the number of "
                f"operands, {len(shapes)}."
            )
        # the ellipsis covers as many dimensions as the widest operand needs
        widths = [
            len(shape) - len(term.replace("...", ""))
            for term, shape in zip(terms, shapes, strict=True)
            if "..." in term
        ]
        n_ellipsis = max(widths, default=0)
        self.inputs = [
            _parse_term(term, len(shape), i, n_ellipsis if "..." in term else None)
            for i, (term, shape) in enumerate(zip(terms, shapes, strict=True))
        ]
        self.sizes: dict[str, int] = {}
        for i, (labels, shape) in enumerate(zip(self.inputs, shapes, strict=True)):
            for label, size in zip(labels, shape, strict=True):
                known = self.sizes.get(label)
                if known is None or known == 1:
                    self.sizes[label] = size
                elif size not in (1, known):
                    name = "..." if label.startswith("...") else label
                    # opt_einsum's words (JAX's einsum raises them): the earlier
                    # size is printed first.
                    raise ValueError(
                        f"Size of label '{name}' for operand {i} ({known}) does not match "
                        f"previous terms ({size})."
                    )
        ellipsis = [f"...{k}" for k in range(n_ellipsis)]
        if arrow:
            if output.count("...") > 1:
                raise ValueError("einsum output may hold at most one ellipsis '...'")
            head, dots, tail = output.partition("...")
            for c in head + tail:
                if c not in self.sizes:
                    raise ValueError(f"Output character '{c}' did not appear in the input")
            if len(set(head + tail)) != len(head + tail):
                dup = next(c for c in head + tail if (head + tail).count(c) > 1)
                raise ValueError(f"Output character '{dup}' appeared more than once in the output.")
            self.output = list(head) + (ellipsis if dots else []) + list(tail)
        else:
            counts: dict[str, int] = {}
            for labels in self.inputs:
                for label in labels:
                    if not label.startswith("..."):
                        counts[label] = counts.get(label, 0) + 1
            self.output = ellipsis + sorted(c for c, n in counts.items() if n == 1)
        self.ellipsis = ellipsis

    def text(self, labels: Sequence[str]) -> str:
        """Write labels back as subscripts (ellipsis dims as fresh letters, for display)."""
        spare = [c for c in _LETTERS if c not in self.sizes]
        return "".join(spare[int(lbl[3:])] if lbl.startswith("...") else lbl for lbl in labels)


# --- cost model and path search -------------------------------------------------------------


def _size(labels, sizes) -> int:
    return math.prod(sizes[label] for label in labels)


def _pair_result(a: frozenset, b: frozenset, keep: frozenset) -> frozenset:
    """The labels of the contraction of ``a`` and ``b``: those still needed elsewhere."""
    return (a | b) & keep


def _pair_flops(a: frozenset, b: frozenset, result: frozenset, sizes) -> int:
    """FLOPs of contracting ``a`` with ``b``: one multiply-add per point of the joint index space.

    As opt_einsum and numpy count: the product of all label sizes, times 2 when
    some label is summed away (a multiply and an add), else 1.
    """
    union = a | b
    return _size(union, sizes) * (2 if union - result else 1)


def _needed(operands: list[frozenset], skip: set[int], output: frozenset) -> frozenset:
    keep = set(output)
    for k, labels in enumerate(operands):
        if k not in skip:
            keep |= labels
    return frozenset(keep)


def _greedy_path(operands: list[frozenset], output: frozenset, sizes) -> list[tuple[int, ...]]:
    current = list(operands)
    path = []
    while len(current) > 1:
        best = None
        for i in range(len(current)):
            for j in range(i + 1, len(current)):
                a, b = current[i], current[j]
                keep = _needed(current, {i, j}, output)
                result = _pair_result(a, b, keep)
                shares = bool(a & b)
                removed = _size(result, sizes) - _size(a, sizes) - _size(b, sizes)
                flops = _pair_flops(a, b, result, sizes)
                score = (not shares, removed if shares else _size(result, sizes), flops)
                if best is None or score < best[0]:
                    best = (score, i, j, result)
        _, i, j, result = best
        path.append((i, j))
        current = [op for k, op in enumerate(current) if k not in (i, j)] + [result]
    return path


def _optimal_path(operands: list[frozenset], output: frozenset, sizes) -> list[tuple[int, ...]]:
    """The cheapest contraction tree, by dynamic programming over subsets of operands."""
    n = len(operands)
    full = (1 << n) - 1

    @functools.cache
    def labels_of(subset: int) -> frozenset:
        inside = set()
        outside = set(output)
        for k in range(n):
            (inside if subset >> k & 1 else outside).update(operands[k])
        return frozenset(inside & outside)

    best: dict[int, tuple[int, Any]] = {1 << k: (0, k) for k in range(n)}
    by_size = sorted(range(1, full + 1), key=lambda s: bin(s).count("1"))
    for subset in by_size:
        if subset in best:
            continue
        result = labels_of(subset)
        choice = None
        low = subset & -subset  # put the lowest operand on the left: each split once
        sub = (subset - 1) & subset
        while sub:
            if sub & low:
                other = subset ^ sub
                cost_a, tree_a = best[sub]
                cost_b, tree_b = best[other]
                cost = (
                    cost_a + cost_b + _pair_flops(labels_of(sub), labels_of(other), result, sizes)
                )
                if choice is None or cost < choice[0]:
                    choice = (cost, (tree_a, tree_b))
            sub = (sub - 1) & subset
        best[subset] = choice
    return _tree_to_path(best[full][1], n)


def _tree_to_path(tree: Any, n: int) -> list[tuple[int, ...]]:
    """Turn a nested-pairs contraction tree into a linear path of positions."""
    current: list[Any] = list(range(n))
    path = []

    def visit(node):
        if isinstance(node, int):
            return node
        left, right = visit(node[0]), visit(node[1])
        i, j = sorted((current.index(left), current.index(right)))
        path.append((i, j))
        del current[j], current[i]
        current.append(node)
        return node

    visit(tree)
    return path


def _find_path(optimize: Any, operands: list[frozenset], output: frozenset, sizes) -> list:
    n = len(operands)
    if n < 2:
        return [tuple(range(n))] if n else []
    if isinstance(optimize, list | tuple):
        path = [tuple(step) for step in optimize if step != "einsum_path"]
        _check_path(path, n)
        return path
    if optimize is False or optimize is None:
        return [(0, 1)] * (n - 1)
    if optimize is True or optimize == "auto":
        optimize = "optimal" if n <= 5 else "greedy"
    if optimize in ("optimal", "dp"):
        if n <= _MAX_OPTIMAL:
            return _optimal_path(operands, output, sizes)
        return _greedy_path(operands, output, sizes)
    if optimize in ("greedy", "eager") or str(optimize).startswith("branch"):
        return _greedy_path(operands, output, sizes)
    raise ValueError(
        f"einsum optimize must be True, False, 'auto', 'greedy', 'optimal' or a path, got "
        f"{optimize!r}"
    )


def _check_path(path: list[tuple[int, ...]], n: int) -> None:
    count = n
    for step in path:
        if not step or any(not 0 <= i < count for i in step) or len(set(step)) != len(step):
            raise ValueError(f"invalid einsum path step {step} for {count} operands")
        count -= len(step) - 1
    if count != 1:
        raise ValueError(f"einsum path {path} does not contract all {n} operands to one")


def _path_costs(path, operands, output, sizes):
    """Replay ``path``: return per-step (labels in, result labels, flops) and the total."""
    current = list(operands)
    steps = []
    total = 0
    for step in path:
        group = [current[i] for i in step]
        rest = [op for k, op in enumerate(current) if k not in step]
        keep = _needed(rest, set(), output)
        union = frozenset().union(*group)
        result = union & keep
        flops = _size(union, sizes) * (max(1, len(group) - 1) + (1 if union - result else 0))
        total += flops
        steps.append((group, result, flops))
        current = rest + [result]
    return steps, total


# --- evaluation -----------------------------------------------------------------------------


def _sum_out(x, labels: list[str], drop: set[str]):
    axes = tuple(i for i, label in enumerate(labels) if label in drop)
    if not axes:
        return x, labels
    reduce = lax.reduce_or if aval(x).dtype == np.bool_ else lax.reduce_sum
    return reduce(x, axes), [label for label in labels if label not in drop]


def _simplify(x, labels: list[str], sizes: dict[str, int], keep: set[str]):
    """Drop broadcast size-1 dims, take diagonals of repeated labels, sum out unneeded labels."""
    shape = aval(x).shape
    squeeze = [
        i for i, (lbl, d) in enumerate(zip(labels, shape, strict=True)) if d == 1 != sizes[lbl]
    ]
    if squeeze:
        x = lax.squeeze(x, tuple(squeeze))
        labels = [lbl for i, lbl in enumerate(labels) if i not in squeeze]
    for label in dict.fromkeys(labels):
        if labels.count(label) > 1:
            axes = [i for i, lbl in enumerate(labels) if lbl == label]
            x = diagonal_of_axes(x, axes)
            labels = [lbl for lbl in labels if lbl != label] + [label]
    return _sum_out(x, labels, set(labels) - keep)


def _contract(a, la, b, lb, keep: set[str], precision, preferred, result=None):
    """Contract two operands with one dot_general; return the result and its labels.

    ``a`` comes before ``b`` in the operand list. The result's labels are ``result``
    (default: in order of first appearance in ``lb + la``, opt_einsum's order for an
    intermediate). As in JAX, the dot takes ``(a, b)`` when its natural output order
    is ``result`` and ``(b, a)`` otherwise, so that the program, and the order in which
    XLA accumulates, is JAX's.
    """
    a, la = _sum_out(a, la, set(la) - set(lb) - keep)
    b, lb = _sum_out(b, lb, set(lb) - set(la) - keep)
    shared = set(la) & set(lb)
    if result is None:
        result = [label for label in dict.fromkeys(lb + la) if label in keep or label not in shared]
    batch = [label for label in result if label in shared]
    contract = sorted(label for label in shared if label not in keep)
    free_a = [label for label in la if label not in shared]
    free_b = [label for label in lb if label not in shared]
    if batch + free_a + free_b != result:
        a, la, b, lb, free_a, free_b = b, lb, a, la, free_b, free_a
    numbers = (
        (tuple(la.index(c) for c in contract), tuple(lb.index(c) for c in contract)),
        (tuple(la.index(c) for c in batch), tuple(lb.index(c) for c in batch)),
    )
    out = lax.dot_general(a, b, numbers, precision=precision, preferred_element_type=preferred)
    labels = batch + free_a + free_b
    if labels != result:
        out = lax.transpose(out, tuple(labels.index(label) for label in result))
    return out, list(result)


def _prepare(subscripts: Any, operands: tuple):
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts, *operands))
    if not operands:
        raise ValueError("No input operands")
    check_arraylike("einsum", *operands)
    shapes = [aval(x).shape if isinstance(x, ARRAY_TYPES) else np.shape(x) for x in operands]
    spec = _Spec(subscripts, shapes)
    return spec, list(operands)


def einsum(
    subscripts: Any,
    /,
    *operands: Any,
    out: None = None,
    optimize: Any = "auto",
    precision=None,
    preferred_element_type=None,
    _dot_general=None,
    out_sharding=None,
):
    """Evaluate an Einstein summation (jax.numpy.einsum).

    Explicit (``"ij,jk->ik"``) and implicit (``"ij,jk"``: the labels that
    appear once, sorted) modes, ``...`` for broadcast dimensions, repeated
    labels for diagonals, and numpy's interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. ``optimize`` picks the
    contraction order (see the module docs); each pairwise contraction is one
    ``dot_general``. Operands are promoted to a common dtype;
    ``preferred_element_type`` sets the accumulation and result dtype;
    ``out_sharding`` the result's sharding (see ``lax.dot_general``).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if out_sharding is not None:
        return contract_with_out_sharding(
            einsum,
            out_sharding,
            subscripts,
            *operands,
            optimize=optimize,
            precision=precision,
            preferred_element_type=preferred_element_type,
            _dot_general=_dot_general,
        )
    operands = tuple(map(from_jax_array_protocol, operands))  # before shapes are read (JAX)
    spec, operands = _prepare(subscripts, operands)
    from ._creation import asarray

    arrays = promote_dtypes(*[x if isinstance(x, ARRAY_TYPES) else asarray(x) for x in operands])
    dtype = aval(arrays[0]).dtype
    # As JAX: weakly typed when every operand is and no dtype was asked for.
    weak = preferred_element_type is None and all(aval(x).weak_type for x in arrays)
    preferred = (
        canonical_dtype(preferred_element_type, "einsum")
        if preferred_element_type is not None
        else (None if kind(dtype) == "b" else dtype)
    )
    output = spec.output
    out_set = set(output)
    # simplify each operand alone, keeping the labels others or the output need
    labels = [list(lbls) for lbls in spec.inputs]
    for i in range(len(arrays)):
        keep = set(out_set)
        for j, other in enumerate(labels):
            if j != i:
                keep |= set(other)
        arrays[i], labels[i] = _simplify(arrays[i], labels[i], spec.sizes, keep)
    sets = [frozenset(lbls) for lbls in labels]
    path = _find_path(optimize, sets, frozenset(out_set), spec.sizes)
    if len(arrays) == 1:
        path = []
    for step in path:
        rest = [k for k in range(len(arrays)) if k not in step]
        keep = set(out_set)
        for k in rest:
            keep |= set(labels[k])
        # opt_einsum's (and so JAX's) order within a step: by position in the operand list.
        step = tuple(sorted(step))
        x, lx = arrays[step[0]], labels[step[0]]
        last = not rest
        for n, pos in enumerate(step[1:], start=2):
            needed = keep.union(*[labels[k] for k in step[n:]])
            result = list(output) if last and n == len(step) else None
            x, lx = _contract(x, lx, arrays[pos], labels[pos], needed, precision, preferred, result)
        if len(step) == 1:
            x, lx = _sum_out(x, lx, set(lx) - keep)
        arrays = [arrays[k] for k in rest] + [x]
        labels = [labels[k] for k in rest] + [lx]
    (x,) = arrays
    (lx,) = labels
    x, lx = _sum_out(x, lx, set(lx) - out_set)
    if lx != output:
        x = lax.transpose(x, tuple(lx.index(label) for label in output))
    if preferred is not None and aval(x).dtype != preferred:
        x = lax.convert_element_type(x, preferred)
    if weak and not aval(x).weak_type:
        x = _convert_element_type(x, aval(x).dtype, weak_type=True)
    return x


class EinsumPathInfo:
    """What ``einsum_path`` found: the path, its FLOP count and each contraction.

    ``str()`` prints a table like numpy's and opt_einsum's.
    """

    def __init__(self, spec: _Spec, path, operands, output, sizes):
        steps, total = _path_costs(path, operands, output, sizes)
        union = frozenset().union(*operands) if operands else frozenset()
        inner = bool(union - output)
        self.path = path
        self.eq = ",".join(spec.text(lbls) for lbls in spec.inputs) + "->" + spec.text(spec.output)
        self.naive_cost = _size(union, sizes) * (max(1, len(operands) - 1) + int(inner))
        self.opt_cost = total
        self.speedup = self.naive_cost / max(total, 1)
        self.size_list = [_size(result, sizes) for _, result, _ in steps]
        self.largest_intermediate = max(self.size_list, default=_size(output, sizes))
        self.scale_list = [len(frozenset().union(*group)) for group, _, _ in steps]
        self.contraction_list = [
            (
                ",".join(spec.text(sorted(g)) for g in group) + "->" + spec.text(sorted(result)),
                flops,
            )
            for group, result, flops in steps
        ]

    def __str__(self) -> str:
        lines = [
            f"  Complete contraction:  {self.eq}",
            f"  Naive FLOP count:  {self.naive_cost:.3e}",
            f"  Optimized FLOP count:  {self.opt_cost:.3e}",
            f"  Theoretical speedup:  {self.speedup:.3e}",
            f"  Largest intermediate:  {self.largest_intermediate:.3e} elements",
            "-" * 64,
            f"{'scaling':>8}  {'flops':>12}  contraction",
            "-" * 64,
        ]
        for scale, (text, flops) in zip(self.scale_list, self.contraction_list, strict=True):
            lines.append(f"{scale:>8}  {flops:>12.3e}  {text}")
        return "\n".join(lines)

    __repr__ = __str__


def einsum_path(subscripts: Any, /, *operands: Any, optimize: Any = "auto"):
    """Find the contraction order einsum would use (jax.numpy.einsum_path).

    Returns ``(path, info)``: the path as a list of position tuples (numpy's
    and opt_einsum's format, usable as ``einsum(..., optimize=path)``) and an
    ``EinsumPathInfo`` with its FLOP count (``info.opt_cost``) and a printable
    table. Operands may be arrays or anything with a ``shape``.
    """
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved((subscripts, *operands))
    shapes = [tuple(x.shape) if hasattr(x, "shape") else np.shape(x) for x in operands]
    spec = _Spec(subscripts, shapes)
    output = frozenset(spec.output)
    sets = []
    for labels, shape in zip(spec.inputs, shapes, strict=True):
        sets.append(
            frozenset(
                lbl for lbl, d in zip(labels, shape, strict=True) if not (d == 1 != spec.sizes[lbl])
            )
        )
    path = _find_path(optimize, sets, output, spec.sizes)
    return path, EinsumPathInfo(spec, path, sets, output, spec.sizes)
