r"""Eight-lane SIMD values for numba kernels: `Vec8` and the few operations the NLM kernels use.

Why: the NLM kernels are small dense products over channel rows of 8 (``[8] @ [8, 8]`` per
permutation) and lane-wise max/min with argmax. numba's loop vectoriser does not vectorise such
short fixed-length loops (LLVM fully unrolls them first, and numba switches its SLP vectoriser
off: numba#8852), and with a runtime channel count it keeps the accumulators in memory, so written
as plain loops they run as scalar code at a fraction of the machine's rate. A `Vec8` is one LLVM
``<8 x float>`` / ``<8 x double>`` value that lives in a register: accumulators stay in registers
across loop iterations and every operation below is one vector instruction (or a short sequence).
Channel counts are padded to multiples of 8 by the callers.

Arrays are addressed by a *flat element offset* into a C-contiguous array (``arr.ndim`` is
irrelevant; no bounds or wraparound checks, so the caller guarantees ``0 <= i`` and
``i + 8 <= arr.size``). The lane type is the array's dtype (float32 or float64).

Operations (all inlined into the calling kernel):

* ``vload(arr, i)``, ``vstore(arr, i, v)``, ``vbcast(arr, i)`` (one element in every lane),
  ``vfill(arr, x)`` (``x`` converted to ``arr``'s dtype, in every lane);
* ``vadd(a, b)``, ``vsub(a, b)``, ``vmul(a, b)``, ``vfma(a, b, c) = a * b + c``;
* ``vgt_select(a, b, x, y)``: lane-wise ``x if a > b else y`` (max/min/argmax without masks),
  ``veq_select(a, b, x, y)``: ``x if a == b else y``;
* ``vsigmoid(v)``: ``1 / (1 + exp(-v))`` with a vectorised ``exp`` (Cody-Waite range reduction,
  Taylor polynomial of degree 7 (float32) / 13 (float64) on ``|r| <= ln(2)/2``, exponent by bit
  arithmetic, the argument clamped to the normal range of ``exp``): within 3 ulp of the correctly
  rounded value (measured: 2.3) down to ``σ(v) = exp(-87)`` (float32) / ``exp(-708)`` (float64),
  below which the absolute error stays under that bound.
"""

from __future__ import annotations

import math

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.datamodel import models, register_default
from numba.extending import intrinsic

__all__ = [
    "LANES",
    "Vec8",
    "vadd",
    "vbcast",
    "veq_select",
    "vfill",
    "vfma",
    "vgt_select",
    "vload",
    "vmul",
    "vsigmoid",
    "vstore",
    "vsub",
]

LANES = 8
_I32 = ir.IntType(32)


class Vec8(types.Type):
    """numba type of eight lanes of ``dtype`` (float32 or float64), held in one SIMD value."""

    def __init__(self, dtype: types.Float):
        self.dtype = dtype
        super().__init__(name=f"Vec8({dtype})")


@register_default(Vec8)
class _Vec8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type: Vec8):
        super().__init__(dmm, fe_type, ir.VectorType(dmm.lookup(fe_type.dtype).get_value_type(), LANES))


def _check_array(arr) -> None:
    if not (isinstance(arr, types.Array) and arr.layout == "C" and isinstance(arr.dtype, types.Float)):
        raise TypeError(f"Vec8 needs a C-contiguous float array, got {arr}")


def _elem_ptr(context, builder, aty, arr, idx):
    data = context.make_array(aty)(context, builder, arr).data
    return builder.gep(data, [idx])


def _vector_intrinsic(builder, name: str, vty: ir.VectorType, n_args: int):
    """Declaration of the LLVM intrinsic ``llvm.<name>.v8f32`` / ``.v8f64`` (lane-wise on ``vty``)."""
    suffix = f"v{vty.count}f{32 if vty.element == ir.FloatType() else 64}"
    return cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vty, [vty] * n_args), f"llvm.{name}.{suffix}"
    )


def _splat(builder, vty: ir.VectorType, x):
    v = builder.insert_element(ir.Constant(vty, ir.Undefined), x, ir.Constant(_I32, 0))
    return builder.shuffle_vector(
        v, ir.Constant(vty, ir.Undefined), ir.Constant(ir.VectorType(_I32, LANES), [0] * LANES)
    )


@intrinsic
def vload(typingctx, arr, idx):
    """Lanes ``arr.flat[i : i + 8]``."""
    _check_array(arr)
    vt = Vec8(arr.dtype)

    def codegen(context, builder, sig, args):
        ptr = _elem_ptr(context, builder, sig.args[0], args[0], args[1])
        vty = context.get_value_type(vt)
        return builder.load(builder.bitcast(ptr, vty.as_pointer()), align=arr.dtype.bitwidth // 8)

    return vt(arr, types.intp), codegen


@intrinsic
def vstore(typingctx, arr, idx, v):
    """``arr.flat[i : i + 8] = v``."""
    _check_array(arr)

    def codegen(context, builder, sig, args):
        ptr = _elem_ptr(context, builder, sig.args[0], args[0], args[1])
        builder.store(args[2], builder.bitcast(ptr, args[2].type.as_pointer()), align=arr.dtype.bitwidth // 8)
        return context.get_dummy_value()

    return types.void(arr, types.intp, v), codegen


@intrinsic
def vbcast(typingctx, arr, idx):
    """``arr.flat[i]`` in every lane."""
    _check_array(arr)
    vt = Vec8(arr.dtype)

    def codegen(context, builder, sig, args):
        x = builder.load(_elem_ptr(context, builder, sig.args[0], args[0], args[1]))
        return _splat(builder, context.get_value_type(vt), x)

    return vt(arr, types.intp), codegen


@intrinsic
def vfill(typingctx, arr, x):
    """``x`` (any number, converted to ``arr``'s dtype) in every lane."""
    _check_array(arr)
    vt = Vec8(arr.dtype)

    def codegen(context, builder, sig, args):
        val = context.cast(builder, args[1], sig.args[1], arr.dtype)
        return _splat(builder, context.get_value_type(vt), val)

    return vt(arr, x), codegen


def _binary(op: str):
    def typer(typingctx, a, b):
        if not (isinstance(a, Vec8) and a == b):
            return None

        def codegen(context, builder, sig, args):
            return getattr(builder, op)(args[0], args[1])

        return a(a, b), codegen

    return typer


vadd = intrinsic(_binary("fadd"))
vsub = intrinsic(_binary("fsub"))
vmul = intrinsic(_binary("fmul"))
vadd.__doc__, vsub.__doc__, vmul.__doc__ = "``a + b``", "``a - b``", "``a * b``"


@intrinsic
def vfma(typingctx, a, b, c):
    """``a * b + c`` (one fused multiply-add)."""
    if not (isinstance(a, Vec8) and a == b == c):
        return None

    def codegen(context, builder, sig, args):
        fn = _vector_intrinsic(builder, "fma", args[0].type, 3)
        return builder.call(fn, list(args))

    return a(a, b, c), codegen


@intrinsic
def veq_select(typingctx, a, b, x, y):
    """Lane-wise ``x if a == b else y``."""
    if not (isinstance(a, Vec8) and a == b and isinstance(x, Vec8) and x == y):
        return None

    def codegen(context, builder, sig, args):
        return builder.select(builder.fcmp_ordered("==", args[0], args[1]), args[2], args[3])

    return x(a, b, x, y), codegen


@intrinsic
def vgt_select(typingctx, a, b, x, y):
    """Lane-wise ``x if a > b else y`` (false when either is NaN)."""
    if not (isinstance(a, Vec8) and a == b and isinstance(x, Vec8) and x == y):
        return None

    def codegen(context, builder, sig, args):
        return builder.select(builder.fcmp_ordered(">", args[0], args[1]), args[2], args[3])

    return x(a, b, x, y), codegen


# Cody-Waite split of ln 2 (the high part has trailing zero bits, so n * hi is exact) and the
# clamp of the exponent argument (exp stays finite and normal; sigmoid saturates well before).
_LN2_HI = {32: 0.693359375, 64: 0.6931471803691238164901733398437500}
_LN2_LO = {32: -2.12194440e-4, 64: 1.9082149292705877000220e-10}
_EXP_MAX = {32: 88.0, 64: 709.0}
_EXP_MIN = {32: -87.0, 64: -708.0}
_DEGREE = {32: 7, 64: 13}
_MANT = {32: (23, 127), 64: (52, 1023)}


@intrinsic
def vsigmoid(typingctx, v):
    """Lane-wise ``1 / (1 + exp(-v))``."""
    if not isinstance(v, Vec8):
        return None
    bits = v.dtype.bitwidth

    def codegen(context, builder, sig, args):
        vty = args[0].type
        fty = vty.element

        def const(x: float):
            return ir.Constant(vty, [ir.Constant(fty, x)] * LANES)

        y = builder.fneg(args[0])  # exp argument
        lo, hi = const(_EXP_MIN[bits]), const(_EXP_MAX[bits])
        y = builder.select(builder.fcmp_ordered("<", y, lo), lo, y)
        y = builder.select(builder.fcmp_ordered(">", y, hi), hi, y)
        rint = _vector_intrinsic(builder, "rint", vty, 1)
        n = builder.call(rint, [builder.fmul(y, const(1.0 / math.log(2.0)))])
        fma = _vector_intrinsic(builder, "fma", vty, 3)
        r = builder.call(fma, [n, const(-_LN2_HI[bits]), y])
        r = builder.call(fma, [n, const(-_LN2_LO[bits]), r])
        degree = _DEGREE[bits]
        p = const(1.0 / math.factorial(degree))
        for k in range(degree - 1, -1, -1):
            p = builder.call(fma, [p, r, const(1.0 / math.factorial(k))])
        shift, bias = _MANT[bits]
        ity = ir.VectorType(ir.IntType(bits), LANES)
        e = builder.fptosi(n, ity)
        e = builder.shl(builder.add(e, ir.Constant(ity, [bias] * LANES)), ir.Constant(ity, [shift] * LANES))
        ex = builder.fmul(p, builder.bitcast(e, vty))
        one = const(1.0)
        return builder.fdiv(one, builder.fadd(one, ex))

    return v(v), codegen
