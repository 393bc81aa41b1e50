within ;
model ForcedOscillatorWithStop
  "Forced damped linear oscillator with a stop at x_max (Burden et al., Sec. V-B)"
  parameter Real a(unit="1/s") = 0.05 "Damping coefficient a = mu/(2 m)";
  parameter Real omega(unit="rad/s") = 2.5 "Natural angular frequency sqrt(k/m)";
  parameter Real m(unit="kg") = 1 "Mass";
  parameter Real c(unit="1") = 0.9
    "Coefficient of restitution at the stop (not used by the flow; for adapters)";
  parameter Real x_max(unit="m") = 14 "Position of the stop";
  parameter Real U(unit="N") = 20 "Amplitude of the internal forcing U cos(Omega t)";
  parameter Real Omega(unit="rad/s") = 2.5 "Angular frequency of the internal forcing";
  parameter Integer use_input = 0
    "1: the forcing is the input u; 0: the forcing is U cos(Omega t)";
  input Real u(unit="N") = 0 "External forcing, used when use_input = 1";
  input Real lam(unit="N") = 0
    "Constraint force of the stop along dh^T = [-1]: positive pushes the mass away from the stop";
  output Real x(unit="m", start=11.36263, fixed=true) "Position of the mass";
  output Real v(unit="m/s", start=31.40358, fixed=true) "Velocity of the mass";
  output Real gap(unit="m") "Gap to the stop, x_max - x (>= 0 in the domain)";
  output Real gap_velocity(unit="m/s") "Time derivative of the gap";
protected
  Real force(unit="N") "Forcing acting on the mass";
equation
  force = if use_input == 1 then u else U*cos(Omega*time);
  der(x) = v;
  der(v) + 2*a*v + omega^2*x = (force - lam)/m "Burden et al., Sec. V-B";
  gap = x_max - x;
  gap_velocity = -v;
  annotation (Documentation(info="<html>
<p>Single mode x &le; x_max; the impact x' := -c x' at the stop is the master's
job. Defaults are Example 1 of Table I (a = 0.05, c = 0.9, u = 20 cos(2.5 t),
x0 = 11.36263, x0' = 31.40358, x_max = 14, omega = 2.5). Example 2:
a = 0.95, c = 0.5, U = 1, Omega = 1, x0 = -0.8, x0' = 0, x_max = -0.8,
omega = 1.</p></html>"));
end ForcedOscillatorWithStop;
