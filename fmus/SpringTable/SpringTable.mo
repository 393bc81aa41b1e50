within ;
model SpringTable
  "Table on a spring and damper, loaded by the contact force of a body on its top"
  parameter Real m(unit="kg") = 1 "Mass of the table";
  parameter Real k(unit="N/m") = 100 "Spring stiffness";
  parameter Real d(unit="N.s/m") = 0 "Damping coefficient";
  input Real lam(unit="N") = 0
    "Constraint force of a contact on the top, along dh^T = [-1] for a gap h = (body above) - x: pushes the table down when positive";
  output Real x(unit="m", start=0, fixed=true)
    "Height of the table top above its rest position (the spring's preload carries the table's weight there)";
  output Real v(unit="m/s", start=0, fixed=true) "Vertical velocity of the table";
equation
  der(x) = v;
  m*der(v) = -k*x - d*v - lam "Or and Ames, eq. (5) with dh = [-1]";
  annotation (Documentation(info="<html>
<p>The table of the coupled Zeno example: a BouncingBall from another FMU
bounces on its top, the unilateral constraint h = ball.h - table.x &ge; 0
spanning the two FMUs. The impacts, the constraint and Zeno completion are the
master's job (fmibridge). The input <code>lam</code> is this FMU's share of
the contact force: the gradient of the gap with respect to x is -1, so the
force a resting ball exerts pushes the table down, equal and opposite to the
ball's own <code>lam</code> (Or and Ames, eq. 5, with q = (ball.h, table.x)
and dh = (1, -1)). x is measured from the table's rest position, where the
spring's preload carries its weight.</p></html>"));
end SpringTable;
