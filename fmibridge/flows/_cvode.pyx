"""CVODE's variable-order BDF on a `Function`: the stiff integrator between events.

`CvodeStepper` integrates x' = f(t, x) with SUNDIALS CVODE (BDF orders 1 to 5,
Newton on a dense linear solver) one internal step per call (CV_ONE_STEP), never
beyond a stop time, and interpolates inside the last step (CVodeGetDky). The
right-hand side and the optional Jacobian (n*n values, column-major; else
CVODE's difference quotients) are Functions called from a C callback. After an
event `restart` begins anew (CVodeReInit, order 1). The SUNDIALS functions are
fmpy's (`flows.sundials`), declared below from the SUNDIALS 7 headers.

References
----------
Hindmarsh et al., ACM TOMS 31 (2005), 363-396 (SUNDIALS); the CVODE User Guide,
SUNDIALS 7 (CV_ONE_STEP, CVodeSetStopTime, CVodeGetDky, CVLsJacFn); Hairer and
Wanner, Solving ODEs II, Sec. III.1 and V.5 (BDF methods).
"""

from libc.math cimport fabs, INFINITY, isfinite, nextafter
from libc.stdint cimport int64_t
from libc.string cimport memcmp, memcpy

import warnings

import numpy as np

from ..core._functions cimport Function
from ._stepper cimport AdaptiveStepper

from ..core.errors import FmibridgeError, FmibridgeWarning
from .sundials import addresses

ctypedef void* N_Vector
ctypedef void* SUNMatrix
ctypedef void* SUNLinearSolver
ctypedef void* SUNContext

ctypedef int (*rhs_fn)(double, N_Vector, N_Vector, void*) noexcept
ctypedef int (*jac_fn)(double, N_Vector, N_Vector, SUNMatrix, void*, N_Vector,
                       N_Vector, N_Vector) noexcept
ctypedef void (*err_fn)(int, const char*, const char*, const char*, int, void*,
                        SUNContext) noexcept

ctypedef int (*into_long)(void*, long*) noexcept  # CVODE's counters (cvode.h)

cdef struct Api:  # in the order of sundials.FUNCTIONS (`_load`)
    int (*context_create)(int, SUNContext*) noexcept
    int (*context_free)(SUNContext*) noexcept
    int (*clear_err_handlers)(SUNContext) noexcept
    int (*push_err_handler)(SUNContext, err_fn, void*) noexcept
    double* (*array)(N_Vector) noexcept
    void (*destroy_vector)(N_Vector) noexcept
    void (*destroy_matrix)(SUNMatrix) noexcept
    int (*free_solver)(SUNLinearSolver) noexcept
    N_Vector (*new_vector)(int64_t, SUNContext) noexcept
    SUNMatrix (*dense_matrix)(int64_t, int64_t, SUNContext) noexcept
    double* (*matrix_data)(SUNMatrix) noexcept
    SUNLinearSolver (*dense_solver)(N_Vector, SUNMatrix, SUNContext) noexcept
    void* (*create)(int, SUNContext) noexcept
    int (*init)(void*, rhs_fn, double, N_Vector) noexcept
    int (*reinit)(void*, double, N_Vector) noexcept
    int (*sv_tolerances)(void*, double, N_Vector) noexcept
    int (*set_linear_solver)(void*, SUNLinearSolver, SUNMatrix) noexcept
    int (*set_jac_fn)(void*, jac_fn) noexcept
    int (*set_user_data)(void*, void*) noexcept
    int (*set_max_step)(void*, double) noexcept
    int (*set_stop_time)(void*, double) noexcept
    int (*clear_stop_time)(void*) noexcept
    int (*set_max_num_steps)(void*, long) noexcept
    int (*set_max_hnil_warns)(void*, int) noexcept
    int (*set_max_ord)(void*, int) noexcept
    int (*cvode)(void*, double, N_Vector, double*, int) noexcept
    int (*get_dky)(void*, double, int, N_Vector) noexcept
    int (*get_current_step)(void*, double*) noexcept
    into_long get_num_steps
    into_long get_num_rhs_evals
    into_long get_num_lin_rhs_evals
    into_long get_num_jac_evals
    into_long get_num_err_test_fails
    into_long get_num_conv_fails
    void (*free)(void**) noexcept

cdef Api api
cdef bint api_loaded = False

# CVODE's constants (cvode.h, SUNDIALS 7)
cdef int CV_BDF = 2
cdef int CV_ONE_STEP = 2
# A callback's answer beside 0: recoverable (CVODE retries with a shorter step)
# or not (CVODE returns at once); CVODE User Guide, CVRhsFn.
cdef int RECOVERABLE = 1, UNRECOVERABLE = -1
# CVODE's bound on internal steps per call, raised: the methods count steps
cdef long MAX_STEPS_PER_CALL = 1_000_000_000

# A flow's Jacobian is compared with forward differences at its first
# JACOBIAN_CHECKS evaluations (the Reference FMU Roberts' is wrong: df1/dy1 =
# -0.04 where it is -0.04 - 1e4 y2); three see the state move off its start.
JACOBIAN_CHECKS = 3
# A column agrees within JACOBIAN_RTOL of its size plus JACOBIAN_FLOOR of the
# matrix's: far above a forward difference's error (~1.5e-8), below a wrong one.
JACOBIAN_RTOL = 1e-3
JACOBIAN_FLOOR = 1e-6
# the forward difference's step: sqrt(eps) times the state's size or scale
cdef double DIFFERENCE_STEP = 2.0**-26

# What each failure of CVode means (cvode.h, CVODE User Guide, "CVode" returns).
REASONS = {
    -1: "CV_TOO_MUCH_WORK: too many internal steps",
    -2: "CV_TOO_MUCH_ACC: the tolerances asked are below the machine's precision",
    -3: "CV_ERR_FAILURE: the local error test failed repeatedly or with |h| = hmin",
    -4: "CV_CONV_FAILURE: the Newton iteration failed to converge repeatedly or "
        "with |h| = hmin",
    -6: "CV_LSETUP_FAIL: the Jacobian's LU factorization failed",
    -7: "CV_LSOLVE_FAIL: the linear solve failed",
    -8: "CV_RHSFUNC_FAIL: the right-hand side failed",
    -9: "CV_FIRST_RHSFUNC_ERR: the right-hand side is not finite at the start",
    -10: "CV_REPTD_RHSFUNC_ERR: the right-hand side was not finite repeatedly",
    -11: "CV_UNREC_RHSFUNC_ERR: the right-hand side was not finite and the step "
         "could not be cut",
    -22: "CV_ILL_INPUT: an input to CVode is illegal",
    -25: "CV_BAD_T: the time lies outside the last step",
    -27: "CV_TOO_CLOSE: the stop time is too close to the start",
}


cdef int _load() except -1:
    """Fill `api` (once) with `sundials.addresses`, in its fields' order."""
    global api_loaded
    cdef void** slots = <void**> &api
    if api_loaded:
        return 0
    found = list(addresses().values())
    if len(found) * sizeof(void*) != sizeof(Api):
        raise FmibridgeError("sundials.FUNCTIONS does not match _cvode's Api.")
    for k, address in enumerate(found):
        slots[k] = <void*> <size_t> address
    api_loaded = True
    return 0


cdef int _rhs(double t, N_Vector y, N_Vector ydot, void* data) noexcept:
    """CVODE's right-hand side: non-finite values recoverable, exceptions not."""
    cdef CvodeStepper self = <CvodeStepper> data
    cdef double* out = api.array(ydot)
    cdef Py_ssize_t i
    try:
        self.rhs.call(t, api.array(y), out)
    except BaseException as exc:  # Ctrl-C and FMU errors alike: raised after CVode
        self.error = exc
        return UNRECOVERABLE
    for i in range(self.n):
        if not isfinite(out[i]):
            self.t_not_finite = t
            return RECOVERABLE
    return 0


cdef int _jacobian(double t, N_Vector y, N_Vector fy, SUNMatrix matrix, void* data,
                   N_Vector tmp1, N_Vector tmp2, N_Vector tmp3) noexcept:
    """CVODE's Jacobian: the Jacobian Function's n*n values, column by column."""
    cdef CvodeStepper self = <CvodeStepper> data
    cdef double* out = api.matrix_data(matrix)
    cdef Py_ssize_t i
    try:
        self.jacobian.call(t, api.array(y), out)
        if self.n_checks < JACOBIAN_CHECKS and not self.drop_jacobian:
            self.check_jacobian(t, api.array(y), api.array(fy), out)
    except BaseException as exc:
        self.error = exc
        return UNRECOVERABLE
    for i in range(self.n * self.n):
        if not isfinite(out[i]):
            self.t_not_finite = t
            return RECOVERABLE
    return 0


cdef void _error(int line, const char* function, const char* file, const char* message,
                 int code, void* data, SUNContext context) noexcept:
    """SUNDIALS' error handler: keep the message for the failure's report."""
    cdef CvodeStepper self = <CvodeStepper> data
    if message == NULL:
        return
    try:
        self.message = (<bytes> message).decode("utf-8", "replace")
    except BaseException:
        pass


_COUNTS = ("n_steps", "n_rhs", "n_jacobian_rhs", "n_jacobians",
           "n_error_test_failures", "n_convergence_failures")


# A time within this many units in the last place of CVODE's is that time (the
# method sums t + h where CVODE returned its t directly).
SAME_TIME_ULPS = 2.0
# CVODE's steps that leave time in place this many times in a row end the run
# (its step below the resolution of t); a cut to a stop time is legitimate once.
MAX_STALLED_STEPS = 10


def _capital(str text):
    """The text with its first letter upper case."""
    return text[:1].upper() + text[1:]


cdef double _spacing(double t) noexcept:
    """The distance from |t| to the next float64."""
    return nextafter(fabs(t), INFINITY) - fabs(t)


cdef class CvodeStepper(AdaptiveStepper):
    """CVODE's accepted steps on `rhs` under rtol and atol (per state) as an
    adaptive stepper (`flows._stepper`), with `jacobian` (entry j*n + i
    df_i/dx_j), `max_step` (s, inf: none) and `max_order` (1 to 5).

    `step` goes on with CVODE's history from its own point (the end of its last
    step, or a point on that step's dense output), else restarts it. A step
    CVODE cannot take, or MAX_STALLED_STEPS in a row below the resolution of t,
    raise FmibridgeError; a dropped Jacobian (`check_jacobian`) warns once.
    """
    cdef Function jacobian
    cdef double t, t_start, t_not_finite
    cdef str message, jacobian_note
    cdef double[::1] atols, check_x, check_f, check_j, end
    cdef void* mem
    cdef void* context
    cdef void* y
    cdef void* scratch
    cdef void* tolerances
    cdef void* matrix
    cdef void* solver
    cdef double* y_data
    cdef double* scratch_data
    cdef object error
    cdef dict totals
    cdef long n_restarts, n_checks, n_stalled
    cdef bint is_started, drop_jacobian, has_warned

    def __init__(self, Function rhs, double rtol, atol, Function jacobian=None, *,
                 double max_step=np.inf, int max_order=5):
        _load()
        if rhs.n_in != rhs.n_out or rhs.n_in < 1:
            raise FmibridgeError(
                f"CVODE needs a right-hand side with as many values out as in "
                f"(at least one); {rhs.what} maps {rhs.n_in} to {rhs.n_out}."
            )
        cdef Py_ssize_t n = rhs.n_in
        if jacobian is not None and (jacobian.n_in != n or jacobian.n_out != n * n):
            raise FmibridgeError(
                f"CVODE needs a Jacobian of {n} x {n} values; {jacobian.what} maps "
                f"{jacobian.n_in} to {jacobian.n_out}."
            )
        atols = np.broadcast_to(np.asarray(atol, dtype=float), (n,)).copy()
        AdaptiveStepper.__init__(self, rhs, n, rtol, float(np.min(atols)))
        self.jacobian, self.atols = jacobian, atols
        self.message, self.jacobian_note, self.t_not_finite = "", "", np.nan
        self.totals = dict.fromkeys(_COUNTS, 0)
        self.check_x, self.check_f, self.end = (np.empty(n) for _ in range(3))
        self.check_j = np.empty(n * n)
        self.t = self.t_start = np.nan
        self._create(max_step, max_order)

    def _create(self, double max_step, int max_order):
        cdef SUNContext context = NULL
        cdef Py_ssize_t i
        if api.context_create(0, &context) != 0:
            raise MemoryError("SUNContext_Create failed")
        self.context = context
        api.clear_err_handlers(context)
        api.push_err_handler(context, _error, <void*> self)
        self.y = api.new_vector(self.n, context)
        self.scratch = api.new_vector(self.n, context)
        self.tolerances = api.new_vector(self.n, context)
        self.matrix = api.dense_matrix(self.n, self.n, context)
        self.mem = api.create(CV_BDF, context)
        if (self.y == NULL or self.scratch == NULL or self.tolerances == NULL
                or self.matrix == NULL or self.mem == NULL):
            raise MemoryError("CVODE's memory could not be allocated")
        self.solver = api.dense_solver(self.y, self.matrix, context)
        self.y_data, self.scratch_data = api.array(self.y), api.array(self.scratch)
        cdef double* tolerances = api.array(self.tolerances)
        for i in range(self.n):
            tolerances[i] = self.atols[i]
            self.y_data[i] = 0.0
        self._check(api.init(self.mem, _rhs, 0.0, self.y), "CVodeInit")
        self._check(api.sv_tolerances(self.mem, self.rtol, self.tolerances),
                    "CVodeSVtolerances")
        self._check(api.set_linear_solver(self.mem, self.solver, self.matrix),
                    "CVodeSetLinearSolver")
        if self.jacobian is not None:
            self._check(api.set_jac_fn(self.mem, _jacobian), "CVodeSetJacFn")
        self._check(api.set_user_data(self.mem, <void*> self), "CVodeSetUserData")
        self._check(api.set_max_num_steps(self.mem, MAX_STEPS_PER_CALL),
                    "CVodeSetMaxNumSteps")
        self._check(api.set_max_ord(self.mem, max_order), "CVodeSetMaxOrd")
        # CVODE's warnings that t + h = t go to stderr; `_watch_progress` stops instead
        self._check(api.set_max_hnil_warns(self.mem, -1), "CVodeSetMaxHnilWarns")
        if max_step < np.inf:
            self._check(api.set_max_step(self.mem, max_step), "CVodeSetMaxStep")

    def _check(self, int flag, str function):
        if flag < 0:
            raise FmibridgeError(
                f"{function} returned {flag} ({REASONS.get(flag, 'see cvode.h')}): "
                f"{self.message or 'no message'}."
            )

    def __dealloc__(self):
        cdef void* mem = self.mem
        cdef SUNContext context = self.context
        if not api_loaded:
            return
        if mem != NULL:
            api.free(&mem)
        if self.solver != NULL:
            api.free_solver(self.solver)
        if self.matrix != NULL:
            api.destroy_matrix(self.matrix)
        if self.y != NULL:
            api.destroy_vector(self.y)
        if self.scratch != NULL:
            api.destroy_vector(self.scratch)
        if self.tolerances != NULL:
            api.destroy_vector(self.tolerances)
        if context != NULL:
            api.context_free(&context)

    cdef int restart(self, double t, const double* x) except -1:
        """Begin a new integration at (t, x) (order 1, a new first step)."""
        if self.is_started:
            for name, value in self._counts().items():
                self.totals[name] += value
            self.n_restarts += 1
        memcpy(self.y_data, x, self.n * sizeof(double))
        self._check(api.reinit(self.mem, t, self.y), "CVodeReInit")
        self.is_started = True
        self.t = self.t_start = t
        return 0

    cdef int one_step(self, double t_stop, double* x) except -1:
        """One CVODE step, at most to t_stop (inf: no bound), its end to x."""
        cdef double t_reached = self.t, t_out = t_stop
        cdef int flag
        self.error, self.message = None, ""
        if self.drop_jacobian and self.jacobian is not None:
            self.jacobian = None
            self._check(api.set_jac_fn(self.mem, NULL), "CVodeSetJacFn")
        if isfinite(t_stop):
            api.set_stop_time(self.mem, t_stop)
        else:  # CV_ONE_STEP reads tout for the direction and scale of a first step
            api.clear_stop_time(self.mem)
            t_out = self.t + max(1.0, abs(self.t))
        flag = api.cvode(self.mem, t_out, self.y, &t_reached, CV_ONE_STEP)
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        if flag < 0:
            raise FmibridgeError(
                f"{_capital(self.rhs.what)}: CVODE could not step from t = "
                f"{self.t!r} (rtol = {self.rtol:g}): {self._failure(flag)}."
            )
        self.t_start, self.t = self.t, t_reached
        memcpy(x, self.y_data, self.n * sizeof(double))
        return 0

    cdef int dense(self, double t, double* out) except -1:
        """Write the state at t inside the last step (CVODE's interpolant) to out."""
        cdef int flag = api.get_dky(self.mem, t, 0, self.scratch)
        if flag < 0:
            raise FmibridgeError(
                f"CVodeGetDky (k = 0) at t = {t!r} outside the last step "
                f"[{self.t_start!r}, {self.t!r}]: {self.message}"
            )
        memcpy(out, self.scratch_data, self.n * sizeof(double))
        return 0

    cdef int check_jacobian(self, double t, const double* x, const double* f,
                            double* out) except -1:
        """Check out's Jacobian by forward differences; where wrong, use those."""
        cdef Py_ssize_t n = self.n, i, j
        cdef double step, worst = 0.0, size, scale = 0.0, miss
        cdef Py_ssize_t bad = -1
        self.n_checks += 1
        for i in range(n):
            self.check_x[i] = x[i]
        for j in range(n):
            step = DIFFERENCE_STEP * max(abs(x[j]), self.atols[j] / self.rtol)
            self.check_x[j] = x[j] + step
            self.rhs.call(t, &self.check_x[0], &self.check_f[0])
            self.check_x[j] = x[j]
            for i in range(n):
                self.check_j[j * n + i] = (self.check_f[i] - f[i]) / step
                scale = max(scale, abs(self.check_j[j * n + i]), abs(out[j * n + i]))
        for j in range(n):
            size, miss = 0.0, 0.0
            for i in range(n):
                size = max(size, abs(self.check_j[j * n + i]), abs(out[j * n + i]))
                miss = max(miss, abs(self.check_j[j * n + i] - out[j * n + i]))
            if miss > JACOBIAN_RTOL * size + JACOBIAN_FLOOR * scale and miss > worst:
                worst, bad = miss, j
        if bad < 0:
            return 0
        self.jacobian_note = (
            f"{_capital(self.jacobian.what)} disagrees with forward differences at "
            f"t = {t!r} in column {bad} (df/dx[{bad}]) by {worst:.3g} (the matrix's "
            f"largest entry: {scale:.3g}); CVODE takes difference quotients instead "
            f"from here on"
        )
        for i in range(n * n):
            out[i] = self.check_j[i]
        self.drop_jacobian = True
        return 0

    cdef long failures(self) noexcept:
        """The error-test and Newton failures since the last (re)start."""
        cdef long errors = 0, newton = 0
        api.get_num_err_test_fails(self.mem, &errors)
        api.get_num_conv_fails(self.mem, &newton)
        return errors + newton

    def _counts(self):
        cdef long value
        cdef into_long[6] getters = [  # in the order of _COUNTS
            api.get_num_steps, api.get_num_rhs_evals, api.get_num_lin_rhs_evals,
            api.get_num_jac_evals, api.get_num_err_test_fails, api.get_num_conv_fails]
        counts = {}
        for k in range(6):
            value = 0
            if self.is_started:
                getters[k](self.mem, &value)
            counts[_COUNTS[k]] = value
        return counts

    def stats(self):
        """Return CVODE's counts over every (re)start, and the restarts."""
        counts = self._counts()
        stats = {name: self.totals[name] + counts[name] for name in _COUNTS}
        stats["n_restarts"] = self.n_restarts
        return stats

    def _failure(self, int flag):
        """Say what CVode's failure flag means, with SUNDIALS' own message."""
        reason = REASONS.get(flag, f"CVODE returned {flag}")
        if flag in (-9, -10, -11) and isfinite(self.t_not_finite):
            reason += f" (last at t = {self.t_not_finite!r})"
        return f"{reason}; {self.message.rstrip('. ')}" if self.message else reason

    cdef bint continues(self, double t, const double* x) except -1:
        """True if (t, x) is CVODE's point or on its last step's dense output."""
        cdef size_t size = self.n * sizeof(double)
        if not self.is_started:
            return False
        if fabs(t - self.t) <= SAME_TIME_ULPS * _spacing(self.t):
            return memcmp(x, &self.end[0], size) == 0
        if not self.t_start <= t < self.t:
            return False
        self.dense(t, &self.probe[0])
        return memcmp(x, &self.probe[0], size) == 0

    cdef double step(self, double t, const double* x, double h_max, const double* k1,
                     double* out) except? -1.0:
        """One accepted step from (t, x), at most h_max long."""
        cdef double t1, h
        cdef long before
        if not self.continues(t, x):
            self.restart(t, x)
            memcpy(&self.end[0], x, self.n * sizeof(double))
        if t < self.t - SAME_TIME_ULPS * _spacing(self.t):  # the rest of CVODE's step
            t1 = min(self.t, t + h_max)
            if t1 == self.t:
                memcpy(out, &self.end[0], self.n * sizeof(double))
            else:
                self.dense(t1, out)
            h = t1 - t
        else:
            before = self.failures()
            self.one_step(t + h_max, out)
            self.n_rejected += self.failures() - before
            memcpy(&self.end[0], out, self.n * sizeof(double))
            h = self.t - t
            self._watch_progress()
            if self.jacobian_note and not self.has_warned:
                self.has_warned = True
                warnings.warn(self.jacobian_note + ".", FmibridgeWarning, stacklevel=2)
        api.get_current_step(self.mem, &self.h_next)  # the step CVODE tries next
        self.anchor(t, x, h, out)
        return h

    def _watch_progress(self):
        if self.t - self.t_start > SAME_TIME_ULPS * _spacing(self.t):
            self.n_stalled = 0
            return
        self.n_stalled += 1
        if self.n_stalled < MAX_STALLED_STEPS:
            return
        self.n_stalled = 0
        reason = "the right-hand side or its Jacobian changes abruptly just ahead"
        if isfinite(self.t_not_finite):
            reason = (f"the right-hand side is not finite just ahead (last at t = "
                      f"{self.t_not_finite!r})")
        raise FmibridgeError(
            f"{_capital(self.rhs.what)}: CVODE could not step from t = {self.t!r} "
            f"(rtol = {self.rtol:g}): {MAX_STALLED_STEPS} steps in a row shorter "
            f"than the resolution of time; {reason}."
        )
