"""``mulhi``: the high half of an integer product (``chlo.mulhi``)."""

from __future__ import annotations

from modjax.autodiff import defjvp_zero
from modjax.batching import defbroadcasting
from modjax.lowering import chlo

from ._common import INT
from .elementwise import _bind_binary, _hlo_binary, binary_primitive

__all__ = ["mulhi", "mulhi_p"]

mulhi_p = binary_primitive("mulhi", [INT], _hlo_binary(lambda x, y, results: chlo.mulhi(x, y)))
defjvp_zero(mulhi_p)
defbroadcasting(mulhi_p)


def mulhi(x, y, /):
    """Return the upper N bits of each 2N-bit product ``x * y`` of N-bit integers (jax.lax.mulhi).

    Signed operands give the signed high half (``mulhi(-5, 7) == -1``); both
    operands must share an integer dtype.
    """
    return _bind_binary(mulhi_p, x, y)
