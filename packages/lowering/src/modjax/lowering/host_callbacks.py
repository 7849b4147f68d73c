"""Calling Python from a compiled program (JAX's ``callback.emit_python_callback``).

On CPU, jaxlib 0.10 runs a host callback through one typed-FFI custom call,
``xla_ffi_python_cpu_callback``, whose ``index`` attribute (``ui64``) selects a
Python callable among the ``host_callbacks`` passed to ``compile_and_load``.
XLA hands the callable one numpy array per operand (``None`` for a token) and
expects a sequence of one array per result (anything for a token). The module
context collects the callables; ``LoweredModule.host_callbacks`` gives them to
the runtime. An ordered callback takes the current token of its effect and
returns the next one, so XLA keeps it in program order. In a program partitioned
over several devices the call is placed on device 0 (a maximal sharding), so it
runs once with the whole values, as JAX does for automatically sharded programs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from modjax.tracecore import dtypes

from . import _mlir
from .lowering import LoweringRuleContext, set_tokens, tokens_in

__all__ = [
    "emit_buffer_callback",
    "emit_host_callback",
    "emit_host_callback_with_token",
    "check_callback_results",
]


def check_callback_results(outs, result_avals: Sequence) -> list[np.ndarray]:
    """Return a callback's results as numpy arrays, checked against ``result_avals``.

    Raise RuntimeError with JAX's messages for a wrong count, shape or dtype
    (dtypes are canonicalized first, so a float64 result fits float32 with x64 off).
    """
    outs = [] if outs is None else list(outs)
    if len(outs) != len(result_avals):
        raise RuntimeError(
            "Mismatched number of outputs from callback. "
            f"Expected: {len(result_avals)}, Actual: {len(outs)}"
        )
    arrays = []
    for i, (out, aval) in enumerate(zip(outs, result_avals, strict=True)):
        array = np.asarray(out)
        array = array.astype(dtypes.canonicalize_dtype(array.dtype), copy=False)
        if array.shape != tuple(aval.shape):
            raise RuntimeError(
                f"Incorrect output shape for return value #{i}: "
                f"Expected: {tuple(aval.shape)}, Actual: {array.shape}"
            )
        if array.dtype != aval.dtype:
            raise RuntimeError(
                f"Incorrect output dtype for return value #{i}: "
                f"Expected: {aval.dtype}, Actual: {array.dtype}"
            )
        arrays.append(array)
    return arrays


def _checked(callback: Callable, result_avals: Sequence, threaded: bool) -> Callable:
    """Wrap ``callback`` so that its results are numpy arrays of the declared types."""
    result_avals = list(result_avals)

    def wrapped(*args):
        if threaded:
            args = args[1:]  # the token: XLA passes None
        arrays = check_callback_results(callback(*args), result_avals)
        return (None, *arrays) if threaded else tuple(arrays)

    return wrapped


def emit_host_callback(
    ctx: LoweringRuleContext,
    callback: Callable,
    operands: Sequence,
    result_avals: Sequence,
    *,
    has_side_effect: bool,
    ordered_effect=None,
) -> list:
    """Emit a call of ``callback`` on the host; return the values of its results.

    ``callback(*numpy_arrays)`` returns a sequence of arrays matching
    ``result_avals`` (checked: a wrong count, shape or dtype raises RuntimeError
    when the program runs, with JAX's messages). ``has_side_effect`` keeps XLA
    from removing or merging the call; ``ordered_effect`` (an ordered Effect)
    threads that effect's token through it.
    """
    if ordered_effect is None:
        return emit_host_callback_with_token(
            ctx, callback, None, operands, result_avals, has_side_effect=has_side_effect
        )[0]
    (token,) = tokens_in(ctx, [ordered_effect])
    results, token = emit_host_callback_with_token(
        ctx, callback, token, operands, result_avals, has_side_effect=True
    )
    set_tokens(ctx, [ordered_effect], [token])
    return results


def emit_host_callback_with_token(
    ctx: LoweringRuleContext,
    callback: Callable,
    token,
    operands: Sequence,
    result_avals: Sequence,
    *,
    has_side_effect: bool,
) -> tuple[list, object]:
    """Emit a host call of ``callback`` that takes ``token`` and returns the next one.

    Return ``(results, next_token)``; with ``token`` None no token is threaded and
    ``next_token`` is None. The token (a ``!stablehlo.token`` value) keeps the call
    in order with the other operations that thread it; ``callback`` never sees it.
    """
    mctx = ctx.module_ctx
    if mctx.platform != "cpu":
        raise NotImplementedError(
            f"host callbacks are implemented for the CPU platform only, not {mctx.platform!r}"
        )
    threaded = token is not None
    mctx.host_callbacks.append(_checked(callback, result_avals, threaded))
    index = len(mctx.host_callbacks) - 1
    result_types = _mlir.ir_types(result_avals)
    operands = list(operands)
    if threaded:
        operands = [token, *operands]
        result_types = [_mlir.token_type(), *result_types]
    results = _mlir.host_callback_call(
        index,
        operands,
        result_types,
        has_side_effect=has_side_effect or threaded,
        maximal=mctx.partitioning,
        module=mctx.module,
    )
    next_token = None
    if threaded:
        next_token, results = results[0], results[1:]
    if mctx.partitioning is not None:
        results = [_mlir.replicate_everywhere(r, mctx.partitioning) for r in results]
    return list(results), next_token


def emit_buffer_callback(
    ctx: LoweringRuleContext,
    callback: Callable,
    operands: Sequence,
    result_avals: Sequence,
    *,
    has_side_effect: bool,
    operand_output_aliases: dict[int, int] | None = None,
) -> list:
    """Emit XLA's buffer callback: ``callback(exec_ctx, *operand_buffers, *result_buffers)``
    fills the results in place on the host (jax.experimental.buffer_callback)."""
    mctx = ctx.module_ctx
    if mctx.platform != "cpu":
        raise ValueError(f"`buffer_callback` not supported on {mctx.platform} backend.")
    mctx.host_callbacks.append(callback)
    results = _mlir.buffer_callback_call(
        len(mctx.host_callbacks) - 1,
        list(operands),
        _mlir.ir_types(result_avals),
        has_side_effect=has_side_effect,
        operand_output_aliases=operand_output_aliases,
        maximal=mctx.partitioning,
        module=mctx.module,
    )
    if mctx.partitioning is not None:
        results = [_mlir.replicate_everywhere(r, mctx.partitioning) for r in results]
    return results
