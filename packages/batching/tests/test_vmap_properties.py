"""Property tests: vmap of generated programs equals stacking the program over slices."""

import numpy as np
from batching_test_prims import (
    BINARY,
    UNARY,
    cumsum_p,
    matmul_p,
    reduce_sum_p,
    sumdiff_p,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.batching import moveaxis, vmap
from modjax.tracecore import eval_jaxpr, make_jaxpr

SETTINGS = settings(max_examples=examples(60), deadline=None)


def _shapes(s):
    return [(), (s,), (1, s), (s, 1), (s, s), (1,)]


@st.composite
def programs(draw):
    """Draw ``(f, arg_shapes)``: a program of test primitives over broadcast-compatible shapes."""
    s = draw(st.sampled_from([2, 3]))
    n_args = draw(st.integers(1, 3))
    arg_shapes = [draw(st.sampled_from(_shapes(s))) for _ in range(n_args)]
    ops = []
    shapes = list(arg_shapes)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(
            st.sampled_from(
                ["unary", "binary", "reduce", "sumdiff", "matmul", "cumsum", "moveaxis"]
            )
        )
        i = draw(st.integers(0, len(shapes) - 1))
        j = draw(st.integers(0, len(shapes) - 1))
        si, sj = shapes[i], shapes[j]
        if kind == "unary":
            ops.append(("unary", draw(st.sampled_from(sorted(UNARY))), i))
            shapes.append(si)
        elif kind == "binary":
            ops.append(("binary", draw(st.sampled_from(sorted(BINARY))), i, j))
            shapes.append(np.broadcast_shapes(si, sj))
        elif kind == "sumdiff":
            ops.append(("sumdiff", i, j))
            shapes += [np.broadcast_shapes(si, sj)] * 2
        elif kind == "reduce":
            axes = tuple(a for a in range(len(si)) if draw(st.booleans()))
            ops.append(("reduce", i, axes))
            shapes.append(tuple(d for a, d in enumerate(si) if a not in axes))
        elif kind == "matmul" and si == (s, s) and sj == (s, s):
            ops.append(("matmul", i, j))
            shapes.append((s, s))
        elif kind == "cumsum" and si:
            ops.append(("cumsum", i, draw(st.integers(0, len(si) - 1))))
            shapes.append(si)
        elif kind == "moveaxis" and len(si) == 2:
            ops.append(("moveaxis", i))
            shapes.append(si[::-1])
    n_out = draw(st.integers(1, 2))
    outs = [len(shapes) - 1] + [draw(st.integers(0, len(shapes) - 1)) for _ in range(n_out - 1)]

    def f(*args):
        env = list(args)
        for op in ops:
            if op[0] == "unary":
                env.append(UNARY[op[1]][0].bind(env[op[2]]))
            elif op[0] == "binary":
                env.append(BINARY[op[1]][0].bind(env[op[2]], env[op[3]]))
            elif op[0] == "sumdiff":
                env += sumdiff_p.bind(env[op[1]], env[op[2]])
            elif op[0] == "reduce":
                env.append(reduce_sum_p.bind(env[op[1]], axes=op[2]))
            elif op[0] == "matmul":
                env.append(matmul_p.bind(env[op[1]], env[op[2]]))
            elif op[0] == "cumsum":
                env.append(cumsum_p.bind(env[op[1]], axis=op[2]))
            elif op[0] == "moveaxis":
                env.append(moveaxis(env[op[1]], 0, 1))
        return tuple(env[k] for k in outs)

    f.__name__ = f"program{ops}->{outs}"
    return f, arg_shapes, [shapes[k] for k in outs]


def _axis(draw, rank):
    """Draw an axis of an array of ``rank`` + 1 dims, negative ones included."""
    return draw(st.integers(-(rank + 1), rank))


def _batched(rng, shape, size, axis):
    x = rng.standard_normal((size, *shape)).astype(np.float32)
    return np.moveaxis(x, 0, axis)


def _stack(results, axes, out_shapes, size):
    outs = []
    for k, (axis, shape) in enumerate(zip(axes, out_shapes, strict=True)):
        if size == 0:
            stacked = np.zeros((0, *shape), np.float32)
        else:
            stacked = np.stack([np.asarray(r[k]) for r in results])
        outs.append(np.moveaxis(stacked, 0, axis))
    return outs


def _check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g = np.asarray(g)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(programs(), st.data())
def test_vmap_equals_stacked_slices(program, data):
    f, arg_shapes, out_shapes = program
    size = data.draw(st.sampled_from([0, 1, 2, 3]), label="size")
    in_axes = [
        data.draw(st.one_of(st.none(), st.builds(lambda a: a, st.integers(-(len(s) + 1), len(s)))))
        for s in arg_shapes
    ]
    if all(a is None for a in in_axes):
        in_axes[0] = 0
    out_axes = tuple(data.draw(st.integers(-(len(s) + 1), len(s))) for s in out_shapes)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    args = [
        rng.standard_normal(s).astype(np.float32) if a is None else _batched(rng, s, size, a)
        for s, a in zip(arg_shapes, in_axes, strict=True)
    ]

    def slice_args(b):
        return [
            x if a is None else np.take(x, b, axis=a) for x, a in zip(args, in_axes, strict=True)
        ]

    want = _stack([f(*slice_args(b)) for b in range(size)], out_axes, out_shapes, size)
    vf = vmap(f, in_axes=tuple(in_axes), out_axes=out_axes)
    _check(vf(*args), want)  # eagerly, rules over numpy values
    closed = make_jaxpr(vf)(*args)  # and staged out into a jaxpr
    _check(eval_jaxpr(closed.jaxpr, closed.consts, *args), want)


@SETTINGS
@given(programs(), st.data())
def test_nested_vmap_equals_double_loop(program, data):
    f, arg_shapes, out_shapes = program
    n_outer = data.draw(st.sampled_from([1, 2, 3]))
    n_inner = data.draw(st.sampled_from([0, 1, 2]))
    # Each argument is mapped by the inner vmap, the outer, both, or neither.
    modes = [data.draw(st.sampled_from(["inner", "outer", "both", "none"])) for _ in arg_shapes]
    if all(m == "none" for m in modes):
        modes[0] = "both"
    if not any(m in ("inner", "both") for m in modes):
        modes[0] = "both"
    if not any(m in ("outer", "both") for m in modes):
        modes[-1] = "both"
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    args, in_inner, in_outer = [], [], []
    for shape, mode in zip(arg_shapes, modes, strict=True):
        full = rng.standard_normal(
            ((n_outer,) if mode in ("outer", "both") else ())
            + ((n_inner,) if mode in ("inner", "both") else ())
            + shape
        ).astype(np.float32)
        inner_axis = None
        if mode in ("inner", "both"):
            inner_axis = data.draw(st.integers(0, len(shape)))
            full = np.moveaxis(
                full, 1 if mode == "both" else 0, (1 if mode == "both" else 0) + inner_axis
            )
        outer_axis = None
        if mode in ("outer", "both"):
            outer_axis = data.draw(st.integers(0, full.ndim - 1))
            full = np.moveaxis(full, 0, outer_axis)
        args.append(full)
        in_inner.append(inner_axis)
        in_outer.append(outer_axis)
    inner_out = tuple(data.draw(st.integers(0, len(s))) for s in out_shapes)
    outer_out = tuple(data.draw(st.integers(0, len(s) + 1)) for s in out_shapes)
    vf = vmap(
        vmap(f, in_axes=tuple(in_inner), out_axes=inner_out),
        in_axes=tuple(in_outer),
        out_axes=outer_out,
    )

    def loop(i, j):
        sl = []
        for x, oa, ia in zip(args, in_outer, in_inner, strict=True):
            if oa is not None:
                x = np.take(x, i, axis=oa)
            if ia is not None:
                x = np.take(x, j, axis=ia)
            sl.append(x)
        return f(*sl)

    want = []
    for k, shape in enumerate(out_shapes):
        grid = np.zeros((n_outer, n_inner, *shape), np.float32)
        for i in range(n_outer):
            for j in range(n_inner):
                grid[i, j] = np.asarray(loop(i, j)[k])
        inner = np.moveaxis(grid, 1, 1 + inner_out[k])
        want.append(np.moveaxis(inner, 0, outer_out[k]))
    _check(vf(*args), want)
    closed = make_jaxpr(vf)(*args)
    _check(eval_jaxpr(closed.jaxpr, closed.consts, *args), want)
