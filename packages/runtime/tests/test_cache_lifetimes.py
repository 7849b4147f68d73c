"""Caches hold user functions weakly: a dropped jit wrapper frees its function and closure.

A fresh ``jit`` wrapper per call (``jit(lambda a, c=c: a + c)(x)`` in a loop)
is common in user code and libraries; the compiled entries of each must go
with the function, as JAX's do, so the process' memory stays flat.
"""

import gc
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest
from runtime_test_prims import add, mul

from modjax import runtime as R
from modjax.runtime import cpp_dispatch
from modjax.runtime.jit import clear_caches

pytestmark = pytest.mark.usefixtures("runtime_operators")


@pytest.fixture(params=["cpp", "python"])
def dispatch_mode(request):
    with cpp_dispatch.cpp_dispatch(request.param == "cpp"):
        yield request.param


class Payload:
    """Something only a closure holds; its weakref says whether the closure lives."""

    def __init__(self):
        self.value = R.device_put(np.full(3, 2.0, np.float32))


def _alive(refs) -> int:
    gc.collect()
    return sum(r() is not None for r in refs)


CALLS = {
    "default_arg": lambda x, p: R.jit(lambda a, p=p: add(a, a))(x),
    "closure_const": lambda x, p: R.jit(lambda a: mul(a, p.value))(x),
    "static_arg": lambda x, p: R.jit(lambda a, n: mul(a, p.value), static_argnums=1)(x, 3.0),
    "keyword": lambda x, p: R.jit(lambda a: add(a, p.value))(a=x),
    "pytree": lambda x, p: R.jit(lambda t: add(t["a"], p.value))({"a": x}),
}


@pytest.mark.parametrize("pattern", sorted(CALLS))
def test_closures_of_dropped_wrappers_are_freed(pattern, dispatch_mode):
    x = R.device_put(np.ones(3, np.float32))
    call = CALLS[pattern]
    refs = []
    for _ in range(6):
        payload = Payload()
        refs.append(weakref.ref(payload))
        call(x, payload)  # called twice: the second call takes the fast path
        call(x, payload)
        del payload
    # JAX keeps none either (the last call's cache-miss frame may linger in a traceback).
    assert _alive(refs[:-1]) == 0


def test_clear_caches_frees_closures_of_live_signatures(dispatch_mode):
    x = R.device_put(np.ones(3, np.float32))
    payload = Payload()
    ref = weakref.ref(payload)
    f = R.jit(lambda a, p=payload: mul(a, p.value))
    np.testing.assert_allclose(np.asarray(f(x)), 2.0)
    del payload
    clear_caches()
    assert _alive([ref]) == 1  # the function itself still holds it
    del f
    assert _alive([ref]) == 0


_RSS_SCRIPT = textwrap.dedent(
    """
    import gc, sys
    sys.path.insert(0, {tests!r})
    import numpy as np
    from runtime_test_prims import add
    from modjax import runtime as R

    x = R.device_put(np.ones(3, np.float32))

    def rss_mb():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 1e6

    def fresh_wrappers(n):
        for _ in range(n):
            payload = np.ones(25_000)  # 200 KB that only the wrapped function holds
            R.jit(lambda a, p=payload: add(a, a))(x)

    fresh_wrappers(100)
    gc.collect()
    before = rss_mb()
    fresh_wrappers({n})
    gc.collect()
    print(rss_mb() - before)
    """
)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc")
def test_memory_stays_flat_over_fresh_wrappers():
    # The C++ fast path (the default), whose process-wide cache outlives wrappers.
    # 10,000 wrappers holding 200 KB each (about 15 s): a leak grows the process by
    # about 2 GB, and the bounded caches must not grow it either.
    n = 10_000
    script = _RSS_SCRIPT.format(tests=os.path.dirname(__file__), n=n)
    env = {**os.environ, "MODJAX_CPP_DISPATCH": "1"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    growth_mb = float(out.stdout.strip().splitlines()[-1])
    assert growth_mb < 25, f"{n} dropped jit wrappers grew the process by {growth_mb:.0f} MB"
