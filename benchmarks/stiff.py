"""`python -m benchmarks` rows of stiff Model Exchange: CVODE between events.

- Roberts (the Reference FMU, FMI 3.0; found through FMIBRIDGE_REFERENCE_FMUS)
  from 1e-5 s to its stopTime 1e8 s: wall time and the largest relative error of
  (y1, y2) at 1e8 s against scipy's Radau at rtol 1e-12 (ROBERTS_END), fmibridge
  (Halving with integrator='cvode') against `fmpy.simulate_fmu` (CVode) at the
  same tolerances: FMPy's, rtol, and absolute ones of rtol times each state's
  nominal (1e-4, 1e-2). FMPy takes at most
  500 CVode steps per output interval (2e5 s by default here): from rtol 1e-8 on
  it stops there (the row says where).
- DcMotorStop with its stop (12 impacts in 1 s): fmibridge locates the impacts of
  adapters/dc_motor_stop.toml on CVODE's dense output; fmpy runs
  DcMotorStopEvents, the same equations with the stop inside the FMU, with its
  CVode and root finding. Error: the largest impact-time error against
  DRIVE_IMPACTS. A third row puts fmibridge's fixed RK4 steps, at h = 1e-5 s
  (their stability limit is 2.8e-5 s), against CVODE.

Timings are reported, never asserted.

References
----------
Hairer and Wanner, Solving ODEs II, Sec. IV.1 (Robertson's problem); the CVODE
User Guide, SUNDIALS 7.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from fmibridge.core.errors import FmibridgeError, FmibridgeWarning
from fmibridge.flows.stiff import Stiff
from fmibridge.methods.halving import Halving

from .suite import (
    BenchOptions,
    Found,
    Row,
    _row,
    _skipped,
    build_fmus,
    median_time,
    reference_fmu,
)

# scipy.integrate.solve_ivp(Radau, rtol=1e-12, atol=(1e-22, 1e-26), exact Jacobian)
# on Roberts' two-state form; Radau at rtol 1e-13 agrees to 1.6e-13 (measured)
ROBERTS_END = np.array([2.0824175121793717e-05, 8.329841429908602e-11])  # y1, y2
ROBERTS_RTOLS = (1e-4, 1e-6, 1e-8)  # compared; fmpy stops at 1e-8 (mxstep)
# Both sides' absolute tolerances are FMPy's: rtol times each state's nominal
# (1e-4, 1e-2; Stiff(nominal_atol=True) with atol = rtol). With one atol = rtol for
# every state (the methods' default) y2, below 3.7e-5 throughout, lies inside atol
# at rtol 1e-4 and CVODE's step collapses at t = 0.153 s (measured: an error
# naming the time).
# FMPy also bounds CVode's step by the run's span / 50 (fmpy.simulation, simulateME);
# so does fmibridge here, the same CVODE under the same settings.
ROBERTS_INTEGRATOR = Stiff(nominal_atol=True, max_step=(1e8 - 1e-5) / 50)
# The 12 impacts of DcMotorStop in 1 s, from Halving's RK4 steps of 2e-6 s and
# Illinois location to t_tol = 1e-13 s (500 000 steps, 93 s); CVODE at rtol 1e-12
# (17 672 steps, 2.6 s) gives the same times to DRIVE_REFERENCE_AGREEMENT (measured).
DRIVE_IMPACTS = np.array(
    [
        0.03447632934293628,
        0.1212483837657058,
        0.20412618536602686,
        0.28738058226483004,
        0.37070527871789594,
        0.4540378587554568,
        0.5373711369132376,
        0.6207044669165366,
        0.7040378001060691,
        0.7873711334387679,
        0.8707044667728583,
        0.9540378001063018,
    ]
)
DRIVE_REFERENCE_AGREEMENT = 1.7e-12  # s
DRIVE_RTOLS = (1e-6, 1e-8)
DRIVE_RK4_STEP = 1e-5  # s; the explicit stability limit is 2.8 L/R = 2.8e-5 s
# the drive's adapter, in the repository beside the benchmarks
DRIVE_ADAPTER = Path(__file__).resolve().parents[1] / "adapters" / "dc_motor_stop.toml"


def roberts_path() -> Path | None:
    """The Reference FMU Roberts (FMI 3.0), or None where it is not available."""
    return reference_fmu("fmi3/Roberts.fmu")


def roberts_error(y: np.ndarray) -> float:
    """The largest relative error of (y1, y2) at 1e8 s."""
    return float(np.max(np.abs(np.asarray(y) - ROBERTS_END) / ROBERTS_END))


def fmibridge_roberts(path: Path, rtol: float) -> float:
    """Run Roberts to its stopTime with CVODE (FMPy's atol); return the error."""
    from fmibridge.flows.fmu import fmu_system

    system = fmu_system(path, "me")
    try:
        with warnings.catch_warnings():  # its directional derivatives are wrong
            warnings.simplefilter("ignore", FmibridgeWarning)
            method = Halving(integrator=ROBERTS_INTEGRATOR, rtol=rtol, atol=rtol)
            result = method.run(system)
    finally:
        system.close()
    return roberts_error(result.x[-1]) if result.t[-1] == 1e8 else math.inf


def fmpy_roberts(path: Path, rtol: float) -> float:
    """Run Roberts to its stopTime with fmpy's CVode; return the error."""
    import fmpy

    out = fmpy.simulate_fmu(
        str(path),
        fmi_type="ModelExchange",
        solver="CVode",
        relative_tolerance=rtol,
        record_events=False,
    )
    return roberts_error(np.array([out["y1"][-1], out["y2"][-1]]))


def roberts_rows(options: BenchOptions) -> list[Row]:
    """fmibridge's CVODE against fmpy's on Roberts to 1e8 s, at equal rtol."""
    path = roberts_path()
    case = "Roberts to 1e8 s (Reference FMU)"
    if path is None:
        return [_skipped(case, "skipped: FMIBRIDGE_REFERENCE_FMUS has no Roberts")]
    rows = []
    for rtol in ROBERTS_RTOLS[:2] if options.quick else ROBERTS_RTOLS:
        ours_run = lambda r=rtol: fmibridge_roberts(path, r)  # noqa: E731
        theirs_run = lambda r=rtol: fmpy_roberts(path, r)  # noqa: E731
        ours_s, ours_err = median_time(ours_run, options.repeats)
        ours = Found(
            f"halving cvode rtol={rtol:g}, atol rtol x nominal",
            ours_err,
            ours_s,
            True,
            run=ours_run,
        )
        setting = f"CVode rtol={rtol:g}"
        try:
            theirs_s, theirs_err = median_time(theirs_run, options.repeats)
        except RuntimeError as exc:  # fmpy's CVode stops at mxstep
            theirs = Found(setting, math.nan, math.nan, False, f"fmpy: {_first(exc)}")
        else:
            theirs = Found(setting, theirs_err, theirs_s, True, run=theirs_run)
        metric = "max rel. error of y1, y2 at 1e8 s"
        rows.append(_row(case, metric, ours, "fmpy.simulate_fmu", theirs, options))
    return rows


def _first(exc: Exception) -> str:
    """fmpy's error without the path of its C source."""
    text = str(exc)
    return text[text.find("At t") :] if "At t" in text else text


def impact_error(times) -> float:
    """The largest error of the impact times against DRIVE_IMPACTS (inf if the
    count differs)."""
    times = np.asarray(times, dtype=float)
    if times.shape != DRIVE_IMPACTS.shape:
        return math.inf
    return float(np.max(np.abs(times - DRIVE_IMPACTS)))


def fmibridge_drive(method) -> float:
    """Run the drive with its stop (the adapter) to 1 s; return the impact error."""
    from fmibridge.formats.adapters import load_adapter

    system = load_adapter(DRIVE_ADAPTER).system
    try:
        result = method.run(system, 1.0)
    finally:
        system.close()
    return impact_error(result.event_times)


def fmpy_drive(rtol: float) -> float:
    """Run DcMotorStopEvents (the stop inside) with fmpy's CVode to 1 s; return
    the impact error. Impacts are read off the recorded events: equal times with
    v falling (an event leaving the stop changes nothing)."""
    import fmpy

    out = fmpy.simulate_fmu(
        str(build_fmus(models=["DcMotorStopEvents"])["DcMotorStopEvents"]),
        fmi_type="ModelExchange",
        solver="CVode",
        relative_tolerance=rtol,
        output_interval=1e-3,
    )
    t, v = out["time"], out["v"]
    return impact_error(t[np.flatnonzero((np.diff(t) == 0.0) & (np.diff(v) < 0.0))])


def drive_rows(options: BenchOptions) -> list[Row]:
    """The drive's impacts: CVODE against fmpy (same rtol), and against RK4."""
    build_fmus(models=["DcMotorStop", "DcMotorStopEvents"])
    case, metric = "DcMotorStop, 12 impacts in 1 s", "max |impact time error|, s"
    rows = []
    for rtol in DRIVE_RTOLS:
        method = Halving(integrator="cvode", rtol=rtol, atol=rtol * 1e-2)
        ours = _timed(
            f"halving cvode rtol={rtol:g}", lambda m=method: fmibridge_drive(m), options
        )
        theirs = _timed(
            f"CVode rtol={rtol:g} on DcMotorStopEvents (the stop inside)",
            lambda r=rtol: fmpy_drive(r),
            options,
        )
        rows.append(_row(case, metric, ours, "fmpy.simulate_fmu", theirs, options))
    if options.quick:
        rows.append(_skipped(f"{case}, fixed RK4", "skipped in --quick (~10 s)"))
        return rows
    rk4 = Halving(h=DRIVE_RK4_STEP, integrator="rk4", t_tol=1e-12)
    fine = Halving(integrator="cvode", rtol=1e-8, atol=1e-10, t_tol=1e-12)
    rows.append(
        _row(
            case,
            metric,
            _timed("halving cvode rtol=1e-08", lambda: fmibridge_drive(fine), options),
            "fmibridge fixed steps",
            _timed(
                f"halving rk4 h={DRIVE_RK4_STEP:g}",
                lambda: fmibridge_drive(rk4),
                options,
            ),
            options,
        )
    )
    return rows


def _timed(setting: str, run, options: BenchOptions) -> Found:
    try:
        wall, error = median_time(run, options.repeats)
    except (FmibridgeError, RuntimeError) as exc:
        return Found(setting, math.nan, math.nan, False, f"failed: {_first(exc)}")
    return Found(setting, error, wall, True, run=run)


def stiff_rows(options: BenchOptions) -> list[Row]:
    """The stiff section: Roberts and the drive with its stop."""
    return roberts_rows(options) + drive_rows(options)
