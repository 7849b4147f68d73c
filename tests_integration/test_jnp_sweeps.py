"""vmap and gradients of every public ``modjax.numpy`` function, checked against loops
and finite differences.

The specs come from the ``jnp_sweep_specs_*`` modules (every one found is imported). For
each: the call on device Arrays (one compiled program) equals the call on numpy
arrays (op by op); ``vmap(f, in_axes)`` over generated batch positions (negative ones,
and ``None`` for some operands) and batch sizes 3, 1 and 0 equals stacking ``f`` over
the slices; and
``check_grads(f, args, order, modes=("fwd", "rev"))`` in float64 holds at generated points.
Operand shapes are fixed per spec and seeds are drawn, so that compiled programs are shared
between examples.
"""

from __future__ import annotations

import importlib
import os
import pathlib

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from jnp_sweep_specs import EXCLUDED, SPECS

import modjax.numpy as jnp
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.tracecore import tree_util
from modjax.tracecore.config import enable_x64

# Each family module adds its specs to SPECS when imported.
for _path in sorted(pathlib.Path(__file__).parent.glob("jnp_sweep_specs_*.py")):
    importlib.import_module(_path.stem)

SPEC_IDS = [spec.name for spec in SPECS]
# Each example compiles programs of its own: no shrinking (a failure reports its seed and
# batching, which reproduce it with derandomize).
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
# Examples per spec: a few by default (the sweeps cover some 750 specs), many more with
# HYPOTHESIS_PROFILE=thorough.
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
VMAP_EXAMPLES, GRAD_EXAMPLES = (25, 10) if THOROUGH else (2, 1)
GRAD_SPECS = [spec for spec in SPECS if spec.diff]
VMAP_SPECS = [spec for spec in SPECS if spec.vmap]


def public_callables():
    """Names of the public functions of modjax.numpy (dtype classes and constants left out)."""
    return sorted(
        name
        for name in dir(jnp)
        if not name.startswith("_")
        and callable(getattr(jnp, name))
        and not isinstance(getattr(jnp, name), type)
    )


def test_every_public_function_is_swept_or_excluded_with_a_reason():
    swept = {spec.base_name for spec in SPECS}
    missing = [n for n in public_callables() if n not in swept and n not in EXCLUDED]
    assert not missing, f"add a spec or an exclusion for: {missing}"
    unknown = sorted((swept | set(EXCLUDED)) - set(public_callables()))
    assert not unknown, f"not public callables of modjax.numpy: {unknown}"
    assert not swept & set(EXCLUDED), sorted(swept & set(EXCLUDED))


def test_spec_names_are_unique():
    assert len(SPEC_IDS) == len(set(SPEC_IDS))


def _single_precision(x):
    """The operand the vmap sweep feeds: float64 -> float32, complex128 -> complex64."""
    narrower = {np.dtype(np.float64): np.float32, np.dtype(np.complex128): np.complex64}
    return x.astype(narrower.get(x.dtype, x.dtype))


def _stack(samples, axis, size):
    stacked = np.stack(samples)[:size]
    return np.moveaxis(stacked, 0, axis)


@st.composite
def batchings(draw, spec, ndims):
    """Draw (in_axes, size): each operand batched at a (maybe negative) axis or not."""
    axes = [draw(st.one_of(st.none(), st.integers(-n - 1, n))) for n in ndims]
    if all(a is None for a in axes):
        i = draw(st.integers(0, len(ndims) - 1))
        axes[i] = draw(st.integers(-ndims[i] - 1, ndims[i]))
    sizes = [3, 1, 0] if spec.zero_batch else [3, 1]
    return axes, draw(st.sampled_from(sizes))


def _assert_close(out, expected, spec, what):
    out, expected = np.asarray(out), np.asarray(expected)
    assert out.shape == expected.shape and out.dtype == expected.dtype, (
        f"{what}: {out.shape} {out.dtype} != {expected.shape} {expected.dtype}"
    )
    if out.dtype.kind in "fc" or out.dtype.name == "bfloat16":
        rtol = spec.rtol if spec.rtol is not None else 2e-5
        atol = spec.atol if spec.atol is not None else 2e-6
        np.testing.assert_allclose(out, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, expected, err_msg=what)


@pytest.mark.parametrize("spec", VMAP_SPECS, ids=[s.name for s in VMAP_SPECS])
@settings(max_examples=VMAP_EXAMPLES, deadline=None, derandomize=not THOROUGH, phases=PHASES)
@given(data=st.data())
def test_vmap_equals_a_loop_of_slices(spec, data):
    rng = np.random.RandomState(data.draw(st.integers(0, 2**16), label="seed"))
    samples = [[_single_precision(make(rng)) for _ in range(3)] for make in spec.args]
    axes, size = data.draw(batchings(spec, [s[0].ndim for s in samples]), label="batching")
    args = [
        s[0] if ax is None else _stack(s, ax, size) for s, ax in zip(samples, axes, strict=True)
    ]
    out = vmap(spec.fn, in_axes=tuple(axes))(*args)
    per_slice = [
        spec.fn(*[s[0] if ax is None else s[i] for s, ax in zip(samples, axes, strict=True)])
        for i in range(max(size, 1))
    ]
    expected = jax_tree_stack(per_slice, size)
    for o, e in zip(tree_util.tree_leaves(out), tree_util.tree_leaves(expected), strict=True):
        _assert_close(o, e, spec, f"vmap({spec.name}, in_axes={axes}) at size {size}")


@pytest.mark.parametrize("spec", SPECS, ids=SPEC_IDS)
def test_calls_on_device_arrays_equal_calls_on_numpy_arrays(spec):
    # On device Arrays most functions run as one compiled program (_eager_jit); on numpy
    # arrays op by op. Both must give the same values, dtypes and weak types.
    rng = np.random.RandomState(0)
    args = [_single_precision(make(rng)) for make in spec.args]
    expected = spec.fn(*args)
    out = spec.fn(*[jnp.asarray(a) for a in args])
    out_leaves, expected_leaves = tree_util.tree_leaves(out), tree_util.tree_leaves(expected)
    assert len(out_leaves) == len(expected_leaves)
    for o, e in zip(out_leaves, expected_leaves, strict=True):
        assert getattr(o, "weak_type", False) == getattr(e, "weak_type", False), spec.name
        _assert_close(o, e, spec, f"{spec.name} on device Arrays")


def jax_tree_stack(per_slice, size):
    """Stack the slices' results leaf by leaf (size 0: an empty leading axis of their type)."""
    columns = zip(*[tree_util.tree_leaves(r) for r in per_slice], strict=True)
    stacked = [np.stack([np.asarray(x) for x in column])[:size] for column in columns]
    return tree_util.tree_unflatten(tree_util.tree_structure(per_slice[0]), stacked)


@pytest.mark.parametrize("spec", GRAD_SPECS, ids=[s.name for s in GRAD_SPECS])
@settings(max_examples=GRAD_EXAMPLES, deadline=None, derandomize=not THOROUGH, phases=PHASES)
@given(seed=st.integers(0, 2**16))
def test_check_grads(spec, seed):
    rng = np.random.RandomState(seed)
    args = [make(rng) for make in spec.args]
    fixed = dict(enumerate(args))
    for i in spec.diff:
        del fixed[i]

    def f(*diff_args):
        full = dict(fixed)
        full.update(zip(spec.diff, diff_args, strict=True))
        return spec.fn(*[full[i] for i in range(len(args))])

    tol = {"atol": spec.atol, "rtol": spec.rtol} if spec.rtol or spec.atol else {}
    with enable_x64(True):
        check_grads(f, [args[i] for i in spec.diff], order=spec.order, modes=("fwd", "rev"), **tol)
