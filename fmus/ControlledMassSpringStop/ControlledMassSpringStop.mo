within ;
model ControlledMassSpringStop
  "MassSpringStop driven by PositionController, exported as one model"
  parameter Real m(unit="kg") = 1 "Mass";
  parameter Real k(unit="N/m") = 4 "Spring stiffness";
  parameter Real d(unit="N.s/m") = 0.2 "Damping coefficient";
  parameter Real x_stop(unit="m") = 1 "Position of the stop";
  parameter Real e(unit="1") = 0.6
    "Coefficient of restitution at the stop (not used by the flow; for adapters)";
  parameter Real Kp(unit="N/m") = 20 "Proportional gain";
  parameter Real Ki(unit="N/(m.s)") = 2 "Integral gain";
  parameter Real Kd(unit="N.s/m") = 2 "Derivative gain, on the velocity";
  parameter Real r0(unit="m") = 0 "Offset of the reference";
  parameter Real R(unit="m") = 1.4 "Amplitude of the reference";
  parameter Real Omega(unit="rad/s") = 2.5 "Angular frequency of the reference";
  output Real x(unit="m", start=0, fixed=true)
    "Position of the mass (the spring is relaxed at x = 0)";
  output Real v(unit="m/s", start=0, fixed=true) "Velocity of the mass";
  output Real z(unit="m.s", start=0, fixed=true) "Integral of the tracking error r - x";
  output Real F(unit="N") "Force command";
  output Real a(unit="m/s2") "Acceleration of the mass";
  output Real gap(unit="m") "Gap to the stop, x_stop - x (>= 0 in the domain)";
  output Real r(unit="m") "Reference position";
equation
  r = r0 + R*sin(Omega*time);
  der(z) = r - x;
  F = Kp*(r - x) + Ki*z - Kd*v;
  der(x) = v;
  der(v) = a;
  m*a = -k*x - d*v + F;
  gap = x_stop - x;
  annotation (Documentation(info="<html>
<p>MassSpringStop and PositionController (with Ka = 0) flattened into one
model, as a tool exports a closed loop: the reference for the coupled
system. Coupled in Model Exchange, the two FMUs give the same trajectory to
round-off, since fmibridge evaluates the connections at every stage of the
integrator; coupled in Co-Simulation they converge to it as the communication
step shrinks.</p></html>"));
end ControlledMassSpringStop;
