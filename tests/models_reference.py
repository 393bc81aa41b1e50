"""Native Python right-hand sides of the models in fmus/, the oracle for the FMUs.

Each function takes (t, x, p) with x the states in the FMU's order and p a dict of
parameters and inputs by FMU variable name, and returns dx/dt.
"""

from __future__ import annotations

import numpy as np


def rhs_bouncing_ball(t, x, p):
    """der(h) = v, m der(v) = -m g + lam."""
    return np.array([x[1], -p["g"] + p["lam"] / p["m"]])


def rhs_bouncing_ball_events(t, x, p):
    """Flight between impacts: der(h) = v, der(v) = -g."""
    return np.array([x[1], -p["g"]])


def rhs_bouncing_ball_rest(t, x, p):
    """Flight until it rests (resting starts at 0): der(h) = v, der(v) = -g."""
    return np.array([x[1], -p["g"]])


def rhs_forced_oscillator(t, x, p):
    """x'' + 2 a x' + omega^2 x = (u - lam)/m (Burden et al., Sec. V-B)."""
    u = p["u"] if p["use_input"] else p["U"] * np.cos(p["Omega"] * t)
    acc = -2 * p["a"] * x[1] - p["omega"] ** 2 * x[0] + (u - p["lam"]) / p["m"]
    return np.array([x[1], acc])


def rhs_ball_on_sine_surface(t, x, p):
    """m qddot = -(0, m g) + dh^T lam, dh = (-cos x, 1) (Or and Ames, Sec. 5.1)."""
    dh = np.array([-np.cos(x[0]), 1.0])
    acc = np.array([0.0, -p["g"]]) + dh * p["lam"] / p["m"]
    return np.concatenate([x[2:], acc])


def rhs_knee_pendulum(t, x, p):
    """M qddot + C qdot + N = dh^T lam, dh = (0, 1) (Or and Ames, Sec. 5.2)."""
    m1, m2, L1, L2, g = (p[k] for k in ("m1", "m2", "L1", "L2", "g"))
    q1, q2, w1, w2 = x
    mass = np.array(
        [
            [
                m1 * L1**2 / 3 + m2 * (L1**2 + L2**2 / 3 + L1 * L2 * np.cos(q2)),
                m2 * (3 * L1 * L2 * np.cos(q2) + 2 * L2**2) / 6,
            ],
            [m2 * (3 * L1 * L2 * np.cos(q2) + 2 * L2**2) / 6, m2 * L2**2 / 3],
        ]
    )
    coriolis = (
        0.5 * m2 * L1 * L2 * np.sin(q2) * np.array([-(2 * w1 * w2 + w2**2), w1**2])
    )
    gravity = np.array(
        [
            (0.5 * m1 + m2) * L1 * g * np.sin(q1) + 0.5 * m2 * L2 * g * np.sin(q1 + q2),
            0.5 * m2 * L2 * g * np.sin(q1 + q2),
        ]
    )
    acc = np.linalg.solve(mass, np.array([0.0, p["lam"]]) - coriolis - gravity)
    return np.array([w1, w2, *acc])


def rhs_pronk(t, x, p):
    """Rigid body on spring legs pinned at the feet (Burden et al., Sec. V-C)."""
    pos, theta = np.array([x[0], x[1]]), x[2]
    force, moment = np.array([0.0, -p["m"] * p["g"]]), 0.0
    for bit, sign, foot in ((1, 1.0, p["foot_front_x"]), (2, -1.0, p["foot_rear_x"])):
        if p["contact"] & bit:
            arm = sign * p["d"] / 2 * np.array([np.cos(theta), np.sin(theta)])
            leg = pos + arm - np.array([foot, 0.0])
            length = np.linalg.norm(leg)
            leg_force = p["k"] * (p["ell"] - length) * leg / length
            force += leg_force
            moment += arm[0] * leg_force[1] - arm[1] * leg_force[0]
    return np.array([x[3], x[4], x[5], *(force / p["m"]), moment / p["I"]])


def rhs_mass_spring_stop(t, x, p):
    """m v' = -k x - d v + F."""
    return np.array([x[1], (-p["k"] * x[0] - p["d"] * x[1] + p["F"]) / p["m"]])


def rhs_spring_table(t, x, p):
    """m v' = -k x - d v - lam (lam along dh^T = [-1])."""
    return np.array([x[1], (-p["k"] * x[0] - p["d"] * x[1] - p["lam"]) / p["m"]])


def rhs_ball_on_spring_table(t, x, p):
    """The two above as one: lam along dh^T = (1, -1) on (h, x)."""
    h, table, v, w = x
    return np.array(
        [v, w, -p["g"] + p["lam"] / p["m_ball"],
         (-p["k"] * table - p["d"] * w - p["lam"]) / p["m_table"]]
    )  # fmt: skip


def reference_position(t, p):
    """r(t) = r0 + R sin(Omega t)."""
    return p["r0"] + p["R"] * np.sin(p["Omega"] * t)


def rhs_position_controller(t, x, p):
    """z' = r(t) - x_meas."""
    return np.array([reference_position(t, p) - p["x_meas"]])


def rhs_controlled_mass_spring_stop(t, x, p):
    """The plant driven by F = Kp (r - x) + Ki z - Kd v."""
    r = reference_position(t, p)
    force = p["Kp"] * (r - x[0]) + p["Ki"] * x[2] - p["Kd"] * x[1]
    acc = (-p["k"] * x[0] - p["d"] * x[1] + force) / p["m"]
    return np.array([x[1], acc, r - x[0]])


def rhs_cradle_ball(t, x, p):
    """A pendulum: L omega' = -g sin(theta)."""
    return np.array([x[1], -p["g"] / p["L"] * np.sin(x[0])])


def rhs_dc_motor_stop(t, x, p):
    """L i' = V - R i - k_m v / r, (m + J / r^2) v' = k_m i / r - k x - d v."""
    position, v, i = x
    voltage = p["V0"] * np.sin(2 * np.pi * p["f"] * t)
    mass = p["m"] + p["J"] / p["r"] ** 2
    force = p["k_m"] * i / p["r"]
    acc = (force - p["k"] * position - p["d"] * v) / mass
    return np.array([v, acc, (voltage - p["R"] * i - p["k_m"] * v / p["r"]) / p["L"]])


def rhs_drive_stop(t, x, p):
    """L i' = V - R i - k_m v, m v' = k_m i - d v - lam (DriveStopForced's input;
    DriveStop has none)."""
    position, v, i = x
    voltage = p["V0"] * np.sin(2 * np.pi * p["f"] * t)
    acc = (p["k_m"] * i - p["d"] * v - p.get("lam", 0.0)) / p["m"]
    return np.array([v, acc, (voltage - p["R"] * i - p["k_m"] * v) / p["L"]])


REFERENCES = {
    "BouncingBall": rhs_bouncing_ball,
    "BouncingBallEvents": rhs_bouncing_ball_events,
    "BouncingBallRest": rhs_bouncing_ball_rest,
    "ForcedOscillatorWithStop": rhs_forced_oscillator,
    "BallOnSineSurface": rhs_ball_on_sine_surface,
    "KneePendulum": rhs_knee_pendulum,
    "Pronk": rhs_pronk,
    "MassSpringStop": rhs_mass_spring_stop,
    "PositionController": rhs_position_controller,
    "ControlledMassSpringStop": rhs_controlled_mass_spring_stop,
    "CradleBall": rhs_cradle_ball,
    "SpringTable": rhs_spring_table,
    "BallOnSpringTable": rhs_ball_on_spring_table,
    "DcMotorStop": rhs_dc_motor_stop,
    "DcMotorStopEvents": rhs_dc_motor_stop,
    "DriveStop": rhs_drive_stop,
    "DriveStopForced": rhs_drive_stop,
}
