within ;
model PositionController
  "PID position controller with acceleration feedback, tracking r(t) = r0 + R sin(Omega t)"
  parameter Real Kp(unit="N/m") = 20 "Proportional gain";
  parameter Real Ki(unit="N/(m.s)") = 2 "Integral gain";
  parameter Real Kd(unit="N.s/m") = 2 "Derivative gain, on the measured velocity";
  parameter Real Ka(unit="kg") = 0 "Acceleration feedback gain, on the measured acceleration";
  parameter Real r0(unit="m") = 0 "Offset of the reference";
  parameter Real R(unit="m") = 1.4 "Amplitude of the reference";
  parameter Real Omega(unit="rad/s") = 2.5 "Angular frequency of the reference";
  input Real x_meas(unit="m") = 0 "Measured position";
  input Real v_meas(unit="m/s") = 0 "Measured velocity";
  input Real a_meas(unit="m/s2") = 0 "Measured acceleration";
  output Real z(unit="m.s", start=0, fixed=true) "Integral of the tracking error r - x_meas";
  output Real F(unit="N") "Force command";
  output Real r(unit="m") "Reference position";
equation
  r = r0 + R*sin(Omega*time);
  der(z) = r - x_meas;
  F = Kp*(r - x_meas) + Ki*z - Kd*v_meas - Ka*a_meas;
  annotation (Documentation(info="<html>
<p>The controller of the coupled example. Its reference swings beyond the
plant's stop (R = 1.4 m against x_stop = 1 m), so it drives MassSpringStop
into the stop about twice a period. <code>F</code> depends directly on all
three measurements (direct feedthrough). With <code>a_meas</code> connected
to the plant's acceleration, which depends directly on <code>F</code>, the
two FMUs form an algebraic loop F = G(F) with dG/dF = -Ka/m: a fixed-point
iteration converges for |Ka| &lt; m, Newton's method for any Ka other than
-m, where the loop has no solution.</p></html>"));
end PositionController;
