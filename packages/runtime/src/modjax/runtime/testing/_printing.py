"""The printed equation parses back to the same program."""

from __future__ import annotations

from modjax.tracecore import jaxpr_equal, make_jaxpr, parse_jaxpr

from ._cases import Case

__all__ = ["check_printing"]


def check_printing(prim, case: Case, draw) -> None:
    """Check that the jaxpr of one bind prints, parses back (type-checked) and prints the same."""

    def f(*args):
        return prim.bind(*args, **case.params)

    closed = make_jaxpr(f)(*case.args)
    text = str(closed)
    back = parse_jaxpr(text, consts=closed.consts)
    if not jaxpr_equal(back, closed) or str(back) != text:
        raise AssertionError(f"the text parses back to a different program:\n{text}\nvs\n{back}")
