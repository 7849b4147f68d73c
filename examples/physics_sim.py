"""A pendulum simulated with ``lax.scan``: energy conservation and gradients.

The pendulum's equation ``theta'' = -(g / length) sin(theta)`` is integrated with
velocity Verlet (leapfrog), a symplectic scheme: its energy error stays bounded
over thousands of steps, while explicit Euler's grows without bound. Each
integrator is one ``lax.scan`` over time steps, compiled once.

Because the whole simulation is a differentiable program, ``grad`` goes through
all the steps: the derivative of the final angle with respect to the pendulum's
length is checked against finite differences, then Gauss-Newton steps (with
``jacfwd`` of the trajectory) recover an unknown length from observed angles.

Run it with ``python examples/physics_sim.py [--steps N]``.
"""

from __future__ import annotations

import argparse

import modjax as jax
import modjax.numpy as jnp

GRAVITY, DT = 9.81, 0.01


def energy(length, theta, omega):
    """Energy per unit mass: kinetic plus potential (zero at the lowest point)."""
    return 0.5 * (length * omega) ** 2 + GRAVITY * length * (1 - jnp.cos(theta))


def acceleration(length, theta):
    """The angular acceleration of a pendulum of the given length."""
    return -(GRAVITY / length) * jnp.sin(theta)


def verlet_step(length, state):
    """One velocity-Verlet step: half kick, drift, half kick."""
    theta, omega = state
    omega = omega + 0.5 * DT * acceleration(length, theta)
    theta = theta + DT * omega
    omega = omega + 0.5 * DT * acceleration(length, theta)
    return theta, omega


def euler_step(length, state):
    """One explicit Euler step, for comparison."""
    theta, omega = state
    return theta + DT * omega, omega + DT * acceleration(length, theta)


def simulate(step, length, theta0, steps):
    """Run ``steps`` steps from rest at ``theta0``; the angles and energies along the way."""

    def body(state, _):
        state = step(length, state)
        return state, (state[0], energy(length, *state))

    _, (thetas, energies) = jax.lax.scan(body, (theta0, jnp.zeros_like(theta0)), length=steps)
    return thetas, energies


simulate_jit = jax.jit(simulate, static_argnums=(0, 3))


def final_angle(length, theta0, steps):
    """The angle after ``steps`` Verlet steps, as a function of the length."""
    return simulate(verlet_step, length, theta0, steps)[0][-1]


def main(steps: int) -> None:
    theta0 = jnp.float32(1.0)  # about 57 degrees: far from the small-angle regime
    e0 = float(energy(1.0, theta0, 0.0))
    print(f"A 1 m pendulum released at 1 rad, {steps} steps of {DT} s:")
    for name, step in (("velocity Verlet", verlet_step), ("explicit Euler", euler_step)):
        _, energies = simulate_jit(step, jnp.float32(1.0), theta0, steps)
        drift = float(jnp.max(jnp.abs(energies - e0))) / e0
        print(f"  {name:16s} largest energy error {100 * drift:8.4f} %")

    length = jnp.float32(1.0)
    d_length = jax.jit(jax.grad(final_angle), static_argnums=2)(length, theta0, steps)
    eps = 1e-3
    finite = final_angle(length + eps, theta0, steps) - final_angle(length - eps, theta0, steps)
    finite = finite / (2 * eps)
    print(
        f"\nd(final angle)/d(length): grad {float(d_length):.4f}, "
        f"central difference {float(finite):.4f}"
    )

    observed, _ = simulate_jit(verlet_step, jnp.float32(1.5), theta0, steps)

    def trajectory(length):
        return simulate(verlet_step, length, theta0, steps)[0]

    @jax.jit
    def gauss_newton(length):
        """One Gauss-Newton step on the squared misfit; jacfwd gives d(angles)/d(length)."""
        residual = trajectory(length) - observed
        jacobian = jax.jacfwd(trajectory)(length)
        return length - jnp.dot(jacobian, residual) / jnp.dot(jacobian, jacobian), jnp.mean(
            residual**2
        )

    print("\nRecovering the length of a pendulum from its observed angles (true length 1.5 m):")
    length = jnp.float32(1.3)
    for i in range(6):
        new_length, misfit = gauss_newton(length)
        print(f"  iteration {i}  length {float(length):.5f} m  misfit {float(misfit):.2e}")
        length = new_length
    print(f"  final length {float(length):.4f} m")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="time steps")
    main(parser.parse_args().steps)
