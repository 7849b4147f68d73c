"""modjax.numpy: a NumPy-style API on modjax arrays (the counterpart of ``jax.numpy``).

The NumPy and Array API functions, with JAX's type promotion (weakly typed
Python scalars) and broadcasting, built on ``modjax.lax``; one module per topic
(creation, ufuncs, reductions, manipulation, selection, indexing, sorting,
linalg, fft, ...: the package README lists them). Importing it registers the
operators and methods of Arrays and tracers (``x + y``, ``x @ y``,
``x[1:, None]``, ``x.T``, ``x.sum()``) in tracecore's tables.
"""

import math as _math
import os as _os

from modjax.batching import vectorize  # noqa: E402  (jax.numpy.vectorize)
from modjax.tracecore import dtypes as _tracecore_dtypes
from modjax.tracecore import source_info as _source_info
from modjax.tracecore.basearray import Array as _Array

from . import _array_methods, _jacobian_support, _operators, _vectorize_support, fft  # noqa: F401
from ._array_api import *  # noqa: F403
from ._bits_pack import *  # noqa: F403
from ._comparison import *  # noqa: F403
from ._creation import *  # noqa: F403
from ._cumulative import *  # noqa: F403
from ._dtypes import *  # noqa: F403  (the dtype aliases: single, double, ...)
from ._dtypes import (
    narrow_scalar_type as _narrow_scalar_type,
)
from ._einsum import *  # noqa: F403
from ._functional import *  # noqa: F403
from ._index_tricks import *  # noqa: F403
from ._indexing import *  # noqa: F403
from ._insert_delete import *  # noqa: F403
from ._io import *  # noqa: F403
from ._manipulation import *  # noqa: F403
from ._numerical import *  # noqa: F403
from ._pad import *  # noqa: F403
from ._polynomial import *  # noqa: F403
from ._products import *  # noqa: F403
from ._reductions import *  # noqa: F403
from ._selection import *  # noqa: F403
from ._setops import *  # noqa: F403
from ._signal import *  # noqa: F403
from ._sorting import *  # noqa: F403
from ._ufuncs import *  # noqa: F403
from ._windows import *  # noqa: F403

# Frames of modjax.numpy are never "the user's line" of an equation.
_source_info.register_exclusion(_os.path.dirname(_os.path.abspath(__file__)))

#: The abstract array type (``isinstance(x, jnp.ndarray)``), true of tracers too, as in JAX.
ndarray = _Array

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
euler_gamma = 0.5772156649015329
newaxis = None

_operators.register_operators()

from . import linalg  # noqa: E402  (jax.numpy.linalg: imported last, it needs the names above)

# Names JAX 0.10.2 has removed but still answers for, with the AttributeError it raises.
_REMOVED = {
    "fix": (
        "jax.numpy.fix was deprecated in JAX v0.9.0, and will be removed in JAX v0.10.0."
        " Use jax.numpy.trunc instead."
    ),
}


def __getattr__(name: str):
    removed = _REMOVED.get(name)
    if removed is not None:
        raise AttributeError(removed)
    # The narrow dtypes' scalar types (jnp.bfloat16, ...) appear on first access: naming
    # one loads ml_dtypes (about half a second), which most programs never need.
    value = _narrow_scalar_type(name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_tracecore_dtypes.NARROW_DTYPE_NAMES})
