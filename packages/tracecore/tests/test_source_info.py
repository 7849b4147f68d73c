"""SourceInfo: the user's frame and the transform name stack on every equation."""

import numpy as np
from tracecore_test_prims import add_p, sin_p

from modjax.tracecore import source_info
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.tracing import make_jaxpr


def helper_that_binds(x):
    return sin_p.bind(x)


def test_equations_record_the_innermost_user_frame():
    closed = make_jaxpr(lambda x: add_p.bind(helper_that_binds(x), x))(np.float32(1))
    sin_eqn, add_eqn = closed.jaxpr.eqns
    assert sin_eqn.source_info.frame.file_name == __file__
    assert sin_eqn.source_info.frame.function_name == "helper_that_binds"
    assert add_eqn.source_info.frame.function_name == "<lambda>"
    assert str(sin_eqn.source_info).startswith(f"{__file__}:")


def test_name_stack_is_recorded_and_restored():
    def f(x):
        with source_info.transform_name("outer"), source_info.transform_name("inner"):
            y = sin_p.bind(x)
        return sin_p.bind(y)

    closed = make_jaxpr(f)(1.0)
    assert closed.jaxpr.eqns[0].source_info.name_stack == ("outer", "inner")
    assert closed.jaxpr.eqns[1].source_info.name_stack == ()
    assert str(closed.jaxpr.eqns[0].source_info).endswith("[outer/inner]")
    # str() of a name stack is JAX's: names joined by "/", "" when empty (haiku splits it).
    names = [str(eqn.source_info.name_stack) for eqn in closed.jaxpr.eqns]
    assert names == ["outer(inner())", ""]
    stack = source_info.NameStack
    scope, transform = str, source_info.Transform
    assert str(stack((transform("jvp"), scope("model"), scope("layer")))) == "jvp(model)/layer"
    assert str(stack((transform("t"), transform("jvp"), scope("m")))) == "t(jvp(m))"
    assert str(stack((scope("a"), transform("vmap")))) == "a/vmap()"


def test_reevaluating_a_jaxpr_keeps_the_original_lines():
    original = make_jaxpr(lambda x: sin_p.bind(x))(1.0)

    def retrace(x):
        with source_info.transform_name("again"):
            return eval_jaxpr(original.jaxpr, original.consts, x)

    copied = make_jaxpr(retrace)(1.0)
    (eqn,) = copied.jaxpr.eqns
    assert eqn.source_info.frame == original.jaxpr.eqns[0].source_info.frame
    assert eqn.source_info.name_stack == ("again",)


def test_register_exclusion_skips_a_folder(tmp_path):
    module = tmp_path / "library_code.py"
    module.write_text("def library_sin(p, x):\n    return p.bind(x)\n")
    namespace = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    closed = make_jaxpr(lambda x: namespace["library_sin"](sin_p, x))(1.0)
    assert closed.jaxpr.eqns[0].source_info.frame.file_name == str(module)
    source_info.register_exclusion(str(tmp_path))
    closed = make_jaxpr(lambda x: namespace["library_sin"](sin_p, x))(1.0)
    assert closed.jaxpr.eqns[0].source_info.frame.file_name == __file__
