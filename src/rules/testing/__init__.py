"""The rule checker: prove any rrule/frule right against finite differences.

Public and meant for your own rules too::

    from rules.testing import check_frule, check_rrule, rand_tangent

    check_rrule(my_function, x, y)
    check_frule(my_function, x, y)

References are central finite differences of the primal function computed without the rule
(Richardson-extrapolated, with a step that adapts to each direction), along an orthonormal
basis of each input's tangent space: complex inputs along real and imaginary parts,
``Symmetric``/``Hermitian`` inputs (or positions named in ``symmetric=``) along symmetric
directions only.

``RecordingTangent`` checks the other half of a rule's contract: that its generic path takes a
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
