# The variable-step Adams PECE formulas (Esposito and Kumar, eqs. 4-5, 16).

cpdef enum:
    MAX_ORDER = 4  # the paper's experiments use a fourth-order predictor-corrector

cdef void write_basis(const double* nodes, Py_ssize_t m, double* basis,
                      Py_ssize_t stride) noexcept nogil
cdef void write_predictor(const double* basis, Py_ssize_t stride, Py_ssize_t m,
                          const double* forces, Py_ssize_t n, double scale,
                          double* predictor) noexcept nogil
cdef void write_prediction(const double* x, Py_ssize_t n, const double* predictor,
                           Py_ssize_t rows, double u, double* out) noexcept nogil
cdef double corrector(const double* nodes, Py_ssize_t m, double u,
                      double* weights) noexcept nogil
cdef void correct(const double* x, Py_ssize_t n, const double* weights, Py_ssize_t m,
                  const double* forces, double scale, const double* f_predicted,
                  double* out) noexcept nogil
cdef double starting_step(const double* x, const double* f, Py_ssize_t n, double tol,
                          double rtol, double h_max) noexcept nogil
