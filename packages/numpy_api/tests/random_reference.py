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


def assert_matches(out, expected):
    """Assert ``out`` has the recorded dtype and shape and exactly the recorded values."""
    out = np.asarray(out)
    assert out.dtype.name == expected["dtype"]
    assert list(out.shape) == expected["shape"]
    if out.dtype.kind == "c":
        values = np.stack([out.real, out.imag]).astype(np.float64)
    else:
        values = out.astype(np.float64)
    np.testing.assert_array_equal(values, np.asarray(expected["values"], np.float64))
