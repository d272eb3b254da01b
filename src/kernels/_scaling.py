"""The power-of-two scale that the forward factorization kernels apply to a matrix first."""

import math

from kernels._jit import jit

# 2^1022 is the largest power of two whose product with the smallest subnormal is still a
# normal number; 2^1075 (what a subnormal largest entry asks for) overflows to inf.
_MAX_EXPONENT = 1022


@jit
def unit_scale(m):
    """The power of two ``f`` with ``f m`` in [0.5, 1) for a largest magnitude ``m``.

    Exact (a power of two), so the factors of ``f A`` are those of ``A`` up to ``f``, and the
    squares in reflectors and rotations stay far from over- and underflow. ``1.0`` for a zero,
    infinite or NaN ``m``. A subnormal ``m`` gets ``2^1022`` (finite), which still lifts every
    entry of the matrix into the normal range.
    """
    if not (m > 0 and m < math.inf):
        return 1.0
    return math.ldexp(1.0, min(-math.frexp(m)[1], _MAX_EXPONENT))
