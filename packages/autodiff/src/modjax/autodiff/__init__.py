"""modjax.autodiff: forward and reverse-mode automatic differentiation on tracecore.

Forward mode is a JVP trace; reverse mode linearizes (JVP with the tangents
staged into a linear jaxpr) and transposes that jaxpr. It knows nothing of an
array library: primitives bring their own rules through ``jvp_rules`` and
``transpose_rules``. See the package README for a tour.
"""

import os as _os

from modjax.tracecore import source_info as _source_info

# autodiff's frames are library code, never the user's line of an equation.
_source_info.register_exclusion(_os.path.dirname(_os.path.abspath(__file__)))

from . import testing  # noqa: E402
from .api import (  # noqa: E402
    closure_convert,
    grad,
    jvp,
    linear_transpose,
    linearize,
    register_host_to_array,
    stop_gradient,
    stop_gradient_p,
    value_and_grad,
    vjp,
)
from .checkpoint import (  # noqa: E402
    Offloadable,
    Recompute,
    Saveable,
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    dot_primitives,
    name_p,
    remat,
    remat_p,
)
from .custom_derivatives import (  # noqa: E402
    CustomVJPException,
    CustomVJPPrimal,
    custom_jvp,
    custom_jvp_call_p,
    custom_lin_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from .custom_gradient import custom_gradient  # noqa: E402
from .jacobians import (  # noqa: E402
    JacobianSupport,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    register_jacobian_support,
)
from .jvp import JVPTrace, JVPTracer, jvp_call_rule, jvp_flat, jvp_jaxpr  # noqa: E402
from .linear_call import linear_call, linear_call_p  # noqa: E402
from .linearize import LinearizeTrace, bind_staged_tangent, linearize_flat  # noqa: E402
from .residuals import print_saved_residuals, saved_residuals  # noqa: E402
from .tangents import (  # noqa: E402
    SymbolicZero,
    UndefinedPrimal,
    Zero,
    add_any_p,
    add_tangents,
    defbilinear,
    defjvp,
    defjvp2,
    defjvp_zero,
    deflinear,
    instantiate_zeros,
    is_undefined_primal,
    jvp_rules,
    tangent_aval,
    transpose_rules,
    zeros_like_aval,
    zeros_like_p,
)
from .transpose import (  # noqa: E402
    backward_pass,
    register_call_rules,
    transpose_call_rule,
    transpose_jaxpr,
)

__version__ = "0.1.0"
