"""Key reuse checking: with ``jax_debug_key_reuse`` on, consuming a typed key twice is an error.

The counterpart of JAX's ``jax.experimental.key_reuse``. A key is *consumed*
by drawing bits from it (``random_bits``, ``random_gamma``), splitting it or
folding data into it; ``clone``, ``key``, ``wrap_key_data`` and the results of
the key operations give fresh keys. A second consumption raises
``KeyReuseError`` naming the line of the second use (and of the first).

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

Primitives without a rule consume their key operands, as in JAX. Legacy
``uint32`` keys are not checked (JAX checks typed keys only). Taking elements
of a key array (slicing, indexing) neither consumes it nor is tracked per
element: JAX tracks consumption per element; modjax gives the element a fresh
state, so reusing one element through two separate indexings is not detected.

The option is defined here, next to its only reader.
"""

from __future__ import annotations

from typing import Any, NamedTuple

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
    """How a primitive or program uses keys: operands consumed, fresh results, pass-throughs."""

    sinks: tuple[int, ...] = ()
    sources: tuple[int, ...] = ()
    forwards: tuple[tuple[int, int], ...] = ()  # (operand index, result index)


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
    consumed_at: dict[Any, Any] = {}  # a consumed var -> the frame of its consumption
    fresh: set = set()  # key vars made by a source

    def root(var):
        while not isinstance(var, Literal) and var in forwarded:
            var = forwarded[var]
        return var

    for eqn in jaxpr.eqns:
        sig = signature_of_eqn(eqn)
        frame = eqn.source_info.frame if eqn.source_info is not None else None
        for i, j in sig.forwards:
            forwarded[eqn.outvars[j]] = eqn.invars[i]
        for i in sig.sinks:
            var = root(eqn.invars[i])
            if isinstance(var, Literal):
                continue
            if var in consumed_at:
                raise _error(
                    f"In {eqn.primitive.name}, argument {i} is already consumed.",
                    consumed_at[var],
                    frame,
                )
            consumed_at[var] = frame
        for j in sig.sources:
            fresh.add(eqn.outvars[j])
        for var in eqn.outvars:
            if _is_key(var) and var not in forwarded and var not in fresh:
                consumed_at[var] = frame  # a key result that is neither fresh nor passed on
    inputs = list(jaxpr.invars) + list(jaxpr.constvars)
    index = {v: i for i, v in enumerate(inputs)}
    sinks = tuple(i for i, v in enumerate(inputs) if v in consumed_at)
    sources, forwards = [], []
    for j, out in enumerate(jaxpr.outvars):
        r = root(out)
        if not isinstance(r, Literal) and r in index:
            forwards.append((index[r], j))
        elif _is_key(out) and r not in consumed_at:
            sources.append(j)
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

    consume_and_fresh = Signature(sinks=(0,), sources=(0,))
    signatures[_prng.random_bits_p] = Signature(sinks=(0,))
    signatures[_prng.random_split_p] = consume_and_fresh
    signatures[_prng.random_fold_in_p] = consume_and_fresh
    signatures[_prng.random_seed_p] = Signature(sources=(0,))
    signatures[_prng.random_wrap_p] = Signature(sources=(0,), forwards=((0, 0),))
    signatures[_prng.random_clone_p] = Signature(sources=(0,))
    # key_data passes the key on: consuming the data (random_gamma) consumes the key.
    signatures[_prng.random_unwrap_p] = Signature(forwards=((0, 0),))
    signatures[_gamma.random_gamma_p] = Signature(sinks=(0,))


_PASS_ON = Signature(forwards=((0, 0),))
_TAKE = Signature(sources=(0,))  # an element of a key array: fresh (see the module docstring)
for _prim in (st.broadcast_in_dim_p, st.reshape_p, st.squeeze_p, st.copy_p, st.transpose_p):
    signatures[_prim] = _PASS_ON
for _prim in (st.slice_p, ix.gather_p, ix.dynamic_slice_p, st.rev_p):
    signatures[_prim] = _TAKE
signatures[ew.convert_element_type_p] = _PASS_ON
signatures[ix.dynamic_update_slice_p] = Signature(sinks=(1,), forwards=((0, 0),))
signatures[ew.eq_p] = Signature()
signatures[ew.ne_p] = Signature()
del _prim


def _all_inputs_to_fresh(eqn) -> Signature:
    keys = tuple(i for i, v in enumerate(eqn.invars) if _is_key(v))
    if len(eqn.invars) == 1:
        return _PASS_ON
    return Signature(sinks=keys, sources=(0,))


signatures[st.concatenate_p] = _all_inputs_to_fresh
signatures[ew.select_n_p] = lambda eqn: Signature(
    sinks=tuple(i for i, v in enumerate(eqn.invars) if _is_key(v)), sources=(0,)
)


def _call_signature(param: str, offset: int = 0):
    """The signature of a primitive that applies its ``param`` jaxpr to its operands."""

    def rule(eqn) -> Signature:
        inner = jaxpr_signature(eqn.params[param])
        return Signature(
            tuple(i + offset for i in inner.sinks),
            inner.sources,
            tuple((i + offset, j) for i, j in inner.forwards),
        )

    return rule


def _cond_signature(eqn) -> Signature:
    sigs = [jaxpr_signature(b) for b in eqn.params["branches"]]
    sinks = sorted({i + 1 for s in sigs for i in s.sinks})
    sources = sorted(set.intersection(*(set(s.sources) for s in sigs)))
    forwards = sorted(set.intersection(*(set(s.forwards) for s in sigs)))
    return Signature(tuple(sinks), tuple(sources), tuple((i + 1, j) for i, j in forwards))


def _loop_signature(name: str, body: str, nconsts: str, ncarry: str | None):
    def rule(eqn) -> Signature:
        sig = jaxpr_signature(eqn.params[body])
        n_consts = eqn.params[nconsts]
        if any(i < n_consts for i in sig.sinks):
            raise KeyReuseError(
                f"{name} body function leads to key reuse when repeatedly executed, because "
                f"key constants are repeatedly consumed (at {_where(eqn.source_info.frame)})"
            )
        n_carry = eqn.params[ncarry] if ncarry else len(eqn.outvars)
        carry_sinks = {i - n_consts for i in sig.sinks if i - n_consts < n_carry}
        if not carry_sinks <= set(sig.sources):
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
    sig = jaxpr_signature(closed)
    args = list(leaves)
    for i in sig.sinks:
        if i < len(args) and isinstance(args[i], PRNGKeyArray) and args[i]._consumed:
            raise _error(
                f"Previously-consumed key passed to jit-compiled function at index {i}",
                args[i]._consumed,
                source_info.user_frame(),
            )

    def update(outs):
        here = source_info.user_frame() or True
        for i in sig.sinks:
            if i < len(args) and isinstance(args[i], PRNGKeyArray):
                args[i]._consumed = here
        for i, j in sig.forwards:
            if (
                i < len(args)
                and isinstance(args[i], PRNGKeyArray)
                and isinstance(outs[j], PRNGKeyArray)
            ):
                outs[j]._consumed = args[i]._consumed

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
