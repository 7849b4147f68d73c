"""Converting arrays to and from primal-tangent dtypes (JAX's ``to_edtype``/``from_edtype``).

``jax.experimental.primal_tangent_dtype(int8, float32)`` is an extended dtype whose
values are int8 data and whose tangents are float32. ``lax.convert_element_type``
into such a dtype binds ``to_edtype`` and out of it ``from_edtype``; both are the
identity on the data (lowered to nothing). Their JVPs convert the tangent to the
output's tangent dtype (a symbolic zero where that is ``float0``), so a
``custom_jvp``/``custom_vjp`` around the encoded value can give it float tangents.
Eagerly, arrays of these dtypes are :class:`EArray` s (JAX 0.10.2 cannot make one
outside ``jit``; modjax can).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from modjax.autodiff import Zero, jvp_rules, transpose_rules
from modjax.autodiff.tangents import tangent_aval
from modjax.batching import defvectorized
from modjax.lowering import register_lowering
from modjax.runtime import apply_primitive
from modjax.runtime.extended import ExtendedArray, register_extended_array_type
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive
from modjax.tracecore.dtypes import PrimalTangentDType
from modjax.tracecore.parse import register_param_parser

__all__ = ["EArray", "to_edtype_p", "from_edtype_p"]


class EArray(ExtendedArray):
    """An array of a primal-tangent dtype (jax.experimental.EArray): ``EArray(aval, data)``.

    ``data`` is the Array of the primal dtype's values. PRNG key arrays are
    extended arrays of another class, not EArrays, as in JAX.
    """

    __slots__ = ()


register_extended_array_type(PrimalTangentDType, EArray)


def _to_edtype_abstract_eval(x, *, edtype):
    if not isinstance(edtype, PrimalTangentDType) or isinstance(x.dtype, dtypes.ExtendedDType):
        raise TypeError(f"to_edtype: cannot convert {x.str_short()} to {edtype}")
    if x.dtype != edtype.primal_dtype:
        raise TypeError(
            f"to_edtype: {edtype} holds {edtype.primal_dtype.name} values, got {x.str_short()}"
        )
    return ShapedArray(x.shape, edtype)


def _from_edtype_abstract_eval(x, *, dtype):
    if not isinstance(x.dtype, PrimalTangentDType) or x.dtype.primal_dtype != dtype:
        raise TypeError(f"from_edtype: cannot convert {x.str_short()} to {np.dtype(dtype).name}")
    return ShapedArray(x.shape, dtype)


to_edtype_p = Primitive("to_edtype")
to_edtype_p.def_abstract_eval(_to_edtype_abstract_eval)
to_edtype_p.def_impl(partial(apply_primitive, to_edtype_p))
from_edtype_p = Primitive("from_edtype")
from_edtype_p.def_abstract_eval(_from_edtype_abstract_eval)
from_edtype_p.def_impl(partial(apply_primitive, from_edtype_p))

# The data does not change: both lower to their operand.
register_lowering(to_edtype_p, lambda ctx, x, **params: x)
register_lowering(from_edtype_p, lambda ctx, x, **params: x)
defvectorized(to_edtype_p)
defvectorized(from_edtype_p)
# The dtype prints by its name (PrimalTangentDType{i8/f32}), which reads back as the dtype.
register_param_parser(to_edtype_p, "edtype", dtypes.dtype_from_short_name)


def _convert_tangent(t, aval_out):
    """The tangent ``t`` as one of ``aval_out``'s tangent type (a symbolic zero for float0)."""
    want = tangent_aval(aval_out)
    if type(t) is Zero or want.dtype == dtypes.float0:
        return Zero(want)
    from .elementwise import convert_element_type

    return convert_element_type(t, want.dtype)


def _to_edtype_jvp(primals, tangents, *, edtype):
    (x,), (t,) = primals, tangents
    out = to_edtype_p.bind(x, edtype=edtype)
    return out, _convert_tangent(t, ShapedArray(np.shape(x), edtype))


def _from_edtype_jvp(primals, tangents, *, dtype):
    (x,), (t,) = primals, tangents
    out = from_edtype_p.bind(x, dtype=dtype)
    return out, _convert_tangent(t, ShapedArray(np.shape(x), dtype))


jvp_rules[to_edtype_p] = _to_edtype_jvp
jvp_rules[from_edtype_p] = _from_edtype_jvp
transpose_rules[to_edtype_p] = lambda ct, x, *, edtype: [from_edtype_p.bind(ct, dtype=x.aval.dtype)]
transpose_rules[from_edtype_p] = lambda ct, x, *, dtype: [to_edtype_p.bind(ct, edtype=x.aval.dtype)]
