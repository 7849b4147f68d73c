"""modjax.tracecore: pytrees, dtypes, abstract values, primitives, tracers and jaxprs.

The layer every other modjax package stands on, usable alone by authors of their
own DSLs: it needs only numpy and ml_dtypes. See the package README for a tour.
"""

from . import config as _config_module
from . import dtypes, source_info, tree, tree_util
from .abstract import (
    AbstractValue,
    ShapedArray,
    ShapeDtypeStruct,
    get_aval,
    register_aval_handler,
)
from .basearray import Array
from .call import call, call_p, register_call_rules
from .check import JaxprTypeError, check_jaxpr
from .compile_time_eval import ensure_compile_time_eval
from .config import config
from .core import (
    ConcretizationTypeError,
    EvalTrace,
    InconclusiveDimensionOperation,
    JAXIndexError,
    JAXTypeError,
    KeyReuseError,
    OpaqueTraceState,
    Primitive,
    Trace,
    Tracer,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    concrete_or_error,
    current_trace,
    eval_trace,
    get_opaque_trace_state,
    register_tracer_attribute,
    register_tracer_operator,
    set_current_trace,
)
from .dce import dce_closed_jaxpr, dce_jaxpr, dce_rules
from .dot import to_dot
from .effects import Effect, effects_by_name, no_effects, ordered_effects
from .evaluation import eval_jaxpr, jaxpr_as_fun
from .inline import inline_calls
from .jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    jaxpr_equal,
    map_subjaxprs,
    subjaxprs,
)
from .leaks import check_tracer_leaks, checking_leaks
from .parse import JaxprParseError, parse_jaxpr, register_param_parser
from .partial_eval import partial_eval_jaxpr, partial_eval_rules
from .pretty import register_param_printer
from .source_info import SourceInfo
from .tokens import AbstractToken, Token, abstract_token, is_token_aval
from .tracing import JaxprTrace, JaxprTracer, convert_constvars_jaxpr, make_jaxpr, trace_to_jaxpr
from .tree_util import (
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_static,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from .wrapped_fun import DebugInfo, Store, WrappedFun, cache, debug_info, flatten_fun, wrap_init

enable_x64 = _config_module.enable_x64

__version__ = "0.1.0"
