"""jax.profiler's counterpart: traces written through jaxlib's profiler, annotations in them."""

from __future__ import annotations

import gzip
import json
import socket
from functools import partial

import numpy as np
import pytest
from runtime_test_prims import sin

from modjax.runtime import jit, profiler


def _event_names(log_dir) -> set[str]:
    """Every event name of the one trace written under ``log_dir``, read back with ProfileData."""
    (path,) = log_dir.glob("plugins/profile/*/*.xplane.pb")
    data = profiler.ProfileData.from_file(str(path))
    return {event.name for plane in data.planes for line in plane.lines for event in line.events}


@partial(profiler.annotate_function, name="annotated_step", kind="test")
def _annotated(x):
    return x


def _traced_program(x):
    return sin(sin(x))


def test_trace_writes_an_xplane_with_the_annotated_spans_and_the_programs_run(tmp_path):
    x = np.arange(4.0, dtype=np.float32)
    with profiler.trace(tmp_path, create_perfetto_trace=True):
        with profiler.TraceAnnotation("outer_annotation", size=4):
            for step in range(2):
                with profiler.StepTraceAnnotation("train", step_num=step):
                    y = _annotated(jit(_traced_program)(x))
        np.asarray(y)
    names = _event_names(tmp_path)
    assert {"outer_annotation", "annotated_step"} <= names
    assert any(name.startswith("train") for name in names)
    assert any("(jit__traced_program)" in name for name in names)  # XLA compiled jit(f)
    assert any("Execute" in name for name in names)  # ... and ran it
    (perfetto,) = tmp_path.glob("plugins/profile/*/perfetto_trace.json.gz")
    events = json.loads(gzip.decompress(perfetto.read_bytes()))
    assert "metadata" not in events
    assert "outer_annotation" in {e.get("name") for e in events["traceEvents"]}


def test_start_and_stop_trace_and_the_errors_of_misuse(tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    options = profiler.ProfileOptions()
    assert (options.host_tracer_level, options.python_tracer_level) == (2, 1)
    options.python_tracer_level = 0
    profiler.start_trace(str(tmp_path), profiler_options=options)
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            profiler.start_trace(tmp_path)
        with profiler.TraceAnnotation("between_start_and_stop"):
            pass
    finally:
        profiler.stop_trace()
    assert "between_start_and_stop" in _event_names(tmp_path)
    with profiler.TraceAnnotation("no trace running"):  # harmless outside a trace
        pass


def test_annotate_function_keeps_the_function_and_names_it():
    def f(x, *, k=1):
        """doc"""
        return x + k

    g = profiler.annotate_function(f)
    assert g(1, k=2) == 3 and g.__name__ == "f" and g.__doc__ == "doc"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_profiler_server_starts_once_and_stops():
    with pytest.raises(ValueError, match="No active profiler server"):
        profiler.stop_server()
    server = profiler.start_server(_free_port())
    try:
        assert server is not None
        with pytest.raises(ValueError, match="Only one profiler server"):
            profiler.start_server(_free_port())
    finally:
        profiler.stop_server()


def test_device_memory_profile_is_a_gzipped_pprof_of_live_arrays(tmp_path):
    keep = jit(_traced_program)(np.ones(1000, np.float32))
    profile = profiler.device_memory_profile()
    assert profile[:2] == b"\x1f\x8b" and len(gzip.decompress(profile)) > 0
    path = tmp_path / "memory.prof"
    profiler.save_device_memory_profile(path)
    assert gzip.decompress(path.read_bytes())
    del keep
