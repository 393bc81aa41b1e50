# The first time at which k polynomials (rows of `width` power coefficients,
# lowest degree first) are all non-negative (Esposito and Kumar, Sec. 2.4).

cpdef enum:
    MAX_WIDTH = 5  # coefficients of a polynomial of degree 4 (Adams order 4)

cdef Py_ssize_t first_reach_scratch(Py_ssize_t k, Py_ssize_t width) noexcept nogil
cdef double first_reach_in(const double* polys, Py_ssize_t k, Py_ssize_t width,
                           double upper, double* scratch) noexcept nogil
