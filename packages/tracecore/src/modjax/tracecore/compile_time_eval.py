"""``ensure_compile_time_eval``: compute on known values now, even while tracing."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .core import Trace, Tracer, current_trace, eval_trace, set_current_trace


class CompileTimeEvalTrace(Trace):
    """Evaluate primitives whose operands are all concrete; hand the rest to the parent.

    Installed over whatever trace is current, it keeps a traced operand traced (the
    parent records it as before) while an expression of constants runs eagerly and
    gives a concrete Array instead of a staged equation.
    """

    __slots__ = ()

    def process_primitive(self, primitive, args, params):
        trace = self.parent if any(isinstance(a, Tracer) for a in args) else eval_trace
        with set_current_trace(trace):
            return primitive.bind(*args, **params)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Evaluate operations on concrete values eagerly inside ``jit`` (jax.ensure_compile_time_eval).

    Inside the block, a primitive applied only to concrete values (Arrays, numpy
    arrays, Python scalars) runs at once and returns a concrete value, so it can
    steer Python control flow; one applied to a tracer is traced as usual.
    """
    with set_current_trace(CompileTimeEvalTrace(current_trace())):
        yield
