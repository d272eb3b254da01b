"""The power-of-two scale that the forward factorization kernels apply to a matrix first."""

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from kernels._jit import jit

# 2^1022 is the largest power of two whose product with the smallest subnormal is still a
# normal number; 2^1075 (what a subnormal largest entry asks for) overflows to inf.
_MAX_EXPONENT = 1022


@intrinsic
def _bits_of(typingctx, x):
    """The IEEE 754 bits of a float64, as an int64 (a bit cast, no conversion)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _float_of(typingctx, x):
    """The float64 whose IEEE 754 bits are the int64 ``x`` (a bit cast, no conversion)."""
    if x != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@jit
def unit_scale(m):
    """The power of two ``f`` with ``f m`` in [0.5, 1) for a largest magnitude ``m``.

    Exact (a power of two), so the factors of ``f A`` are those of ``A`` up to ``f``, and the
    squares in reflectors and rotations stay far from over- and underflow. ``1.0`` for a zero,
    infinite or NaN ``m``. A subnormal ``m`` gets ``2^1022`` (finite), which still lifts every
    entry of the matrix into the normal range.

    That is ``ldexp(1, min(-e, 1022))`` with ``e`` the exponent of ``frexp(m)``, read from the
    bits of ``m`` instead: for a normal ``m`` of biased exponent ``E``, ``e = E - 1022``, and a
    subnormal one (``E = 0``) gets ``2^1022`` as well. Both library calls took 16 ns, about half
    of the load of a 4x4 matrix into the Jacobi kernels' lane blocks.
    """
    x = np.float64(m)
    if not (x > 0 and x < math.inf):
        return 1.0
    biased = _bits_of(x) >> 52  # x > 0: no sign bit
    if biased >= 2045:  # m >= 2^1022: the scale is a subnormal power of two
        return math.ldexp(1.0, _MAX_EXPONENT - biased)
    return _float_of((2045 - biased) << 52)  # 2^(1022 - biased), biased exponent 2045 - biased
