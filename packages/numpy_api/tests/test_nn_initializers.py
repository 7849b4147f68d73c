"""modjax.nn.initializers against JAX 0.10.2's outputs (same keys, same bits), fans and errors."""

import numpy as np
import pytest
from random_reference import MACHINE_DEPENDENT_ULPS, TABLE, assert_matches, case_id, x64

from modjax import random
from modjax.nn import initializers


@pytest.mark.parametrize("case", TABLE["initializers"], ids=case_id)
def test_known_answers(case):
    with x64(case["x64"]):
        kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
        factory = getattr(initializers, case["init"])
        init = factory if case["init"] in ("zeros", "ones") else factory(**kwargs)
        assert isinstance(init, initializers.Initializer)
        out = init(random.key(case["seed"]), tuple(case["shape"]), np.dtype(case["dtype"]))
        assert_matches(out, case["expected"], MACHINE_DEPENDENT_ULPS.get(case["init"], 0))


def test_fans():
    assert initializers._compute_fans((3, 3, 4, 6)) == (36.0, 54.0)
    assert initializers._compute_fans((2, 4, 6), in_axis=1, out_axis=2, batch_axis=0) == (4.0, 6.0)
    with pytest.raises(ValueError, match="Can't compute input and output sizes of a 1-dimensional"):
        initializers.glorot_uniform()(random.key(0), (4,))


def test_errors():
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer: x"):
        initializers.variance_scaling(1.0, "x", "normal")(random.key(0), (2, 2))
    with pytest.raises(ValueError, match="invalid distribution for variance scaling initializer"):
        initializers.variance_scaling(1.0, "fan_in", "x")(random.key(0), (2, 2))
    with pytest.raises(ValueError, match="orthogonal initializer requires at least a 2D shape"):
        initializers.orthogonal()(random.key(0), (3,))
    with pytest.raises(ValueError, match="Delta orthogonal initializer requires a 3D, 4D or 5D"):
        initializers.delta_orthogonal()(random.key(0), (3, 3))
    with pytest.raises(ValueError, match="`fan_in` must be less or equal than `fan_out`"):
        initializers.delta_orthogonal()(random.key(0), (3, 4, 2))


def test_aliases():
    assert initializers.xavier_uniform is initializers.glorot_uniform
    assert initializers.kaiming_normal is initializers.he_normal
