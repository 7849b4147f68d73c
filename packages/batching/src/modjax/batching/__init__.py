"""modjax.batching: vmap, the batch trace and its rule tables (jax's batching interpreter).

Register a primitive's batching rule with ``batching_rules[p] = rule`` (or one of
the factories ``defvectorized``, ``defbroadcasting``, ``defreducer``); primitives
that consult named axes register in ``axis_primitive_batchers``. See the README.
"""

from .api import vmap
from .batch_trace import (
    AxisData,
    BatchTrace,
    BatchTracer,
    axis_frames,
    axis_names,
    axis_primitive_batchers,
    axis_size,
    batch_subtrace,
    batching_rules,
    extend_axis_env,
    not_mapped,
)
from .collectives import (
    all_gather,
    all_gather_p,
    all_to_all,
    all_to_all_p,
    pmax,
    pmax_p,
    pmean,
    pmin,
    pmin_p,
    ppermute,
    ppermute_p,
    pshuffle,
    psum,
    psum_p,
    psum_scatter,
    psum_scatter_p,
    pswapaxes,
    reshape,
    reshape_p,
)
from .higher_order import (
    batch_jaxpr,
    batch_jaxpr_axis,
    call_batching_rule,
    clear_caches,
    register_call_batching,
    uses_axis_primitives,
)
from .primitives import (
    axis_index,
    axis_index_p,
    bdim_at_front,
    broadcast,
    broadcast_batch_p,
    canonicalize_axis,
    expand_dims,
    expand_dims_p,
    iota,
    iota_p,
    matchaxis,
    moveaxis,
    moveaxis_p,
    squeeze,
    squeeze_p,
)
from .rules import (
    broadcasting_rule,
    defbroadcasting,
    defreducer,
    defvectorized,
    shift_axes,
    vectorized_rule,
)
from .vectorize import parse_gufunc_signature, register_vectorize_asarray, vectorize

__version__ = "0.1.0"
