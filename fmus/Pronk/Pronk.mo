within ;
model Pronk
  "Sagittal-plane rigid body on two massless spring legs (Burden et al., Sec. V-C)"
  parameter Real m(unit="kg") = 1 "Body mass";
  parameter Real I(unit="kg.m2") = 1 "Pitch moment of inertia about the centre of mass";
  parameter Real k(unit="N/m") = 30 "Leg spring stiffness";
  parameter Real ell(unit="m") = 1 "Leg rest length";
  parameter Real d(unit="m") = 1 "Distance between the hips";
  parameter Real g(unit="m/s2") = 9.81 "Gravitational acceleration";
  parameter Real psi(unit="rad") = 0.6283185307179586
    "Leg angle relative to the body while the leg is in the air (pi/5)";
  input Integer contact = 0 "Legs in stance, a bit mask: 0 flight, 1 front, 2 rear, 3 both";
  input Real foot_front_x(unit="m") = 0 "Ground position of the pinned front foot";
  input Real foot_rear_x(unit="m") = 0 "Ground position of the pinned rear foot";
  output Real x(unit="m", start=0, fixed=true) "Horizontal position of the centre of mass";
  output Real z(unit="m", start=1.1, fixed=true) "Height of the centre of mass";
  output Real theta(unit="rad", start=0, fixed=true)
    "Pitch angle of the body (positive lifts the front hip)";
  output Real vx(unit="m/s", start=3.4, fixed=true) "Horizontal velocity";
  output Real vz(unit="m/s", start=0, fixed=true) "Vertical velocity";
  output Real vtheta(unit="rad/s", start=0, fixed=true) "Pitch rate";
  output Real gap_td_front(unit="m") "Touchdown gap of the front leg (swing foot height)";
  output Real gap_td_rear(unit="m") "Touchdown gap of the rear leg (swing foot height)";
  output Real gap_lo_front(unit="m") "Lift-off gap of the front leg in stance, ell - L";
  output Real gap_lo_rear(unit="m") "Lift-off gap of the rear leg in stance, ell - L";
  output Real swing_front_x(unit="m") "Horizontal position of the front swing foot";
  output Real swing_rear_x(unit="m") "Horizontal position of the rear swing foot";
protected
  Real hip_front[2](each unit="m") "Front hip, centre of mass + d/2 along the body";
  Real hip_rear[2](each unit="m") "Rear hip, centre of mass - d/2 along the body";
  Real leg_front[2](each unit="m") "Front hip minus front foot";
  Real leg_rear[2](each unit="m") "Rear hip minus rear foot";
  Real F_front[2](each unit="N") "Spring force of the front leg on the body";
  Real F_rear[2](each unit="N") "Spring force of the rear leg on the body";
  Boolean front_in_stance = mod(contact, 2) == 1;
  Boolean rear_in_stance = contact >= 2;
equation
  hip_front = {x + d/2*cos(theta), z + d/2*sin(theta)};
  hip_rear = {x - d/2*cos(theta), z - d/2*sin(theta)};
  leg_front = hip_front - {foot_front_x, 0};
  leg_rear = hip_rear - {foot_rear_x, 0};
  // Linear leg spring k (ell - L) along the leg, L = |hip - foot| (Burden et al., Sec. V-C)
  F_front = if front_in_stance then k*(ell - sqrt(leg_front*leg_front))/sqrt(leg_front*leg_front)*leg_front else {0, 0};
  F_rear = if rear_in_stance then k*(ell - sqrt(leg_rear*leg_rear))/sqrt(leg_rear*leg_rear)*leg_rear else {0, 0};
  der(x) = vx;
  der(z) = vz;
  der(theta) = vtheta;
  m*der(vx) = F_front[1] + F_rear[1];
  m*der(vz) = F_front[2] + F_rear[2] - m*g;
  I*der(vtheta) = (hip_front[1] - x)*F_front[2] - (hip_front[2] - z)*F_front[1]
                + (hip_rear[1] - x)*F_rear[2] - (hip_rear[2] - z)*F_rear[1];
  swing_front_x = hip_front[1] + ell*sin(theta + psi);
  swing_rear_x = hip_rear[1] + ell*sin(theta + psi);
  gap_td_front = hip_front[2] - ell*cos(theta + psi);
  gap_td_rear = hip_rear[2] - ell*cos(theta + psi);
  gap_lo_front = ell - sqrt(leg_front*leg_front);
  gap_lo_rear = ell - sqrt(leg_rear*leg_rear);
  annotation (Documentation(info="<html>
<p>Extension of the passive RHex runner with pitch. In the air each leg keeps
the angle psi to the body; a leg in stance is pinned at its foot on the ground
(z = 0) and pushes the hip with k (ell - L). The master owns the contact
configuration: at touchdown it sets the leg's bit in <code>contact</code> and
its <code>foot_*_x</code> to <code>swing_*_x</code>; at lift-off
(<code>gap_lo_*</code> reaching 0) it clears the bit. Parameters and initial
state: Burden et al., Sec. V-C.</p></html>"));
end Pronk;
