"""Shared pieces of the ``np.fft`` rules: the transformed axes and lengths, and fitting to them.

Every transform first fits its input to the requested length along each transformed axis
(zero-padding at the end, or truncating), then applies a linear map. Zero-padding and
truncation are each other's adjoints, so a pullback ends by fitting the cotangent back to the
input's lengths with the same :func:`fit`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

__all__ = ["DUAL_NORM", "fit", "hermitian_weights", "plan"]

DUAL_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}
"""The norm of the adjoint: ``fft(norm)^H = ifft(norm=DUAL_NORM[norm])`` (``F^H = n F^{-1}``)."""


def plan(
    name: str, a: Any, s: Any, axes: Any, *, inverse_real: bool = False
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ``(s, axes)`` of numpy's n-dimensional transforms, as non-negative axes and lengths.

    The same conventions as ``numpy.fft._pocketfft._cook_nd_args``: ``axes=None`` means the last
    ``len(s)`` axes (or all of them), ``s=None`` the input's lengths, ``-1`` the whole axis; for
    ``irfftn``-like transforms (``inverse_real``) the default last length is ``2 (m - 1)``. A
    ``None`` in ``s`` or ``s`` without ``axes`` (both deprecated by numpy 2) is refused.
    """
    shape = np.shape(a)
    if s is not None and (axes is None or any(n is None for n in s)):
        raise ValueError(f"the rules of {name} need explicit axes when s is given, and no None")
    if axes is None:
        axes = range(len(shape))
    axes = tuple(normalize_axis_tuple(tuple(axes), len(shape), allow_duplicate=False))
    if s is None:
        lengths = [shape[i] for i in axes]
        if inverse_real:
            lengths[-1] = 2 * (shape[axes[-1]] - 1)
    else:
        lengths = [shape[i] if n == -1 else int(n) for n, i in zip(s, axes, strict=True)]
    return tuple(lengths), axes


def fit(g: np.ndarray, lengths: dict[int, int]) -> np.ndarray:
    """``g`` cut or zero-padded at the end of each axis ``i`` to ``lengths[i]`` entries."""
    cut = tuple(slice(0, lengths.get(i, n)) for i, n in enumerate(g.shape))
    g = g[cut]
    pad = [(0, max(lengths.get(i, n) - n, 0)) for i, n in enumerate(g.shape)]
    if any(after for _, after in pad):
        g = np.pad(g, pad)
    return g


def hermitian_weights(n: int, axis: int, ndim: int, dtype: Any) -> np.ndarray:
    """``c_k`` (``k < n//2 + 1``) along ``axis``: 1 at ``k = 0`` and at ``k = n/2``, else 2.

    An inverse real transform of length ``n`` counts each frequency ``0 < k < n/2`` twice (for
    ``k`` and its mirror ``n - k``), so its adjoint weighs the forward real transform by ``c_k``.
    """
    c = np.full(n // 2 + 1, 2.0, dtype=dtype)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = c.size
    return c.reshape(shape)
