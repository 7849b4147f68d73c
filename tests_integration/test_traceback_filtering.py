"""Tracebacks of user errors show the user's frames, as JAX's ``jax_traceback_filtering`` does."""

import traceback

import pytest

import modjax
import modjax.numpy as jnp
from modjax.tracecore.traceback_util import UnfilteredStackTrace, traceback_filtering


def bad(x):
    return x + jnp.ones(4)  # a shape mismatch for x of shape (3,)


CALLS = {
    "jit": lambda: modjax.jit(bad)(jnp.ones(3)),
    "grad": lambda: modjax.grad(lambda x: bad(x).sum())(jnp.ones(3)),
    "vmap": lambda: modjax.vmap(bad)(jnp.ones((2, 3))),
    "jit_of_grad": lambda: modjax.jit(modjax.grad(lambda x: bad(x).sum()))(jnp.ones(3)),
    "make_jaxpr": lambda: modjax.make_jaxpr(bad)(jnp.ones(3)),
    "eval_shape": lambda: modjax.eval_shape(bad, jnp.ones(3)),
    "if_on_tracer": lambda: modjax.jit(lambda x: 1 if x > 0 else 2)(1.0),
}


def _raise(name, mode):
    with traceback_filtering(mode), pytest.raises(TypeError) as info:
        CALLS[name]()
    return info.value


def _files(error) -> list[str]:
    return [frame.filename for frame in traceback.extract_tb(error.__traceback__)]


def _is_modjax(filename: str) -> bool:
    return any(filename.startswith(path) for path in modjax.__path__)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("mode", ["auto", "quiet_remove_frames", "remove_frames"])
def test_filtered_traceback_has_only_user_frames(name, mode):
    error = _raise(name, mode)
    files = _files(error)
    assert files and not any(map(_is_modjax, files)), files
    assert len(files) <= 5, files  # this test's frames, the lambda's and bad's
    assert files[-1] == __file__
    notes = getattr(error, "__notes__", [])
    if mode == "remove_frames":
        assert isinstance(error.__cause__, UnfilteredStackTrace)
        full = _files(error.__cause__)
        assert any(map(_is_modjax, full)) and len(full) > len(files)
        assert not notes
    else:
        assert len(notes) == 1 and "removed its internal frames" in notes[0]  # filtered once


@pytest.mark.parametrize("name", ["jit", "grad", "vmap"])
def test_off_shows_every_frame(name):
    error = _raise(name, "off")
    files = _files(error)
    assert sum(map(_is_modjax, files)) >= 5, files
    assert error.__cause__ is None and not getattr(error, "__notes__", [])


def test_tracebackhide_keeps_frames_and_marks_modjax_ones():
    error = _raise("jit", "tracebackhide")
    frames = [frame for frame, _ in traceback.walk_tb(error.__traceback__)]
    marked = [f for f in frames if f.f_locals.get("__tracebackhide__")]
    assert marked and all(_is_modjax(f.f_code.co_filename) for f in marked)
    assert any(not _is_modjax(f.f_code.co_filename) for f in frames)


def test_config_accepts_jax_spelling():
    modjax.config.update("jax_traceback_filtering", "off")
    try:
        assert traceback_filtering.value == "off"
    finally:
        modjax.config.update("jax_traceback_filtering", "auto")
    with pytest.raises(ValueError):
        modjax.config.update("jax_traceback_filtering", "sometimes")


@pytest.mark.parametrize(
    "call",
    [
        lambda: jnp.ones((2, 3)) @ jnp.ones((4,)),
        lambda: jnp.concatenate([jnp.ones(3), jnp.ones((2, 2))]),
    ],
)
def test_eager_op_errors_stop_at_the_primitive(call):
    # Primitive.bind is a boundary: the eager dispatch, tracing and abstract evaluation
    # below it are dropped; the numpy-level frames above it remain (as JAX's do).
    with pytest.raises(TypeError) as info:
        call()
    files = _files(info.value)
    assert files[0] == __file__ and len(files) <= 7, files
    assert not any("/tracecore/" in f or "dispatch.py" in f for f in files), files
    assert "/lax/" in files[-1] or "/numpy/" in files[-1], files
    with traceback_filtering("off"), pytest.raises(TypeError) as info:
        call()
    assert len(_files(info.value)) > len(files) + 5
