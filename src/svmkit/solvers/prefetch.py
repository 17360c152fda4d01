"""A software prefetch for compiled loops that visit rows in a random order.

A coordinate-descent pass over a permutation touches every row's cache lines in an order the
hardware prefetcher cannot guess, so each update waits on main memory (≈ 160 ns per a9a row).
Asking for the row a few steps ahead overlaps those waits with the current update.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that the entry `index` places from the start of a C-ordered array (of any number of
    dimensions) will be read soon (LLVM's `llvm.prefetch`: read, high locality). A hint only:
    any index, even out of range, is harmless."""
    if not isinstance(array, types.Array) or array.layout != "C" or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        ary = context.make_array(array_type)(context, builder, args[0])
        pointer = builder.gep(ary.data, [args[1]])
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        declared = ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32])
        function = cgutils.get_or_insert_function(builder.module, declared, "llvm.prefetch.p0i8")
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen
