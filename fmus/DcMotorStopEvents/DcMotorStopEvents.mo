within ;
model DcMotorStopEvents
  "DcMotorStop with its stop inside the FMU: when gap <= 0, v moving in, reinit(v, -e*pre(v))"
  constant Real pi = 3.14159265358979323846;
  parameter Real R(unit="Ohm") = 1 "Armature resistance";
  parameter Real L(unit="H") = 1e-5
    "Armature inductance (L/R = 1e-5 s: the fast mode)";
  parameter Real k_m(unit="N.m/A") = 0.05
    "Torque constant, equal to the back-emf constant in V.s/rad";
  parameter Real J(unit="kg.m2") = 1e-5 "Rotor inertia";
  parameter Real r(unit="m") = 0.01 "Pinion radius";
  parameter Real m(unit="kg") = 0.5 "Mass on the rack";
  parameter Real k(unit="N/m") = 2000 "Stiffness of the return spring";
  parameter Real d(unit="N.s/m") = 2 "Damping of the mass";
  parameter Real V0(unit="V") = 12
    "Amplitude of the drive voltage V = V0 sin(2 pi f t)";
  parameter Real f(unit="Hz") = 12 "Frequency of the drive voltage";
  parameter Real x_stop(unit="m") = 0.02 "Position of the stop";
  parameter Real e(unit="1") = 0.5 "Coefficient of restitution at the stop";
  output Real x(unit="m", start=0, fixed=true)
    "Position of the mass (the return spring is relaxed at x = 0)";
  output Real v(unit="m/s", start=0, fixed=true) "Velocity of the mass";
  output Real i(unit="A", start=0, fixed=true) "Armature current";
  output Real gap(unit="m") "Gap to the stop, x_stop - x (>= 0 in the domain)";
  output Real gap_velocity(unit="m/s") "Rate of the gap, -v";
  output Real V(unit="V") "Drive voltage";
  output Real F(unit="N") "Motor force on the rack, k_m i / r";
equation
  V = V0*sin(2*pi*f*time);
  F = k_m*i/r;
  der(x) = v;
  (m + J/r^2)*der(v) = F - k*x - d*v;
  L*der(i) = V - R*i - k_m*v/r;
  gap = x_stop - x;
  gap_velocity = -v;
  when gap <= 0 then
    reinit(v, if pre(v) > 0 then -e*pre(v) else pre(v))
      "Newton's impact law where the mass moves into the stop; i does not jump";
  end when;
  annotation (Documentation(info="<html>
<p>DcMotorStop (see its documentation: a DC motor with L/R = 1e-5 s driving a
mass on a return spring towards a stop) with the impact at the stop inside the
FMU, as a tool exports such a model: an event indicator <code>gap</code> and
<code>when gap &lt;= 0 then reinit(v, if pre(v) &gt; 0 then -e*pre(v) else
pre(v))</code>. The velocity's sign keeps a crossing found on the far side of
the stop from reversing the mass twice: leaving, the gap rises through 0 and an importer may stop exactly at 0,
where <code>gap &lt;= 0</code> holds again (measured with FMPy's CVode at
rtol 1e-8: without it, six more reinits at the first impact, the second impact
3 ms late). It is what an importer
that runs the FMU's own events (FMPy) can simulate; fmibridge runs DcMotorStop
with the stop in adapters/dc_motor_stop.toml, and the bench compares the two
(the same impacts: 12 in 1 s, the first at t = 0.0344763 s).</p></html>"));
end DcMotorStopEvents;
