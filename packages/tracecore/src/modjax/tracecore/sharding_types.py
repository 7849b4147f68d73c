"""Shardings in types: how each primitive's result sharding follows from its operands'.

An aval's ``sharding`` (JAX's sharding in types, over a mesh's *explicit*
axes) is None for almost every program; then nothing here runs. Once an aval
with a sharding exists, each traced equation whose operands carry one asks
``sharding_rules[primitive](avals, out, **params)`` for its result's
sharding (the result aval comes from the primitive's abstract eval, with no
sharding). A primitive without a rule gets the generic one: a result of the
shape of its sharded operands (elementwise operations, casts, ``select_n``,
cumulative ops) takes their merged sharding; any other result has none
(unknown in the type: the compiler chooses, as for automatic axes).

A rule sees only the per-dimension entries of a spec (None, an axis name or a
tuple of names) and builds the result's sharding with the operand sharding's
``update(spec=entries)``, so tracecore needs no mesh class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .abstract import ShapedArray, sharding_entries

__all__ = [
    "ShardingTypeError",
    "sharding_rules",
    "apply_sharding_rule",
    "elementwise_rule",
    "reduce_rule",
    "transpose_rule",
    "broadcast_in_dim_rule",
    "squeeze_rule",
    "reshape_rule",
    "dot_general_rule",
    "with_entries",
]


class ShardingTypeError(Exception):
    """Shardings in types that an operation cannot combine.

    JAX's ``ShardingTypeError``, which JAX does not export from ``jax.errors``.
    """


#: ``sharding_rules[primitive](avals, out, **params) -> out`` with the sharding set.
sharding_rules: dict[Any, Callable] = {}


def _axes(entry) -> tuple[str, ...]:
    if entry is None:
        return ()
    return (entry,) if isinstance(entry, str) else tuple(entry)


def _norm(entry):
    axes = _axes(entry)
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else axes


def _spec_str(entries) -> str:
    return (
        "(" + ", ".join(repr(_norm(e)) for e in entries) + ("," if len(entries) == 1 else "") + ")"
    )


def with_entries(out: ShapedArray, like, entries: Sequence) -> ShapedArray | None:
    """Return ``out`` with the sharding of ``like``'s mesh whose spec is ``entries``."""
    used = [a for e in entries for a in _axes(e)]
    if len(used) != len(set(used)):
        return None  # the caller raises with its own message
    return out.update(sharding=like.update(spec=tuple(_norm(e) for e in entries)))


def _first_sharding(avals):
    for a in avals:
        if a.sharding is not None:
            return a.sharding
    return None


def _merge(name: str, specs: list[tuple]) -> tuple:
    """Merge per-dimension entries: None yields to a named entry; two names must agree."""
    merged = list(specs[0])
    for spec in specs[1:]:
        for i, e in enumerate(spec):
            if _norm(e) is None:
                continue
            if _norm(merged[i]) is None:
                merged[i] = e
            elif _norm(merged[i]) != _norm(e):
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: "
                    + ", ".join(_spec_str(s) for s in specs)
                    + "."
                )
    return tuple(merged)


def elementwise_rule(name: str, avals: Sequence[ShapedArray], out: ShapedArray) -> ShapedArray:
    """Give ``out`` the merged sharding of the operands of its shape (JAX's broadcasting rule)."""
    like = _first_sharding(avals)
    specs = [sharding_entries(a) for a in avals if a.shape == out.shape]
    if not specs or like is None:
        return out
    merged = _merge(name, specs)
    result = with_entries(out, like, merged)
    if result is None:
        raise ShardingTypeError(
            f"{name} got incompatible shardings for broadcasting: "
            + ", ".join(_spec_str(s) for s in specs)
            + "."
        )
    return result


def reduce_rule(avals, out, *, axes, **_):
    """A reduction over ``axes`` keeps the other dimensions' entries."""
    (aval, *_rest) = avals
    if aval.sharding is None:
        return out
    axes = {a % max(aval.ndim, 1) for a in axes}
    kept = [e for i, e in enumerate(sharding_entries(aval)) if i not in axes]
    return with_entries(out, aval.sharding, kept)


def transpose_rule(avals, out, *, permutation, **_):
    """A transpose permutes the entries."""
    (aval,) = avals
    entries = sharding_entries(aval)
    return with_entries(out, aval.sharding, [entries[p] for p in permutation])


def broadcast_in_dim_rule(avals, out, *, shape, broadcast_dimensions, **_):
    """An operand dimension keeps its entry where it keeps its size; new dimensions have none."""
    aval = avals[0]
    if aval.sharding is None:
        return out
    entries = [None] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        if aval.shape[src] == shape[dst]:
            entries[dst] = sharding_entries(aval)[src]
    return with_entries(out, aval.sharding, entries)


def squeeze_rule(avals, out, *, dimensions, **_):
    """Squeezed (size-1) dimensions drop their entries."""
    (aval,) = avals
    drop = {d % aval.ndim for d in dimensions}
    kept = [e for i, e in enumerate(sharding_entries(aval)) if i not in drop]
    return with_entries(out, aval.sharding, kept)


def reshape_rule(avals, out, *, new_sizes, **_):
    """A reshape that only adds or removes size-1 dimensions keeps the other entries.

    Any other reshape of a sharded operand would move data between devices:
    JAX asks for ``out_sharding`` there and so do we (ShardingTypeError).
    """
    aval = avals[0]
    entries = sharding_entries(aval)
    if all(_norm(e) is None for e in entries):
        return with_entries(out, aval.sharding, [None] * len(new_sizes))
    kept = [(n, e) for n, e in zip(aval.shape, entries, strict=True) if n != 1]
    if [n for n, _ in kept] == [n for n in new_sizes if n != 1]:
        it = iter(e for _, e in kept)
        return with_entries(out, aval.sharding, [None if n == 1 else next(it) for n in new_sizes])
    raise ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        "`out_sharding` argument of jax.lax.reshape. Got operand type: "
        f"{aval.str_short()}, new sizes: {tuple(new_sizes)}"
    )


def dot_general_rule(avals, out, *, dimension_numbers, **_):
    """Batch dimensions (lhs's entries), then lhs's and rhs's free dimensions keep their entries.

    Batch and contracting dimensions split differently on the two sides raise
    JAX's ShardingTypeError; a contracting dimension split on both sides leaves
    it ambiguous whether the result is reduced over those axes or scattered, and
    JAX asks for ``out_sharding``; so does a result that would use an axis twice.
    """
    lhs, rhs = avals
    (lc, rc), (lb, rb) = dimension_numbers
    le, re = sharding_entries(lhs), sharding_entries(rhs)
    lbs, rbs = tuple(_norm(le[d]) for d in lb), tuple(_norm(re[d]) for d in rb)
    lcs, rcs = tuple(_norm(le[d]) for d in lc), tuple(_norm(re[d]) for d in rc)
    for what, ls, rs in (("batch dimensions and rhs batch dimensions", lbs, rbs),
                         ("contracting dimensions", lcs, rcs)):  # fmt: skip
        if any(a is not None and b is not None and a != b for a, b in zip(ls, rs, strict=True)):
            lead = "lhs " if what.startswith("batch") else ""
            raise ShardingTypeError(
                f"dot_general requires {lead}{what} to have {'the ' if lead else ''}consistent "
                f"sharding, got {ls} and {rs}."
            )
    if any(a is not None and b is not None for a, b in zip(lcs, rcs, strict=True)):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
            f"lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}"
        )
    batch = [le[d] for d in lb]
    lfree = [le[i] for i in range(lhs.ndim) if i not in lb and i not in lc]
    rfree = [re[i] for i in range(rhs.ndim) if i not in rb and i not in rc]
    entries = batch + lfree + rfree
    result = with_entries(out, lhs.sharding or rhs.sharding, entries)
    if result is None:
        dtype = out.str_short(short_dtypes=True).split("[")[0]
        dims = ",".join(_dim(n, e) for n, e in zip(out.shape, entries, strict=True))
        raise ShardingTypeError(
            f"dot_general operation with inputs: {lhs.str_short(short_dtypes=True)}, "
            f"{rhs.str_short(short_dtypes=True)} produces an illegally sharded result: "
            f"{dtype}[{dims}]"
        )
    return result


def _dim(n, e) -> str:
    axes = _axes(e)
    if not axes:
        return str(n)
    return f"{n}@{axes[0]}" if len(axes) == 1 else f"{n}@({','.join(axes)})"


def apply_sharding_rule(primitive, avals: Sequence[ShapedArray], out, params: dict):
    """Return ``out`` (an aval, or a list when the primitive has several results) with shardings.

    Called for every traced equation once some aval has a sharding; returns
    ``out`` unchanged when no operand has one.
    """
    for a in avals:
        if getattr(a, "sharding", None) is not None:
            break
    else:
        return out
    rule = sharding_rules.get(primitive)
    if rule is not None:
        return rule(avals, out, **params)
    if primitive.multiple_results or type(out) is not ShapedArray:
        return out  # inner jaxprs (jit, scan, cond) already typed their results
    return elementwise_rule(primitive.name, avals, out)
