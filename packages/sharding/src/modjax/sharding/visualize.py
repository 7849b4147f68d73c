"""A text picture of how an array is laid out over devices (``jax.debug.visualize_*``).

JAX draws with ``rich`` (a table with square box lines when no color map is
available); this module draws the same picture with plain box characters,
without the dependency: one cell per distinct piece of the array, sized in
proportion to it, labelled with the platform and the ids of the devices
holding it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from modjax.runtime import Sharding
from modjax.tracecore import core
from modjax.tracecore.tree_util import tree_leaves

from .inspect_sharding import inspect_sharding_p

__all__ = ["visualize_sharding", "visualize_array_sharding", "inspect_array_sharding"]

_HEIGHT_TO_WIDTH = 2.5


def _chunk(size: int, index) -> tuple[int, float]:
    """Return (chunk number, fraction of the dimension) of one slice."""
    if isinstance(index, int):
        return index, 1 / size
    start, stop, _ = index.indices(size)
    if stop - start in (0, size):
        return 0, 1.0
    return start // (stop - start), (stop - start) / size


def _cells(shape, sharding: Sharding):
    """Map (row, col) to (device ids, height fraction or None, width fraction)."""
    cells: dict[tuple[int, int], list] = {}
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        if len(shape) == 2:
            (row, height), (col, width) = _chunk(shape[0], index[0]), _chunk(shape[1], index[1])
        else:
            (col, width), row, height = _chunk(shape[0], index[0]), 0, None
        cell = cells.setdefault((row, col), [set(), height, width])
        cell[0].add(device.id)
    return cells


def _render(rows: list[list[list[str]]]) -> str:
    """Draw cells (each a list of lines) in a square-box table with lines between rows."""
    ncols = len(rows[0])
    widths = [max(len(rows[r][c][0]) for r in range(len(rows))) for c in range(ncols)]
    out = ["┌" + "┬".join("─" * w for w in widths) + "┐"]
    for r, row in enumerate(rows):
        height = max(len(lines) for lines in row)
        for k in range(height):
            parts = []
            for c, lines in enumerate(row):
                text = lines[k] if k < len(lines) else ""
                parts.append(text.ljust(widths[c]))
            out.append("│" + "│".join(parts) + "│")
        if r + 1 < len(rows):
            out.append("├" + "┼".join("─" * w for w in widths) + "┤")
    out.append("└" + "┴".join("─" * w for w in widths) + "┘")
    return "\n".join(out)


def _cell_lines(entry: str, width: int, height: int | None, min_width: int, max_width: int):
    width = min(max(width, min_width), max_width)
    left, extra = divmod(width - len(entry) - 2, 2)
    right = left + extra
    if height is None:
        height = 1
    top, extra = divmod(height - 2, 2)
    bottom = top + extra
    left, right, top, bottom = (max(v, 0) for v in (left, right, top, bottom))
    inner = left + len(entry) + right
    lines = [" " * inner] * top + [" " * left + entry + " " * right] + [" " * inner] * bottom
    return lines


def sharding_picture(
    shape: Sequence[int],
    sharding: Sharding,
    *,
    scale: float = 1.0,
    min_width: int = 9,
    max_width: int = 80,
) -> str:
    """Return the text picture of ``sharding`` for an array of ``shape`` (1 or 2 dimensions)."""
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    base_height = int(10 * scale)
    base_width = int(base_height * ((shape[1] if len(shape) == 2 else 1) / shape[0]))
    platform = next(iter(sharding.device_set)).platform.upper()
    cells = _cells(shape, sharding)
    nrows = max(r for r, _ in cells) + 1
    ncols = max(c for _, c in cells) + 1
    rows = []
    for r in range(nrows):
        row = []
        for c in range(ncols):
            ids, height, width = cells[r, c]
            entry = f"{platform} " + ",".join(str(i) for i in sorted(ids))
            cell_height = None if height is None else int(height * base_height)
            cell_width = int(width * base_width * _HEIGHT_TO_WIDTH)
            row.append(_cell_lines(entry, cell_width, cell_height, min_width, max_width))
        rows.append(row)
    # Center every cell in its column, as rich's Align does.
    widths = [max(len(rows[r][c][0]) for r in range(nrows)) for c in range(ncols)]
    rows = [
        [[line.center(w) for line in cell] for cell, w in zip(row, widths, strict=True)]
        for row in rows
    ]
    return _render(rows)


def visualize_sharding(shape: Sequence[int], sharding: Sharding, **kwargs) -> None:
    """Print the picture of ``sharding`` for ``shape`` (``jax.debug.visualize_sharding``).

    Keyword arguments: ``scale``, ``min_width``, ``max_width`` (``use_color`` and
    ``color_map`` are accepted and ignored: the picture has no colors).
    """
    kwargs.pop("use_color", None)
    kwargs.pop("color_map", None)
    print(sharding_picture(shape, sharding, **kwargs), end="\n\n")


def inspect_array_sharding(value, *, callback: Callable[[Sharding], None]) -> None:
    """Call ``callback`` with the sharding of each Array in ``value`` (``jax.debug``'s).

    Outside transformations the callback runs now, with each Array's sharding.
    Inside jit it runs when the program is compiled (once per compilation, as in
    JAX), with the sharding XLA's partitioner chose for the value, on the
    program's mesh (its axes automatic) or, without a mesh, as a GSPMDSharding.
    """
    for leaf in tree_leaves(value):
        if isinstance(leaf, core.Tracer):
            inspect_sharding_p.bind(leaf, callback=callback)
        else:
            callback(leaf.sharding)


def visualize_array_sharding(arr, **kwargs) -> None:
    """Print the picture of how ``arr`` is laid out (``jax.debug.visualize_array_sharding``)."""
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(arr.shape, s, **kwargs))
