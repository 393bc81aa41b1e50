"""TRANSITION: the two numba intrinsics `coupled_kernels` still imports.

One FMU's calls are compiled in `flows._fmu` (Cython, built at install). Until
the coupled flows are ported off numba, `coupled_kernels` calls fmiXSetTime and
the functions of the form ``fmiXFunction(component, double *data, size_t size)``
through these; delete this module with `coupled_kernels`.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

F64, I32, U64 = types.float64, types.int32, types.uint64


@intrinsic
def _call_set_time(typingctx, address, component, t):
    """Call fmiXSetTime(component, t) at `address`; return its status."""

    def codegen(context, builder, signature, args):
        void_p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [void_p, ir.DoubleType()])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, [builder.inttoptr(args[1], void_p), args[2]])

    return I32(U64, U64, F64), codegen


@intrinsic
def _call_buffer(typingctx, address, component, data, size):
    """Call fmiXFunction(component, double *data, size_t size); return its status."""

    def codegen(context, builder, signature, args):
        void_p, double_p = ir.IntType(8).as_pointer(), ir.DoubleType().as_pointer()
        size_t = context.get_value_type(types.uintp)
        fnty = ir.FunctionType(ir.IntType(32), [void_p, double_p, size_t])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        pointers = [
            builder.inttoptr(args[1], void_p),
            builder.inttoptr(args[2], double_p),
        ]
        return builder.call(fn, [*pointers, builder.zext(args[3], size_t)])

    return I32(U64, U64, U64, U64), codegen
