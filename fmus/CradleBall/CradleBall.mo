within ;
model CradleBall "One ball of a Newton's cradle: a pendulum of length L"
  parameter Real L(unit="m") = 1 "Length of the string (pivot to the ball's centre)";
  parameter Real m(unit="kg") = 1 "Mass of the ball";
  parameter Real g(unit="m/s2") = 9.81 "Gravitational acceleration";
  output Real theta(unit="rad", start=0, fixed=true)
    "Angle of the string from the downward vertical";
  output Real omega(unit="rad/s", start=0, fixed=true) "Angular velocity";
  output Real x(unit="m") "Horizontal displacement of the ball from its rest position";
  output Real vx(unit="m/s") "Horizontal velocity of the ball";
equation
  der(theta) = omega;
  L*der(omega) = -g*sin(theta);
  x = L*sin(theta);
  vx = L*cos(theta)*omega;
  annotation (Documentation(info="<html>
<p>One FMU per ball. The pivots hang one ball diameter apart, so neighbours
touch at rest and ball i meets ball i+1 when x[i+1] - x[i] falls to 0. The
impact between two balls, which sets the angular velocities of two FMUs at
once, is the master's job (fmibridge's Newton's cradle example): the
momentum-conserving law with restitution e along the line of centres.</p>
</html>"));
end CradleBall;
