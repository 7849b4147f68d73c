"""The user-facing transformations: jvp, linearize, vjp, grad, value_and_grad and friends.

They take and return pytrees; internally everything is flat lists of leaves.
Reverse mode is ``linearize`` (JVP with the tangents staged into a linear jaxpr)
followed by ``backward_pass`` over that jaxpr.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import EvalTrace, Primitive, Tracer, current_trace, to_aval
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.traceback_util import api_boundary
from modjax.tracecore.tracing import arg_aval, trace_to_jaxpr
from modjax.tracecore.tree_util import (
    Partial,
    register_pytree_node,
    tree_flatten,
    tree_map,
    tree_unflatten,
)
from modjax.tracecore.wrapped_fun import check_callable as _check_callable
from modjax.tracecore.wrapped_fun import debug_info, wrap_init, wraps_transform

from .ad_markers import DidntWant, DontWant, GradRef, GradValue
from .jvp import jvp_flat
from .linearize import linearize_flat
from .tangents import (
    UndefinedPrimal,
    Zero,
    defjvp_zero,
    from_symbolic_zero,
    host_to_array,
    instantiate_zeros,
    register_host_to_array,
    tangent_aval,
    tangent_dtype,
)
from .transpose import backward_pass

__all__ = [
    "jvp",
    "linearize",
    "vjp",
    "grad",
    "value_and_grad",
    "linear_transpose",
    "stop_gradient",
    "stop_gradient_p",
    "closure_convert",
    "register_host_to_array",
]


# --- flattening -------------------------------------------------------------------------


class _OutInfo:
    """What a flattened function reports after it ran: its output and aux treedefs."""

    __slots__ = ("out_tree", "aux_tree")

    def __init__(self):
        self.out_tree = self.aux_tree = None


def _flatten(
    fun: Callable, in_tree, has_aux: bool, unpack_aux: bool = False
) -> tuple[Callable, _OutInfo]:
    """Make ``fun(*args)`` a function of flat leaves returning flat leaves.

    With ``has_aux`` the flat function returns ``(out_leaves, aux_leaves)``. The
    output must be a pair (a tuple or list of two), except with ``unpack_aux``
    (``jvp``'s way in JAX), where it is unpacked as Python unpacks ``out, aux = r``:
    a 2-array unpacks along its axis, a 3-tuple raises ValueError.
    """
    info = _OutInfo()

    def flat_fun(*args_flat):
        out = fun(*tree_unflatten(in_tree, args_flat))
        if has_aux:
            if unpack_aux:
                out, aux = out
            elif not isinstance(out, tuple | list) or len(out) != 2:
                raise TypeError(
                    "expected function with aux output to return a two-element tuple, but "
                    f"got type {type(out)} with value {out!r}"
                )
            else:
                out, aux = out
            aux_flat, info.aux_tree = tree_flatten(aux)
        out_flat, info.out_tree = tree_flatten(out)
        return (out_flat, aux_flat) if has_aux else out_flat

    return flat_fun, info


_GRAD_DOC = (
    "Gradient of {fun} with respect to positional argument(s) {argnums}. Takes the same "
    "arguments as {fun} but returns the gradient, which has the same shape as the arguments "
    "at positions {argnums}."
)
_VALUE_AND_GRAD_DOC = (
    "Value and gradient of {fun} with respect to positional argument(s) {argnums}. Takes the "
    "same arguments as {fun} but returns a two-element tuple where the first element is the "
    "value of {fun} and the second element is the gradient, which has the same shape as the "
    "arguments at positions {argnums}."
)


def _dtype_name(dtype) -> str:
    return dtypes.dtype_name(dtype)


# --- jvp and linearize ------------------------------------------------------------------


@api_boundary
def jvp(fun: Callable, primals, tangents, has_aux: bool = False):
    """Compute the Jacobian-vector product of ``fun`` at ``primals`` (jax.jvp).

    ``primals`` and ``tangents`` are tuples (or lists) of the same pytree structure,
    one entry per positional argument; tangents must have the primals' shapes and
    dtypes (``float0`` for integer and boolean primals). Return
    ``(primals_out, tangents_out)``, plus ``aux`` when ``has_aux``.
    """
    _check_callable(fun)
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; "
            f"found {type(primals).__name__} and {type(tangents).__name__}."
        )
    ps_flat, in_tree = tree_flatten(primals)
    ts_flat, tree2 = tree_flatten(tangents)
    if in_tree != tree2:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; "
            f"primals have tree structure {in_tree} whereas tangents have tree structure "
            f"{tree2}."
        )
    for p, t in zip(ps_flat, ts_flat, strict=True):
        want = tangent_dtype(dtypes.dtype(p, canonicalize=True))
        got = dtypes.dtype(t, canonicalize=True)
        if want != got:
            raise TypeError(
                "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
                # JAX's text, its missing space included.
                "or in case of int/bool primal dtype the tangent dtype must be float0.Got "
                f"primal dtype {_dtype_name(dtypes.dtype(p, canonicalize=True))} and so "
                f"expected tangent dtype {_dtype_name(want)}, but got tangent dtype "
                f"{_dtype_name(got)} instead."
            )
        if np.shape(p) != np.shape(t):
            raise ValueError(
                "jvp called with different primal and tangent shapes;Got primal shape "
                f"{np.shape(p)} and tangent shape as {np.shape(t)}"
            )
    flat_fun, info = _flatten(fun, in_tree, has_aux, unpack_aux=True)
    primals_out, tangents_out, *aux = jvp_flat(flat_fun, ps_flat, ts_flat, has_aux=has_aux)
    out_primals = tree_unflatten(info.out_tree, primals_out)
    out_tangents = tree_unflatten(info.out_tree, [instantiate_zeros(t) for t in tangents_out])
    if has_aux:
        return out_primals, out_tangents, tree_unflatten(info.aux_tree, aux[0])
    return out_primals, out_tangents


@api_boundary
def linearize(fun: Callable, *primals, has_aux: bool = False):
    """Linearize ``fun`` at ``primals`` (jax.linearize).

    Return ``(primals_out, f_jvp)`` (plus ``aux`` when ``has_aux``) where
    ``f_jvp(*tangents)`` evaluates the JVP at ``primals`` from the stored linear
    program, without re-running ``fun``.
    """
    _check_callable(fun)
    ps_flat, in_tree = tree_flatten(primals)
    flat_fun, info = _flatten(fun, in_tree, has_aux)
    out_flat, linear, in_nz, out_nz, aux = _linearize(flat_fun, ps_flat, info, has_aux)
    out_avals = [to_aval(p) for p in out_flat]
    in_avals = [to_aval(p) for p in ps_flat]
    f_jvp = Partial(
        _LinearizedJVP(linear.jaxpr, in_tree, info.out_tree, in_avals, out_avals, in_nz, out_nz),
        linear.consts,
    )
    out = tree_unflatten(info.out_tree, out_flat)
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def _linearize(flat_fun, ps_flat, info: _OutInfo, has_aux: bool):
    outs, linear, in_nz, out_nz, *aux = linearize_flat(flat_fun, ps_flat, has_aux=has_aux)
    aux = tree_unflatten(info.aux_tree, aux[0]) if has_aux else None
    return outs, linear, in_nz, out_nz, aux


class _LinearizedJVP:
    """The function returned by ``linearize``: evaluates the linear jaxpr on tangents."""

    def __init__(self, jaxpr, in_tree, out_tree, in_avals, out_avals, in_nz, out_nz):
        self.jaxpr, self.in_tree, self.out_tree = jaxpr, in_tree, out_tree
        self.in_avals, self.out_avals, self.in_nz, self.out_nz = in_avals, out_avals, in_nz, out_nz

    def __call__(self, residuals, *tangents):
        ts_flat, tree = tree_flatten(tangents)
        if tree != self.in_tree:
            raise TypeError(f"expected {self.in_tree}, got {tree}")
        for primal_aval, t in zip(self.in_avals, ts_flat, strict=True):
            want, got = tangent_aval(primal_aval), to_aval(t)
            if want.shape != got.shape or want.dtype != got.dtype:
                raise ValueError(
                    "linearized function called on tangent values inconsistent with the "
                    f"original primal values: Got tangent aval {got} for primal aval "
                    f"{primal_aval} but expected {want}."
                )
        nz_in = [t for t, nz in zip(ts_flat, self.in_nz, strict=True) if nz]
        nz_out = iter(eval_jaxpr(self.jaxpr, residuals, *nz_in))
        outs = [
            next(nz_out) if nz else instantiate_zeros(Zero(tangent_aval(a)))
            for a, nz in zip(self.out_avals, self.out_nz, strict=True)
        ]
        return tree_unflatten(self.out_tree, outs)


# --- vjp --------------------------------------------------------------------------------


@api_boundary
def _check_no_reduce_axes(reduce_axes, what: str) -> None:
    if reduce_axes:
        raise NotImplementedError(f"reduce_axes argument to {what} is deprecated")


def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=()):
    """Compute ``fun(*primals)`` and a function pulling cotangents back (jax.vjp).

    Return ``(primals_out, vjp_fun)`` (plus ``aux`` when ``has_aux``); ``vjp_fun(ct)``
    takes a cotangent with the structure, shapes and dtypes of ``primals_out`` and
    returns a tuple with one cotangent per primal (``float0`` zeros for integer ones).
    ``vjp_fun`` is a pytree (its residuals are leaves), so it can cross transformations.
    ``reduce_axes`` is deprecated in JAX: only an empty one is accepted.
    """
    _check_no_reduce_axes(reduce_axes, "vjp")
    _check_callable(fun)
    ps_flat, in_tree = tree_flatten(primals)
    ps_flat = [_canonical_numpy(p) for p in ps_flat]
    flat_fun, info = _flatten(fun, in_tree, has_aux)
    out_flat, linear, in_nz, out_nz, aux = _linearize(flat_fun, ps_flat, info, has_aux)
    name = getattr(fun, "__name__", type(fun).__name__)
    pullback = _Pullback(
        linear.jaxpr,
        in_tree,
        info.out_tree,
        [to_aval(p) for p in ps_flat],
        [to_aval(p) for p in out_flat],
        in_nz,
        out_nz,
        name,
    )
    vjp_fun = VJPFunction(pullback, linear.consts)
    out = tree_unflatten(info.out_tree, out_flat)
    return (out, vjp_fun, aux) if has_aux else (out, vjp_fun)


def _canonical_numpy(x):
    """Return a numpy primal as an array of its canonical dtype, as JAX's ``vjp`` takes it.

    What a user sees of it is a primal passed through unchanged: JAX's ``vjp`` (and so
    ``value_and_grad``) returns ``np.float64(1.0)`` with x64 off as a float32 array.
    """
    if isinstance(x, np.ndarray | np.generic) and not isinstance(x.dtype, dtypes.ExtendedDType):
        canonical = dtypes.canonicalize_dtype(x.dtype)
        if canonical != x.dtype or type(x) is not np.ndarray:
            return np.asarray(x, canonical)
    return x


class VJPFunction(Partial):
    """The function ``vjp`` returns: ``f_vjp(ct)``, and ``f_vjp.with_refs(*markers)(ct)``."""

    def with_refs(self, *maybe_ct_refs):
        """Return a pullback that adds cotangents into references (JAX's ``VJP.with_refs``).

        One entry per input, with the structure of the primals: ``jax.ad.GradValue()``
        for the cotangent as a value, a ``jax.Ref`` to add it into (the result then
        holds ``jax.ad.GradRef()``), ``jax.ad.DontWant()`` for none (``DidntWant()``).
        """
        pullback, residuals = self.func, self.args[0]
        if maybe_ct_refs:
            markers, tree = tree_flatten(maybe_ct_refs)
            if tree != pullback.in_tree:
                raise Exception("with_refs: the markers must have the structure of the primals")
        else:
            markers = [GradValue()] * pullback.in_tree.num_leaves

        def pull(ct):
            cts = tree_flatten(pullback(residuals, ct))[0]
            out = []
            for marker, value, aval in zip(markers, cts, pullback.in_avals, strict=True):
                if isinstance(marker, DontWant):
                    out.append(DidntWant())
                elif isinstance(marker, GradValue):
                    out.append(value)
                else:  # a reference: the cotangent is added into it
                    ref_aval = to_aval(marker)
                    if ref_aval.shape != aval.shape or ref_aval.dtype != tangent_aval(aval).dtype:
                        raise ValueError(
                            "Invalid shape for `addupdate`. Ref shape: "
                            f"{ref_aval.shape}. Expected shape: {ref_aval.shape}. Value "
                            f"shape: {aval.shape}. "
                        )
                    marker[...] = marker[...] + value
                    out.append(GradRef())
            return tree_unflatten(pullback.in_tree, out)

        return pull


register_pytree_node(
    VJPFunction,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: VJPFunction(func, *children[0], **children[1]),
)


class _Pullback:
    """The function returned by ``vjp``: transposes the linear jaxpr on a cotangent."""

    def __init__(self, jaxpr, in_tree, out_tree, in_avals, out_avals, in_nz, out_nz, name):
        self.jaxpr, self.in_tree, self.out_tree = jaxpr, in_tree, out_tree
        self.in_avals, self.out_avals, self.in_nz, self.out_nz = in_avals, out_avals, in_nz, out_nz
        self.name = name

    def __call__(self, residuals, ct=None, *extra, **kwargs):
        if extra or kwargs or ct is None and not self.out_tree.num_leaves == 0:
            raise TypeError(
                f"The function returned by `jax.vjp` applied to {self.name} was called with "
                f"{1 + len(extra) + len(kwargs) if ct is not None else 0} arguments, but "
                "functions returned by `jax.vjp` must be called with a single argument "
                "corresponding to the single value returned by the function being "
                "differentiated (even if that returned value is a tuple or other container)."
            )
        cts_flat, tree = tree_flatten(ct, is_leaf=lambda x: isinstance(x, Zero))
        cts_flat = [from_symbolic_zero(c) for c in cts_flat]
        if tree != self.out_tree:
            raise ValueError(
                "unexpected tree structure of argument to vjp function: the cotangent must "
                f"match the output structure of {self.name}, {self.out_tree}, but got {tree}."
            )
        for c, aval in zip(cts_flat, self.out_avals, strict=True):
            if type(c) is Zero:
                continue
            got, want = to_aval(c), tangent_aval(aval)
            if type(want) is AbstractToken or type(got) is AbstractToken:
                ok = got == want  # a token's cotangent is a token, and is ignored
            else:
                ok = (
                    got.shape == want.shape
                    and (got.dtype == want.dtype or want.dtype == dtypes.float0)
                    # the memory space is part of the type (a result in host memory
                    # wants a cotangent there), as JAX 0.10.2 checks
                    and getattr(got, "memory_space", None) is getattr(want, "memory_space", None)
                )
            if not ok:
                raise ValueError(
                    "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                    f"{got.str_short()}, but expected {want.str_short()} because the "
                    "corresponding output of the differentiated function had JAX type "
                    f"{aval.str_short()}"
                )
        cts = [c for c, nz in zip(cts_flat, self.out_nz, strict=True) if nz]
        args = [UndefinedPrimal(v.aval) for v in self.jaxpr.invars]
        nz_in_cts = iter(backward_pass(self.jaxpr, residuals, args, cts))
        in_cts = [
            instantiate_zeros(next(nz_in_cts) if nz else Zero(tangent_aval(a)))
            for a, nz in zip(self.in_avals, self.in_nz, strict=True)
        ]
        return tree_unflatten(self.in_tree, in_cts)


# --- grad -------------------------------------------------------------------------------


def ensure_index(argnums) -> int | tuple[int, ...]:
    """Read ``argnums`` as JAX does: one index (``operator.index``), else a tuple of them.

    Anything else fails with Python's own TypeError, as in JAX (``'str' object cannot be
    interpreted as an integer``, ``'float' object is not iterable``).
    """
    try:
        return operator.index(argnums)
    except TypeError:
        return tuple(operator.index(i) for i in argnums)


def argnums_partial(fun: Callable, argnums, args: tuple, kwargs: dict):
    """Return ``fun`` of the arguments at ``argnums`` only, and those arguments.

    As in JAX, each position is taken out of the call (replaced by None) when it is
    selected, so a repeated position passes None the second time.
    """
    index = ensure_index(argnums)
    nums = (index,) if isinstance(index, int) else index
    n = len(args)
    for i in nums:
        if not -n <= i < n:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value greater "
                "than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {n}."
            )
    nums = tuple(i % n for i in nums)
    rest = list(args)
    dyn = []
    for i in nums:
        dyn.append(rest[i])
        rest[i] = None

    def f_partial(*dyn_args):
        full = list(rest)
        for i, value in zip(nums, dyn_args, strict=True):
            full[i] = value
        return fun(*full, **kwargs)

    return f_partial, tuple(dyn)


def input_aval(x) -> ShapedArray:
    """Return the abstract value of the argument ``x``, or JAX's TypeError for a non-array."""
    try:
        return to_aval(x)
    except TypeError:
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.") from None


def check_input_dtype(transform: str, holomorphic: bool, allow_int: bool, x) -> None:
    """Raise JAX's TypeError when ``x`` cannot be differentiated by ``transform``.

    ``transform`` names the caller in the message (``"grad"``, ``"jacrev"``):
    holomorphic needs complex inputs; integer and boolean inputs need ``allow_int``.
    """
    aval = input_aval(x)
    if type(aval) is AbstractToken:
        raise TypeError(
            f"{transform} requires real- or complex-valued inputs (input dtype that is a "
            "sub-dtype of np.inexact), but got a token (Tok)."
        )
    dt = aval.dtype
    name = _dtype_name(dt)
    if holomorphic and not dtypes.issubdtype(dt, np.complexfloating):
        raise TypeError(
            f"{transform} with holomorphic=True requires inputs with complex dtype, but got {name}."
        )
    if (
        dtypes.issubdtype(dt, np.integer)
        or dtypes.issubdtype(dt, np.bool_)
        or dtypes.issubdtype(dt, dtypes.extended)  # PRNG keys: integer-like, as in JAX
    ):
        if not allow_int:
            raise TypeError(
                f"{transform} requires real- or complex-valued inputs (input dtype that is a "
                f"sub-dtype of np.inexact), but got {name}. If you want to use Boolean- or "
                "integer-valued inputs, use vjp or set allow_int to True."
            )
    elif not dtypes.issubdtype(dt, np.inexact):
        raise TypeError(
            f"{transform} requires numerical-valued inputs (input dtype that is a sub-dtype "
            f"of np.bool_ or np.number), but got {name}."
        )


def _check_scalar_output(x) -> ShapedArray:
    try:
        aval = to_aval(x)
    except TypeError as e:
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output was {x!r}."
        ) from e
    if aval.shape != ():
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}."
        )
    return aval


def check_output_dtype(transform: str, holomorphic: bool, aval: ShapedArray) -> None:
    """Raise JAX's TypeError when reverse mode (``transform``) cannot start from ``aval``.

    Outputs must be real floating point, or complex with ``holomorphic``.
    """
    name = _dtype_name(aval.dtype)
    if holomorphic:
        if not dtypes.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError(
                f"{transform} with holomorphic=True requires outputs with complex dtype, but "
                f"got {name}."
            )
    elif dtypes.issubdtype(aval.dtype, np.complexfloating):
        raise TypeError(
            f"{transform} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use jax.vjp directly."
        )
    elif not dtypes.issubdtype(aval.dtype, np.floating):
        raise TypeError(
            f"{transform} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {name}. For differentiation of functions with integer "
            "outputs, use jax.vjp directly."
        )


def value_and_grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes=(),
) -> Callable:
    """Return a function computing ``fun`` and its gradient (jax.value_and_grad).

    The gradient is taken with respect to the positional argument(s) ``argnums`` (an
    int gives one gradient, a tuple a tuple of them). ``fun`` must return a real scalar
    (complex with ``holomorphic=True``); with ``has_aux`` it returns ``(value, aux)``
    and the result is ``((value, aux), grad)``. Integer inputs need ``allow_int``
    (their gradient is ``float0`` zeros). ``reduce_axes`` is deprecated in JAX: only
    an empty one is accepted.
    """
    _check_no_reduce_axes(reduce_axes, "grad")
    _check_callable(fun)
    argnums = ensure_index(argnums)

    @wraps_transform(fun, _VALUE_AND_GRAD_DOC, argnums=argnums)
    def value_and_grad_f(*args, **kwargs):
        nums = (argnums,) if isinstance(argnums, int) else argnums
        if nums and max(nums) >= len(args):
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at least "
                f"{max(nums) + 1} positional arguments to be passed by the caller, but got "
                f"only {len(args)} positional arguments."
            )
        f_partial, dyn_args = argnums_partial(fun, argnums, args, kwargs)
        for leaf in tree_flatten(dyn_args)[0]:
            check_input_dtype("grad", holomorphic, allow_int, leaf)
        if has_aux:
            ans, vjp_fun, aux = vjp(f_partial, *dyn_args, has_aux=True)
        else:
            ans, vjp_fun = vjp(f_partial, *dyn_args)
        aval = _check_scalar_output(ans)
        check_output_dtype("grad", holomorphic, aval)
        # The seed is an Array too (outside a trace), as JAX's: a custom_vjp's backward
        # rule that meets it first may use its array methods (``g.astype``, ``g.shape``).
        g = tree_map(_gradient_to_array, vjp_fun(_gradient_to_array(_one_like(aval))))
        g = g[0] if isinstance(argnums, int) else g
        return ((ans, aux) if has_aux else ans), g

    return api_boundary(value_and_grad_f)


def _gradient_to_array(g):
    if isinstance(g, Tracer) or isinstance(g, np.ndarray) and g.dtype == dtypes.float0:
        return g  # float0 zeros stay numpy's, as in JAX; traced values are the trace's
    if type(current_trace()) is not EvalTrace:
        return g  # under jit or vmap the host value is a literal of the traced program
    return host_to_array(g)


def grad(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes=(),
) -> Callable:
    """Return a function computing the gradient of scalar-valued ``fun`` (jax.grad).

    Arguments as for ``value_and_grad``; with ``has_aux`` the result is ``(grad, aux)``.
    """
    _check_no_reduce_axes(reduce_axes, "grad")
    value_and_grad_f = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @wraps_transform(fun, _GRAD_DOC, argnums=ensure_index(argnums))
    def grad_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return api_boundary(grad_f)


# --- linear_transpose -------------------------------------------------------------------


def linear_transpose(fun: Callable, *primals, reduce_axes=()) -> Callable:
    """Return the transpose of ``fun``, which is promised to be linear (jax.linear_transpose).

    ``primals`` (arrays, ``ShapeDtypeStruct``s or pytrees of them) give only the input
    types. The result maps a cotangent of ``fun``'s output to a tuple of cotangents of
    its inputs, of exactly the primals' dtypes. Integer inputs are not supported.
    ``reduce_axes`` is deprecated in JAX: only an empty one is accepted.
    """
    _check_no_reduce_axes(reduce_axes, "transpose")
    _check_callable(fun)
    ps_flat, in_tree = tree_flatten(primals)
    in_avals = [arg_aval(x) for x in ps_flat]
    flat_fun, info = _flatten(fun, in_tree, False)
    info_dbg = debug_info(fun, primals)
    jaxpr, consts = trace_to_jaxpr(wrap_init(flat_fun, info_dbg), in_avals)
    out_avals = jaxpr.out_avals
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    if not (
        all(dtypes.issubdtype(d, np.inexact) for d in in_dtypes + out_dtypes)
        or all(dtypes.issubdtype(d, np.integer) for d in in_dtypes + out_dtypes)
    ):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got {[_dtype_name(d) for d in in_dtypes]} -> "
            f"{[_dtype_name(d) for d in out_dtypes]}."
        )
    closed = ClosedJaxpr(jaxpr, consts)
    return Partial(_Transposed(closed.jaxpr, in_tree, info.out_tree, in_avals), closed.consts)


class _Transposed:
    """The function returned by ``linear_transpose``."""

    def __init__(self, jaxpr, in_tree, out_tree, in_avals):
        self.jaxpr, self.in_tree, self.out_tree, self.in_avals = jaxpr, in_tree, out_tree, in_avals

    def __call__(self, consts, out_cotangent):
        cts, tree = tree_flatten(out_cotangent)
        if tree != self.out_tree:
            raise TypeError(
                "cotangent tree does not match function output, "
                f"expected {self.out_tree} but got {tree}"
            )
        for ct, aval in zip(cts, self.jaxpr.out_avals, strict=True):
            got = to_aval(ct)
            if got.shape != aval.shape or got.dtype != aval.dtype:
                raise TypeError(
                    "cotangent type does not match function output, expected "
                    f"{[a.str_short() for a in self.jaxpr.out_avals]} but got "
                    f"{[to_aval(c).str_short() for c in cts]}"
                )
        args = [UndefinedPrimal(a) for a in self.in_avals]
        in_cts = backward_pass(self.jaxpr, consts, args, cts)
        return tree_unflatten(self.in_tree, [instantiate_zeros(ct) for ct in in_cts])


# --- stop_gradient ----------------------------------------------------------------------

stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_impl(lambda x: x)
stop_gradient_p.def_abstract_eval(lambda x: x)
defjvp_zero(stop_gradient_p)


def stop_gradient(x):
    """Return ``x`` unchanged, with derivatives blocked (jax.lax.stop_gradient).

    Applies to every leaf of a pytree; integer and boolean leaves, which have no
    derivatives anyway, are returned as they are.
    """

    def stop(leaf):
        if dtypes.issubdtype(to_aval(leaf).dtype, np.inexact):
            return stop_gradient_p.bind(leaf)
        return leaf

    return tree_map(stop, x)


# --- closure_convert --------------------------------------------------------------------


def closure_convert(fun: Callable, *example_args) -> tuple[Callable, list[Any]]:
    """Hoist the traced values ``fun`` closes over into explicit arguments (closure_convert).

    Trace ``fun`` on arguments like ``example_args`` and return ``(converted, consts)``:
    ``converted(*args, *consts)`` computes ``fun(*args)``, and ``consts`` are the closed-over
    tracers (values that may carry derivatives), so that custom_vjp/custom_jvp functions
    can take them as differentiable inputs. Concrete closed-over arrays stay inside.
    """
    args_flat, in_tree = tree_flatten(example_args)
    flat_fun, info = _flatten(fun, in_tree, False)
    jaxpr, consts = trace_to_jaxpr(
        wrap_init(flat_fun, debug_info(fun, example_args)), [arg_aval(x) for x in args_flat]
    )
    hoisted = [isinstance(c, Tracer) for c in consts]
    closure_consts = [c for c, h in zip(consts, hoisted, strict=True) if not h]
    hoisted_consts = [c for c, h in zip(consts, hoisted, strict=True) if h]
    out_tree = info.out_tree

    def converted_fun(*args_and_consts):
        n = len(args_and_consts) - len(hoisted_consts)
        args, new_consts = args_and_consts[:n], iter(args_and_consts[n:])
        kept = iter(closure_consts)
        all_consts = [next(new_consts) if h else next(kept) for h in hoisted]
        flat, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have the same "
                "Pytree structure as the example arguments passed when closure_convert was "
                f"called. Expected {in_tree}, but got {tree}"
            )
        return tree_unflatten(out_tree, eval_jaxpr(jaxpr, all_consts, *flat))

    return converted_fun, hoisted_consts


def _one_like(aval):
    """The cotangent seed 1 of a scalar output, weakly typed when the output is (as JAX)."""
    one = aval.dtype.type(1)
    if aval.weak_type:
        python_one = complex(1) if np.iscomplexobj(one) else 1.0 if aval.dtype.kind == "f" else 1
        if dtypes.python_scalar_dtype(python_one) == aval.dtype:
            return python_one
    return one
