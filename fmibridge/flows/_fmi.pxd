# The types and function types of the C calls the compiled loops make, from the
# standard's headers (fmus/include, found by setup.py): FMI 2.0's
# fmi2FunctionTypes.h (FMI 1.0's calls, and FMI 3.0's Model Exchange calls, have
# the same C shapes), FMI 1.0's fmi1Functions.h where its char fmiBoolean differs
# (doStep, getBoolean) and FMI 3.0's fmi3FunctionTypes.h (`_fmi.pyx`); and the
# ports a compiled loop reads and writes, an FMU instance's through these calls.

from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                          uint32_t, uint64_t)


cdef extern from "fmi2FunctionTypes.h" nogil:
    ctypedef void* fmi2Component
    ctypedef unsigned int fmi2ValueReference
    ctypedef double fmi2Real
    ctypedef int fmi2Integer
    ctypedef int fmi2Boolean
    ctypedef enum fmi2Status:
        fmi2Warning
    ctypedef fmi2Status fmi2SetTimeTYPE(fmi2Component c, fmi2Real time)
    ctypedef fmi2Status fmi2SetContinuousStatesTYPE(fmi2Component c, const fmi2Real* x,
                                                    size_t nx)
    ctypedef fmi2Status fmi2GetDerivativesTYPE(fmi2Component c, fmi2Real* derivatives,
                                               size_t nx)
    ctypedef fmi2Status fmi2GetEventIndicatorsTYPE(fmi2Component c,
                                                   fmi2Real* eventIndicators,
                                                   size_t ni)
    ctypedef fmi2Status fmi2GetRealTYPE(fmi2Component c, const fmi2ValueReference* vr,
                                        size_t nvr, fmi2Real* value)
    ctypedef fmi2Status fmi2GetIntegerTYPE(fmi2Component c,
                                           const fmi2ValueReference* vr, size_t nvr,
                                           fmi2Integer* value)
    ctypedef fmi2Status fmi2SetRealTYPE(fmi2Component c, const fmi2ValueReference* vr,
                                        size_t nvr, const fmi2Real* value)
    ctypedef fmi2Status fmi2DoStepTYPE(
        fmi2Component c, fmi2Real currentCommunicationPoint,
        fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)


cdef extern from "fmi1Functions.h" nogil:
    ctypedef void* fmi1Component
    ctypedef unsigned int fmi1ValueReference
    ctypedef double fmi1Real
    ctypedef char fmi1Boolean
    ctypedef enum fmi1Status:
        fmi1Warning
    enum: fmi1True
    ctypedef fmi1Status fmi1GetBooleanTYPE(fmi1Component c,
                                           const fmi1ValueReference* vr, size_t nvr,
                                           fmi1Boolean* value)
    ctypedef fmi1Status fmi1DoStepTYPE(
        fmi1Component c, fmi1Real currentCommunicationPoint,
        fmi1Real communicationStepSize, fmi1Boolean newStep)


cdef extern from "fmi3FunctionTypes.h" nogil:
    ctypedef void* fmi3Instance
    ctypedef uint32_t fmi3ValueReference
    ctypedef double fmi3Float64
    ctypedef float fmi3Float32
    ctypedef int8_t fmi3Int8
    ctypedef uint8_t fmi3UInt8
    ctypedef int16_t fmi3Int16
    ctypedef uint16_t fmi3UInt16
    ctypedef int32_t fmi3Int32
    ctypedef uint32_t fmi3UInt32
    ctypedef int64_t fmi3Int64
    ctypedef uint64_t fmi3UInt64
    ctypedef bint fmi3Boolean  # C's bool (stdbool.h), as the header says
    ctypedef enum fmi3Status:
        fmi3OK
    ctypedef fmi3Status fmi3GetFloat64TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3Float64* values, size_t nValues)
    ctypedef fmi3Status fmi3GetFloat32TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3Float32* values, size_t nValues)
    ctypedef fmi3Status fmi3GetInt8TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3Int8* values, size_t nValues)
    ctypedef fmi3Status fmi3GetUInt8TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3UInt8* values, size_t nValues)
    ctypedef fmi3Status fmi3GetInt16TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3Int16* values, size_t nValues)
    ctypedef fmi3Status fmi3GetUInt16TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3UInt16* values, size_t nValues)
    ctypedef fmi3Status fmi3GetInt32TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3Int32* values, size_t nValues)
    ctypedef fmi3Status fmi3GetUInt32TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3UInt32* values, size_t nValues)
    ctypedef fmi3Status fmi3GetInt64TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3Int64* values, size_t nValues)
    ctypedef fmi3Status fmi3GetUInt64TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3UInt64* values, size_t nValues)
    ctypedef fmi3Status fmi3GetBooleanTYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, fmi3Boolean* values, size_t nValues)
    ctypedef fmi3Status fmi3SetFloat64TYPE(
        fmi3Instance instance, const fmi3ValueReference* valueReferences,
        size_t nValueReferences, const fmi3Float64* values, size_t nValues)
    ctypedef fmi3Status fmi3DoStepTYPE(
        fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
        fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
        fmi3Boolean* eventHandlingNeeded, fmi3Boolean* terminateSimulation,
        fmi3Boolean* earlyReturn, fmi3Float64* lastSuccessfulTime)


# the C type of a get's values, in the order of ELEMENTS (numpy's codes); B1 is
# C's bool (fmi3Boolean)
cdef enum Element:
    F8, F4, I4, U1, I1, I2, U2, U4, I8, U8, B1

# the calls of a table, in the order of ROLES
cdef enum:
    SET_TIME, SET_STATES, DERIVATIVES, INDICATORS, GET_REALS, SET_REALS, DO_STEP,
    N_ROLES


cdef struct StepEnd:  # where a doStep ended: FMI 3.0's flags (FMI 1.0, 2.0: none)
    bint event
    bint terminate
    bint early
    double last  # the last successful time


cdef class FmiFunctions:
    cdef void* component
    cdef size_t handle
    cdef void* address[N_ROLES]
    cdef tuple names
    cdef object error
    cdef public object logger
    cdef int set_time(self, double t) except -1
    cdef int set_states(self, const double* x, size_t n) except -1
    cdef int get_derivatives(self, double* out, size_t n) except -1
    cdef int get_indicators(self, double* out, size_t n) except -1
    cdef int get_reals(self, const unsigned int* vrs, size_t n, double* out) except -1
    cdef int set_reals(self, const unsigned int* vrs, size_t n,
                       const double* values) except -1
    cdef int get_values(self, Element kind, void* fn, str name,
                        const unsigned int* vrs, size_t n, void* out) except -1
    cdef int do_step(self, double t, double h, StepEnd* end) except -1
    cdef int check(self, str name, int status) except -1
    cdef int log(self, str name, int role, tuple values, int status) except -1
    # the C calls that differ by version (FMI 2.0's; the FMI 1.0 and 3.0 tables
    # override them)
    cdef int _get_reals(self, const unsigned int* vrs, size_t n, double* out
                        ) noexcept nogil
    cdef int _set_reals(self, const unsigned int* vrs, size_t n, const double* values
                        ) noexcept nogil
    cdef int _get_values(self, Element kind, void* fn, const unsigned int* vrs,
                         size_t n, void* out) noexcept nogil
    cdef int _do_step(self, double t, double h, StepEnd* end) noexcept nogil


cdef class Ports:
    cdef readonly Py_ssize_t n
    cdef object reader, writer
    cdef int read(self, double* values) except -1
    cdef int write(self, const double* values) except -1
