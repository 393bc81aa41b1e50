within ;
model DcMotorStop
  "DC motor with fast electrics (L/R = 1e-5 s) driving, by rack and pinion, a mass on a stiff return spring towards a stop"
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
  parameter Real e(unit="1") = 0.5
    "Coefficient of restitution at the stop (not used by the flow; for adapters)";
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
  annotation (Documentation(info="<html>
<p>A stiff drive with a stop. A permanent-magnet DC motor (armature R, L,
torque and back-emf constant k_m, rotor inertia J) turns a pinion of radius r
that moves a rack with a mass m, held by a return spring k and a damper d. The
armature is driven by V = V0 sin(2 pi f t). The rotor moves with the rack
(omega = v / r), so its inertia adds J / r^2 to the mass.</p>
<p>The electrical mode decays with L/R = 1e-5 s; the mechanical one
(sqrt(k / (m + J/r^2)) = 58 rad/s, damped by d and by the back-emf,
(k_m/r)^2/R = 25 N.s/m) is 10^4 times slower: the eigenvalues are
-22.5 +/- 53.2i and -1.0e5 1/s. An explicit scheme is stable only for steps
below 2.8e-5 s; an implicit one takes steps as long as the motion allows.</p>
<p>The stop at x = x_stop (gap &ge; 0, v+ = -e v-) is the master's job
(adapters/dc_motor_stop.toml). The inductor keeps its current through an
impact, so the back-emf jumps with v and the current settles again within
about 5 L/R. The spring holds the mass off the stop: at x = x_stop it pulls
with k x_stop = 40 N, more than the motor's force when the mass gets there
(11.2 N at the first impact, -17.7 N at the later ones, measured), so the mass
leaves after each impact and impacts do not accumulate: one per period of the
drive, the first at t = 0.0344763 s.</p>
<p>The FMU provides d der(x) / dx in closed form
(fmi2/fmi3GetDirectionalDerivative) for implicit integrators.</p></html>"));
end DcMotorStop;
