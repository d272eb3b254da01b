"""Differentiate plain numpy programs: a reverse- and forward-mode driver over the rules.

``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacobian``, ``elementwise_grad``, ``hessian``
and ``hvp`` trace a
function written with ``import numpy as np`` and combine the registered ``rrule``/``frule`` of
every call it makes with the tangent algebra; ``primitive`` makes a function of your own one
traced call through its rules, and :mod:`rules.autodiff.scipy` mirrors scipy's modules. The
driver uses the rules only through the registry, so a rule registered later is used at once.
``docs/autodiff.md`` explains what is traced and what is not.

* :mod:`rules.autodiff.api`: the entry points; :mod:`rules.autodiff.higher` ``hessian`` and
  ``hvp`` (second order, by nesting them).
* :mod:`rules.autodiff.traced`: the traced value; :mod:`rules.autodiff.methods` its ndarray
  methods; :mod:`rules.autodiff.dispatch` the routing of a call to its trace.
* :mod:`rules.autodiff.trace`: traces and their levels; :mod:`rules.autodiff.tape` reverse
  mode's record; :mod:`rules.autodiff.reverse` the backward sweep; :mod:`rules.autodiff.forward`
  forward mode.
* :mod:`rules.autodiff.structures`: nested arguments and results.
* :mod:`rules.autodiff.errors`: what is refused, and why.
"""

from rules.autodiff.api import elementwise_grad, grad, jacobian, jvp, value_and_grad, vjp
from rules.autodiff.errors import (
    EscapedTraceError,
    InPlaceError,
    NoRuleError,
    TracedConversionError,
    TracedKeywordError,
)
from rules.autodiff.higher import hessian, hvp
from rules.autodiff.primitive import primitive
from rules.autodiff.traced import Traced

__all__ = [
    "EscapedTraceError",
    "InPlaceError",
    "NoRuleError",
    "Traced",
    "TracedConversionError",
    "TracedKeywordError",
    "elementwise_grad",
    "grad",
    "hessian",
    "hvp",
    "jacobian",
    "jvp",
    "primitive",
    "value_and_grad",
    "vjp",
]
