"""Optimizers as (init, update, get_params) triples (``jax.example_libraries.optimizers``).

An optimizer is written for one array (``init(x0) -> state``,
``update(i, g, state) -> state``, ``get_params(state) -> x``) and the
``@optimizer`` decorator lifts it to pytrees of parameters: the state of a whole
pytree is an ``OptimizerState`` (itself a pytree, so it passes through ``jit``).
Step sizes are numbers or schedules ``i -> step size``.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable
from typing import Any

from modjax import numpy as jnp
from modjax.tracecore.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_map,
    tree_unflatten,
)

__all__ = [
    "InitFn",
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "ParamsFn",
    "Schedule",
    "UpdateFn",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]

#: The state of an optimizer over a pytree: per parameter, its state's leaves and
#: treedef, and the parameters' treedef.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux),
)

#: ``init_fn(params) -> state``, ``update_fn(i, grads, state) -> state``,
#: ``params_fn(state) -> params``.
Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])

Schedule = Callable[[int], float]
InitFn = Callable[[Any], OptimizerState]
UpdateFn = Callable[[int, Any, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Any]


def _flatten_each(states):
    # Tuples: the treedefs are aux data of a pytree node, which must be hashable.
    flat = [tree_flatten(s) for s in states]
    return tuple(leaves for leaves, _ in flat), tuple(treedef for _, treedef in flat)


def optimizer(opt_maker: Callable) -> Callable[..., Optimizer]:
    """Lift an optimizer written for one array to pytrees of arrays (``optimizer``)."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not "
                    f"match the parameter tree structure with which it was initialized: "
                    f"parameter tree {tree} and grad tree {grad_tree_def}."
                )
            states = [tree_unflatten(t, s) for t, s in zip(subtrees, states_flat, strict=True)]
            new = [update(i, g, s) for g, s in zip(grad_flat, states, strict=True)]
            new_flat, new_subtrees = _flatten_each(new)
            for before, after in zip(subtrees, new_subtrees, strict=True):
                if before != after:
                    raise TypeError(
                        "optimizer update function produced an output structure that did "
                        f"not match its input structure: input {before} and output {after}."
                    )
            return OptimizerState(new_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = [tree_unflatten(t, s) for t, s in zip(subtrees, states_flat, strict=True)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# --- schedules ---------------------------------------------------------------------


def constant(step_size) -> Schedule:
    """The schedule ``i -> step_size`` (``constant``)."""
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """``step_size * decay_rate ** (i / decay_steps)`` (``exponential_decay``)."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """``step_size / (1 + decay_rate * i / decay_steps)``, floored steps if ``staircase``
    (``inverse_time_decay``)."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """Decay from ``step_size`` to ``final_step_size`` over ``decay_steps`` as
    ``(1 - i / decay_steps) ** power`` (``polynomial_decay``)."""

    def schedule(step_num):
        fraction = jnp.minimum(step_num, decay_steps) / decay_steps
        return (1 - fraction) ** power * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps past ``k`` of the ``boundaries`` (``piecewise_constant``)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule from a schedule or a scalar step size (``make_schedule``)."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# --- optimizers ----------------------------------------------------------------------


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x -= step_size(i) * g`` (``sgd``)."""
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size, mass: float):
    """Gradient descent with momentum ``mass`` (``momentum``)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def nesterov(step_size, mass: float):
    """Gradient descent with Nesterov momentum ``mass`` (``nesterov``)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum (``adagrad``)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp (``rmsprop``)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq + eps), avg_sq

    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum (``rmsprop_momentum``)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return init, update, _first


def _bias_correction(value, beta, i):
    return value / (1 - jnp.asarray(beta, value.dtype) ** (i + 1))


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam, with bias-corrected moments (``adam``)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat, v_hat = _bias_correction(m, b1, i), _bias_correction(v, b2, i)
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam under the infinity norm (``adamax``)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        step = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - step * m / (u + eps), m, u

    return init, update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3: one accumulator per index of each axis instead of per element (``sm3``)."""
    step_size = make_schedule(step_size)

    def along(ndim, v, axis):
        index = [None] * ndim
        index[axis] = slice(None)
        return v[tuple(index)]

    def init(x0):
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, x0.dtype) for n in x0.shape], shape

    def update(i, g, state):
        x, m, vs, shape = state
        accum = functools.reduce(
            jnp.minimum, [along(g.ndim, v, axis) for axis, v in enumerate(vs)]
        ) + jnp.square(g)
        inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0.0)
        m = (1.0 - momentum) * (g * inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        others = [tuple(a for a in range(x.ndim) if a != axis) for axis in range(x.ndim)]
        return x, m, [accum.max(axes) for axes in others], shape

    def get_params(state):
        x, _, _, shape = state
        return x.reshape(shape)

    return init, update, get_params


# --- utilities ---------------------------------------------------------------------


class JoinPoint:
    """A marker around one parameter's optimizer state, so a pytree of states can be
    stored and restored as one pytree (``JoinPoint``)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        # Iterating yields the wrapped state, as JAX's JoinPoint does.
        return iter((self.subtree,))


def unpack_optimizer_state(opt_state: OptimizerState):
    """Turn an ``OptimizerState`` into a pytree of ``JoinPoint``-wrapped per-parameter
    states, e.g. for pickling (``unpack_optimizer_state``)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(t, s) for t, s in zip(subtree_defs, states_flat, strict=True)]
    return tree_unflatten(tree_def, [JoinPoint(s) for s in subtrees])


def pack_optimizer_state(marked_pytree) -> OptimizerState:
    """Inverse of ``unpack_optimizer_state`` (``pack_optimizer_state``)."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state expects a pytree of JoinPoint leaves")
    states_flat, subtree_defs = _flatten_each([s.subtree for s in sentinels])
    return OptimizerState(states_flat, tree_def, subtree_defs)


def l2_norm(tree) -> Any:
    """The l2 norm of all the leaves of ``tree`` together (``l2_norm``)."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale ``grad_tree`` down to l2 norm ``max_norm`` if it is larger (``clip_grads``)."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)
