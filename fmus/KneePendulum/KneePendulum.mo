within ;
model KneePendulum
  "Double pendulum of two uniform rods with a knee stop theta2 >= 0 (Or and Ames, Sec. 5.2)"
  parameter Real m1(unit="kg") = 1 "Mass of link 1 (thigh)";
  parameter Real m2(unit="kg") = 1 "Mass of link 2 (shank)";
  parameter Real L1(unit="m") = 1 "Length of link 1";
  parameter Real L2(unit="m") = 1 "Length of link 2";
  parameter Real g(unit="m/s2") = 1 "Gravitational acceleration";
  parameter Real e(unit="1") = 0.5
    "Coefficient of restitution of the knee stop (not used by the flow; for adapters)";
  input Real lam(unit="N.m") = 0 "Constraint torque of the knee stop along dh^T = (0, 1)";
  output Real theta1(unit="rad", start=0.5235987755982988, fixed=true)
    "Absolute angle of link 1 from the downward vertical (30 deg)";
  output Real theta2(unit="rad", start=0.4363323129985824, fixed=true)
    "Relative knee angle (25 deg); the gap of the stop";
  output Real omega1(unit="rad/s", start=0, fixed=true) "Angular velocity of theta1";
  output Real omega2(unit="rad/s", start=0, fixed=true) "Angular velocity of theta2";
  output Real gap(unit="rad") "h(q) = theta2 (>= 0 in the domain)";
  output Real gap_velocity(unit="rad/s") "dh(q) qdot = omega2";
protected
  Real M11 "Inertia matrix M(q), Or and Ames Example 2";
  Real M12;
  Real M22;
  Real b "Coriolis factor m2 L1 L2 sin(theta2)/2";
  Real N1 "Gravity torques N(q) = dV/dq";
  Real N2;
equation
  M11 = m1*L1^2/3 + m2*(L1^2 + L2^2/3 + L1*L2*cos(theta2));
  M12 = m2*(3*L1*L2*cos(theta2) + 2*L2^2)/6;
  M22 = m2*L2^2/3;
  b = 0.5*m2*L1*L2*sin(theta2);
  N2 = 0.5*m2*L2*g*sin(theta1 + theta2);
  N1 = (0.5*m1 + m2)*L1*g*sin(theta1) + N2;
  der(theta1) = omega1;
  der(theta2) = omega2;
  // M qddot + C(q, qdot) qdot + N(q) = dh^T lam (Or and Ames, eq. 5)
  M11*der(omega1) + M12*der(omega2) = b*(2*omega1*omega2 + omega2^2) - N1;
  M12*der(omega1) + M22*der(omega2) = -b*omega1^2 - N2 + lam;
  gap = theta2;
  gap_velocity = omega2;
  annotation (Documentation(info="<html>
<p>A passive knee: the stop theta2 &ge; 0 locks the leg straight. Impacts and
the locked (Zeno-completed) phase are the master's job; <code>lam</code> is the
constraint torque of the locked phase. Defaults: Examples 2 and 4 of Or and
Ames (all masses, lengths and g equal to 1; q0 = (30 deg, 25 deg)).</p>
</html>"));
end KneePendulum;
