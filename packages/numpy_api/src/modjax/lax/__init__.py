"""modjax.lax: the primitive library (the counterpart of ``jax.lax``).

Every primitive is declared once, in the module of its topic, together with
its abstract evaluation, its eager implementation (runtime's
``apply_primitive``), its StableHLO lowering and its JVP, transpose and batching
rules. The topics are the modules of this package (``elementwise``,
``structural``, ``reductions``, ``generic_reduce``, ``dot``, ``convolution``,
``windowed``, ``cumulative``, ``sorting``, ``indexing/``, ``control_flow/``,
``linalg/``, ``fft``, ``special``, ``bits``, ``rng``, ``callbacks``, ...); the
package README's table says which primitives each one holds. ``_common`` and
``_rules`` hold the helpers they share.

Functions here follow JAX's lax semantics: no implicit type promotion
(operands of a binary op share a dtype; a Python scalar is a weakly typed
value of its default dtype, so ``lax.add(x_f16, 1.0)`` raises TypeError as in
JAX), XLA's integer division and shift rules, static shapes.
"""

from modjax.autodiff import (  # noqa: E402  (jax.lax.stop_gradient and its primitive)
    stop_gradient,
    stop_gradient_p,
)
from modjax.batching import (  # noqa: E402  (collectives over vmapped named axes)
    all_gather,
    all_gather_p,
    all_to_all,
    all_to_all_p,
    axis_index,
    axis_index_p,
    axis_size,
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
    pswapaxes,
)
from modjax.runtime import device_put_p  # noqa: E402  (jax.lax.device_put_p)
from modjax.sharding import pcast, with_sharding_constraint  # noqa: E402  (jax.lax's)
from modjax.sharding.constraint import sharding_constraint_p  # noqa: E402  (jax.lax's)

from . import (
    edtype,  # noqa: E402, F401  (to_edtype/from_edtype: jax.experimental.primal_tangent_dtype)
    extended_rules,  # noqa: E402, F401  (structural lowerings for key arrays)
    linalg,  # noqa: E402  (modjax.lax.linalg, as jax.lax.linalg)
    ref_views,  # noqa: E402, F401  (ref.at[idx]: views of references)
    sharding_types,  # noqa: E402, F401  (which sharding-in-types rule each primitive follows)
    state,  # noqa: E402, F401  (mutable array references: modjax.Ref's primitives)
)
from .accuracy import AccuracyMode, Tolerance
from .approx_top_k import *  # noqa: F403
from .array_helpers import *  # noqa: F403
from .barrier import *  # noqa: F403
from .bits import *  # noqa: F403
from .composite_op import *  # noqa: F403
from .composites import *  # noqa: F403
from .control_flow import (
    associative_scan,
    cond,
    cond_p,
    custom_linear_solve,
    custom_root,
    fori_loop,
    linear_solve_p,
    map,
    platform_dependent,
    scan,
    scan_p,
    switch,
    while_loop,
    while_p,
)
from .conv_patches import *  # noqa: F403
from .conv_transpose import *  # noqa: F403
from .convolution import *  # noqa: F403
from .cumulative import *  # noqa: F403
from .dce_sink import *  # noqa: F403
from .dot import (
    DotAlgorithm,
    DotAlgorithmPreset,
    DotDimensionNumbers,
    Precision,
    PrecisionLike,
    dot,
    dot_general,
    dot_general_p,
)
from .elementwise import (
    RoundingMethod,
    abs,
    abs_p,
    acos,
    acos_p,
    acosh,
    acosh_p,
    add,
    add_p,
    and_p,
    asin,
    asin_p,
    asinh,
    asinh_p,
    atan,
    atan2,
    atan2_p,
    atan_p,
    atanh,
    atanh_p,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cbrt,
    cbrt_p,
    ceil,
    ceil_p,
    clamp,
    clamp_p,
    convert_element_type,
    convert_element_type_p,
    cos,
    cos_p,
    cosh,
    cosh_p,
    div,
    div_p,
    eq,
    eq_p,
    eq_to_p,
    exp,
    exp2,
    exp2_p,
    exp_p,
    expm1,
    expm1_p,
    floor,
    floor_p,
    ge,
    ge_p,
    gt,
    gt_p,
    integer_pow,
    integer_pow_p,
    is_finite,
    is_finite_p,
    le,
    le_p,
    le_to_p,
    log,
    log1p,
    log1p_p,
    log_p,
    logistic,
    logistic_p,
    lt,
    lt_p,
    lt_to_p,
    max,
    max_p,
    min,
    min_p,
    mul,
    mul_p,
    ne,
    ne_p,
    neg,
    neg_p,
    nextafter,
    nextafter_p,
    not_p,
    or_p,
    pow,
    pow_p,
    reduce_precision,
    reduce_precision_p,
    rem,
    rem_p,
    round,
    round_p,
    rsqrt,
    rsqrt_p,
    select_n,
    select_n_p,
    shift_left,
    shift_left_p,
    shift_right_arithmetic,
    shift_right_arithmetic_p,
    shift_right_logical,
    shift_right_logical_p,
    sign,
    sign_p,
    sin,
    sin_p,
    sinh,
    sinh_p,
    sqrt,
    sqrt_p,
    square,
    square_p,
    sub,
    sub_p,
    tan,
    tan_p,
    tanh,
    tanh_p,
    xor_p,
)
from .fft import FftType, fft, fft_p
from .generic_reduce import *  # noqa: F403
from .indexing import *  # noqa: F403
from .mulhi import *  # noqa: F403
from .parallel import (  # noqa: E402
    pbroadcast,
    precv,
    precv_p,
    psend,
    psend_p,
    ragged_all_to_all,
    ragged_all_to_all_p,
)
from .ragged_dot import *  # noqa: F403
from .reductions import (
    argmax,
    argmax_p,
    argmin,
    argmin_p,
    reduce_and,
    reduce_and_p,
    reduce_max,
    reduce_max_p,
    reduce_min,
    reduce_min_p,
    reduce_or,
    reduce_or_p,
    reduce_prod,
    reduce_prod_p,
    reduce_sum,
    reduce_sum_p,
    reduce_xor,
    reduce_xor_p,
)
from .rng import *  # noqa: F403
from .scaled_dot import *  # noqa: F403
from .sorting import *  # noqa: F403
from .special import *  # noqa: F403
from .split_stack import *  # noqa: F403
from .structural import (
    broadcast,
    broadcast_in_dim,
    broadcast_in_dim_p,
    broadcasted_iota,
    concatenate,
    concatenate_p,
    copy,
    copy_p,
    expand_dims,
    full,
    full_like,
    iota,
    iota_p,
    pad,
    pad_p,
    reshape,
    reshape_p,
    rev,
    rev_p,
    slice,
    slice_p,
    squeeze,
    squeeze_p,
    transpose,
    transpose_p,
)
from .tokens import *  # noqa: F403
from .windowed import *  # noqa: F403
