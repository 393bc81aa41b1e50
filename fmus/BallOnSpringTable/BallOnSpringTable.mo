within ;
model BallOnSpringTable
  "A ball above a table on a spring, in flight; the contact between them is left to the master"
  parameter Real g(unit="m/s2") = 9.81 "Gravitational acceleration";
  parameter Real e(unit="1") = 0.3
    "Coefficient of restitution between ball and table (not used by the flight; for adapters)";
  parameter Real m_ball(unit="kg") = 0.05 "Mass of the ball";
  parameter Real m_table(unit="kg") = 1 "Mass of the table";
  parameter Real k(unit="N/m") = 100 "Spring stiffness";
  parameter Real d(unit="N.s/m") = 0 "Damping coefficient of the table";
  input Real lam(unit="N") = 0
    "Contact force between ball and table along dh^T = (1, -1): pushes the ball up and the table down when positive";
  output Real h(unit="m", start=0, fixed=true) "Height of the ball";
  output Real x(unit="m", start=-0.12, fixed=true)
    "Height of the table top above its rest position";
  output Real v(unit="m/s", start=0, fixed=true) "Velocity of the ball";
  output Real w(unit="m/s", start=0, fixed=true) "Velocity of the table";
  output Real gap(unit="m") "Gap h - x between the ball and the table top (>= 0 in the domain)";
  output Real gap_velocity(unit="m/s") "Rate of the gap, v - w";
equation
  der(h) = v;
  der(x) = w;
  m_ball*der(v) = -m_ball*g + lam "Or and Ames, eq. (5) with dh = (1, -1)";
  m_table*der(w) = -k*x - d*w - lam;
  gap = h - x;
  gap_velocity = v - w;
  annotation (Documentation(info="<html>
<p>BouncingBall on SpringTable exported as one FMU: the same equations as the
two FMUs coupled, with the contact force <code>lam</code> entering both bodies
along dh<sup>T</sup> = (1, -1). The unilateral constraint gap &ge; 0, the impact
law and Zeno completion are the master's job (fmibridge), from the outputs
<code>gap</code>, <code>gap_velocity</code> and the input <code>lam</code>.
x is measured from the table's rest position, where the spring's preload
carries its weight.</p></html>"));
end BallOnSpringTable;
