within ;
model FaultyBall
  "Ball in free flight whose C code fails on purpose once time passes t_fault (a test FMU)"
  parameter Real g(unit="m/s2") = 9.81 "Gravitational acceleration";
  parameter Real t_fault(unit="s") = 0.5 "Time after which the fault happens";
  parameter Integer fault = 0
    "What the C code does once time > t_fault: 0 nothing, 1 segmentation fault, 2 abort(), 3 exit(0), 4 loop forever";
  output Real h(unit="m", start=10, fixed=true) "Height";
  output Real v(unit="m/s", start=0, fixed=true) "Vertical velocity";
  output Real gap(unit="m")
    "The height again, as an output: a partial result keeps the output columns";
protected
  function fail
    "The fault, in C: Modelica itself cannot crash, end or hang the process"
    input Integer fault "As the parameter";
    output Real zero "0, for fault = 0 (the others never return)";
  external "C" zero = fmibridge_fail(fault);
  end fail;
equation
  der(h) = v;
  der(v) = -g + (if fault <> 0 and time > t_fault then fail(fault) else 0);
  gap = h;
  annotation (Documentation(info="<html>
<p>A test model, not a physical one. With <code>fault = 0</code> it is a ball in
free flight (no floor). Otherwise the first evaluation of its equations after
<code>t_fault</code> calls the external C function <code>fmibridge_fail</code>
(in FaultyBall.c), which writes through a null pointer (1, SIGSEGV), calls
<code>abort()</code> (2, SIGABRT) or <code>exit(0)</code> (3), or loops forever
(4). fmibridge's tests run it to check that a run of a crashing, exiting or
hanging FMU ends alone, with a message and its samples up to
<code>t_fault</code>.</p></html>"));
end FaultyBall;
