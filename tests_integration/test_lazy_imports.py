"""What ``import modjax, modjax.numpy`` leaves for later, and that nothing is lost by it.

ml_dtypes (bfloat16, float8, int4, ...) costs about half a second to import and most
programs never use it, so modjax loads it the moment a program names a narrow dtype.
Each test runs in a fresh interpreter: the question is what one process has imported.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# After the trigger, every dtype rule must hold for the narrow types: promotion,
# finfo/iinfo, issubdtype, lowering (ir types), jaxlib buffers, jit, grad, vmap.
CHECKS = """
import sys
import numpy as np
assert "ml_dtypes" in sys.modules
x = jnp.ones(3, jnp.bfloat16) * 2
assert x.dtype == jnp.bfloat16 and str(x.dtype) == "bfloat16"
assert (x + jnp.ones(3, jnp.float16)).dtype == np.float32
assert jnp.promote_types("bfloat16", int) == jnp.bfloat16
assert float(jnp.finfo(jnp.bfloat16).eps) == 0.0078125 and jnp.iinfo("int4").max == 7
assert jnp.issubdtype(jnp.bfloat16, jnp.floating) and jnp.issubdtype("int4", jnp.signedinteger)
assert modjax.jit(lambda v: v * 3)(x).tolist() == [6.0] * 3
assert "bf16" in modjax.jit(lambda v: v + 1).lower(x).as_text()
assert modjax.grad(lambda v: (v * v).sum())(x).dtype == jnp.bfloat16
assert modjax.vmap(lambda v: v - 1)(x).tolist() == [1.0] * 3
i4 = jnp.arange(4, dtype="int4")
assert (i4 + 1).tolist() == [1, 2, 3, 4] and np.asarray(i4).dtype.name == "int4"
f8 = jnp.asarray([0.5, 448.0], jnp.float8_e4m3fn)
assert lax.convert_element_type(f8, np.float32).tolist() == [0.5, 448.0]
with np.testing.assert_raises(Exception):
    jnp.promote_types(jnp.float8_e4m3fn, jnp.float8_e5m2)  # small floats never mix
print("ok")
"""

TRIGGERS = {
    "jnp attribute": "jnp.bfloat16",
    "dtype string": "jnp.zeros(2, dtype='bfloat16')",
    "ml_dtypes array passed in": ("import ml_dtypes; jnp.asarray(np.ones(2, ml_dtypes.bfloat16))"),
    "ml_dtypes array into jit": (
        "import ml_dtypes; modjax.jit(lambda v: v + 1)(np.ones(2, ml_dtypes.int4))"
    ),
    "dtypes.finfo": "modjax.dtypes.finfo('bfloat16')",
    "jnp.dtype": "jnp.dtype('int4')",
    "jaxpr text": (
        "from modjax.tracecore import parse_jaxpr;"
        "parse_jaxpr('{ lambda ; a:bf16[3]. let b:bf16[3] = mul a a in (b,) }')"
    ),
}

PRELUDE = """
import sys
import numpy as np
import modjax
import modjax.numpy as jnp
from modjax import lax
assert "ml_dtypes" not in sys.modules, "import modjax, modjax.numpy imported ml_dtypes"
"""


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.parametrize("trigger", list(TRIGGERS))
def test_narrow_dtypes_load_when_named_and_then_work_everywhere(trigger):
    assert _run(PRELUDE + TRIGGERS[trigger] + "\n" + CHECKS).strip().endswith("ok")


LAZY = (
    "ml_dtypes",
    "jaxlib.mlir.dialects.stablehlo",
    "jaxlib.mlir.dialects.chlo",
    "modjax.scipy",
    "modjax.nn",
    "modjax.image",
    "modjax.runtime.export",
)


def test_import_leaves_optional_modules_unloaded_and_they_work_when_reached():
    code = PRELUDE + textwrap.dedent(
        f"""
        print(" ".join(m for m in {LAZY!r} if m in sys.modules))
        # Reached as attributes, as JAX users do; their rules are registered by then.
        erf = modjax.scipy.special.erf
        assert abs(float(modjax.jit(modjax.grad(erf))(0.0)) - 2 / np.pi ** 0.5) < 1e-6
        assert modjax.vmap(modjax.nn.relu)(jnp.array([-1.0, 2.0])).tolist() == [0.0, 2.0]
        assert float(modjax.scipy.linalg.det(jnp.eye(2))) == 1.0
        assert modjax.image.resize(jnp.ones((2, 2)), (4, 4), "linear").shape == (4, 4)
        print("ok")
        """
    )
    assert _run(code).split("\n")[:2] == ["", "ok"]
