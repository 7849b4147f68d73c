"""``check_primitive``: run every rule check of a primitive over hypothesis' cases."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modjax.autodiff import jvp_rules, transpose_rules
from modjax.batching import axis_primitive_batchers, batching_rules
from modjax.lowering import lowering_rules, platform_lowering_rules
from modjax.tracecore.core import to_aval

from ._batching import check_batching
from ._cases import Case, case_strategy
from ._compare import host
from ._derivatives import check_jvp_rule, check_transpose, normalize_argnums
from ._evaluation import check_abstract_eval, check_lowering, shared_programs
from ._printing import check_printing

__all__ = ["MODES", "RuleCheckError", "check_primitive", "rules_of"]

# Each mode: (the check, whether the primitive has the rule it checks).
_CHECKS = {
    "abstract_eval": (check_abstract_eval, lambda p: p._abstract_eval is not None),
    "lowering": (
        check_lowering,
        lambda p: p in lowering_rules or any(p in t for t in platform_lowering_rules.values()),
    ),
    "jvp": (check_jvp_rule, lambda p: p in jvp_rules),
    "transpose": (check_transpose, lambda p: p in transpose_rules),
    "batching": (check_batching, lambda p: p in batching_rules or p in axis_primitive_batchers),
    "printing": (check_printing, lambda p: p._abstract_eval is not None),
}
MODES = tuple(_CHECKS)


class RuleCheckError(AssertionError):
    """A rule of a primitive disagrees with its implementation on a case.

    ``primitive`` and ``rule`` (one of ``MODES``) name what is at fault, ``case`` the input.
    """

    def __init__(self, primitive, rule: str, case: Case, cause: BaseException):
        self.primitive, self.rule, self.case = primitive, rule, case
        super().__init__(
            f"check_primitive({primitive.name}): the {rule} rule of '{primitive.name}' failed "
            f"on {describe(case)}: {type(cause).__name__}: {cause}"
        )


def describe(case: Case) -> str:
    """A short account of a case: each operand's type (and values when few), the params."""
    parts = []
    for a in case.args:
        aval = to_aval(a)
        text = f"{aval}"
        if int(np.prod(aval.shape)) <= 8:
            text += f" {np.array2string(host(a), separator=', ')}"
        parts.append(text)
    params = ", ".join(f"{k}={v!r}" for k, v in case.params.items())
    if len(params) > 400:
        params = params[:400] + "..."
    return f"operands ({'; '.join(parts)}) params {{{params}}}"


def rules_of(prim) -> tuple[str, ...]:
    """Return the modes whose rule ``prim`` has (registered in the transforms' tables)."""
    return tuple(mode for mode, (_, has) in _CHECKS.items() if has(prim))


def _check_argnums(case: Case, jvp_argnums, linear_argnums, batch_argnums) -> None:
    """Raise ValueError when an operand position names no operand of ``case``."""
    n = len(case.args)
    if jvp_argnums is not None:
        normalize_argnums(jvp_argnums, n, "jvp_argnums")
    if batch_argnums is not None:
        normalize_argnums(batch_argnums, n, "batch_argnums")
    for group in linear_argnums or ():
        normalize_argnums(group, n, "linear_argnums")


def check_primitive(
    prim,
    cases=None,
    *,
    modes: Sequence[str] = MODES,
    linear_argnums: Sequence[Sequence[int]] | None = None,
    jvp_argnums: Sequence[int] | None = None,
    batch_argnums: Sequence[int] | None = None,
    max_examples: int | None = None,
) -> tuple[str, ...]:
    """Check every rule of ``prim`` against its impl over hypothesis' cases (no JAX counterpart).

    ``cases`` is a hypothesis strategy of ``(args, params)`` pairs (or ``Case``s), a
    list of them, or None for the default (operands of each dtype and shape the
    abstract evaluation accepts without params). ``modes`` picks among ``MODES``;
    a mode whose rule ``prim`` lacks is skipped. ``jvp_argnums`` lists the operands
    the JVP check perturbs (default: every floating one); the others are held
    constant, as for an operand the primitive is not differentiable in (an index, a
    bound). Integer, boolean and key operands are always held constant.
    ``linear_argnums`` lists the groups of operands the transpose rule is linear in
    jointly (default: one group of the operands the JVP check perturbs;
    ``[(0,), (1,)]`` for a bilinear ``mul``). ``batch_argnums`` lists the operands
    the batching check may batch (default: all; JAX's ``reduce`` refuses batched
    initial values, as modjax's does). ``max_examples``
    overrides the hypothesis profile's count. Raise ``RuleCheckError`` (an
    AssertionError) for the minimal failing case hypothesis finds; return the modes
    checked.
    """
    unknown = [m for m in modes if m not in _CHECKS]
    if unknown:
        raise ValueError(f"check_primitive: unknown modes {unknown}; the modes are {MODES}")
    selected = [m for m in modes if _CHECKS[m][1](prim)]
    options_of = {
        "jvp": {"jvp_argnums": jvp_argnums},
        "transpose": {"jvp_argnums": jvp_argnums, "linear_argnums": linear_argnums},
        "batching": {"batch_argnums": batch_argnums},
    }
    strategy = case_strategy(prim, cases)
    # One RuleCheckError, not a group: a broken rule often trips several modes.
    options: dict[str, Any] = {
        "deadline": None,
        "suppress_health_check": list(HealthCheck),
        "report_multiple_bugs": False,
    }
    if max_examples is not None:
        options["max_examples"] = max_examples

    @settings(**options)
    @given(data=st.data())
    def run(data):
        case = data.draw(strategy, label="case")
        _check_argnums(case, jvp_argnums, linear_argnums, batch_argnums)  # the caller's error
        for mode in selected:
            check = _CHECKS[mode][0]
            try:
                check(prim, case, data.draw, **options_of.get(mode, {}))
            except Exception as e:
                raise RuleCheckError(prim, mode, case, e) from e

    with shared_programs():
        run()
    return tuple(selected)
