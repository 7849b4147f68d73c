"""``mulhi``: the high half of an integer product.

Below 64 bits the lowering widens, multiplies and shifts (JAX emits ``chlo.mulhi``, which
XLA's CPU backend rejects when it fuses the op after a reshape, as in a ``vmap`` of a
scalar); 64-bit integers use ``chlo.mulhi``.
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import defjvp_zero
from modjax.batching import defbroadcasting
from modjax.lowering import chlo, hlo, ir_type

from ._common import INT, broadcast_to, full
from .elementwise import _bind_binary, binary_primitive

__all__ = ["mulhi", "mulhi_p"]


def _mulhi_lowering(ctx, x, y):
    out = ctx.avals_out[0]
    ax, ay = ctx.avals_in
    x, y = broadcast_to(x, ax, out.shape), broadcast_to(y, ay, out.shape)
    bits = np.iinfo(out.dtype).bits
    if bits == 64:
        return chlo.mulhi(x, y)
    wide = out.update(dtype=np.dtype(f"{out.dtype.kind}{bits // 4}"))
    wide_type = ir_type(wide)
    product = hlo.multiply(hlo.convert(wide_type, x), hlo.convert(wide_type, y))
    shift = hlo.shift_right_arithmetic if out.dtype.kind == "i" else hlo.shift_right_logical
    return hlo.convert(ir_type(out), shift(product, full(bits, wide)))


mulhi_p = binary_primitive("mulhi", [INT], _mulhi_lowering)
defjvp_zero(mulhi_p)
defbroadcasting(mulhi_p)


def mulhi(x, y, /):
    """Return the upper N bits of each 2N-bit product ``x * y`` of N-bit integers (jax.lax.mulhi).

    Signed operands give the signed high half (``mulhi(-5, 7) == -1``); both
    operands must share an integer dtype.
    """
    return _bind_binary(mulhi_p, x, y)
