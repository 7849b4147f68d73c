"""Primitives, traces, tracers and the current-trace context.

``Primitive.bind`` hands the primitive to the *current trace*. A transformation
installs its own trace as current while it runs the user's function; its
``process_primitive`` unpacks the tracers it owns (recognised by identity),
treats every other value as a constant, and binds again under the trace that
was current when it started (its parent). Because a trace only ever unpacks
its own tracers, a tracer of an outer transformation closed over by an inner
one is handled by the outer trace: perturbation confusion cannot happen.
"""

from __future__ import annotations

import inspect
import operator
import threading
import types
import weakref
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from . import source_info as source_info_util
from . import traceback_util
from .abstract import ShapedArray, get_aval
from .memory_spaces import apply_memory_space_rule
from .sharding_types import apply_sharding_rule, apply_vma_rule

__all__ = [
    "Primitive",
    "Trace",
    "Tracer",
    "EvalTrace",
    "eval_trace",
    "OpaqueTraceState",
    "current_trace",
    "get_opaque_trace_state",
    "set_current_trace",
    "set_eval_transition_hooks",
    "primitives_by_name",
    "register_tracer_operator",
    "register_tracer_attribute",
    "tracer_operators",
    "operator_listeners",
    "tracer_attributes",
    "trace_state",
    "OPERATOR_NAMES",
    "BINARY_OPERATOR_NAMES",
    "OPERATOR_SIGNATURES",
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "KeyReuseError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "UnexpectedTracerError",
    "concrete_or_error",
]


# --- primitives -----------------------------------------------------------------------

# Every primitive ever declared, by name; the jaxpr parser looks names up here.
primitives_by_name: dict[str, list[Primitive]] = {}


class Primitive:
    """A named operation with rules (jax.extend.core.Primitive).

    ``impl`` runs it on concrete values, ``abstract_eval`` maps input avals to
    output avals. Transformations keep their own rule tables keyed by primitive.
    """

    multiple_results = False
    # True gives every equation of the primitive the generic unordered effect; for
    # named or ordered effects set ``effects_rule`` (``def_effects``).
    effectful = False
    effects_rule = None

    def __init__(self, name: str):
        self.name = name
        self._impl: Callable | None = None
        self._abstract_eval: Callable | None = None
        primitives_by_name.setdefault(name, []).append(self)

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args, **params):
        """Apply the primitive to ``args`` under the current trace."""
        try:
            return _state.trace.process_primitive(self, args, params)
        except Exception as e:  # an API boundary for eager ops (a no-op under jit, grad...)
            traceback_util.filter_exception(e)
            raise

    def get_bind_params(self, params: dict) -> dict:
        """Return the keyword arguments that rebind an equation with ``params``.

        The counterpart of JAX's ``Primitive.get_bind_params``: interpreters call
        ``eqn.primitive.bind(*args, **eqn.primitive.get_bind_params(eqn.params))``.
        In modjax an equation's params are always what ``bind`` takes (call-like
        primitives hold their programs as jaxprs, never as Python functions), so
        this is a copy of them.
        """
        return dict(params)

    def def_impl(self, impl: Callable) -> Callable:
        """Set the function that evaluates the primitive on concrete values."""
        self._impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval: Callable) -> Callable:
        """Set the function mapping input avals (and params) to output aval(s)."""
        self._abstract_eval = abstract_eval
        return abstract_eval

    def def_effects(self, rule: Callable) -> Callable:
        """Set ``rule(**params) -> effects``, the primitive's own effects.

        The counterpart of jax's ``def_effectful_abstract_eval``.

        Effects of jaxprs held in the params are added to an equation's effects
        without a rule; this is only for what the primitive itself does.
        """
        self.effects_rule = rule
        return rule

    def impl(self, *args, **params):
        """Evaluate the primitive on concrete values."""
        if self._impl is None:
            raise NotImplementedError(f"primitive '{self.name}' has no impl (use def_impl)")
        return self._impl(*args, **params)

    def abstract_eval(self, *avals: ShapedArray, **params):
        """Return the output aval (a list of them when ``multiple_results``)."""
        if self._abstract_eval is None:
            raise NotImplementedError(
                f"primitive '{self.name}' has no abstract evaluation rule (use def_abstract_eval)"
            )
        out = self._abstract_eval(*avals, **params)
        if ShapedArray.sharded_types_seen:
            out = apply_sharding_rule(self, avals, out, params)
        if ShapedArray.varying_types_seen:
            out = apply_vma_rule(self, avals, out, params)
        if ShapedArray.memory_spaces_seen:
            out = apply_memory_space_rule(self, avals, out, params)
        return out


# --- the current trace ----------------------------------------------------------------


class Trace:
    """An interpreter for primitives (jax.core.Trace).

    Subclasses implement ``process_primitive(primitive, args, params)``; ``args``
    may mix this trace's tracers with any other values, which are constants to it.
    """

    __slots__ = ("parent", "alive", "__weakref__")

    def __init__(self, parent: Trace | None = None):
        self.parent = parent if parent is not None else _state.trace
        self.alive = True

    def process_primitive(self, primitive: Primitive, args, params):
        raise NotImplementedError(f"{type(self).__name__} must implement process_primitive")

    def invalidate(self) -> None:
        """Mark the trace finished, so leaked tracers of it are reported."""
        self.alive = False

    @property
    def main(self) -> Trace:
        """Return what identifies this trace's tracers (JAX's ``Trace.main``).

        JAX answers with the trace's tag, shared by the traces of one
        transformation; in modjax a transformation keeps one trace object, so
        the trace is its own identity: ``x._trace.main is t.main`` tells whether
        ``x`` belongs to ``t`` (equinox's ``filter_jvp`` asks this).
        """
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class EvalTrace(Trace):
    """The bottom trace: runs each primitive's ``impl`` on concrete values."""

    __slots__ = ()

    def __init__(self):
        self.parent = None
        self.alive = True

    def process_primitive(self, primitive, args, params):
        for arg in args:
            if isinstance(arg, Tracer):
                raise UnexpectedTracerError(_leak_message(arg, primitive))
        impl = primitive._impl  # skip the checking wrapper: this is the eager hot path
        if impl is None:
            return primitive.impl(*args, **params)
        return impl(*args, **params)


eval_trace = EvalTrace()


class _State(threading.local):
    def __init__(self):
        self.trace: Trace = eval_trace


_state = _State()
# Public read access for hot paths (jit's dispatch): ``trace_state.trace`` is the current
# trace of this thread, one attribute read instead of a call to ``current_trace()``.
trace_state = _state


def current_trace() -> Trace:
    """Return the trace that ``bind`` currently hands primitives to."""
    return _state.trace


class OpaqueTraceState:
    """Which trace was current, without holding it (JAX's ``OpaqueTraceState``).

    Libraries (flax's scopes) take one when they start and compare it with a fresh
    one later, to tell whether they are still inside the same transformation. Two
    are equal when they name the same trace object; a weak reference keeps a
    finished trace from living on.
    """

    __slots__ = ("_trace_ref", "_trace_id")

    def __init__(self, trace: Trace):
        self._trace_ref = weakref.ref(trace)
        self._trace_id = id(trace)

    def __eq__(self, other) -> bool:
        if not isinstance(other, OpaqueTraceState):
            return NotImplemented
        trace = self._trace_ref()
        return trace is not None and trace is other._trace_ref()

    def __hash__(self) -> int:
        return self._trace_id


def get_opaque_trace_state(convention: Any = None) -> OpaqueTraceState:
    """Return a token of the current trace (``jax.extend.core.get_opaque_trace_state``).

    ``convention`` names the caller's convention (flax passes ``"flax"``); every
    convention gets the same token, compared with ``==``.
    """
    del convention
    return OpaqueTraceState(_state.trace)


# What ``set_current_trace`` calls when this thread leaves the eval trace for another
# (``leave``, whose result it keeps) and when it comes back (``reenter(kept)``). Only
# those transitions call them: swaps between traces, one per traced equation, do not.
_eval_hooks: list = [None, None]
_NOTHING_KEPT = object()


def set_eval_transition_hooks(
    leave: Callable[[], Any] | None, reenter: Callable[[Any], Any] | None
) -> None:
    """Call ``leave()`` when a thread starts tracing, ``reenter(leave's result)`` when it stops.

    "Tracing" is: ``set_current_trace`` made a trace other than the eval trace current
    where the eval trace was. The hooks may fire while a thread is in fact evaluating
    (a transformation's rule runs with its parent trace current, which may be the eval
    trace, without them), never the other way round: whatever they gate must treat
    "tracing" as "maybe tracing". runtime uses them to keep jaxlib's C++ fast paths,
    which cannot see Python's trace state, out of traces. None removes them.
    """
    _eval_hooks[0] = leave
    _eval_hooks[1] = reenter


class set_current_trace:
    """Make ``trace`` current inside a ``with`` block (jax.core.set_current_trace)."""

    __slots__ = ("trace", "saved", "kept")

    def __init__(self, trace: Trace):
        self.trace = trace
        self.kept = _NOTHING_KEPT

    def __enter__(self):
        state = _state
        saved = self.saved = state.trace
        trace = state.trace = self.trace
        if saved is eval_trace and trace is not eval_trace and _eval_hooks[0] is not None:
            self.kept = _eval_hooks[0]()
        return trace

    def __exit__(self, *exc):
        _state.trace = self.saved
        if self.kept is not _NOTHING_KEPT:
            kept, self.kept = self.kept, _NOTHING_KEPT
            _eval_hooks[1](kept)


# --- errors ---------------------------------------------------------------------------


class JAXTypeError(TypeError):
    """Base of the TypeErrors modjax raises about traced values (``jax.errors.JAXTypeError``)."""


class JAXIndexError(IndexError):
    """Base of the IndexErrors modjax raises about traced indices (``jax.errors.JAXIndexError``)."""


class ConcretizationTypeError(JAXTypeError):
    """A concrete Python value was needed from an abstract tracer (``int()``, ``float()``...)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` (an ``if``, ``while``, ``and``...) of an abstract tracer."""


class TracerIntegerConversionError(JAXTypeError):
    """``__index__`` of an abstract tracer (``range(x)``, ``lst[x]``): not ``int()``, as in JAX."""


class TracerArrayConversionError(JAXTypeError):
    """Conversion of an abstract tracer to a NumPy array."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer was used after the transformation that made it had finished."""


class KeyReuseError(JAXTypeError):
    """A PRNG key consumed twice while ``debug_key_reuse`` checks keys (``jax.errors``)."""


class InconclusiveDimensionOperation(Exception):
    """An operation on symbolic dimensions whose answer depends on their values.

    ``jax.errors.InconclusiveDimensionOperation``: raised by comparisons of the
    export package's symbolic dimensions (``a >= 3`` for a variable ``a``).
    """


def _leak_message(tracer: Tracer, primitive: Primitive | None = None) -> str:
    """JAX's text for a leaked tracer, then where modjax saw it used and made."""
    info = getattr(tracer._trace, "debug_info", None)
    traced = ""
    if info is not None:
        where = f" at {info.func_src_info}" if info.func_src_info else ""
        traced = (
            f"\nThe function being traced when the value leaked was {info.func_name}{where} "
            f"traced for {info.traced_for}."
        )
    user = source_info_util.user_frame()
    use = f" by '{primitive.name}'" if primitive is not None else ""
    return (
        "Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
        "allowing for a reference to an intermediate value with type "
        f"{tracer.aval.str_short()} wrapped in a {type(tracer).__name__} to escape the scope "
        "of the transformation.\nJAX transformations require that functions explicitly "
        f"return their outputs, and disallow saving intermediate values to global state.{traced}"
        f"\nThe leaked value was used{use} at {user}.{tracer._origin()}"
    )


# JAX's errors end with a pointer to their section of its error reference.
_ERRORS_PAGE = "https://docs.jax.dev/en/latest/errors.html"


def _with_page(message: str, cls: type) -> str:
    return f"{message}\nSee {_ERRORS_PAGE}#jax.errors.{cls.__name__}"


def _error_repr(tracer: Tracer) -> str:
    return f"traced array with shape {tracer.aval.str_short()}"


def _is_integer(dtype) -> bool:
    try:
        return np.issubdtype(dtype, np.integer)
    except TypeError:  # an extended dtype (keys)
        return False


def concretization_error(tracer: Tracer, context: str = "") -> ConcretizationTypeError:
    """Return JAX's ConcretizationTypeError for ``tracer``, ``context`` saying where it arose.

    The text is JAX's: the tracer's type, the context line, then (for a value of a
    traced function) the function and the arguments its value depends on.
    """
    message = (
        "Abstract tracer value encountered where concrete value is expected: "
        f"{_error_repr(tracer)}\n{context}{tracer._origin_msg()}\n"
    )
    return ConcretizationTypeError(_with_page(message, ConcretizationTypeError))


def _conversion_context(name: str) -> str:
    """JAX's line for ``int()``/``float()``/``complex()`` of a tracer (it suggests ``astype``)."""
    return (
        f"The problem arose with the `{name}` function. If trying to convert the data type "
        f"of a value, try using `x.astype({name})` or `jnp.array(x, {name})` instead."
    )


def concrete_or_error(value, context: str = ""):
    """Return the concrete value of ``value`` or raise ConcretizationTypeError.

    Non-tracers are returned unchanged (jax.core.concrete_or_error; ``context``
    is the line of the message that says where the value was needed).
    """
    if not isinstance(value, Tracer):
        return value
    concrete = value.to_concrete_value()
    if concrete is None:
        raise concretization_error(value, context)
    return concrete


# --- tracers --------------------------------------------------------------------------

# Operators and attributes of tracers live in replaceable tables so that a higher
# layer (numpy_api, or a DSL) decides what ``x + y`` or ``x.T`` means.
# Called as ``listener(name, fn)`` after each change of ``tracer_operators`` (``fn`` is
# None once ``name`` is gone): an array type of a higher layer (runtime's Array) may
# install ``fn`` as its own method, a frame cheaper per operator than a method that
# reads the table on every call.
operator_listeners: list[Callable[[str, Callable | None], None]] = []


class _OperatorTable(dict):
    """A dict that tells ``operator_listeners`` of every change, however it is made."""

    def _changed(self, names) -> None:
        for listener in operator_listeners:
            for name in names:
                listener(name, self.get(name))

    def __setitem__(self, name, fn):
        super().__setitem__(name, fn)
        self._changed((name,))

    def __delitem__(self, name):
        super().__delitem__(name)
        self._changed((name,))

    def clear(self):
        names = list(self)
        super().clear()
        self._changed(names)

    def update(self, *args, **kwargs):
        new = dict(*args, **kwargs)
        super().update(new)
        self._changed(list(new))

    def pop(self, name, *default):
        fn = super().pop(name, *default)
        self._changed((name,))
        return fn

    def popitem(self):
        item = super().popitem()
        self._changed((item[0],))
        return item

    def setdefault(self, name, default=None):
        fn = super().setdefault(name, default)
        self._changed((name,))
        return fn


tracer_operators: dict[str, Callable] = _OperatorTable()
tracer_attributes: dict[str, Callable] = {}

#: Class attributes of an abstract value that its tracers expose as a property
#: (``aval_property(fget)``) or a bound method (``aval_method(fun)``), called with the
#: tracer; JAX's ``core.aval_property`` / ``core.aval_method``.
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])


def register_tracer_operator(name: str, fn: Callable) -> None:
    """Make ``name`` (a dunder such as ``"__add__"``) on tracers call ``fn(tracer, *args)``."""
    if name not in _OPERATOR_NAMES:
        raise ValueError(f"'{name}' is not a tracer operator; expected one of {_OPERATOR_NAMES}")
    tracer_operators[name] = fn


def register_tracer_attribute(name: str, fn: Callable) -> None:
    """Make attribute ``name`` of a tracer evaluate ``fn(tracer)`` (e.g. ``.T``, ``.sum``)."""
    tracer_attributes[name] = fn


class Tracer:
    """A traced value: an abstract value owned by one trace (jax.core.Tracer)."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000
    __hash__ = None  # type: ignore[assignment]  # tracers overload ``==`` elementwise, so they cannot be dict keys

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def to_concrete_value(self):
        """Return the concrete value if this trace knows it, else None."""
        return None

    def _origin(self) -> str:
        """A sentence telling where this value came from, for error messages."""
        return ""

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.aval.shape[0]))

    def _origin_msg(self) -> str:
        """JAX's lines naming the traced function and the arguments this value depends on."""
        return ""

    # The conversions check what JAX checks, in its order: a known value converts;
    # then the shape (a ValueError or TypeError as NumPy's); then JAX's error for a
    # tracer, in its words.
    def __bool__(self):
        concrete = self.to_concrete_value()
        if concrete is not None:
            return bool(concrete)
        if self.aval.size == 0:
            raise ValueError(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to "
                "check that an array is not empty."
            )
        if self.aval.size > 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use "
                "a.any() or a.all()"
            )
        raise TracerBoolConversionError(
            _with_page(
                f"Attempted boolean conversion of {_error_repr(self)}.{self._origin_msg()}",
                TracerBoolConversionError,
            )
        )

    def __index__(self):
        concrete = self.to_concrete_value()
        if concrete is not None:
            return operator_index(concrete)
        if self.aval.shape != () or not _is_integer(self.aval.dtype):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        raise TracerIntegerConversionError(
            _with_page(
                f"The __index__() method was called on {_error_repr(self)}{self._origin_msg()}",
                TracerIntegerConversionError,
            )
        )

    def _scalar(self, convert, known_converts: bool = True):
        concrete = self.to_concrete_value() if known_converts else None
        if concrete is not None:
            return convert(concrete)
        if self.aval.ndim > 0:
            raise TypeError(
                "Only scalar arrays can be converted to Python scalars; "
                f"got arr.ndim={self.aval.ndim}"
            )
        raise concretization_error(self, _conversion_context(convert.__name__))

    def __int__(self):
        return self._scalar(int)

    # As in JAX, a known value converts to bool, int and an index (Python control flow
    # on a differentiated value works) but never to a float, a complex or a numpy array:
    # the derivative would be lost without a word.
    def __float__(self):
        return self._scalar(float, known_converts=False)

    def __complex__(self):
        return self._scalar(complex, known_converts=False)

    def __array__(self, dtype=None, copy=None):
        raise TracerArrayConversionError(
            _with_page(
                "The numpy.ndarray conversion method __array__() was called on "
                f"{_error_repr(self)}{self._origin_msg()}",
                TracerArrayConversionError,
            )
        )

    def __getattr__(self, name):
        # Only reached when normal lookup fails; dunders are never table entries, which
        # keeps copy/pickle probes from recursing.
        if name.startswith("__"):
            raise AttributeError(name)
        fn = tracer_attributes.get(name)
        if fn is None:
            # A custom abstract value may give its tracers methods and properties
            # (JAX's aval_method / aval_property).
            member = getattr(self.aval, name, None)
            if type(member) is aval_property:
                return member.fget(self)
            if type(member) is aval_method:
                return types.MethodType(member.fun, self)
            raise AttributeError(f"{type(self).__name__} has no attribute {name}")
        return fn(self)

    def __repr__(self) -> str:
        return self._short_repr()

    def _short_repr(self) -> str:
        """Return the one-line form JAX prints for a tracer (``Tracer._short_repr``)."""
        return f"{type(self).__name__}<{self.aval}>"


def short_repr(value) -> str:
    """Return a tracer's one-line form, or ``str`` of any other value."""
    return value._short_repr() if isinstance(value, Tracer) else str(value)


def operator_index(value) -> int:
    return operator.index(value.item() if isinstance(value, np.ndarray) else value)


_BINARY = (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod "
    "divmod rdivmod pow rpow matmul rmatmul "
    "and rand or ror xor rxor lshift rlshift rshift rrshift eq ne lt le gt ge"
).split()
_OTHER = (
    "neg pos abs invert getitem setitem round trunc floor ceil copy deepcopy format "
    "array_namespace dlpack dlpack_device"
).split()
_OPERATOR_NAMES = tuple(f"__{name}__" for name in _BINARY + _OTHER)
# The dunders tracers dispatch through ``tracer_operators``, and the binary ones among
# them: an array type of a higher layer (runtime's Array) installs the same protocol.
OPERATOR_NAMES = _OPERATOR_NAMES
BINARY_OPERATOR_NAMES = tuple(f"__{name}__" for name in _BINARY)


# The Array API's signatures of the interchange dunders. Their forwarders take
# ``*args, **kwargs`` (the registered function checks the arguments); this is what
# ``inspect.signature`` shows for them, on tracers and on runtime's Array alike.
def _array_namespace(self, /, *, api_version=None): ...
def _dlpack(self, /, *, stream=None, max_version=None, dl_device=None, copy=None): ...
def _dlpack_device(self, /): ...


OPERATOR_SIGNATURES = {
    "__array_namespace__": inspect.signature(_array_namespace),
    "__dlpack__": inspect.signature(_dlpack),
    "__dlpack_device__": inspect.signature(_dlpack_device),
}

# What a tracer does for an operator nobody registered. Binary operators answer
# NotImplemented so Python tries the other operand and then raises its usual TypeError
# (``==`` falls back to identity); copying a tracer is the identity.
_UNREGISTERED_FALLBACK = {
    "__format__": object.__format__,
    "__copy__": lambda self: self,
    "__deepcopy__": lambda self, memo: self,
}


def _make_forwarder(name: str, binary: bool):
    fallback = _UNREGISTERED_FALLBACK.get(name)

    def forward_binary(self, other):
        fn = tracer_operators.get(name)
        return NotImplemented if fn is None else fn(self, other)

    # Other dunders may take keywords (``__dlpack__(stream=...)``, ``__round__(ndigits)``).
    def forward(self, *args, **kwargs):
        fn = tracer_operators.get(name)
        if fn is not None:
            return fn(self, *args, **kwargs)
        if fallback is not None:
            return fallback(self, *args, **kwargs)
        raise TypeError(
            f"operator {name} is not defined for {type(self).__name__}: no implementation "
            "is registered (modjax.numpy registers them; a DSL can use "
            "register_tracer_operator)"
        )

    chosen = forward_binary if binary else forward
    chosen.__name__ = name
    chosen.__doc__ = f"Dispatch ``{name}`` through ``tracer_operators``."
    if name in OPERATOR_SIGNATURES:
        chosen.__signature__ = OPERATOR_SIGNATURES[name]  # type: ignore[attr-defined]
    return chosen


for _name in _BINARY:
    setattr(Tracer, f"__{_name}__", _make_forwarder(f"__{_name}__", binary=True))
for _name in _OTHER:
    setattr(Tracer, f"__{_name}__", _make_forwarder(f"__{_name}__", binary=False))
del _name


def to_aval(value) -> ShapedArray:
    """Return the abstract value of a tracer or a concrete value."""
    if isinstance(value, Tracer):
        return value.aval
    return get_aval(value)


traceback_util.register_boundary(Primitive.bind.__code__)
