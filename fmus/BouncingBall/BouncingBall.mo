within ;
model BouncingBall
  "Ball in continuous flight under gravity; impacts are left to the master"
  parameter Real g(unit="m/s2") = 9.81 "Gravitational acceleration";
  parameter Real e(unit="1") = 0.8
    "Coefficient of restitution (not used by the flight; for adapters)";
  parameter Real m(unit="kg") = 1 "Mass of the ball";
  input Real lam(unit="N") = 0
    "Constraint force along dh^T = [1] (pushes the ball up when positive)";
  output Real h(unit="m", start=1, fixed=true)
    "Height above the floor; the gap of the unilateral constraint h >= 0";
  output Real v(unit="m/s", start=0, fixed=true) "Vertical velocity; the gap velocity";
equation
  der(h) = v;
  m*der(v) = -m*g + lam "Or and Ames, eq. (5) with dh = [1]";
  annotation (Documentation(info="<html>
<p>Continuous flight of a ball above a floor at h = 0. The unilateral constraint
h &ge; 0, the impact law v+ = -e v- and Zeno completion are the master's job
(fmibridge). The input <code>lam</code> is the generalized constraint force
along dh<sup>T</sup> = [1] used by the constrained phase of a Zeno completion
(Or and Ames).</p></html>"));
end BouncingBall;
