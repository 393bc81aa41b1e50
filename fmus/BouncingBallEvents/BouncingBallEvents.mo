within ;
model BouncingBallEvents
  "Bouncing ball with the impact inside the model, as tools usually export it"
  parameter Real g(unit="m/s2") = 9.81 "Gravitational acceleration";
  parameter Real e(unit="1") = 0.8 "Coefficient of restitution";
  output Real h(unit="m", start=1, fixed=true) "Height above the floor";
  output Real v(unit="m/s", start=0, fixed=true) "Vertical velocity";
equation
  der(h) = v;
  der(v) = -g;
  when h <= 0 then
    reinit(v, -e*pre(v)) "Newton's impact law";
  end when;
  annotation (Documentation(info="<html>
<p>The textbook bouncing ball: one event indicator (h), and the reset
v := -e v done by the FMU when h falls to 0. There is deliberately no
minimum-velocity hack, so the Zeno accumulation at
t = sqrt(2 h0/g)(1+e)/(1-e) shows the failure mode fmibridge exists to fix.</p>
</html>"));
end BouncingBallEvents;
