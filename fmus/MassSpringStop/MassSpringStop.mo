within ;
model MassSpringStop
  "Mass on a spring and damper, driven by a force input, moving towards a stop at x_stop"
  parameter Real m(unit="kg") = 1 "Mass";
  parameter Real k(unit="N/m") = 4 "Spring stiffness";
  parameter Real d(unit="N.s/m") = 0.2 "Damping coefficient";
  parameter Real x_stop(unit="m") = 1 "Position of the stop";
  parameter Real e(unit="1") = 0.6
    "Coefficient of restitution at the stop (not used by the flow; for adapters)";
  input Real F(unit="N") = 0 "Driving force";
  output Real x(unit="m", start=0, fixed=true)
    "Position of the mass (the spring is relaxed at x = 0)";
  output Real v(unit="m/s", start=0, fixed=true) "Velocity of the mass";
  output Real a(unit="m/s2")
    "Acceleration of the mass; depends directly on the force input";
  output Real gap(unit="m") "Gap to the stop, x_stop - x (>= 0 in the domain)";
equation
  der(x) = v;
  der(v) = a;
  m*a = -k*x - d*v + F;
  gap = x_stop - x;
  annotation (Documentation(info="<html>
<p>The plant of the coupled example: PositionController drives the mass into
the stop at x = x_stop. The stop itself (gap &ge; 0, v+ = -e v-) is the
master's job, so the same guard and reset serve the plant coupled with its
controller and ControlledMassSpringStop, the two exported as one FMU. The
output <code>a</code> depends directly on the input <code>F</code>
(direct feedthrough): connected to the controller's acceleration feedback it
closes an algebraic loop.</p></html>"));
end MassSpringStop;
