"""The rule checker: prove any rrule/frule right against finite differences.

Public and meant for your own rules too::

    from rules.testing import check_frule, check_rrule, rand_tangent

    check_rrule(my_function, x, y)
    check_frule(my_function, x, y)

References are central finite differences of the primal function computed without the rule
(five-point stencil, step scaled to the input), along an orthonormal basis of each input's
tangent space: complex inputs along real and imaginary parts, ``Symmetric``/``Hermitian`` inputs
(or positions named in ``symmetric=``) along symmetric directions only.
"""

from rules.testing.check import CheckReport, RuleCheckError, check_frule, check_rrule
from rules.testing.random import rand_tangent

__all__ = ["CheckReport", "RuleCheckError", "check_frule", "check_rrule", "rand_tangent"]
