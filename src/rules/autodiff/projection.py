"""``ProjectTo`` of a traced primal, and of a traced cotangent: projection at higher order.

Inside a nested differentiation a rule's primal may be a traced value (a rule of an inner
``grad`` runs on values traced by the outer one) and so may its cotangent. ``ProjectTo`` must
then do, with traced operations, what it does to arrays: keep the primal's dtype (the real part
for a real primal, a cast for float32) and its shape. For a plain cotangent it is the projector
of the value the primal stands for; a structured primal (``Diagonal``) is projected the same way
as its value's type once the cotangent is plain.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.autodiff.traced import Traced
from rules.core.nesting import innermost_value, is_traced
from tangents import ProjectTo, tangent_dtype
from tangents.projectors import Projector

__all__ = ["TracedProjector", "project_traced"]


def project_traced(primal: Any, dx: Any) -> Any:
    """``dx``, a traced cotangent, projected onto the tangent space of the plain value ``primal``.

    The projections are traced operations (``np.real``, ``astype``, ``np.reshape``), so they
    are differentiated with the rest.
    """
    dtype = getattr(primal, "dtype", None)
    if dtype is None:
        dtype = np.result_type(primal)
    target = tangent_dtype(dtype)
    if target is None:
        return dx
    if dx.dtype.kind == "c" and target.kind != "c":
        dx = np.real(dx)
    if dx.dtype != target:
        dx = dx.astype(target)
    shape = np.shape(primal)
    if dx.shape != shape and int(np.prod(dx.shape)) == int(np.prod(shape)):
        dx = np.reshape(dx, shape)
    return dx


class TracedProjector(Projector):
    """The projector of a traced primal: that of its value, traced when the cotangent is."""

    __slots__ = ("plain", "value")

    def __init__(self, primal: Traced) -> None:
        self.value = innermost_value(primal)
        self.plain = ProjectTo(self.value)

    def project(self, dx: Any) -> Any:
        """A plain ``dx`` as the value's projector does; a traced one with traced operations."""
        if is_traced(dx):
            if isinstance(self.value, np.ndarray | np.generic | float | complex | int):
                return project_traced(self.value, dx)
            return dx
        return self.plain(dx)

    def __repr__(self) -> str:
        return f"TracedProjector({self.plain!r})"


ProjectTo.register(Traced)(TracedProjector)
