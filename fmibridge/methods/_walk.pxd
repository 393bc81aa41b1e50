from ..core._local_errors cimport LocalErrors
from ._firing cimport Firing
from ._mode cimport CompiledMode


cdef class Walk:
    cdef CompiledMode cm
    cdef object method, log  # the call's method and Recorder (None between calls)
    cdef object settings_of  # the method whose parameters it holds
    cdef Firing firing
    # span: the longest step (inf under a tolerance); t_end: the next output time
    # before the call's end, else that end
    cdef double h, span, t_end, t0
    cdef public double t
    # steps accepted and trials rejected in this call, and the bounds
    cdef long max_halvings, n_steps, n_rejected, max_steps, max_steps_asked
    cdef bint has_slope, busy, has_err
    # the point x (guards g0, rates r0, dx/dt slope), a trial's end y (g1, r1, s1),
    # another point on the step's curve z (gz), the last trial's error estimate
    cdef double[::1] x, g0, r0, slope, y, g1, r1, s1, z, gz, err
    cdef LocalErrors errors  # the run's, where they fit this mode; else None
    cdef unsigned char[::1] beyond  # per edge: `Guard.reset_at` is 'beyond'
    cdef const double[::1] grid  # the run's output times, if any
    cdef bint has_grid
    cdef double grid_tol

    cdef int read_settings(self, object method) except -1
    cdef int begin(self, object method, object log) except -1
    cdef double next_stop(self, double t, double t_limit) noexcept
    cdef int start(self, object method, object log, double t_end, double t0,
                   object state) except -1
    cdef object walk(self, object method, object log, double t_end, double t0,
                     object state)
    cdef object step(self)
    cdef int estimate(self, double hs) except -1
    cdef int accept(self, double t1, double hs, bint has_r1) except -1
    cdef object stopped(self, object status, str detail)
    cdef object at_point(self)
