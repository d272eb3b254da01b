"""``ProjectTo`` of a dask array: a lazy cotangent of the primal's tangent dtype and shape.

Registered with ``ProjectTo.register`` when :mod:`rules.dask` loads (the first rule call with a
dask array), so ``tangents`` itself never knows dask. The projection is the ndarray one, done
lazily: a numpy or dask cotangent becomes a dask array of the primal's tangent dtype (the real
part for a real primal), chunked like the primal. A cotangent of any other type is returned
unchanged, as for ndarrays.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

from tangents import NoTangent, Projector, ProjectTo, tangent_dtype

__all__ = ["DaskArrayProjector"]


class DaskArrayProjector(Projector):
    """Projects onto a dask array's tangent space: its tangent dtype, shape and chunks."""

    __slots__ = ("chunks", "dtype", "shape")

    def __init__(self, x: da.Array) -> None:
        self.dtype = tangent_dtype(x.dtype)
        self.shape = x.shape
        self.chunks = x.chunks

    def project(self, dx: Any) -> Any:
        """``dx`` as a dask array of the primal's tangent dtype, shape and chunks."""
        if self.dtype is None:
            return NoTangent()
        if not isinstance(dx, da.Array | np.ndarray | np.generic | float | int | complex):
            return dx  # a user's own tangent type: never converted
        dx = da.asarray(dx)
        if dx.shape != self.shape:
            raise ValueError(
                f"ProjectTo: a cotangent of shape {dx.shape} for a dask array of shape {self.shape}"
            )
        if np.iscomplexobj(dx) and not np.issubdtype(self.dtype, np.complexfloating):
            dx = dx.real
        if dx.dtype != self.dtype:
            dx = dx.astype(self.dtype)
        return dx.rechunk(self.chunks) if dx.chunks != self.chunks else dx

    def __repr__(self) -> str:
        return f"ProjectTo(<dask array {self.shape} {self.dtype}>)"


ProjectTo.register(da.Array, DaskArrayProjector)
