within ;
model DriveStop
  "Linear motor driving a slider against a stop, as a tool exports it: no constraint-force input"
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
  m*der(v) = F - d*v;
  L*der(i) = V - R*i - k_m*v;
  gap = x_stop - x;
  gap_velocity = -v;
  annotation (Documentation(info="<html>
<p>A drive against a stop as exported models have it: the stop is not in the
model (the master's job, x &le; x_stop, v+ = -e v-), and there is no input
through which a master could apply the stop's contact force. A linear motor
(coil R, L, force and back-emf constant k_m) pushes a slider of mass m with
F = k_m i while the drive voltage V = V0 sin(2 pi f t) is positive: the slider
reaches the stop, its impacts accumulate (e = 0.5) and it rests there, pressed
by F; when the current reverses the slider leaves the stop, and the next
period brings it back.</p>
<p>Completion (Or and Ames) runs the resting phase by projection
(fmibridge's [constraint] with coordinate = \"x\" and mass = \"m\"): after each
step x = x_stop and v = 0 are set through the states, the current i keeps its
own motion, and the contact force is lam = m a, with a the free acceleration
towards the stop. DriveStopForced is the same model with the force input
lam, for the comparison with the force-input route.</p></html>"));
end DriveStop;
