"""The rule checker: prove any rrule/frule right against finite differences.

Public and meant for your own rules too::

    from rules.testing import check_frule, check_rrule, rand_tangent

    check_rrule(my_function, x, y)
    check_frule(my_function, x, y)

References are central finite differences of the primal function computed without the rule
(Richardson-extrapolated, with steps relative to the size of the entries each direction moves,
so inputs of size 1e-6 or 1e6 are checked as well as those of size 1), along an orthonormal
basis of each input's tangent space: complex inputs along real and imaginary parts,
``Symmetric``/``Hermitian`` inputs (or positions named in ``symmetric=``) along symmetric
directions only.

``RecordingTangent`` checks the other half of a rule's contract: that its algebra path takes a
user's tangent type with the protocol's operations only and never converts it to an ndarray.
"""

from rules.testing.forward import check_frule
from rules.testing.random import rand_tangent
from rules.testing.recording import RecordingTangent, TangentConversionError
from rules.testing.results import CheckReport, RuleCheckError
from rules.testing.reverse import check_rrule

__all__ = [
    "CheckReport",
    "RecordingTangent",
    "RuleCheckError",
    "TangentConversionError",
    "check_frule",
    "check_rrule",
    "rand_tangent",
]
