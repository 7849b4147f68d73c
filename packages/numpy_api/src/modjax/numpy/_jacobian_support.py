"""Register modjax's vmap and array operations for autodiff's ``jacfwd``/``jacrev``/``hessian``.

autodiff cannot import batching (a sibling) nor an array library (above it), so it
takes both through ``register_jacobian_support``. This is the lowest package that has
``vmap`` and the operations (the ones JAX's ``jacfwd``/``jacrev`` use, so their jaxprs
match JAX's).
"""

from __future__ import annotations

from modjax import lax
from modjax.autodiff import register_jacobian_support
from modjax.batching import vmap

from ._creation import eye
from ._manipulation import reshape, split


def _convert(x, dtype, weak_type: bool):
    # The primitive itself: lax.convert_element_type would drop a weak type.
    return lax.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type)


register_jacobian_support(
    vmap=lambda fun, out_axes: vmap(fun, out_axes=out_axes),
    eye=lambda n, dtype: eye(n, dtype=dtype),
    split=split,
    reshape=reshape,
    real=lax.real,
    convert=_convert,
)
