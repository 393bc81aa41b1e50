# The search of a run's output times, once for OutputGrid and the compiled walks
# (see _grid.pyx).

cpdef double next_after(const double[::1] times, double t, double tol) noexcept
