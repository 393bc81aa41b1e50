within ;
model DriveStopForced
  "DriveStop with the constraint-force input lam of its stop"
  constant Real pi = 3.14159265358979323846;
  parameter Real m(unit="kg") = 1 "Moving mass (slider and motor armature)";
  parameter Real d(unit="N.s/m") = 0.1 "Viscous friction of the slider";
  parameter Real k_m(unit="N/A") = 1
    "Force constant, equal to the back-emf constant in V.s/m";
  parameter Real R(unit="Ohm") = 1 "Coil resistance";
  parameter Real L(unit="H") = 0.05 "Coil inductance (L/R = 0.05 s: not stiff)";
  parameter Real V0(unit="V") = 6
    "Amplitude of the drive voltage V = V0 sin(2 pi f t)";
  parameter Real f(unit="Hz") = 0.5 "Frequency of the drive voltage";
  parameter Real x_stop(unit="m") = 0.02 "Position of the stop";
  parameter Real e(unit="1") = 0.5
    "Coefficient of restitution at the stop (not used by the flow; for adapters)";
  input Real lam(unit="N") = 0
    "Constraint force of the stop along dh^T = [-1]: positive pushes the slider away from the stop";
  output Real x(unit="m", start=0, fixed=true) "Position of the slider";
  output Real v(unit="m/s", start=0, fixed=true) "Velocity of the slider";
  output Real i(unit="A", start=0, fixed=true) "Coil current of the linear motor";
  output Real gap(unit="m") "Gap to the stop, x_stop - x (>= 0 in the domain)";
  output Real gap_velocity(unit="m/s") "Rate of the gap, -v";
  output Real V(unit="V") "Drive voltage";
  output Real F(unit="N") "Motor force on the slider, k_m i";
equation
  V = V0*sin(2*pi*f*time);
  F = k_m*i;
  der(x) = v;
  m*der(v) = F - d*v - lam "dh^T lam with dh = [-1]";
  L*der(i) = V - R*i - k_m*v;
  gap = x_stop - x;
  gap_velocity = -v;
  annotation (Documentation(info="<html>
<p>DriveStop (see there) with the generalized constraint-force input lam of
its stop, acting along dh^T = [-1] for the gap x_stop - x: completion's
force-input route (the constrained dynamics of Or and Ames eq. 7) runs
through it. Its equations are DriveStop's at lam = 0.</p></html>"));
end DriveStopForced;
