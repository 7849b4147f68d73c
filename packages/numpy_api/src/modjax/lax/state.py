"""The primitives of mutable array references (``jax.Ref``) and their rules.

``new_ref``/``empty_ref`` allocate a reference, ``get`` reads ``ref[index]``,
``swap`` writes ``ref[index] = value`` and returns what was there, ``addupdate``
does ``ref[index] += value`` in place, ``freeze`` ends a reference's life giving
its value, ``free_ref`` ends it giving nothing. Each equation carries
tracecore's ``Ref`` effect, so dead-code elimination keeps it.

The index is split into a static part, the ``indexer`` param (one string per
index item: ``'...'``, ``'None'``, an int ``'2'``, a slice ``'1:'``/``'::2'``,
``'#'`` for the next array operand, ``'ds(#,4,1)'`` for a ``jax.ds`` window with
a traced start), and array operands after the reference (and the value).
Concrete references run eagerly (each primitive's impl reads or replaces the
array the Ref holds); under ``jit`` tracecore's ``discharge_state`` turns the
program into a pure one with this module's discharge rules, which read with
``x[index]`` and write with ``x.at[index].set/add``, so every index NumPy and
``jax.numpy`` accept works.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from modjax.autodiff import jvp_rules
from modjax.autodiff.jvp import always_differentiated
from modjax.autodiff.linearize import bind_staged_tangent
from modjax.autodiff.tangents import Zero, instantiate_zeros, tangent_aval
from modjax.batching import axis_primitive_batchers, batching_rules
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, Tracer
from modjax.tracecore.state import (
    AbstractRef,
    Ref,
    discharge_rules,
    discharging_for_transpose,
    ref_effect,
    ref_methods,
    ref_syntax,
)

__all__ = [
    "get_p",
    "swap_p",
    "addupdate_p",
    "new_ref_p",
    "empty_ref_p",
    "freeze_p",
    "free_ref_p",
    "new_ref",
    "empty_ref",
    "freeze",
    "free_ref",
    "ref_get",
    "ref_set",
    "ref_swap",
    "ref_addupdate",
]


def _effects(**_params):
    return (ref_effect,)


# --- the index: static skeleton + array operands ---------------------------------------------


def _static(v: Any) -> int | None:
    """Return a slice bound as a Python int: a concrete integer scalar, as JAX takes it."""
    if v is None:
        return None
    if isinstance(v, Tracer):
        known = v.to_concrete_value()
        if known is None:
            # JAX compares the bound while building the index: a traced one raises its
            # TracerBoolConversionError there.
            bool(v < 0)
        v = known
    return operator.index(v)


def split_index(index: Any) -> tuple[tuple[str, ...], list[Any]]:
    """Split a NumPy-style ``index`` into the ``indexer`` param and its array operands."""
    from modjax.numpy._indexing import Slice  # noqa: PLC0415 - modjax.numpy imports modjax.lax

    items = index if isinstance(index, tuple) else (index,)
    indexer: list[str] = []
    operands: list[Any] = []
    for item in items:
        if item is Ellipsis:
            indexer.append("...")
        elif item is None:
            indexer.append("None")
        elif isinstance(item, bool | np.bool_):
            indexer.append("#")
            operands.append(np.bool_(item))
        elif isinstance(item, int | np.integer):
            indexer.append(str(int(item)))
        elif isinstance(item, slice):
            a, b, c = (_static(item.start), _static(item.stop), _static(item.step))
            text = f"{'' if a is None else a}:{'' if b is None else b}"
            indexer.append(text + ("" if c is None else f":{c}"))
        elif isinstance(item, Slice):
            if isinstance(item.start, int):
                indexer.append(f"ds({item.start},{item.size},{item.stride})")
            else:
                indexer.append(f"ds(#,{item.size},{item.stride})")
                operands.append(item.start)
        elif isinstance(item, list):
            raise TypeError(
                "Using a non-tuple sequence for multidimensional indexing is not allowed; "
                f"use `arr[array(seq)]` instead of `arr[seq]`. Got {index!r}"
            )
        else:
            indexer.append("#")
            operands.append(item)
    return tuple(indexer), operands


def join_index(indexer: tuple[str, ...], operands: Any) -> tuple:
    """Rebuild the index tuple from the ``indexer`` param and its operands."""
    from modjax.numpy._indexing import Slice  # noqa: PLC0415 - modjax.numpy imports modjax.lax

    ops = iter(operands)
    out: list[Any] = []
    for text in indexer:
        if text == "...":
            out.append(Ellipsis)
        elif text == "None":
            out.append(None)
        elif text == "#":
            out.append(next(ops))
        elif text.startswith("ds("):
            start, size, stride = text[3:-1].split(",")
            out.append(Slice(next(ops) if start == "#" else int(start), int(size), int(stride)))
        elif ":" in text:
            out.append(slice(*(int(p) if p else None for p in text.split(":"))))
        else:
            out.append(int(text))
    return tuple(out)


def _dummy(aval) -> np.ndarray:
    """A zero-strided array of ``aval``'s shape: NumPy computes index shapes on it for free."""
    dt = np.bool_ if aval.dtype == np.bool_ else np.int64
    return np.lib.stride_tricks.as_strided(np.zeros(1, dt), aval.shape, (0,) * len(aval.shape))


def indexed_shape(shape: tuple[int, ...], indexer, index_avals) -> tuple[int, ...]:
    """Return the shape of ``x[index]`` for ``x`` of ``shape`` (NumPy's rules, as jnp's)."""
    for a in index_avals:
        if not (dtypes.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_):
            raise TypeError(
                f"Indexers must be integers or booleans, got indexer with dtype {a.dtype}"
            )
    index = join_index(indexer, [_dummy(a) for a in index_avals])
    base = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape, (0,) * len(shape))
    try:
        return base[_numpy_index(index)].shape
    except IndexError as err:
        raise IndexError(f"Ref index {indexer} does not fit shape {shape}: {err}") from None


def _numpy_index(index: tuple) -> tuple:
    from modjax.numpy._indexing import Slice  # noqa: PLC0415 - modjax.numpy imports modjax.lax

    return tuple(
        slice(0, it.size * it.stride, it.stride) if isinstance(it, Slice) else it for it in index
    )


def _ref_aval(ref_aval, name: str) -> AbstractRef:
    if type(ref_aval) is not AbstractRef:
        raise ValueError(f"`{name}` must be called on `Ref` types: {ref_aval.str_short()}.")
    return ref_aval


def _check_ref(ref, name: str):
    _ref_aval(_aval(ref), name)
    return ref


# --- get --------------------------------------------------------------------------------------


def _get_abstract_eval(ref_aval, *index_avals, indexer):
    inner = _ref_aval(ref_aval, "get").inner_aval
    return ShapedArray(indexed_shape(inner.shape, indexer, index_avals), inner.dtype)


def _take(value, indexer, index):
    from modjax.numpy._indexing import rewriting_take  # noqa: PLC0415

    return rewriting_take(value, join_index(indexer, index))


def _get_impl(ref, *index, indexer):
    _ref_aval(_aval(ref), "get")
    out = _take(ref._value, indexer, index)
    return out.copy() if out is ref._value else out


def _get_discharge(eqn, value, *index):
    return [None] * len(eqn.invars), [_take(value, eqn.params["indexer"], index)]


get_p = Primitive("get")
get_p.def_impl(_get_impl)
get_p.def_abstract_eval(_get_abstract_eval)
get_p.def_effects(_effects)
discharge_rules[get_p] = _get_discharge


# --- swap and addupdate -----------------------------------------------------------------------


def _check_value(name: str, inner: ShapedArray, expected, value_aval) -> None:
    if value_aval.dtype != inner.dtype:
        raise ValueError(
            f"Invalid dtype for `{name}`. Ref dtype: {inner.dtype}. "
            f"Value dtype: {value_aval.dtype}. "
        )
    if tuple(value_aval.shape) != tuple(expected):
        raise ValueError(
            f"Invalid shape for `{name}`. Ref shape: {inner.shape}. Expected shape: "
            f"{tuple(expected)}. Value shape: {tuple(value_aval.shape)}. "
        )


def _swap_abstract_eval(ref_aval, value_aval, *index_avals, indexer):
    inner = _ref_aval(ref_aval, "swap").inner_aval
    expected = indexed_shape(inner.shape, indexer, index_avals)
    _check_value("swap", inner, expected, value_aval)
    return ShapedArray(expected, inner.dtype)


def _put(value, indexer, index, new, how):
    from modjax.numpy._indexing import scatter_update  # noqa: PLC0415

    full = join_index(indexer, index)
    if how == "set" and all(it is Ellipsis for it in full):
        # The new value takes the reference's type (a weak one stays weak), so that
        # every program path leaves a value of one type in it (cond's branches).
        weak = _aval(value).weak_type
        if _aval(new).weak_type != weak:
            from .elementwise import _convert_element_type  # noqa: PLC0415

            new = _convert_element_type(new, _aval(value).dtype, weak_type=weak)
        return new
    # A write of a linear program to transpose: its cotangent is read back with a gather
    # at each index, repeated ones included, as JAX transposes a reference write.
    unique = how == "set" and discharging_for_transpose()
    return scatter_update(value, full, new, how, unique_indices=unique)


def _swap_impl(ref, value, *index, indexer):
    _swap_abstract_eval(_aval(ref), _aval(value), *map(_aval, index), indexer=indexer)
    old = _take(ref._value, indexer, index)
    new = _put(ref._value, indexer, index, value, "set")
    # The Ref never shares its array: a jitted call donates it to update it in place.
    ref._value = _copy(new) if new is value else new
    return old


def _swap_discharge(eqn, ref_value, value, *index):
    indexer = eqn.params["indexer"]
    old = _take(ref_value, indexer, index)
    new = _put(ref_value, indexer, index, value, "set")
    return [new] + [None] * (len(eqn.invars) - 1), [old]


swap_p = Primitive("swap")
swap_p.def_impl(_swap_impl)
swap_p.def_abstract_eval(_swap_abstract_eval)
swap_p.def_effects(_effects)
discharge_rules[swap_p] = _swap_discharge


def _addupdate_abstract_eval(ref_aval, value_aval, *index_avals, indexer):
    inner = _ref_aval(ref_aval, "addupdate").inner_aval
    expected = indexed_shape(inner.shape, indexer, index_avals)
    _check_value("addupdate", inner, expected, value_aval)
    return []


def _addupdate_impl(ref, value, *index, indexer):
    _addupdate_abstract_eval(_aval(ref), _aval(value), *map(_aval, index), indexer=indexer)
    ref._value = _put(ref._value, indexer, index, value, "add")
    return []


def _addupdate_discharge(eqn, ref_value, value, *index):
    new = _put(ref_value, eqn.params["indexer"], index, value, "add")
    return [new] + [None] * (len(eqn.invars) - 1), []


addupdate_p = Primitive("addupdate")
addupdate_p.multiple_results = True
addupdate_p.def_impl(_addupdate_impl)
addupdate_p.def_abstract_eval(_addupdate_abstract_eval)
addupdate_p.def_effects(_effects)
discharge_rules[addupdate_p] = _addupdate_discharge


# --- allocation and the end of a reference's life ---------------------------------------------


def _copy(x):
    import modjax.numpy as jnp  # noqa: PLC0415 - modjax.numpy imports modjax.lax

    return jnp.array(x, copy=True)


def _new_ref_abstract_eval(aval, *, memory_space, kind):
    if type(aval) is AbstractRef:
        raise TypeError("new_ref of a Ref: a reference cannot hold another reference")
    return AbstractRef(aval, memory_space, kind)


new_ref_p = Primitive("new_ref")
# The Ref holds a copy: writes through it never change the array it was made from.
new_ref_p.def_impl(lambda x, *, memory_space, kind: Ref(_copy(x)))
new_ref_p.def_abstract_eval(_new_ref_abstract_eval)
new_ref_p.def_effects(_effects)
discharge_rules[new_ref_p] = lambda eqn, x: ([None], [x])


def _empty_ref_abstract_eval(*, ty, memory_space):
    return AbstractRef(ty, memory_space)


def _zeros(ty):
    from modjax import lax  # noqa: PLC0415

    return lax.full(ty.shape, 0, ty.dtype)


empty_ref_p = Primitive("empty_ref")
empty_ref_p.def_impl(lambda *, ty, memory_space: Ref(_zeros(ty), AbstractRef(ty)))
empty_ref_p.def_abstract_eval(_empty_ref_abstract_eval)
empty_ref_p.def_effects(_effects)
# An empty reference holds zeros until written (XLA has no uninitialized values).
discharge_rules[empty_ref_p] = lambda eqn: ([], [_zeros(eqn.params["ty"])])


freeze_p = Primitive("freeze")
freeze_p.def_impl(lambda ref: _copy(_check_ref(ref, "freeze")._value))
freeze_p.def_abstract_eval(lambda ref_aval: _ref_aval(ref_aval, "freeze").inner_aval)
freeze_p.def_effects(_effects)
discharge_rules[freeze_p] = lambda eqn, value: ([None], [value])

free_ref_p = Primitive("free_ref")
free_ref_p.multiple_results = True
free_ref_p.def_impl(lambda ref: (_check_ref(ref, "free_ref"), [])[1])
free_ref_p.def_abstract_eval(lambda ref_aval: (_ref_aval(ref_aval, "free_ref"), [])[1])
free_ref_p.def_effects(_effects)
discharge_rules[free_ref_p] = lambda eqn, value: ([None], [])


# --- the user-facing functions ----------------------------------------------------------------


def _aval(x):
    from modjax.tracecore.core import to_aval  # noqa: PLC0415

    return to_aval(x)


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """Return a new mutable reference holding ``init_val`` (``jax.new_ref``)."""
    import modjax.numpy as jnp  # noqa: PLC0415

    if isinstance(init_val, Ref):
        raise TypeError("new_ref of a Ref: a reference cannot hold another reference")
    if not isinstance(init_val, Tracer):
        try:
            _aval(init_val)  # an array or a scalar (not a list: JAX's check_arg)
            init_val = jnp.asarray(init_val)
        except TypeError:
            raise TypeError(
                "Error interpreting argument to new_ref as a JAX value. The problematic value "
                f"is of type {type(init_val)} and was passed to new_ref at position 0."
            ) from None
    return new_ref_p.bind(init_val, memory_space=memory_space, kind=kind)


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """Return a new reference of type ``ty`` whose contents are not set (``jax.empty_ref``).

    ``ty`` is a ShapedArray (``jax.typeof(x)``) or a ShapeDtypeStruct. modjax fills
    it with zeros; read it only after writing it.
    """
    aval = getattr(ty, "aval", ty) if not isinstance(ty, ShapedArray) else ty
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"empty_ref expects an array type, got {ty!r}")
    return empty_ref_p.bind(ty=aval, memory_space=memory_space)


def freeze(ref: Any):
    """Return the value of ``ref`` as an immutable array and end its life (``jax.freeze``)."""
    return freeze_p.bind(ref)


def free_ref(ref: Any) -> None:
    """End the life of ``ref`` without reading it (``jax.free_ref``)."""
    free_ref_p.bind(ref)


def _value_for(ref_aval: AbstractRef, value: Any):
    """Cast a weakly typed ``value`` (a Python scalar) to the reference's dtype, as JAX does."""
    import modjax.numpy as jnp  # noqa: PLC0415

    inner = ref_aval.inner_aval
    if isinstance(value, int | float | complex | bool) and not isinstance(value, np.generic):
        return np.asarray(value, inner.dtype)  # a 0-d numpy array: a literal when traced
    aval = _aval(jnp.asarray(value) if not isinstance(value, Tracer) else value)
    if aval.weak_type and (aval.dtype != inner.dtype or not inner.weak_type):
        return jnp.asarray(value, inner.dtype)  # a weak value takes the reference's type
    return value if isinstance(value, Tracer) else jnp.asarray(value)


def _index_operands(operands):
    import modjax.numpy as jnp  # noqa: PLC0415

    return [o if isinstance(o, Tracer) else jnp.asarray(o) for o in operands]


def ref_get(ref: Any, idx: Any = None):
    """Return ``ref[idx]`` (``jax.ref.get``); ``None`` reads the whole reference."""
    indexer, operands = split_index(Ellipsis if idx is None else idx)
    return get_p.bind(ref, *_index_operands(operands), indexer=indexer)


def ref_swap(ref: Any, idx: Any, value: Any, _function_name: str = "ref_swap"):
    """Write ``value`` at ``ref[idx]`` and return what was there (``jax.ref.swap``).

    ``_function_name`` is JAX's private name of the caller for its messages; modjax's
    messages name the primitive, so it is unused.
    """
    del _function_name
    indexer, operands = split_index(Ellipsis if idx is None else idx)
    value = _value_for(_aval(ref), value)
    return swap_p.bind(ref, value, *_index_operands(operands), indexer=indexer)


def ref_set(ref: Any, idx: Any, value: Any) -> None:
    """Write ``value`` at ``ref[idx]`` (``jax.ref.set``, ``ref[idx] = value``)."""
    ref_swap(ref, idx, value)


def ref_addupdate(ref: Any, idx: Any, x: Any) -> None:
    """Add ``x`` to ``ref[idx]`` in place (``jax.ref.addupdate``)."""
    indexer, operands = split_index(Ellipsis if idx is None else idx)
    x = _value_for(_aval(ref), x)
    addupdate_p.bind(ref, x, *_index_operands(operands), indexer=indexer)


def _repr(ref: Ref) -> str:
    text = repr(ref._value)
    return "Ref" + text[text.index("(") :] if "(" in text else f"Ref({text})"


ref_syntax[get_p] = "get"
ref_syntax[swap_p] = "swap"
ref_syntax[addupdate_p] = "addupdate"

ref_methods["get"] = ref_get
ref_methods["set"] = ref_set
ref_methods["repr"] = _repr


# --- vmap -------------------------------------------------------------------------------------
# A reference made under vmap holds every example's array with the batch axis first
# (new_ref moves a batched value's axis there); one passed to vmap keeps the axis it is
# mapped over. A read or write with scalar indices that are not batched, of a reference
# batched at 0, indexes behind that axis. Any other access (an array index, a batched
# index, a reference batched along another axis) reads the whole reference and indexes
# (or updates) each example's array under an inner vmap; a write then replaces the
# whole reference. Discharged, both are the same pure program.


def _simple_index(indexer, index, dims) -> bool:
    """Tell whether the fast path applies: unbatched scalar index operands only."""
    return all(d is None for d in dims) and all(not _aval(op).shape for op in index)


def _check_windows(indexer, index, dims) -> None:
    """Raise JAX's NotImplementedError for a ``jax.ds`` window with a batched start."""
    ops = iter(zip(index, dims, strict=True))
    for text in indexer:
        if text == "#":
            next(ops)
        elif text.startswith("ds(#"):
            start, d = next(ops)
            if d is not None:
                size, stride = text[:-1].split(",")[1:]
                raise NotImplementedError(
                    "No support for vmapping over nontrivial slices just yet: "
                    f"Slice(start={_aval(start).str_short()}, size={size}, stride={stride})"
                )


def _vmapped(fn, args, in_axes, out_axes):
    from modjax.batching import vmap  # noqa: PLC0415 - an inner vmap, per example

    return vmap(fn, in_axes=tuple(in_axes), out_axes=out_axes)(*args)


def _whole(ref):
    return get_p.bind(ref, indexer=("...",))


def _unbatched_write_error(ref_aval, what: str):
    return Exception(
        f"performing {what} operation with vmapped value on an unbatched array reference "
        f"of type {ref_aval.str_short()}. Move the array reference to be an argument to the "
        "vmapped function?"
    )


def _new_ref_batching(axis_data, args, dims, *, memory_space, kind):
    # Every reference made under vmap is batched (as JAX's): one cell per example, so
    # each example may write its own value even when the initial value is shared.
    import modjax.numpy as jnp  # noqa: PLC0415

    (x,), (d,) = args, dims
    if d is None:
        x = jnp.broadcast_to(x, (axis_data.size, *_aval(x).shape))
    elif d:
        x = jnp.moveaxis(x, d, 0)
    return new_ref_p.bind(x, memory_space=memory_space, kind=kind), 0


def _get_batching(args, dims, *, indexer):
    ref, *index = args
    r = dims[0]
    _check_windows(indexer, index, dims[1:])
    if r is None and all(d is None for d in dims[1:]):
        return get_p.bind(ref, *index, indexer=indexer), None
    if r == 0 and _simple_index(indexer, index, dims[1:]):
        return get_p.bind(ref, *index, indexer=(":", *indexer)), 0

    def take(value, *ix):
        return _take(value, indexer, ix)

    return _vmapped(take, [_whole(ref), *index], dims, 0), 0


def _write_batching(how, args, dims, indexer):
    """Batch ``swap`` (``how='set'``, returning the old value) or ``addupdate`` ('add')."""
    import modjax.numpy as jnp  # noqa: PLC0415

    ref, value, *index = args
    r = dims[0]
    if r is None:
        if any(d is not None for d in dims[1:]):
            raise _unbatched_write_error(
                _aval(ref), "a set/swap" if how == "set" else "an addupdate"
            )
        prim = swap_p if how == "set" else addupdate_p
        return prim.bind(ref, value, *index, indexer=indexer), None
    _check_windows(indexer, index, dims[2:])
    if r == 0 and _simple_index(indexer, index, dims[2:]):
        size = _aval(ref).shape[0]
        if dims[1] is None:
            value = jnp.broadcast_to(value, (size, *_aval(value).shape))
        elif dims[1]:
            value = jnp.moveaxis(value, dims[1], 0)
        if how == "set":
            return swap_p.bind(ref, value, *index, indexer=(":", *indexer)), 0
        return addupdate_p.bind(ref, value, *index, indexer=(":", *indexer)), None

    def update(whole, new, *ix):
        return _take(whole, indexer, ix), _put(whole, indexer, ix, new, how)

    old, new = _vmapped(update, [_whole(ref), value, *index], dims, (0, r))
    swap_p.bind(ref, new, indexer=("...",))
    return old, 0


def _swap_batching(args, dims, *, indexer):
    return _write_batching("set", args, dims, indexer)


def _addupdate_batching(args, dims, *, indexer):
    _write_batching("add", args, dims, indexer)
    return [], []


def _freeze_batching(args, dims):
    return freeze_p.bind(args[0]), dims[0]


def _free_ref_batching(args, dims):
    return free_ref_p.bind(args[0]), []


axis_primitive_batchers[new_ref_p] = _new_ref_batching
batching_rules[get_p] = _get_batching
batching_rules[swap_p] = _swap_batching
batching_rules[addupdate_p] = _addupdate_batching
batching_rules[freeze_p] = _freeze_batching
batching_rules[free_ref_p] = _free_ref_batching


# --- forward-mode differentiation -------------------------------------------------------------
# A differentiated reference is a pair: the primal reference and one holding its tangent.
# A reference that is not differentiated (closed over, or made from a constant of an
# integer type) has a symbolic zero tangent; writing a differentiated value into it is
# JAX's error.


def _zero_of(x):
    return Zero(tangent_aval(_aval(x)))


def _new_ref_jvp(primals, tangents, *, memory_space, kind):
    (x,), (t,) = primals, tangents
    ref = new_ref_p.bind(x, memory_space=memory_space, kind=kind)
    if type(t) is Zero and (t.aval.dtype == dtypes.float0 or _aval(x).dtype == dtypes.float0):
        return ref, Zero(t.aval)
    # A tangent reference made from a zero tangent is staged when linearizing: the
    # differentiated values written into it later are only known to the linear program.
    t_ref = bind_staged_tangent(
        new_ref_p, instantiate_zeros(t), memory_space=memory_space, kind=kind
    )
    return ref, t_ref


def _empty_ref_jvp(primals, tangents, *, ty, memory_space):
    ref = empty_ref_p.bind(ty=ty, memory_space=memory_space)
    t_ty = tangent_aval(ty)
    if t_ty.dtype == dtypes.float0:
        return ref, Zero(AbstractRef(t_ty))
    return ref, bind_staged_tangent(empty_ref_p, ty=t_ty, memory_space=memory_space)


def _get_jvp(primals, tangents, *, indexer):
    ref, *index = primals
    out = get_p.bind(ref, *index, indexer=indexer)
    if type(tangents[0]) is Zero:
        return out, _zero_of(out)
    return out, get_p.bind(tangents[0], *index, indexer=indexer)


def _differentiated_write_error(ref) -> Exception:
    return Exception(
        "performing a set/swap operation with a differentiated value on a non-differentiated "
        f"array reference of type {_aval(ref).str_short()}. Move the array reference to be "
        "an argument of the differentiated function?"
    )


def _swap_jvp(primals, tangents, *, indexer):
    ref, value, *index = primals
    ref_t, value_t = tangents[0], tangents[1]
    out = swap_p.bind(ref, value, *index, indexer=indexer)
    if type(ref_t) is Zero:
        if type(value_t) is not Zero:
            raise _differentiated_write_error(ref)
        return out, _zero_of(out)
    return out, swap_p.bind(ref_t, instantiate_zeros(value_t), *index, indexer=indexer)


def _addupdate_jvp(primals, tangents, *, indexer):
    ref, value, *index = primals
    ref_t, value_t = tangents[0], tangents[1]
    addupdate_p.bind(ref, value, *index, indexer=indexer)
    if type(ref_t) is Zero:
        if type(value_t) is not Zero:
            raise _differentiated_write_error(ref)
    elif type(value_t) is not Zero:
        addupdate_p.bind(ref_t, value_t, *index, indexer=indexer)
    return [], []


def _freeze_jvp(primals, tangents):
    out = freeze_p.bind(primals[0])
    if type(tangents[0]) is Zero:
        return out, _zero_of(out)
    return out, freeze_p.bind(tangents[0])


def _free_ref_jvp(primals, tangents):
    free_ref_p.bind(primals[0])
    if type(tangents[0]) is not Zero:
        free_ref_p.bind(tangents[0])
    return [], []


jvp_rules[new_ref_p] = _new_ref_jvp
always_differentiated.add(new_ref_p)  # its tangent reference exists even for a constant
jvp_rules[empty_ref_p] = _empty_ref_jvp
always_differentiated.add(empty_ref_p)
jvp_rules[get_p] = _get_jvp
jvp_rules[swap_p] = _swap_jvp
jvp_rules[addupdate_p] = _addupdate_jvp
jvp_rules[freeze_p] = _freeze_jvp
jvp_rules[free_ref_p] = _free_ref_jvp
