"""batching's own primitives and the rule factories, checked exhaustively on small cases."""

import itertools

import numpy as np
import pytest
from batching_test_prims import add_p, count_eqns, cumsum_p, ladd_p, reduce_sum_p, sumdiff_p

from modjax.batching import (
    batch_jaxpr,
    bdim_at_front,
    broadcast,
    broadcast_batch_p,
    expand_dims,
    expand_dims_p,
    iota,
    matchaxis,
    moveaxis,
    moveaxis_p,
    shift_axes,
    squeeze,
    vmap,
)
from modjax.tracecore import make_jaxpr

RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _check_vmap(f, ref, x, in_axis):
    """``vmap(f, in_axis)(x)`` must equal ``ref`` applied slice by slice, stacked on axis 0."""
    got = vmap(f, in_axes=in_axis)(x)
    want = np.stack([ref(np.take(x, b, axis=in_axis)) for b in range(x.shape[in_axis])])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_moveaxis_rule_every_position(ndim):
    shape = (2, 3, 4)[:ndim]
    for bdim, src, dst in itertools.product(range(ndim + 1), range(ndim), range(ndim)):
        x = np.moveaxis(_rand(5, *shape), 0, bdim)

        def f(v, s=src, d=dst):
            return moveaxis(v, s, d)

        _check_vmap(f, lambda v, s=src, d=dst: np.moveaxis(v, s, d), x, bdim)
        # Batched, a move stays a single move (or none), wherever the batch axis is.
        batched, _ = batch_jaxpr(make_jaxpr(f)(_rand(*shape)), 5, [bdim])
        assert count_eqns(batched, moveaxis_p) <= 1


def test_moveaxis_helper_binds_nothing_when_axis_stays():
    closed = make_jaxpr(lambda v: moveaxis(v, -1, 1))(_rand(2, 3))
    assert not closed.eqns
    with pytest.raises(ValueError, match="out of bounds"):
        moveaxis(_rand(2, 3), 2, 0)


@pytest.mark.parametrize("ndim", [0, 1, 2])
def test_broadcast_expand_squeeze_rules(ndim):
    shape = (2, 3)[:ndim]
    for bdim in range(ndim + 1):
        x = np.moveaxis(_rand(4, *shape), 0, bdim)
        for axis in range(ndim + 1):
            _check_vmap(
                lambda v, a=axis: broadcast(v, 3, a),
                lambda v, a=axis: np.repeat(np.expand_dims(v, a), 3, axis=a),
                x,
                bdim,
            )
        for k in (1, 2):
            for dims in itertools.combinations(range(ndim + k), k):
                _check_vmap(
                    lambda v, ds=dims: expand_dims(v, ds),
                    lambda v, ds=dims: np.expand_dims(v, ds),
                    x,
                    bdim,
                )
                _check_vmap(
                    lambda v, ds=dims: squeeze(expand_dims(v, ds), ds), lambda v: v, x, bdim
                )


def test_helpers_for_rule_authors():
    x = _rand(2, 3)
    assert np.asarray(bdim_at_front(x, 1, 3)).shape == (3, 2)
    assert np.asarray(bdim_at_front(x, None, 4)).shape == (4, 2, 3)
    assert matchaxis(5, 1, 1, x) is x
    assert np.asarray(matchaxis(5, None, -1, x)).shape == (2, 3, 5)
    assert np.asarray(matchaxis(5, 0, 1, x)).shape == (3, 2)
    with pytest.raises(ValueError, match="unbatched"):
        matchaxis(5, 0, None, x)
    assert shift_axes((0, 2), 1) == (0, 3) and shift_axes(1, 1) == 2 and shift_axes(0, 1) == 0
    np.testing.assert_array_equal(iota(4), np.arange(4, dtype=np.int32))


def _broadcast_cases(max_rank=2):
    """Yield (logical shapes, batch dims) for two operands of a broadcasting primitive."""
    shapes = [(), (3,), (1, 3), (2, 3), (2, 1)]
    for sa, sb in itertools.product(shapes, repeat=2):
        if len(sa) > max_rank or len(sb) > max_rank:
            continue
        for da in [None, *range(len(sa) + 1)]:
            for db in [None, *range(len(sb) + 1)]:
                if da is None and db is None:
                    continue
                yield sa, sb, da, db


def _operands(sa, sb, da, db, n=4):
    a = _rand(*sa) if da is None else np.moveaxis(_rand(n, *sa), 0, da)
    b = _rand(*sb) if db is None else np.moveaxis(_rand(n, *sb), 0, db)
    return a, b


def test_rank_polymorphic_broadcasting_rule():
    for sa, sb, da, db in _broadcast_cases():
        a, b = _operands(sa, sb, da, db)
        vf = vmap(add_p.bind, in_axes=(da, db))
        got = vf(a, b)
        n = 4
        want = np.stack(
            [
                (a if da is None else np.take(a, i, da)) + (b if db is None else np.take(b, i, db))
                for i in range(n)
            ]
        )
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str((sa, sb, da, db)))
        closed = make_jaxpr(vf)(a, b)
        # Unbatched operands are never materialized at the batch size.
        assert count_eqns(closed, broadcast_batch_p) == 0
        # At most one operand moves: the batch axis goes where one of them has it.
        assert count_eqns(closed, moveaxis_p) <= 2  # one for the operand, one for out_axes


def test_lax_style_broadcasting_rule_keeps_ranks_equal():
    shapes = [(), (2, 3), (1, 3), (2, 1)]
    for sa, sb in itertools.product(shapes, repeat=2):
        if sa and sb and len(sa) != len(sb):
            continue
        for da in [None, *range(len(sa) + 1)]:
            for db in [None, *range(len(sb) + 1)]:
                if da is None and db is None:
                    continue
                a, b = _operands(sa, sb, da, db)
                got = vmap(ladd_p.bind, in_axes=(da, db))(a, b)  # ladd_p rejects unequal ranks
                want = np.stack(
                    [
                        (a if da is None else np.take(a, i, da))
                        + (b if db is None else np.take(b, i, db))
                        for i in range(4)
                    ]
                )
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_broadcasting_rule_is_jaxs():
    a, b = _rand(2, 4, 3), _rand(2, 4, 3)
    # A batch dim shared by every operand stays in place.
    closed = make_jaxpr(vmap(add_p.bind, in_axes=1, out_axes=1))(a, b)
    assert [e.primitive for e in closed.eqns] == [add_p]
    # Otherwise, as JAX's broadcast_batcher: the batch dims move to the front, an unbatched
    # operand gets a leading size-1 axis, and the result is batched at 0 (here moved back).
    closed = make_jaxpr(vmap(ladd_p.bind, in_axes=(1, None), out_axes=1))(a, _rand(2, 3))
    prims = [e.primitive for e in closed.eqns]
    assert prims == [moveaxis_p, expand_dims_p, ladd_p, moveaxis_p]
    assert closed.eqns[1].params["dimensions"] == (0,)


def test_multiple_results_broadcasting():
    a, b = _rand(4, 3), _rand(3)
    s, d = vmap(lambda x, y: tuple(sumdiff_p.bind(x, y)), in_axes=(0, None))(a, b)
    np.testing.assert_allclose(s, a + b, rtol=1e-6)
    np.testing.assert_allclose(d, a - b, rtol=1e-6)


def test_reducer_rules():
    x = _rand(2, 3, 4)
    for bdim in range(3):
        for axes in [(), (0,), (1,), (0, 1)]:
            _check_vmap(
                lambda v, a=axes: reduce_sum_p.bind(v, axes=a),
                lambda v, a=axes: v.sum(axis=a),
                x,
                bdim,
            )
        for axis in range(2):
            _check_vmap(
                lambda v, a=axis: cumsum_p.bind(v, axis=a),
                lambda v, a=axis: np.cumsum(v, axis=a),
                x,
                bdim,
            )
    # The reduction happens in place: no transposes.
    closed = make_jaxpr(vmap(lambda v: reduce_sum_p.bind(v, axes=(0,)), in_axes=2, out_axes=1))(x)
    assert [e.primitive for e in closed.eqns] == [reduce_sum_p]
