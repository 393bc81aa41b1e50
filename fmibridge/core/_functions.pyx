"""Functions of (t, x) as compiled loops call them: one interface, several sources.

A Python function gets a new float64 x it may keep; its value is checked for
size, an error naming the function (`what`). Finiteness is for the loops.
"""

from libc.string cimport memcpy

import numpy as np

cimport numpy as cnp

from .errors import FmibridgeError

cnp.import_array()


cdef object new_array(const double* x, Py_ssize_t n):
    """Return a new float64 array holding x[:n]."""
    cdef cnp.npy_intp dims = n
    array = cnp.PyArray_SimpleNew(1, &dims, cnp.NPY_DOUBLE)
    if n:
        memcpy(cnp.PyArray_DATA(array), x, n * sizeof(double))
    return array


cdef class Function:
    """A function of (t, x) that compiled loops call: n_in values in, n_out
    out; `call(t, x, out)` writes them and returns 0, or raises."""

    def __init__(self, Py_ssize_t n_in, Py_ssize_t n_out, str what):
        self.n_in, self.n_out, self.what = n_in, n_out, what

    cdef int call(self, double t, const double* x, double* out) except -1:
        raise NotImplementedError(type(self).__name__)

    def __call__(self, double t, x):
        """Return the values at (t, x) as a float64 array (from Python)."""
        cdef double[::1] xs = np.ascontiguousarray(x, dtype=float)
        if xs.shape[0] != self.n_in:
            raise FmibridgeError(
                f"{self.what} takes {self.n_in} state value(s), got {xs.shape[0]}."
            )
        out = np.empty(self.n_out)
        cdef double[::1] values = out
        self.call(t, &xs[0] if self.n_in else NULL, &values[0] if self.n_out else NULL)
        return out


cdef class PythonVector(Function):
    """fn(t, x) -> n_out values, a Python function."""
    cdef object fn

    def __init__(self, fn, Py_ssize_t n_in, Py_ssize_t n_out, str what):
        super().__init__(n_in, n_out, what)
        self.fn = fn

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef double[::1] values
        value = self.fn(t, new_array(x, self.n_in))
        try:
            values = np.ascontiguousarray(value, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            values = None
        if values is None or values.shape[0] != self.n_out:
            got = repr(value) if values is None else (
                f"{values.shape[0]} value(s) {np.asarray(values).tolist()}"
            )
            raise FmibridgeError(
                f"{self.what} returned {got} at t = {t!r}, x = "
                f"{new_array(x, self.n_in).tolist()}; expected {self.n_out} value(s)."
            )
        if self.n_out:
            memcpy(out, &values[0], self.n_out * sizeof(double))
        return 0


cdef class PythonScalars(Function):
    """out[i] = fns[i](t, x), one Python function per value (a mode's guards)."""
    cdef tuple fns

    def __init__(self, fns, Py_ssize_t n_in, str what):
        super().__init__(n_in, len(fns), what)
        self.fns = tuple(fns)

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef Py_ssize_t i
        if not self.fns:
            return 0
        point = new_array(x, self.n_in)
        for i in range(len(self.fns)):
            out[i] = float(self.fns[i](t, point))
        return 0


ctypedef void (*c_vector)(double, const double*, double*) noexcept nogil


cdef class CAddress(Function):
    """A C function void f(double t, const double *x, double *out) at
    `address`; `keep` holds what owns the code (a numba cfunc)."""
    cdef c_vector fn
    cdef object keep

    def __init__(self, size_t address, Py_ssize_t n_in, Py_ssize_t n_out, str what,
                 keep=None):
        super().__init__(n_in, n_out, what)
        if address == 0:
            raise FmibridgeError(f"{what}: no C function (address 0).")
        self.fn = <c_vector> address
        self.keep = keep

    cdef int call(self, double t, const double* x, double* out) except -1:
        self.fn(t, x, out)
        return 0


cdef class Gathered(Function):
    """out[i] = parts[part_of[i]](t, x)[entry_of[i]], each part called once
    per point."""
    cdef readonly tuple parts
    cdef Py_ssize_t[::1] part_of, entry_of, starts
    cdef double[::1] values

    def __init__(self, parts, part_of, entry_of, Py_ssize_t n_in, str what):
        super().__init__(n_in, len(part_of), what)
        self.parts = tuple(parts)
        self.part_of = np.asarray(part_of, dtype=np.intp)
        self.entry_of = np.asarray(entry_of, dtype=np.intp)
        sizes = [(<Function> p).n_out for p in self.parts]
        self.starts = np.cumsum([0] + sizes).astype(np.intp)
        self.values = np.empty(max(sum(sizes), 1))

    cdef int call(self, double t, const double* x, double* out) except -1:
        cdef Py_ssize_t i, k
        cdef Function part
        for k in range(len(self.parts)):
            part = self.parts[k]
            part.call(t, x, &self.values[self.starts[k]])
        for i in range(self.n_out):
            out[i] = self.values[self.starts[self.part_of[i]] + self.entry_of[i]]
        return 0
