"""Adapter expressions as programs, and the one stack machine that evaluates them.

An expression (`formats.expressions`) is checked and turned into a `Program`:
(op, argument) instructions over a stack, reading variables from a vector V
and constants. This machine is its only evaluator, from Python
(`Program.evaluate`) and from the compiled loops (`ProgramFunction`); no code
is generated from the user's text.

Each instruction is the float operation Python performs, with Python's
result and failure: `%` and `//` as Python's floats, `**` as math.pow, the
functions as the math module (its domain and overflow checks; `hypot` called
back), `floor` and `ceil` as float(math.floor(x)). Values Python holds as
integers (comparisons, `not`, arithmetic among them) are marked: their zero
has no sign. An operation that raises in Python returns its failure code
(`REASONS`); a non-finite value Python carries on is carried on.
"""

from libc.math cimport (
    acos, asin, atan, atan2, ceil, copysign, cos, cosh, exp, fabs, floor,
    fmod, isfinite, isinf, isnan, log, log10, sin, sinh, sqrt, tan, tanh,
)
from libc.math cimport pow as c_pow
from libc.stdint cimport int64_t
from libc.string cimport memcpy

import math

import numpy as np

from ..core._functions cimport Function


# The machine's instructions: C constants, and plain ints of this module that
# `formats.expressions` emits (a named cpdef enum builds an IntEnum at each import).
cpdef enum:
    CONST = 0  # push consts[arg], a float
    VAR = 1  # push V[arg]
    NEG = 2
    NOT = 3
    ADD = 4
    SUB = 5
    MUL = 6
    DIV = 7
    MOD = 8
    FLOORDIV = 9
    POW = 10  # math.pow
    EQ = 11
    NE = 12
    LT = 13
    LE = 14
    GT = 15
    GE = 16
    CALL1 = 17  # ONE_ARGUMENT[arg] of the top value
    CALL2 = 18  # TWO_ARGUMENTS[arg] of the top two
    MIN = 19  # of the top arg values
    MAX = 20
    AND = 21  # keep the top and jump to arg if it decides, else drop it
    OR = 22
    IF_FALSE = 23  # pop, and jump to arg if it is false
    JUMP = 24  # jump to arg
    INT = 25  # push consts[arg], an integer (a comparison folded at check time)
    HYPOT = 26  # math.hypot of the top arg values


cdef enum Failure:
    ZERO_DIVISION = 1
    DOMAIN = 2
    OVERFLOW = 3
    NAN_INTEGER = 4


# The failures in the words Python's exceptions use (`formats.expressions`).
REASONS = {
    ZERO_DIVISION: "division by zero",
    DOMAIN: "math domain error",
    OVERFLOW: "overflow (the result exceeds the largest float)",
    NAN_INTEGER: "cannot convert float NaN to integer",
}

# The functions of CALL1 and CALL2, by their number.
ONE_ARGUMENT = (
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp",
    "log", "log10", "sqrt", "abs", "floor", "ceil",
)  # fmt: skip
TWO_ARGUMENTS = ("atan2", "copysign", "log")  # log(x, base)
cdef int64_t _FLOOR = ONE_ARGUMENT.index("floor")
# sinh, cosh and exp: an infinite result from a finite argument is an overflow in
# Python (math range error); for the other functions it is a domain error.
cdef int64_t _SINH = ONE_ARGUMENT.index("sinh"), _COSH = ONE_ARGUMENT.index("cosh")
cdef int64_t _EXP = ONE_ARGUMENT.index("exp")


cdef inline int _checked(double x, double r, bint can_overflow) noexcept nogil:
    """The math module's check of r = f(x): a domain error or an overflow."""
    if isnan(r) and not isnan(x):
        return DOMAIN
    if isinf(r) and isfinite(x):
        return OVERFLOW if can_overflow else DOMAIN
    return 0


cdef inline double _mod(double a, double b) noexcept nogil:
    """a % b as Python's floats compute it (b != 0): the sign of b."""
    cdef double m = fmod(a, b)
    if m != 0.0:
        if (b < 0.0) != (m < 0.0):
            m += b
    else:
        m = copysign(0.0, b)
    return m


cdef inline double _floordiv(double a, double b) noexcept nogil:
    """a // b as Python's floats compute it (b != 0), from the remainder."""
    cdef double m = fmod(a, b), q = (a - m) / b, f
    if m != 0.0 and (b < 0.0) != (m < 0.0):
        q -= 1.0
    if q == 0.0:
        return copysign(0.0, a / b)
    f = floor(q)
    if q - f > 0.5:
        f += 1.0
    return f


cdef inline int _pow(double a, double b, double* r) noexcept nogil:
    """math.pow(a, b) with its domain and overflow errors."""
    r[0] = c_pow(a, b)
    if isfinite(a) and isfinite(b) and not isfinite(r[0]):
        if isnan(r[0]) or a == 0.0:
            return DOMAIN
        return OVERFLOW
    return 0


ctypedef double (*_Function)(double) noexcept nogil
# The C library's functions of ONE_ARGUMENT before floor, in its order.
cdef _Function[14] _UNARY = [sin, cos, tan, asin, acos, atan, sinh, cosh, tanh,
                             exp, log, log10, sqrt, fabs]


cdef int _call1(int64_t k, double x, double* r) noexcept nogil:
    """ONE_ARGUMENT[k](x) as the math module computes it."""
    if k < _FLOOR:
        r[0] = _UNARY[k](x)
        return _checked(x, r[0], k == _SINH or k == _COSH or k == _EXP)
    if isnan(x):
        return NAN_INTEGER
    if isinf(x):
        return OVERFLOW
    r[0] = floor(x) if k == _FLOOR else ceil(x)
    if r[0] == 0.0:
        r[0] = 0.0
    return 0


cdef int _call2(int64_t k, double a, double b, double* r) noexcept nogil:
    """TWO_ARGUMENTS[k](a, b) as the math module computes it (log(a) / log(base))."""
    cdef double base
    cdef int failure
    if k == 0:
        r[0] = atan2(a, b)
        return 0
    if k == 1:
        r[0] = copysign(a, b)
        return 0
    r[0] = log(a)
    failure = _checked(a, r[0], False)
    if failure:
        return failure
    base = log(b)
    failure = _checked(b, base, False)
    if failure:
        return failure
    if base == 0.0:
        return ZERO_DIVISION
    r[0] = r[0] / base
    return 0


cdef int _binary(int64_t op, double a, double b, double* r) noexcept nogil:
    """a op b for the arithmetic and comparison instructions."""
    if op == ADD:
        r[0] = a + b
    elif op == SUB:
        r[0] = a - b
    elif op == MUL:
        r[0] = a * b
    elif op == DIV or op == MOD or op == FLOORDIV:
        if b == 0.0:
            return ZERO_DIVISION
        r[0] = a / b if op == DIV else (_mod(a, b) if op == MOD else _floordiv(a, b))
    elif op == POW:
        return _pow(a, b, r)
    elif op == EQ:
        r[0] = a == b
    elif op == NE:
        r[0] = a != b
    elif op == LT:
        r[0] = a < b
    elif op == LE:
        r[0] = a <= b
    elif op == GT:
        r[0] = a > b
    else:
        r[0] = a >= b
    return 0


cdef int _extreme(double* stack, unsigned char* ints, Py_ssize_t top, int64_t n,
                  bint is_min) noexcept nogil:
    """Leave min (or max) of the top n values in stack[top - n], the first of equals."""
    cdef Py_ssize_t first = top - n, k
    cdef double best = stack[first]
    cdef unsigned char best_int = ints[first]
    for k in range(first + 1, top):
        if (stack[k] < best) if is_min else (stack[k] > best):
            best, best_int = stack[k], ints[k]
    stack[first], ints[first] = best, best_int
    return 0


cdef int execute(const int64_t* code, Py_ssize_t n, const double* consts,
                 const double* v, double* stack, unsigned char* ints, double* value,
                 bint* is_int) except -1:
    """Run the n instructions over V = v: 0, or the Failure."""
    cdef Py_ssize_t i = 0, top = 0
    cdef int64_t op, arg
    cdef double r = 0.0
    cdef bint both_int
    cdef int failure
    while i < n:
        op, arg = code[2 * i], code[2 * i + 1]
        i += 1
        if op == CONST or op == INT or op == VAR:
            stack[top] = v[arg] if op == VAR else consts[arg]
            ints[top] = op == INT
            top += 1
            continue
        if op == AND or op == OR:
            if (stack[top - 1] != 0.0) == (op == OR):
                i = arg  # decided: the value stays
            else:
                top -= 1
            continue
        if op == IF_FALSE:
            top -= 1
            if stack[top] == 0.0:
                i = arg
            continue
        if op == JUMP:
            i = arg
            continue
        if op == MIN or op == MAX:
            _extreme(stack, ints, top, arg, op == MIN)
            top -= arg - 1
            continue
        if op == HYPOT:  # Python's math.hypot of the top arg values
            stack[top - arg] = math.hypot(*[stack[k] for k in range(top - arg, top)])
            top -= arg - 1
            ints[top - 1] = False
            continue
        if op == NEG:
            r = -stack[top - 1]
        elif op == NOT:
            r = stack[top - 1] == 0.0
            ints[top - 1] = True
        elif op == CALL1:
            failure = _call1(arg, stack[top - 1], &r)
            if failure:
                return failure
            ints[top - 1] = False
        else:
            top -= 1
            both_int = ints[top - 1] and ints[top]
            if op == CALL2:
                failure = _call2(arg, stack[top - 1], stack[top], &r)
            else:
                failure = _binary(op, stack[top - 1], stack[top], &r)
            if failure:
                return failure
            # Python's result is an integer: a comparison, or int op int but / and **
            ints[top - 1] = op != CALL2 and (
                EQ <= op <= GE or both_int and op != DIV and op != POW)
        if ints[top - 1] and r == 0.0:
            r = 0.0  # an integer's zero has no sign
        stack[top - 1] = r
    value[0], is_int[0] = stack[0], ints[0]
    return 0


cdef class Program:
    """An expression as instructions over V and constants: `code` (n, 2)
    int64 rows (op, argument), `consts` (pushed by CONST and INT), the `names` it
    reads, their `slots` in V, and its `source` text for messages."""
    cdef readonly object code, consts
    cdef readonly tuple names, slots
    cdef readonly str source
    cdef const int64_t[:, ::1] _code
    cdef const double[::1] _consts
    cdef double[::1] _stack
    cdef unsigned char[::1] _ints

    def __init__(self, code, consts, names, str source, slots=None):
        self.code = np.ascontiguousarray(code, dtype=np.int64).reshape(-1, 2)
        self.consts = np.ascontiguousarray(consts, dtype=float)
        self.names = tuple(names)
        self.slots = tuple(range(len(self.names)) if slots is None else slots)
        self.source = source
        self._code, self._consts = self.code, self.consts
        self._stack = np.empty(len(self.code) + 1)  # a push per instruction at most
        self._ints = np.empty(len(self.code) + 1, dtype=np.uint8)

    def bound(self, places) -> Program:
        """Return the program reading each name from V[places[name]]."""
        slots = [places[name] for name in self.names]
        code = self.code.copy()
        reads = code[:, 0] == VAR
        code[reads, 1] = [slots[self.slots.index(k)] for k in code[reads, 1]]
        return Program(code, self.consts, self.names, self.source, slots)

    cdef int run(self, const double* v, double* value, bint* is_int) except -1:
        """Evaluate over V = v: 0, or the failure (`execute`)."""
        return execute(&self._code[0, 0], self._code.shape[0],
                       &self._consts[0] if self._consts.shape[0] else NULL, v,
                       &self._stack[0], &self._ints[0], value, is_int)

    def evaluate(self, v):
        """Return (value, failure, is_int) over V = v (a sequence of floats)."""
        cdef double[::1] values = np.ascontiguousarray(v, dtype=float)
        cdef double value = 0.0
        cdef bint is_int = False
        failure = self.run(&values[0] if len(values) else NULL, &value, &is_int)
        return value, failure, bool(is_int)


cdef class ProgramFunction(Function):
    """Programs over V = [t, x, ...] as a Function: out[k] = programs[k]."""

    def __init__(self, programs, failures, Py_ssize_t n_in, v, str what):
        super().__init__(n_in, len(programs), what)
        self.programs, self.failures = tuple(programs), tuple(failures)
        self.v = np.array(v, dtype=float)

    cdef int call(self, double t, const double* x, double* out) except -1:
        self.v[0] = t
        if self.n_in:
            memcpy(&self.v[1], x, self.n_in * sizeof(double))
        return self.run_all(t, out)

    cdef int run_all(self, double t, double* out) except -1:
        """Run every program over V (filled by the caller)."""
        cdef Py_ssize_t k
        cdef Program program
        cdef double value = 0.0
        cdef bint is_int = False
        cdef int failure
        for k in range(len(self.programs)):
            program = self.programs[k]
            failure = program.run(&self.v[0], &value, &is_int)
            if failure or not isfinite(value):
                values = {n: self.v[s] for n, s in zip(program.names, program.slots)}
                raise self.failures[k](t, values, failure, value)
            out[k] = value
        return 0


def program_function(program, state_names, constants, failure, str what):
    """Return `program` over V = [t, x, constants] as a ProgramFunction of
    (t, x), or None if it reads another name. A name is t, else a state, else a
    constant."""
    places = {"t": 0, **{name: 1 + i for i, name in enumerate(state_names)}}
    v = values_with_constants(program, places, constants)
    if v is None:
        return None
    return ProgramFunction(
        [program.bound(places)], [failure], len(state_names), v, what
    )


def values_with_constants(program, dict places, constants):
    """Return V: zeros at `places`, then the constants it reads; None if missing."""
    v = [0.0] * len(places)
    for name in program.names:
        if name not in places:
            if name not in constants:
                return None
            places[name] = len(v)
            v.append(float(constants[name]))
    return v
