within ;
model BallOnSineSurface
  "Point mass above the surface y = sin(x) (Or and Ames, Sec. 5.1)"
  parameter Real m(unit="kg") = 1 "Mass of the ball";
  parameter Real g(unit="m/s2") = 1 "Gravitational acceleration";
  parameter Real e(unit="1") = 0.5
    "Coefficient of restitution (not used by the flow; for adapters)";
  input Real lam(unit="N") = 0 "Constraint force along dh(q)^T = (-cos x, 1)";
  output Real x(unit="m", start=0, fixed=true) "Horizontal position q1";
  output Real y(unit="m", start=2, fixed=true) "Vertical position q2";
  output Real vx(unit="m/s", start=1.5, fixed=true) "Horizontal velocity";
  output Real vy(unit="m/s", start=0, fixed=true) "Vertical velocity";
  output Real gap(unit="m") "h(q) = y - sin x (>= 0 in the domain)";
  output Real gap_velocity(unit="m/s") "dh(q) qdot = vy - vx cos x";
equation
  der(x) = vx;
  der(y) = vy;
  m*der(vx) = -cos(x)*lam "M qddot = -N + dh^T lam (Or and Ames, eq. 5)";
  m*der(vy) = -m*g + lam;
  gap = y - sin(x);
  gap_velocity = vy - vx*cos(x);
  annotation (Documentation(info="<html>
<p>Lagrangian L = m |qdot|^2/2 - m g y with the unilateral constraint
h(q) = y - sin x &ge; 0. Impacts and Zeno completion are the master's job;
<code>lam</code> is the constraint force of the completed (sliding) phase.
Defaults: Examples 1 and 3 of Or and Ames.</p></html>"));
end BallOnSineSurface;
