"""Read random_distributions_reference.json: known answers recorded from JAX 0.10.2.

The table was made by the script stored in it (``recorded_with``), run with
JAX in a scratch environment: modjax never imports jax. Each case names a
sampler, a seed for ``random.key`` and JSON-encoded arguments (arrays as
``{"array": values, "dtype": name}``); each initializer case names a factory,
its keyword arguments, a seed, a shape and a dtype.
"""

import contextlib
import json
import pathlib
import warnings

import numpy as np

from modjax.tracecore.config import config

TABLE = json.loads(
    pathlib.Path(__file__).with_name("random_distributions_reference.json").read_text()
)


def decode(value):
    """Return a JSON-encoded argument as the value it stands for."""
    if isinstance(value, dict) and "array" in value:
        return np.asarray(value["array"], dtype=value["dtype"])
    return value


def call_args(case):
    """Return (args, kwargs) of a sampler case."""
    kwargs = {k: decode(v) for k, v in case["kwargs"].items()}
    if "shape" in kwargs:
        kwargs["shape"] = tuple(kwargs["shape"])
    if "dtype" in kwargs:
        kwargs["dtype"] = np.dtype(kwargs["dtype"])
    return [decode(a) for a in case["args"]], kwargs


def case_id(case):
    """Name a case for pytest: the function or initializer and its seed."""
    return f"{case.get('fn') or case.get('init')}-{case['seed']}"


@contextlib.contextmanager
def x64(enabled):
    """Run with enable_x64 set to ``enabled``, restoring it afterwards."""
    before = config.read("enable_x64")
    config.update("enable_x64", enabled)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        config.update("enable_x64", bool(before))


# Samplers whose last steps run LAPACK (QR for orthogonal matrices) or long
# floating-point loops (gamma's rejection loop under beta): their low bits depend
# on the machine's kernels (vector width, fused multiply-adds), in JAX as here,
# so they match the recording to a few float ulps; every other sampler's bits
# are exact on any machine.
MACHINE_DEPENDENT_ULPS = {"orthogonal": 16, "delta_orthogonal": 16, "beta": 16}


def assert_matches(out, expected, ulps=0):
    """Assert ``out`` has the recorded dtype and shape and the recorded values.

    With ``ulps=0`` the values must be exactly equal; otherwise they may differ by
    ``ulps`` units in the last place of the largest recorded magnitude.
    """
    out = np.asarray(out)
    assert out.dtype.name == expected["dtype"]
    assert list(out.shape) == expected["shape"]
    if out.dtype.kind == "c":
        values = np.stack([out.real, out.imag]).astype(np.float64)
    else:
        values = out.astype(np.float64)
    recorded = np.asarray(expected["values"], np.float64)
    if ulps == 0:
        np.testing.assert_array_equal(values, recorded)
        return
    eps = np.finfo(out.real.dtype).eps
    scale = np.max(np.abs(recorded), initial=1.0)
    np.testing.assert_allclose(values, recorded, rtol=ulps * eps, atol=ulps * eps * scale)
