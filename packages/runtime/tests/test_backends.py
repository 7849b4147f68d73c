import os
import subprocess
import sys
import textwrap

import pytest

from modjax.runtime import backends
from modjax.tracecore.config import config

pytestmark = pytest.mark.usefixtures("runtime_operators")

# A child interpreter sees what this one sees (an installed wheel or source folders),
# plus this folder for the test primitives.
PYTHONPATH = os.pathsep.join([os.path.dirname(__file__), *(p for p in sys.path if p)])


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with the three packages importable."""
    full_env = {**os.environ, "PYTHONPATH": PYTHONPATH, **env}
    full_env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cpu_backend_and_devices():
    client = backends.get_backend("cpu")
    assert backends.get_backend() is client
    assert backends.get_backend("cpu") is client
    assert backends.default_backend() == "cpu"
    devices = backends.devices()
    assert devices == client.devices()
    assert backends.device_count() == len(devices) == backends.local_device_count()
    assert backends.local_devices() == devices
    assert backends.default_device() == devices[0]
    assert backends.process_index() == 0
    assert backends.process_count() == 1


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(
        RuntimeError, match=r"Unknown backend tpu. Available backends are \['cpu'\]"
    ):
        backends.get_backend("tpu")


def test_plugin_registry():
    def broken():
        raise OSError("no such accelerator")

    saved = dict(backends._factories)
    try:
        backends.register_backend_factory("fake_gpu", broken, priority=100, fail_quietly=True)
        with pytest.raises(RuntimeError, match="no such accelerator"):
            backends.get_backend("fake_gpu")
        # A failed plugin never takes the CPU backend down.
        assert backends.get_backend("cpu").platform == "cpu"
        backends.register_backend_factory("other_cpu", backends._make_cpu_client)
        assert backends.get_backend("other_cpu") is not backends.get_backend("cpu")
    finally:
        backends._factories.clear()
        backends._factories.update(saved)
        backends._backends.pop("other_cpu", None)
        backends._failed.pop("fake_gpu", None)


def test_local_devices_takes_the_old_host_id_name_with_a_warning():
    with pytest.warns(UserWarning, match="renamed from `host_id` to `process_index`"):
        assert backends.local_devices(host_id=0) == backends.local_devices(0)
    assert backends.local_devices(None, "cpu", None) == backends.devices()


def test_num_cpu_devices_cannot_change_after_creation():
    backends.get_backend("cpu")
    with pytest.raises(RuntimeError, match="before the CPU backend is created"):
        config.update("num_cpu_devices", 7)
    assert config.num_cpu_devices == -1  # JAX's default: one device unless XLA_FLAGS says more


def test_xla_flags_set_the_default_cpu_device_count():
    # JAX users' usual way to get several CPU devices; an explicit count wins over it.
    code = "from modjax import runtime as R; print(R.device_count())"
    flags = "--xla_force_host_platform_device_count=3"
    assert run_python(code, XLA_FLAGS=flags).stdout.split() == ["3"]
    assert run_python(code, XLA_FLAGS=flags, MODJAX_NUM_CPU_DEVICES="2").stdout.split() == ["2"]


def test_several_cpu_devices_in_a_fresh_process():
    result = run_python(
        """
        import numpy as np
        from modjax import runtime as R
        import runtime_test_prims as P

        devs = R.devices()
        print(len(devs), R.device_count())
        x = R.device_put(np.arange(3.0, dtype=np.float32), devs[2])
        print(x.devices() == {devs[2]}, x.committed)
        f = R.jit(lambda a: P.add(a, a))
        y = f(x)
        print(y.devices() == {devs[2]}, y.committed, y.tolist())
        z = R.device_put(np.ones(3, np.float32))
        print(f(z).devices() == {devs[0]}, f(z).committed)
        # an uncommitted argument follows a committed one to its device
        g = R.jit(lambda a, b: P.add(a, b))
        print(g(x, z).devices() == {devs[2]})
        try:
            g(x, R.device_put(z, devs[1]))
        except ValueError as e:
            print("ValueError", "incompatible devices" in str(e))
        w = R.device_put(x, devs[3])
        print(w.devices() == {devs[3]}, w.tolist(), P.sin(w).devices() == {devs[3]})
        v = R.device_put(w, devs[1], donate=True)
        print(w.is_deleted(), v.tolist())
        # jit(device=) moves every argument to its device, committed ones too (as JAX)
        import warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        pinned = R.jit(lambda a, b: P.add(a, b), device=devs[3])
        u = pinned(v, b=R.device_put(np.ones(3, np.float32), devs[2]))
        print(u.devices() == {devs[3]}, u.committed, u.tolist())
        # an argument committed elsewhere may not meet in_shardings on another device
        S = R.SingleDeviceSharding
        for ins in [(S(devs[1]), None), (S(devs[1]), S(devs[2]))]:
            try:
                R.jit(lambda a, b: P.add(a, b), in_shardings=ins)(v, x)
            except ValueError as e:
                print("ValueError", "incompatible devices" in str(e))
        """,
        MODJAX_NUM_CPU_DEVICES="4",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:11] == [
        "4 4",
        "True True",
        "True True [0.0, 2.0, 4.0]",
        "True False",
        "True",
        "ValueError True",
        "True [0.0, 1.0, 2.0] True",
        "True [0.0, 1.0, 2.0]",
        "True True [1.0, 2.0, 3.0]",
        "ValueError True",
        "ValueError True",
    ]
    # The client's INFO lines about its devices are not printed.
    assert "PjRt" not in result.stderr and "CpuDevice" not in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"local_device_ids": [0]}, "local_device_ids"),
        ({"slice_index": 0}, "slice_index"),
        ({"partition_index": 0}, "partition_index"),
        ({"cluster_detection_method": "mpi4py"}, "cluster auto-detection"),
    ],
)
def test_distributed_initialize_refuses_what_it_does_not_support(kwargs, named):
    from modjax.runtime import distributed

    with pytest.raises(NotImplementedError, match=named):
        distributed.initialize("localhost:1234", 1, 0, **kwargs)
    assert not distributed.is_initialized()
