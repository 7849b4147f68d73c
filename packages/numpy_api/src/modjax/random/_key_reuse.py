"""Key reuse checking: with ``jax_debug_key_reuse`` on, consuming a typed key twice is an error.

The counterpart of JAX's ``jax.experimental.key_reuse``. A key is *consumed*
by drawing bits from it (``random_bits``, ``random_gamma``) or splitting it;
``clone``, ``key``, ``wrap_key_data`` and the results of split and ``fold_in``
(which, as in JAX, does not consume its key) give fresh keys. A second
consumption raises ``KeyReuseError`` naming the line of the second use (and of
the first).

Each primitive has a *signature* (``signatures``, a table keyed by primitive):
which key operands it consumes (sinks), which results are fresh keys
(sources) and which results are its operands passed along (forwards, as a
reshape or ``key_data`` passes a key on). A jaxpr's signature follows its
equations in order, so the checker

* runs on every jaxpr ``jit`` traces (runtime's ``jaxpr_checks``), raising for
  a key consumed twice inside it;
* marks concrete key arrays consumed: the key primitives do it eagerly, and an
  eager jit call consumes the arguments its program's signature sinks
  (runtime's ``call_checks``).

Consumption is tracked per key, as JAX tracks it: a sink may carry a mask (a
bool array over the operand's keys). A static ``slice`` consumes the keys it
takes and gives fresh ones, so ``keys[0]`` and ``keys[1]`` can each be used
once while taking ``keys[0]`` twice is reuse; ``gather`` and ``dynamic_slice``
pass their operand on (consuming the result consumes the whole operand);
iterating over a concrete key array gives fresh keys. Primitives without a rule
(``rev``, ``transpose``, ...) consume their key operands and give consumed
keys, as in JAX. Legacy ``uint32`` keys are not checked (JAX checks typed keys
only).

The option is defined here, next to its only reader.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from modjax.runtime import clear_caches, extended
from modjax.tracecore import source_info
from modjax.tracecore.config import config
from modjax.tracecore.core import KeyReuseError, Primitive
from modjax.tracecore.jaxpr import ClosedJaxpr, Jaxpr, Literal

from ..lax import elementwise as ew
from ..lax import indexing as ix
from ..lax import structural as st
from . import _prng
from ._prng import PRNGKeyArray, is_key_dtype

__all__ = ["Signature", "check_key_reuse_jaxpr", "debug_key_reuse", "jaxpr_signature", "signatures"]


class Signature(NamedTuple):
    """How a primitive or program uses keys: operands consumed, fresh results, pass-throughs.

    A sink is an operand index (all its keys) or an ``(index, mask)`` pair, the
    mask a bool array over that operand's keys; a source is a result index (all
    fresh) or an ``(index, mask)`` pair whose mask marks the keys that are not.
    """

    sinks: tuple = ()
    sources: tuple = ()
    forwards: tuple[tuple[int, int], ...] = ()  # (operand index, result index)


def _masked(entries, whole) -> list[tuple[int, Any]]:
    """The ``(index, mask)`` pairs of sinks or sources; a bare index has the mask ``whole``."""
    return [e if isinstance(e, tuple) else (e, whole) for e in entries]


def sinks_of(sig: Signature) -> list[tuple[int, Any]]:
    """The ``(operand index, consumed mask)`` of each sink of ``sig``."""
    return _masked(sig.sinks, True)


def sources_of(sig: Signature) -> list[tuple[int, Any]]:
    """The ``(result index, mask of keys already consumed)`` of each source of ``sig``."""
    return _masked(sig.sources, False)


#: Key reuse rule per primitive: a Signature, or a function of the equation giving one.
signatures: dict[Primitive, Any] = {}


def _where(frame) -> str:
    return str(frame) if frame is not None else "an unknown line"


def _error(what: str, first, second) -> KeyReuseError:
    return KeyReuseError(
        f"{what}\n  the key was first consumed at {_where(first)}\n"
        f"  and is consumed again at {_where(second)}"
    )


# --- jaxprs ------------------------------------------------------------------------------------


def _is_key(atom) -> bool:
    return is_key_dtype(getattr(atom.aval, "dtype", None))


def signature_of_eqn(eqn) -> Signature:
    """Return the key reuse signature of one equation."""
    rule = signatures.get(eqn.primitive)
    if rule is None:
        return Signature(sinks=tuple(i for i, v in enumerate(eqn.invars) if _is_key(v)))
    return rule if isinstance(rule, Signature) else rule(eqn)


_jaxpr_signatures: dict[int, tuple[Jaxpr, Signature]] = {}


def jaxpr_signature(jaxpr: Jaxpr | ClosedJaxpr) -> Signature:
    """Follow ``jaxpr``'s equations; raise KeyReuseError for a key consumed twice.

    Return the signature of the whole program: the inputs it consumes, its
    fresh key outputs and the outputs that are inputs passed along.
    """
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    cached = _jaxpr_signatures.get(id(jaxpr))
    if cached is not None and cached[0] is jaxpr:
        return cached[1]
    forwarded: dict[Any, Any] = {}  # a var that is another var passed along
    consumed: dict[Any, tuple[Any, Any]] = {}  # a key var -> (consumed mask, frame of the last)

    def root(var):
        while not isinstance(var, Literal) and var in forwarded:
            var = forwarded[var]
        return var

    def shape(var) -> tuple[int, ...]:
        return tuple(getattr(var.aval, "shape", ()))

    for eqn in jaxpr.eqns:
        sig = signature_of_eqn(eqn)
        frame = eqn.source_info.frame if eqn.source_info is not None else None
        for i, j in sig.forwards:
            forwarded[eqn.outvars[j]] = eqn.invars[i]
        for i, mask in sinks_of(sig):
            var = root(eqn.invars[i])
            if isinstance(var, Literal):
                continue
            state = consumed.get(var)
            if _prng.overlap(state, mask, shape(var)):
                raise _error(
                    f"In {eqn.primitive.name}, argument {i} is already consumed.", state[1], frame
                )
            before = state[0] if state else False
            consumed[var] = (_prng.merge_masks(before, mask, shape(var)), frame)
        sources = dict(sources_of(sig))
        for j, var in enumerate(eqn.outvars):
            if not _is_key(var) or var in forwarded:
                continue
            # A key result is consumed unless the signature makes it (partly) fresh.
            mask = sources.get(j, True)
            if mask is not False and _prng.fit_mask(mask, shape(var)) is not False:
                consumed[var] = (_prng.fit_mask(mask, shape(var)), frame)
    inputs = list(jaxpr.invars) + list(jaxpr.constvars)
    index = {v: i for i, v in enumerate(inputs)}
    sinks = tuple(
        (i, consumed[v][0]) if consumed[v][0] is not True else i
        for i, v in enumerate(inputs)
        if v in consumed
    )
    sources, forwards = [], []
    for j, out in enumerate(jaxpr.outvars):
        r = root(out)
        if not isinstance(r, Literal) and r in index:
            forwards.append((index[r], j))
        elif _is_key(out) and not isinstance(r, Literal):
            mask = consumed[r][0] if r in consumed else False
            if mask is False:
                sources.append(j)
            elif mask is not True:
                sources.append((j, mask))
    signature = Signature(sinks, tuple(sources), tuple(forwards))
    if len(_jaxpr_signatures) > 4096:
        _jaxpr_signatures.clear()
    _jaxpr_signatures[id(jaxpr)] = (jaxpr, signature)
    return signature


def check_key_reuse_jaxpr(jaxpr) -> None:
    """Raise KeyReuseError if ``jaxpr`` consumes a key twice."""
    jaxpr_signature(jaxpr)


# --- signatures of primitives --------------------------------------------------------------------


def _register_random_rules() -> None:
    from . import _gamma, _prng

    signatures[_prng.random_bits_p] = Signature(sinks=(0,))
    signatures[_prng.random_split_p] = Signature(sinks=(0,), sources=(0,))
    signatures[_prng.random_fold_in_p] = Signature(sources=(0,))  # as JAX: no sink
    signatures[_prng.random_seed_p] = Signature(sources=(0,))
    signatures[_prng.random_wrap_p] = Signature(sources=(0,), forwards=((0, 0),))
    signatures[_prng.random_clone_p] = Signature(sources=(0,))
    signatures[_prng.random_unwrap_p] = Signature()  # reading the data consumes nothing
    signatures[_gamma.random_gamma_p] = Signature(sinks=(0,))


_PASS_ON = Signature(forwards=((0, 0),))
for _prim in (st.broadcast_in_dim_p, st.reshape_p, st.squeeze_p, st.copy_p):
    signatures[_prim] = _PASS_ON
# As JAX: a gathered or dynamically sliced key is its operand passed on.
for _prim in (ix.gather_p, ix.dynamic_slice_p, ew.convert_element_type_p):
    signatures[_prim] = _PASS_ON
signatures[ix.dynamic_update_slice_p] = Signature(sinks=(1,), forwards=((0, 0),))
signatures[ix.scatter_p] = Signature(sinks=(2,), forwards=((0, 0),))
signatures[ew.eq_p] = Signature()
signatures[ew.ne_p] = Signature()
del _prim


def _slice_signature(eqn) -> Signature:
    """A static slice consumes the keys it takes and gives them fresh (JAX's slice rule)."""
    aval = eqn.invars[0].aval
    if not _is_key(eqn.invars[0]):
        return _PASS_ON
    p = eqn.params
    strides = p["strides"] or (1,) * aval.ndim
    taken = np.zeros(aval.shape, bool)
    taken[tuple(map(slice, p["start_indices"], p["limit_indices"], strides))] = True
    return Signature(sinks=((0, True if taken.all() else taken),), sources=(0,))


def _all_inputs_to_fresh(eqn) -> Signature:
    keys = tuple(i for i, v in enumerate(eqn.invars) if _is_key(v))
    if len(eqn.invars) == 1:
        return _PASS_ON
    return Signature(sinks=keys, sources=(0,))


signatures[st.slice_p] = _slice_signature
signatures[st.concatenate_p] = _all_inputs_to_fresh
signatures[ew.select_n_p] = lambda eqn: Signature(
    sinks=tuple(i for i, v in enumerate(eqn.invars) if _is_key(v)), sources=(0,)
)


def _call_signature(param: str, offset: int = 0):
    """The signature of a primitive that applies its ``param`` jaxpr to its operands."""

    def rule(eqn) -> Signature:
        inner = jaxpr_signature(eqn.params[param])
        return Signature(
            tuple((i + offset, m) for i, m in sinks_of(inner)),
            inner.sources,
            tuple((i + offset, j) for i, j in inner.forwards),
        )

    return rule


def _cond_signature(eqn) -> Signature:
    # A key any branch consumes is consumed; a result is fresh where every branch's is.
    sigs = [jaxpr_signature(b) for b in eqn.params["branches"]]
    avals = [v.aval for v in eqn.invars[1:]]
    sinks: dict[int, Any] = {}
    for sig in sigs:
        for i, mask in sinks_of(sig):
            sinks[i] = _prng.merge_masks(sinks.get(i, False), mask, avals[i].shape)
    sources: dict[int, Any] = {}
    fresh_in_all = set.intersection(*({j for j, _ in sources_of(s)} for s in sigs))
    for sig in sigs:
        for j, mask in sources_of(sig):
            if j in fresh_in_all:
                shape = eqn.outvars[j].aval.shape
                sources[j] = _prng.merge_masks(sources.get(j, False), mask, shape)
    forwards = sorted(set.intersection(*(set(s.forwards) for s in sigs)))
    return Signature(
        tuple((i + 1, m) for i, m in sorted(sinks.items())),
        tuple((j, m) for j, m in sorted(sources.items())),
        tuple((i + 1, j) for i, j in forwards),
    )


def _loop_signature(name: str, body: str, nconsts: str, ncarry: str | None):
    def rule(eqn) -> Signature:
        sig = jaxpr_signature(eqn.params[body])
        n_consts = eqn.params[nconsts]
        sinks = [i for i, _ in sinks_of(sig)]
        if any(i < n_consts for i in sinks):
            raise KeyReuseError(
                f"{name} body function leads to key reuse when repeatedly executed, because "
                f"key constants are repeatedly consumed (at {_where(eqn.source_info.frame)})"
            )
        n_carry = eqn.params[ncarry] if ncarry else len(eqn.outvars)
        carry_sinks = {i - n_consts for i in sinks if i - n_consts < n_carry}
        if not carry_sinks <= {j for j, _ in sources_of(sig)}:
            raise KeyReuseError(
                f"{name} body function leads to key reuse when repeatedly executed, because "
                "consumed carried keys are not replaced by fresh ones "
                f"(at {_where(eqn.source_info.frame)})"
            )
        return sig

    return rule


def _register_control_flow_rules() -> None:
    from modjax.runtime import jit_p

    from ..lax.control_flow import cond_p, scan_p, while_p

    signatures[jit_p] = _call_signature("jaxpr")
    signatures[cond_p] = _cond_signature
    signatures[scan_p] = _loop_signature("scan", "jaxpr", "num_consts", "num_carry")
    signatures[while_p] = _loop_signature("while_loop", "body_jaxpr", "body_nconsts", None)


# --- concrete keys -------------------------------------------------------------------------------


def _call_check(closed, leaves):
    """Before an eager call: raise if it consumes a consumed key; after: update the keys."""
    sig = jaxpr_signature(closed)
    args = list(leaves)
    # An eager operation runs as a program of one equation: name its primitive, as JAX does.
    eqns = closed.jaxpr.eqns
    one = len(eqns) == 1 and list(eqns[0].invars) == list(closed.jaxpr.invars)
    what = eqns[0].primitive.name if one else "jit-compiled function"

    def key_arg(i):
        return args[i] if i < len(args) and isinstance(args[i], PRNGKeyArray) else None

    for i, mask in sinks_of(sig):
        arg = key_arg(i)
        if arg is not None and _prng.overlap(arg._consumed, mask, arg.aval.shape):
            raise _error(
                f"Previously-consumed key passed to {what} at index {i}",
                arg._consumed[1],
                source_info.user_frame(),
            )

    def update(outs):
        here = source_info.user_frame() or "an unknown line"
        for i, mask in sinks_of(sig):
            arg = key_arg(i)
            if arg is not None:
                before = arg._consumed[0] if arg._consumed else False
                arg._consumed = (_prng.merge_masks(before, mask, arg.aval.shape), here)
        # As JAX: a key result is consumed unless fresh (a source) or an argument passed on.
        sources = dict(sources_of(sig))
        forwards = {j: i for i, j in sig.forwards}
        for j, out in enumerate(outs):
            if not isinstance(out, PRNGKeyArray):
                continue
            if j in forwards:
                arg = key_arg(forwards[j])
                out._consumed = arg._consumed if arg is not None else False
            else:
                mask = _prng.fit_mask(sources.get(j, True), out.aval.shape)
                out._consumed = (mask, here) if mask is not False else False

    return update


def _set_checking(on: bool) -> None:
    _prng.reuse_checking[0] = bool(on)
    tables = ((extended.jaxpr_checks, check_key_reuse_jaxpr), (extended.call_checks, _call_check))
    for table, check in tables:
        if on and check not in table:
            table.append(check)
        elif not on and check in table:
            table.remove(check)
    clear_caches()  # programs traced before were not checked (as JAX retraces)


debug_key_reuse = config.define_bool_option(
    "debug_key_reuse",
    False,
    env_var="MODJAX_DEBUG_KEY_REUSE",
    help="Check that typed PRNG keys are consumed at most once (jax_debug_key_reuse).",
    on_update=_set_checking,
)


_register_random_rules()
_register_control_flow_rules()
_set_checking(debug_key_reuse.value)
