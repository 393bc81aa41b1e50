within ;
model MassSpringStopSlowSave
  "MassSpringStop whose FMU state costs 0.5 ms of CPU to save"
  extends MassSpringStop;
  annotation (Documentation(info="<html>
<p>The same variables and equations as MassSpringStop. Only its FMU differs:
<code>state_save_cost = 5e-4</code> in model.toml makes every
fmi2GetFMUstate / fmi3GetFMUState spend 0.5 ms of CPU before it copies the
state, as saving the state of a large tool-exported FMU does (0.43 ms measured
on Dymola 2024x FMUs of a DC drive). A Co-Simulation master that saves every
FMU's state at every communication step pays that at each step; the bench's
coupled rows show what fmibridge pays.</p></html>"));
end MassSpringStopSlowSave;
