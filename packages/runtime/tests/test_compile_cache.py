import logging

import numpy as np
import pytest
from runtime_test_prims import add, mul, sin
from test_backends import run_python

from modjax import runtime as R
from modjax.runtime import compile_cache
from modjax.tracecore.config import config

pytestmark = pytest.mark.usefixtures("runtime_operators")


@pytest.fixture
def cache_dir(tmp_path):
    """A persistent cache folder for one test, with the in-memory caches emptied."""
    config.update("compilation_cache_dir", str(tmp_path))
    R.clear_caches()
    try:
        yield tmp_path
    finally:
        config.update("compilation_cache_dir", None)
        R.clear_caches()


def entries(folder):
    return sorted(p for p in folder.iterdir() if p.suffix == ".xla")


def test_memory_then_disk(cache_dir):
    stats = compile_cache.stats
    f = R.jit(lambda x: mul(sin(x), 3.0))
    x = R.device_put(np.arange(4.0, dtype=np.float32))
    expected = np.asarray(f(x))
    assert len(entries(cache_dir)) == 1
    g = R.jit(lambda x: mul(sin(x), 3.0))  # the same program from another function
    hits = stats["memory_hits"]
    np.testing.assert_array_equal(np.asarray(g(x)), expected)
    assert stats["memory_hits"] == hits + 1
    R.clear_caches()  # memory gone: the disk entry serves
    disk_hits = stats["disk_hits"]
    h = R.jit(lambda x: mul(sin(x), 3.0))
    np.testing.assert_array_equal(np.asarray(h(x)), expected)
    assert stats["disk_hits"] == disk_hits + 1


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip", "empty"])
def test_corrupt_entries_are_ignored_and_rewritten(cache_dir, damage, caplog):
    f = R.jit(lambda x: add(x, 1.0))
    x = R.device_put(np.ones(3, np.float32))
    f(x)
    (path,) = entries(cache_dir)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not an executable at all" * 10)
    elif damage == "flip":
        path.write_bytes(data[:-10] + bytes(b ^ 0xFF for b in data[-10:]))
    else:
        path.write_bytes(b"")
    R.clear_caches()
    compiles = compile_cache.stats["compiles"]
    with caplog.at_level(logging.WARNING, logger="modjax.runtime.compile_cache"):
        assert R.jit(lambda x: add(x, 1.0))(x).tolist() == [2.0, 2.0, 2.0]
    assert compile_cache.stats["compiles"] == compiles + 1
    assert "ignoring corrupt entry" in caplog.text
    assert compile_cache._read_entry(path) is not None  # rewritten whole
    R.clear_caches()
    hits = compile_cache.stats["disk_hits"]
    R.jit(lambda x: add(x, 1.0))(x)
    assert compile_cache.stats["disk_hits"] == hits + 1


def test_unreadable_payload_is_recompiled(cache_dir, monkeypatch):
    # An entry whose checksum is right but that the client refuses (another jaxlib, say).
    f = R.jit(lambda x: add(x, 2.0))
    x = R.device_put(np.ones(2, np.float32))
    f(x)
    (path,) = entries(cache_dir)
    compile_cache._write_entry(path, b"\x00" * 64)
    R.clear_caches()
    errors = compile_cache.stats["disk_errors"]
    assert R.jit(lambda x: add(x, 2.0))(x).tolist() == [3.0, 3.0]
    assert compile_cache.stats["disk_errors"] == errors + 1
    assert compile_cache._read_entry(path) != b"\x00" * 64


def test_no_temporary_files_are_left(cache_dir):
    R.jit(lambda x: mul(x, x))(R.device_put(np.ones(2, np.float32)))
    assert all(p.suffix == ".xla" for p in cache_dir.iterdir())


def test_modules_with_objects_kept_alive_by_address_are_never_cached(cache_dir):
    # Such a module names a live object by its address; once that object dies a later
    # program may reuse the address, so equal text does not mean the same program.
    lowered = R.jit(lambda x: mul(x, 2.0)).lower(np.ones(2, np.float32))._module
    lowered.keepalive = (object(),)
    sources = [
        compile_cache.compile_or_get_cached(lowered, R.devices()[:1], with_info=True).source
        for _ in range(2)
    ]
    assert sources == ["compiled", "compiled"]
    assert entries(cache_dir) == []


def test_memory_keeps_the_most_recently_used_executables(monkeypatch):
    # A process may map only so much machine code, so old executables must go.
    monkeypatch.setattr(compile_cache, "_MEMORY_LIMIT", 2)
    R.clear_caches()
    device = R.devices()[:1]
    modules = [
        R.jit(lambda x, c=c: mul(x, c)).lower(np.ones(2, np.float32))._module
        for c in (2.0, 3.0, 4.0)
    ]

    def source(module):
        return compile_cache.compile_or_get_cached(module, device, with_info=True).source

    try:
        assert [source(m) for m in modules[:2]] == ["compiled", "compiled"]
        assert source(modules[0]) == "memory"  # now the most recent of the two
        assert source(modules[2]) == "compiled"  # evicts modules[1]
        assert len(compile_cache._memory) == 2
        assert [source(modules[1]), source(modules[0])] == ["compiled", "compiled"]
    finally:
        R.clear_caches()


def test_cache_key_parts():
    client = R.get_backend()
    options = compile_cache.compile_options_for(R.devices())
    key = compile_cache.cache_key("module {}", options, client)
    assert len(key) == 64 and key == compile_cache.cache_key("module {}", options, client)
    assert key != compile_cache.cache_key("module { }", options, client)
    other = compile_cache.compile_options_for(R.devices())
    other.executable_build_options.num_replicas = 1
    other.num_replicas = 2
    assert key != compile_cache.cache_key("module {}", other, client)


def test_persistent_cache_survives_a_new_process(tmp_path):
    code = """
        import numpy as np
        from modjax import runtime as R
        from modjax.runtime import compile_cache
        import runtime_test_prims as P
        f = R.jit(lambda x: P.mul(P.sin(x), x))
        print(f(R.device_put(np.arange(3.0, dtype=np.float32))).tolist())
        print(compile_cache.stats["compiles"], compile_cache.stats["disk_hits"])
    """
    env = {"MODJAX_COMPILATION_CACHE_DIR": str(tmp_path)}
    first = run_python(code, **env)
    assert first.returncode == 0, first.stderr
    second = run_python(code, **env)
    assert second.returncode == 0, second.stderr
    values, counts = first.stdout.splitlines()[:2]
    assert second.stdout.splitlines()[0] == values
    assert counts == "1 0" and second.stdout.splitlines()[1] == "0 1"


# --- log_compiles -------------------------------------------------------------------------


@pytest.fixture
def compile_log(caplog):
    config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="modjax.runtime"):
            yield caplog
    finally:
        config.update("log_compiles", False)


def test_log_compiles_says_why(compile_log):
    def my_step(x, y, n):
        return mul(add(x, y), float(n))

    f = R.jit(my_step, static_argnums=2)
    f(np.ones(3, np.float32), 1.0, 2)
    f(np.ones(3, np.float32), 2.0, 2)  # a hit: no message
    f(np.ones(4, np.float32), 1.0, 2)
    f(np.ones(4, np.int32), 1.0, 2)
    f(np.ones(4, np.int32), np.float32(1.0), 2)
    f(np.ones(4, np.int32), np.float32(1.0), 3)
    messages = [r.getMessage() for r in compile_log.records if "jit(my_step)" in r.getMessage()]
    assert len(messages) == 5
    assert "Compiling jit(my_step) (cause: first call)" in messages[0]
    assert "argument x changed shape from float32[3] to float32[4]" in messages[1]
    assert "argument x changed dtype from float32 to int32" in messages[2]
    assert "argument y changed weak type from True to False" in messages[3]
    assert "static argument at position 2 changed from 2 to 3" in messages[4]
    assert all(" ms" in m for m in messages)


def test_log_compiles_of_eager_ops(compile_log):
    sin(R.device_put(np.ones(7, np.float16)))
    assert any("Compiling rt_sin for float16[7]" in r.getMessage() for r in compile_log.records)


def test_log_compiles_from_the_environment(tmp_path):
    result = run_python(
        """
        import numpy as np
        from modjax import runtime as R
        import runtime_test_prims as P
        R.jit(lambda x: P.sin(x))(R.device_put(np.ones(2, np.float32)))
        """,
        MODJAX_LOG_COMPILES="1",
    )
    assert result.returncode == 0, result.stderr
    assert "Compiling jit(<lambda>) (cause: first call)" in result.stderr
