"""``modjax.experimental.pallas`` (Pallas kernels in interpret mode), checked against JAX 0.10.2.

The programs are JAX's own idioms: the quickstart's blocked vector add, a tiled
matmul accumulating over a reduction grid axis, masked loads and stores with
``pl.ds`` over a size the block does not divide, grid indices written into
outputs, several outputs, input/output aliasing. Literal expected values were
recorded by running the same programs with JAX 0.10.2 (interpret mode, CPU).
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental import pallas as pl

# --- programs ---------------------------------------------------------------------------------


def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


@jax.jit
def add_vectors(x, y):
    """The quickstart's vector add, over blocks of 4."""
    spec = pl.BlockSpec((4,), lambda i: (i,))
    return pl.pallas_call(
        add_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // 4,),
        in_specs=[spec, spec],
        out_specs=spec,
        interpret=True,
    )(x, y)


def matmul_kernel(a_ref, b_ref, o_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += a_ref[...] @ b_ref[...]


def matmul(a, b, bm=4, bk=4, bn=8):
    """A tiled matmul; grid axis 2 runs over the contraction, accumulating into o."""
    m, k = a.shape
    _, n = b.shape
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), a.dtype),
        grid_spec=pl.GridSpec(
            grid=(m // bm, n // bn, k // bk),
            in_specs=[
                pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
            ],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        ),
        interpret=True,
    )(a, b)


matmul_jit = jax.jit(matmul)


def masked_kernel(x_ref, o_ref):
    i = pl.program_id(0)
    idx = i * 4 + jnp.arange(4)
    mask = idx < x_ref.shape[0]
    x = pl.load(x_ref, (pl.ds(i * 4, 4),), mask=mask, other=-1.0)
    pl.store(o_ref, (pl.ds(i * 4, 4),), x * 2 + 1, mask=mask)


@jax.jit
def masked_double(x):
    """Whole-array refs, windows of 4 over a size-10 vector, masked at the end."""
    return pl.pallas_call(
        masked_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(pl.cdiv(x.shape[0], 4),),
        interpret=True,
    )(x)


def masked_load_only(x):
    """Reads past the end: masked-off elements give ``other``, unmasked ones NaN."""

    def kernel(x_ref, o_ref, p_ref):
        start = pl.program_id(0) + 6  # traced: a static window past the end is an error
        o_ref[...] = pl.load(x_ref, pl.ds(start, 8), mask=jnp.arange(8) < 2, other=0.0)
        p_ref[...] = pl.load(x_ref, pl.ds(start, 8))

    s = jax.ShapeDtypeStruct((8,), x.dtype)
    return pl.pallas_call(kernel, out_shape=(s, s), grid=(1,), interpret=True)(x)


def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def blocked_double(x):
    """Blocks of 4 over a size-10 vector: reads past the end see padding, writes drop."""
    spec = pl.BlockSpec((4,), lambda i: (i,))
    return pl.pallas_call(
        double_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(3,),
        in_specs=[spec],
        out_specs=spec,
        interpret=True,
    )(x)


def ids_kernel(o_ref, row_ref):
    v = pl.program_id(0) * 10 + pl.program_id(1) + 100 * pl.num_programs(0)
    o_ref[...] = v + 1000 * pl.num_programs(1)
    row_ref[...] = jnp.full(row_ref.shape, pl.program_id(1), jnp.int32)


def grid_ids():
    """program_id/num_programs written into a (2, 3) output, squeezed blocks."""
    return pl.pallas_call(
        ids_kernel,
        out_shape=(
            jax.ShapeDtypeStruct((2, 3), jnp.int32),
            jax.ShapeDtypeStruct((3, 4), jnp.int32),
        ),
        grid=(2, 3),
        out_specs=(
            pl.BlockSpec((None, pl.Squeezed()), lambda i, j: (i, j)),
            pl.BlockSpec((None, 4), lambda i, j: (j, 0)),
        ),
        interpret=True,
    )()


def stats_kernel(x_ref, out):
    x = x_ref[...]
    out["sum"][...] = jnp.sum(x, axis=1)
    out["max"][...] = jnp.max(x, axis=1)


def row_stats(x):
    """A dict of outputs, one row of x per grid step."""
    n = x.shape[0]
    return pl.pallas_call(
        stats_kernel,
        out_shape={
            "sum": jax.ShapeDtypeStruct((n,), x.dtype),
            "max": jax.ShapeDtypeStruct((n,), x.dtype),
        },
        grid=(n,),
        in_specs=[pl.BlockSpec((1, x.shape[1]), lambda i: (i, 0))],
        out_specs={
            "sum": pl.BlockSpec((1,), lambda i: (i,)),
            "max": pl.BlockSpec((1,), lambda i: (i,)),
        },
        interpret=True,
    )(x)


def scale_kernel(s_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] * s_ref[0]


def aliased_scale(s, x):
    """Output 0 aliases input 1; the kernel writes blocks 0 and 2 only."""
    return pl.pallas_call(
        scale_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(2,),
        in_specs=[pl.BlockSpec((1,), lambda i: (0,)), pl.BlockSpec((4,), lambda i: (2 * i,))],
        out_specs=pl.BlockSpec((4,), lambda i: (2 * i,)),
        input_output_aliases={1: 0},
        interpret=True,
    )(s, x)


X16 = np.arange(16, dtype=np.float32)
X10 = np.arange(10, dtype=np.float32)
A = (np.arange(96, dtype=np.float32).reshape(8, 12) % 7) - 3
B = (np.arange(192, dtype=np.float32).reshape(12, 16) % 5) - 2

# --- tests ------------------------------------------------------------------------------------


def test_vector_add_over_blocks():
    np.testing.assert_array_equal(add_vectors(X16, 2 * X16), 3 * X16)


def test_tiled_matmul_accumulates_over_the_reduction_axis():
    want = A @ B
    np.testing.assert_allclose(matmul(A, B), want, rtol=1e-6)
    np.testing.assert_allclose(matmul_jit(A, B), want, rtol=1e-6)
    # JAX 0.10.2's answer: the sum of the product, and its first row.
    assert float(jnp.sum(matmul_jit(A, B))) == -2.0
    np.testing.assert_array_equal(
        matmul_jit(A, B)[0], [-2, -7, -2, 13, -2, -2, -7, -2, 13, -2, -2, -7, -2, 13, -2, -2]
    )


def test_masked_load_and_store_with_ds():
    # JAX 0.10.2's answer.
    np.testing.assert_array_equal(
        masked_double(X10), [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0, 17.0, 19.0]
    )
    got, raw = masked_load_only(X10)
    # JAX 0.10.2's answer: the window does not move back inside; past the end is NaN.
    np.testing.assert_array_equal(got, [6.0, 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(raw, [6.0, 7.0, 8.0, 9.0] + [np.nan] * 4)


def test_blocks_past_the_end_pad_reads_and_drop_writes():
    # JAX 0.10.2's answers: padding reads as NaN and outputs start as NaN.
    np.testing.assert_array_equal(blocked_double(X10), 2 * X10)

    def first_only(x_ref, o_ref):
        o_ref[0] = x_ref[0]

    out = pl.pallas_call(
        first_only, out_shape=jax.ShapeDtypeStruct((3,), jnp.int32), interpret=True
    )
    assert out(jnp.ones(3, jnp.int32)).tolist() == [1, -2147483648, -2147483648]
    spec = pl.BlockSpec((4,), lambda i: (i + 5,))  # a start past the end moves back inside
    clamp = pl.pallas_call(
        double_kernel,
        out_shape=jax.ShapeDtypeStruct((8,), jnp.float32),
        grid=(1,),
        in_specs=[spec],
        out_specs=pl.BlockSpec((4,), lambda i: (i,)),
        interpret=True,
    )
    np.testing.assert_array_equal(clamp(X16[:8]), [8.0, 10.0, 12.0, 14.0] + [np.nan] * 4)


def test_program_id_and_num_programs():
    ids, rows = grid_ids()
    # JAX 0.10.2's answer.
    assert ids.tolist() == [[3200, 3201, 3202], [3210, 3211, 3212]]
    assert rows.tolist() == [[0] * 4, [1] * 4, [2] * 4]
    with pytest.raises(AssertionError):
        pl.program_id(0)  # outside a kernel, as JAX


def test_several_outputs_as_a_pytree():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4) % 5
    got = row_stats(x)
    assert sorted(got) == ["max", "sum"]
    np.testing.assert_array_equal(got["sum"], x.sum(1))
    np.testing.assert_array_equal(got["max"], x.max(1))


def test_input_output_aliases():
    # JAX 0.10.2's answer: blocks 1 and 3 keep the aliased input.
    got = jax.jit(aliased_scale)(jnp.array([10.0]), X16)
    want = [0, 10, 20, 30, 4, 5, 6, 7, 80, 90, 100, 110, 12, 13, 14, 15]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(aliased_scale(jnp.array([10.0]), X16), want)


def test_jit_equals_eager():
    np.testing.assert_array_equal(jax.jit(blocked_double)(X10), blocked_double(X10))
    np.testing.assert_array_equal(jax.jit(grid_ids)()[0], grid_ids()[0])


def test_vmap_equals_a_loop():
    xs = np.stack([X16, X16[::-1], X16 * 3])
    got = jax.vmap(add_vectors)(xs, xs + 1)
    np.testing.assert_array_equal(got, np.stack([add_vectors(x, x + 1) for x in xs]))
    As = np.stack([A, -A])
    got = jax.jit(jax.vmap(matmul, in_axes=(0, None)))(As, B)
    np.testing.assert_allclose(got, np.stack([a @ B for a in As]), rtol=1e-6)
    got = jax.vmap(masked_double)(np.stack([X10, -X10]))
    np.testing.assert_array_equal(got, np.stack([2 * X10 + 1, -2 * X10 + 1]))


def test_interpret_false_and_grad_raise_as_jax():
    call = pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct((16,), jnp.float32))
    # JAX 0.10.2's error on CPU.
    with pytest.raises(ValueError, match="^Only interpret mode is supported on CPU backend.$"):
        call(X16, X16)
    # JAX 0.10.2 cannot differentiate pallas_call in interpret mode either.
    with pytest.raises(ValueError, match="Linearization failed to produce known values"):
        jax.grad(lambda x: jnp.sum(add_vectors(x, x)))(X16)


def test_spec_errors_as_jax():
    spec = pl.BlockSpec((2,), lambda i: (i,))
    with pytest.raises(ValueError, match="Pytree for `in_specs` and `inputs` do not match"):
        pl.pallas_call(
            add_kernel,
            out_shape=jax.ShapeDtypeStruct((4,), jnp.float32),
            grid=2,
            in_specs=[spec],
            interpret=True,
        )(X16[:4], X16[:4])
    with pytest.raises(ValueError, match="must return 1 values to match"):
        pl.pallas_call(
            double_kernel,
            out_shape=jax.ShapeDtypeStruct((4,), jnp.float32),
            grid=2,
            in_specs=[pl.BlockSpec((2,), lambda i: (i, 0))],
            out_specs=spec,
            interpret=True,
        )(X16[:4])
    with pytest.raises(ValueError, match="If `grid_spec` is specified, then `grid` must be"):
        pl.pallas_call(
            double_kernel,
            out_shape=jax.ShapeDtypeStruct((4,), jnp.float32),
            grid_spec=pl.GridSpec(grid=(2,)),
            grid=(2,),
            interpret=True,
        )


def test_helpers():
    assert (pl.cdiv(10, 4), pl.align_to(5, 4), pl.next_power_of_2(5)) == (3, 8, 8)
    assert pl.strides_from_shape((2, 3, 4)) == (12, 4, 1)
    assert pl.ds(1, 3) == pl.Slice(1, 3, 1) and pl.dslice is pl.ds or pl.dslice(2) == pl.ds(2)
    assert str(pl.ANY) == "any" and pl.ANY((2, 3), jnp.float32).shape == (2, 3)
    assert repr(pl.squeezed) == "Squeezed()" and str(pl.Blocked(4)) == "Blocked(4)"

    def loop_kernel(o_ref):
        o_ref[...] = jnp.zeros_like(o_ref)

        @pl.loop(0, 5)
        def _(i):
            o_ref[i] = i * 2.0

        def scoped(tmp):
            tmp[...] = o_ref[...] + 1
            o_ref[...] = tmp[...]

        pl.run_scoped(scoped, pl.ANY((8,), jnp.float32))

    out = pl.pallas_call(
        loop_kernel, out_shape=jax.ShapeDtypeStruct((8,), jnp.float32), interpret=True
    )()
    np.testing.assert_array_equal(out, [1, 3, 5, 7, 9, 1, 1, 1])


# JAX 0.10.2's public names of jax.experimental.pallas.
JAX_NAMES = (
    "ANY BlockDim BlockSpec Blocked BoundedSlice Buffered CompilerParams CostEstimate "
    "DeviceIdType Element GridSpec HOST Indirect MemoryRef MemorySpace RevisitMode Slice "
    "Squeezed align_to broadcast_to cdiv core_map debug_check debug_print delay ds dslice "
    "empty empty_like empty_ref_like enable_debug_checks enable_poison_buffers estimate_cost "
    "get_global kernel loop lower_as_mlir multiple_of next_power_of_2 no_block_spec "
    "num_programs pallas_call pallas_call_p pallas_export_experimental program_id reciprocal "
    "run_scoped run_state select_ref semaphore semaphore_read semaphore_signal semaphore_wait "
    "squeezed strides_from_shape when with_scoped"
).split()

NOT_IMPLEMENTED = (
    "core_map delay estimate_cost get_global kernel lower_as_mlir run_state select_ref "
    "semaphore semaphore_read semaphore_signal semaphore_wait with_scoped"
).split()


def test_every_jax_name_exists_and_the_rest_raise():
    assert [n for n in JAX_NAMES if not hasattr(pl, n)] == []
    for name in NOT_IMPLEMENTED:
        with pytest.raises(NotImplementedError, match=f"jax.experimental.pallas.{name} is not"):
            getattr(pl, name)(None)
    with pytest.raises(NotImplementedError, match="pallas_call_p is not implemented"):
        pl.pallas_call_p.bind()
    with pytest.warns(DeprecationWarning):
        dot = pl.dot
    np.testing.assert_array_equal(dot(A, B), A @ B)
