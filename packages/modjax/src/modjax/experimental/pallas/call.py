"""``pallas_call``: run a kernel over a grid of blocks, in interpret mode.

The kernel is traced once per grid step inside a ``lax.fori_loop`` over the
grid points in row-major order (one traced body, whatever the grid size). Each
step cuts one block out of every operand (inputs, then outputs, which start
uninitialized or as their aliased input), hands the kernel a new reference to
each block, and writes the blocks back, so an output block revisited along a
reduction axis accumulates, and the program is jitted once per input structure
and shapes. As in JAX's interpret mode, writes to input blocks persist for later
grid steps, and the result cannot be differentiated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from modjax import lax, tree_util
from modjax import numpy as jnp
from modjax.autodiff import custom_jvp
from modjax.experimental.pallas.blocks import BlockMapping, block_mapping
from modjax.experimental.pallas.grid_env import grid_env
from modjax.experimental.pallas.helpers import uninitialized_value
from modjax.experimental.pallas.specs import BlockSpec, GridSpec, NoBlockSpec, no_block_spec
from modjax.experimental.pallas.specs import normalize_grid as _normalize_grid
from modjax.lax.state import freeze, new_ref
from modjax.tracecore import ClosedJaxpr, eval_jaxpr, trace_to_jaxpr, wrap_init
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.state import discharge_state

__all__ = ["pallas_call"]

# JAX 0.10.2's errors, word for word.
CPU_NEEDS_INTERPRET = "Only interpret mode is supported on CPU backend."
NOT_DIFFERENTIABLE = (
    "Linearization failed to produce known values for all output primals. This is "
    "typically caused by attempting to differentiate a function uses an operation that "
    "does not support reverse-mode autodiff."
)


def _is_spec_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (BlockSpec, NoBlockSpec))


def _is_type_leaf(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


def _flat_specs(specs: Any, tree: Any, what: str, of: str) -> list[Any]:
    """One spec per leaf of ``tree``; ``no_block_spec`` alone means whole arrays for all."""
    if isinstance(specs, NoBlockSpec):
        return [None] * tree.num_leaves
    if isinstance(specs, list):
        specs = tuple(specs)
    leaves, spec_tree = tree_util.tree_flatten(specs, is_leaf=_is_spec_leaf)
    if spec_tree != tree:
        raise ValueError(
            f"Pytree for `{what}` and `{of}` do not match: `{what}` has the structure "
            f"{spec_tree} but `{of}` has the structure {tree}."
        )
    return leaves


def _check_interpret(interpret: Any) -> None:
    if interpret:
        return
    from modjax import default_backend

    if default_backend() == "cpu":
        raise ValueError(CPU_NEEDS_INTERPRET)
    raise NotImplementedError(
        "pallas_call compiles kernels only in interpret mode in modjax: pass interpret=True"
    )


def _grid_point(i: Any, grid: tuple[int, ...]) -> tuple[Any, ...]:
    """Row-major grid indices (int32 scalars) of the flat step ``i``."""
    indices = []
    for axis, size in enumerate(grid):
        stride = math.prod(grid[axis + 1 :])
        indices.append(lax.rem(lax.div(i, jnp.int32(stride)), jnp.int32(size)))
    return tuple(indices)


class _Program:
    """The kernel and its specs; builds the jitted program for one input structure."""

    def __init__(
        self,
        kernel: Callable[..., Any],
        grid: tuple[int, ...],
        out_tree: Any,
        out_types: list[Any],
        in_specs: Any,
        out_specs: Any,
        scratch: Any,
        aliases: dict[int, int],
        name: str,
        debug: bool,
    ):
        self.kernel = kernel
        self.grid = grid
        self.out_tree = out_tree
        self.out_types = out_types
        self.in_specs = in_specs
        self.flat_out_specs = _flat_specs(out_specs, out_tree, "out_specs", "out_shape")
        self.scratch_types, self.scratch_tree = tree_util.tree_flatten(
            scratch, is_leaf=_is_type_leaf
        )
        self.aliases = aliases
        self.name = name
        self.debug = debug
        self._compiled: dict[Any, Callable[..., Any]] = {}

    def for_inputs(self, in_tree: Any) -> Callable[..., Any]:
        fn = self._compiled.get(in_tree)
        if fn is None:
            fn = self._compiled[in_tree] = self._build(in_tree)
        return fn

    def _maps(self, in_tree: Any, flat_args: list[Any]) -> list[BlockMapping]:
        in_specs = _flat_specs(self.in_specs, in_tree, "in_specs", "inputs")
        maps = [
            block_mapping(s, x.shape, x.dtype, f"args[{i}]")
            for i, (s, x) in enumerate(zip(in_specs, flat_args, strict=True))
        ]
        maps += [
            block_mapping(s, t.shape, t.dtype, f"outputs[{j}]")
            for j, (s, t) in enumerate(zip(self.flat_out_specs, self.out_types, strict=True))
        ]
        return maps

    def _check_aliases(self, flat_args: list[Any]) -> dict[int, int]:
        out_of = {}
        for i, o in self.aliases.items():
            if i not in range(len(flat_args)):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' with input index "
                    f"{i} outside the range [0, {len(flat_args)})"
                )
            if o not in range(len(self.out_types)):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' with output index "
                    f"{o} outside the range [0, {len(self.out_types)})"
                )
            x, t = flat_args[i], self.out_types[o]
            if tuple(x.shape) != tuple(t.shape) or jnp.dtype(x.dtype) != jnp.dtype(t.dtype):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' referring to "
                    f"input[{i}] with shape {tuple(x.shape)} and dtype {x.dtype} and to "
                    f"output[{o}] with a different shape {tuple(t.shape)} or dtype {t.dtype}."
                )
            out_of[o] = i
        return out_of

    def _kernel_args(self, in_tree: Any, refs: list[Any], scratch_refs: list[Any]):
        n_in = in_tree.num_leaves
        ins = tree_util.tree_unflatten(in_tree, refs[:n_in])
        outs = tree_util.tree_unflatten(self.out_tree, refs[n_in:])
        scratch = tree_util.tree_unflatten(self.scratch_tree, scratch_refs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        scratch = scratch if isinstance(scratch, tuple) else (scratch,)
        return (*ins, *outs, *scratch)

    def _build(self, in_tree: Any) -> Callable[..., Any]:
        grid, kernel = self.grid, self.kernel
        n_steps = math.prod(grid)

        def step(indices, operands, scratch, maps):
            with grid_env(indices, grid):
                starts = [m.start_indices(indices) for m in maps]
            refs = [new_ref(m.read(x, s)) for m, x, s in zip(maps, operands, starts, strict=True)]
            scratch_refs = [new_ref(v) for v in scratch]
            with grid_env(indices, grid):
                kernel(*self._kernel_args(in_tree, refs, scratch_refs))
            operands = [
                m.write(x, s, freeze(r))
                for m, x, s, r in zip(maps, operands, starts, refs, strict=True)
            ]
            return operands, [freeze(r) for r in scratch_refs]

        def run(*flat_args):
            flat_args = list(flat_args)
            maps = self._maps(in_tree, flat_args)
            out_of = self._check_aliases(flat_args)
            if out_of and any(m.has_element_padding() for m in maps):
                raise NotImplementedError("Padding with aliasing not supported.")
            outs = [
                flat_args[out_of[j]] if j in out_of else uninitialized_value(t.shape, t.dtype)
                for j, t in enumerate(self.out_types)
            ]
            operands = [m.prepare(x) for m, x in zip(maps, flat_args + outs, strict=True)]
            scratch = [uninitialized_value(t.shape, t.dtype) for t in self.scratch_types]
            if self.debug:
                self._print_kernel(step, operands, scratch, maps)
            if n_steps == 1:
                zeros = tuple(jnp.int32(0) for _ in grid)
                operands, scratch = step(zeros, operands, scratch, maps)
            elif n_steps > 1:

                def body(i, carry):
                    return step(_grid_point(i, grid), *carry, maps)

                operands, scratch = lax.fori_loop(
                    jnp.int32(0), jnp.int32(n_steps), body, (operands, scratch)
                )
            n_in = len(flat_args)
            return [m.finish(x) for m, x in zip(maps[n_in:], operands[n_in:], strict=True)]

        run.__name__ = run.__qualname__ = self.name

        def discharged(*flat_args):
            # The kernel's references are local to the program: trace it and turn
            # it into a pure program (as JAX's interpret mode discharges the kernel),
            # so that the transformations around it see ordinary primitives only.
            avals = [ShapedArray(tuple(x.shape), x.dtype) for x in flat_args]
            jaxpr, consts = trace_to_jaxpr(wrap_init(run), avals)
            pure = discharge_state(ClosedJaxpr(jaxpr, consts))
            return eval_jaxpr(pure.jaxpr, pure.consts, *flat_args)

        discharged.__name__ = discharged.__qualname__ = self.name
        guarded = custom_jvp(discharged)

        def _refuse_jvp(primals, tangents):
            raise ValueError(NOT_DIFFERENTIABLE)

        guarded.defjvp(_refuse_jvp)
        from modjax import jit

        return jit(guarded)

    def _print_kernel(self, step, operands, scratch, maps) -> None:
        from modjax import make_jaxpr

        def one_step(indices, operands, scratch):
            return step(indices, operands, scratch, maps)

        zeros = tuple(jnp.int32(0) for _ in self.grid)
        print(f"\nJaxpr of the kernel in pallas_call {self.name}:")
        print(make_jaxpr(one_step)(zeros, operands, scratch))


def pallas_call(
    kernel: Callable[..., None],
    out_shape: Any,
    *,
    grid_spec: GridSpec | None = None,
    grid: Any = (),
    in_specs: Any = no_block_spec,
    out_specs: Any = no_block_spec,
    scratch_shapes: Any = (),
    input_output_aliases: Mapping[int, int] = {},  # noqa: B006  (JAX's default)
    debug: bool = False,
    interpret: Any = False,
    name: str | None = None,
    compiler_params: Any = None,
    cost_estimate: Any = None,
    metadata: dict[str, str] | None = None,
) -> Callable[..., Any]:
    """Return a function of the inputs running ``kernel`` over ``grid`` (interpret mode only).

    ``kernel`` gets one reference per input block, then one per output block
    (``out_shape``'s leaves: anything with ``shape`` and ``dtype``; a tuple or
    list of them gives several positional references), then the scratch
    references. ``in_specs``/``out_specs`` are BlockSpecs in the structure of
    the inputs / of ``out_shape`` (``no_block_spec``: whole arrays).
    ``compiler_params``, ``cost_estimate`` and ``metadata`` are ignored.
    """
    del compiler_params, cost_estimate, metadata
    if grid_spec is not None:
        if grid:
            raise ValueError(f"If `grid_spec` is specified, then `grid` must be `()`. It is {grid}")
        if in_specs is not no_block_spec:
            raise ValueError(
                "If `grid_spec` is specified, then `in_specs` must be `no_block_spec`. "
                f"It is {in_specs}"
            )
        if out_specs is not no_block_spec:
            raise ValueError(
                "If `grid_spec` is specified, then `out_specs` must be `no_block_spec`. "
                f"It is {out_specs}"
            )
        if scratch_shapes:
            raise ValueError(
                "If `grid_spec` is specified, then `scratch_shapes` must be `()`. "
                f"It is {scratch_shapes}"
            )
        if not isinstance(grid_spec, GridSpec):
            raise NotImplementedError(
                f"pallas_call with a {type(grid_spec).__name__} (scalar prefetch, ...) is not "
                "implemented in modjax yet"
            )
        grid, in_specs = grid_spec.grid, grid_spec.in_specs
        out_specs, scratch_shapes = grid_spec.out_specs, grid_spec.scratch_shapes
    grid = _normalize_grid(grid)
    if isinstance(out_shape, list):
        out_shape = tuple(out_shape)
    out_types, out_tree = tree_util.tree_flatten(out_shape, is_leaf=_is_type_leaf)
    for t in out_types:
        if not _is_type_leaf(t):
            raise ValueError(f"pallas_call: out_shape leaves need a shape and a dtype, got {t!r}")
    if isinstance(scratch_shapes, list):
        scratch_shapes = tuple(scratch_shapes)
    program = _Program(
        kernel,
        grid,
        out_tree,
        out_types,
        in_specs,
        out_specs,
        scratch_shapes,
        dict(input_output_aliases),
        name or getattr(kernel, "__name__", "pallas_call"),
        debug,
    )

    def wrapped(*args: Any) -> Any:
        _check_interpret(interpret)
        flat_args, in_tree = tree_util.tree_flatten(args)
        flat_args = [jnp.asarray(x) for x in flat_args]
        outs = program.for_inputs(in_tree)(*flat_args)
        return tree_util.tree_unflatten(out_tree, outs)

    return wrapped
