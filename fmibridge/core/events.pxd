# Event logic shared by every method (`events.pyx`).

cdef struct Illinois:
    double lo, lo_f, hi, hi_f      # the bracket's ends and their values
    double f_lo, f_hi              # the values as the secant uses them (halved)
    double side                    # -1 the last trial fell on lo, +1 on hi, 0 none
    double before, before_f        # the hi the last trial replaced (nan: none)
    double surface                 # the surface point (nan: none)
    bint lo_is_surface
    double width

cdef bint crossed(double side, double g0, double g1) noexcept nogil
cdef double bracket_sign(double side, double g_start, double g_end) noexcept nogil
cdef double lowest(const double* signs, const double* g, Py_ssize_t m) noexcept nogil
cdef bint is_bracket(double lo_f, double hi_f) noexcept nogil
cdef Illinois illinois_start(double lo, double lo_f, double hi, double hi_f,
                             double width) noexcept nogil
cdef bint illinois_done(const Illinois* s) noexcept nogil
cdef double illinois_propose(const Illinois* s) noexcept nogil
cdef double illinois_secant(const Illinois* s) noexcept nogil
cdef bint illinois_close(const Illinois* s, double f_tol) noexcept nogil
cdef void illinois_mirror(Illinois* s, double sigma) noexcept nogil
cdef bint illinois_narrow(Illinois* s, double sigma, double f) noexcept nogil
cdef double secant_fraction(double a, double b) noexcept nogil
cdef double dip_sign(double side, double g0, double g1) noexcept nogil
cdef bint dips(double s, double g0, double r0, double g1, double r1) noexcept nogil
cdef double hermite_minimum(double s, double g0, double r0, double g1, double r1,
                            double hs, double* value) noexcept nogil
cdef bint all_finite(const double* v, Py_ssize_t n) noexcept nogil
cdef bint same(const double* x, const double* y, Py_ssize_t n) noexcept nogil
