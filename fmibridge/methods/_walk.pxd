from ..core._local_errors cimport LocalErrors
from ._mode cimport CompiledMode


cdef class Walk:
    cdef CompiledMode cm
    cdef object method, log
    cdef double h, span, t_end, t0
    cdef public double t
    cdef long max_halvings, n_steps, n_rejected, max_steps
    cdef bint has_slope, busy, has_err
    cdef double[::1] x, g0, r0, slope, y, g1, r1, s1, z, gz, err
    cdef LocalErrors errors

    cdef int start(self, object method, object log, double t_end, double t0,
                   object state) except -1
    cdef object walk(self, object method, object log, double t_end, double t0,
                     object state)
    cdef object step(self)
    cdef int estimate(self, double hs) except -1
    cdef int accept(self, double t1, double hs, bint has_r1) except -1
    cdef object at_point(self)


cdef object attempt_with(type kind, object method, CompiledMode cm, object state,
                         double t_end, double t0, object log)
