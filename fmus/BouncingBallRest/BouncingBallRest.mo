within ;
model BouncingBallRest
  "Bouncing ball that rests itself: below a small rebound speed the impact sets v = 0 and switches gravity off"
  parameter Real g(unit="m/s2") = 9.81 "Gravitational acceleration";
  parameter Real e(unit="1") = 0.7 "Coefficient of restitution";
  parameter Real v_min(unit="m/s") = 1e-3 "Rebound speed below which the ball rests";
  output Real h(unit="m", start=1, fixed=true) "Height above the floor";
  output Real v(unit="m/s", start=0, fixed=true) "Vertical velocity";
  Boolean resting(start=false, fixed=true) "The ball rests (gravity off)";
equation
  der(h) = v;
  der(v) = if resting then 0 else -g;
  when h <= 0 then
    resting = -e*pre(v) < v_min "The rest rule";
    reinit(v, if -e*pre(v) < v_min then 0 else -e*pre(v)) "Newton's impact law, or rest";
  end when;
  annotation (Documentation(info="<html>
<p>The bouncing ball as tools often export it, with its own answer to the Zeno
point: an impact whose rebound speed e |v| is below v_min leaves the ball at
rest (v = 0) and switches gravity off, as the FMU SDK's ball and the Reference
FMUs' BouncingBall do. With h0 = 1 m, e = 0.7 and v_min = 1e-3 m/s the 24th
impact, at t = 2.5580573 s, rests it: e^24 sqrt(2 g h0) = 8.5e-4 m/s &lt; v_min;
the impacts would otherwise accumulate at t = sqrt(2 h0/g)(1+e)/(1-e) =
2.5586340 s. In the FMU the Boolean is the discrete Real `resting` (0 or 1).</p>
</html>"));
end BouncingBallRest;
