from ..core._functions cimport Function
from ..flows._stepper cimport Stepper

# Samples a mode keeps before it hands them to the Recorder, and plain steps a
# loop takes in one call before the run loop checks time limits and signals.
cdef enum:
    BLOCK_SIZE = 4096


cdef class CompiledMode:
    cdef readonly object mode
    cdef readonly str name
    cdef readonly Stepper stepper
    cdef readonly Function guards
    cdef readonly Py_ssize_t n, m
    cdef readonly bint has_rhs, is_adaptive  # is_adaptive: steps under a tolerance
    cdef double[::1] sides
    cdef readonly double h
    cdef double d
    # per edge: the reset (None: the identity; a Function: compiled; else the
    # Python callable) and whether it returns to this mode
    cdef readonly tuple resets, self_loop
    cdef double[::1] work_after, work_g, work_r, work_slope, z, g_ahead  # scratch
    # block of samples not yet handed to the Recorder, and the arrays under it
    cdef double[::1] ts
    cdef double[:, ::1] xs
    cdef object ts_array, xs_array
    cdef Py_ssize_t n_block
    # n_out recorded outputs of the stepper (names out_names, values out_now),
    # kept with each sample in os, where the mode has no guards; else 0
    cdef Py_ssize_t n_out
    cdef tuple out_names
    cdef double[::1] out_now
    cdef double[:, ::1] os
    cdef object os_array
    # the stepper's flag that the last sample goes to the observer at once
    cdef bint has_flag
    cdef unsigned char[::1] observe_now
    cdef bint write_through  # the Recorder streams to a journal
    cdef readonly dict work  # each method's walk kept for this mode

    cdef int evaluate(self, double t, const double* x, double* g) except -1
    cdef int rates(self, double t, const double* x, const double* g, double* slope,
                   double* out) except -1
    cdef int impact_rates(self, double t, const double* x, double* out) except -1
    cdef int keep(self, double t, const double* x, object log) except -1
    cdef int flush(self, object log) except -1
    cdef bint may_dip(self, const double* g0, const double* r0, bint has_slope,
                      const double* g1, const double* r1) noexcept
    cdef bint dip(self, double t, const double* x, const double* g0, double* r0,
                  double* slope, bint* has_slope, double hs, const double* g1,
                  const double* r1, double* sigma, double* z, double* g_z,
                  object method, object log) except -1


cpdef double reach_tol(double t_end, double h) noexcept
cpdef bint reached(double t, double t_end, double h) noexcept
