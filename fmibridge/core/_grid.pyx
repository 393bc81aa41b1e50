"""The next output time after t, by bisection: the one search of a run's output
times, for the run loop's methods without a walk (`OutputGrid.next_after`) and
the compiled walks (`methods._walk.Walk.next_stop`), so that both end their steps
on the same times.
"""

from libc.math cimport INFINITY


cpdef double next_after(const double[::1] times, double t, double tol) noexcept:
    """Return the first of the increasing `times` beyond t + tol (inf if none): a
    step that ends on an output time to round-off goes on to the next one."""
    cdef double after = t + tol
    cdef Py_ssize_t lo = 0, hi = times.shape[0], mid
    while lo < hi:
        mid = (lo + hi) // 2
        if after < times[mid]:
            hi = mid
        else:
            lo = mid + 1
    return times[lo] if lo < times.shape[0] else INFINITY
