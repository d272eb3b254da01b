"""Central finite differences for the rule checker, computed without any rule.

The derivative of ``g(eps)`` at 0 uses the five-point central stencil

    g'(0) ~ (g(-2h) - 8 g(-h) + 8 g(h) - g(2h)) / (12 h),

whose truncation error is O(h^4). The step is ``h = step * max(1, scale)`` with ``scale`` the
largest magnitude in the input being perturbed, and the function is evaluated on double
precision copies of the inputs (float32 -> float64, complex64 -> complex128), so the reference
is accurate even for single-precision rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rules.testing.spaces import Space

__all__ = ["DEFAULT_STEP", "Differencer"]

DEFAULT_STEP = 1e-3
_STENCIL = ((-2.0, 1.0 / 12.0), (-1.0, -8.0 / 12.0), (1.0, 8.0 / 12.0), (2.0, -1.0 / 12.0))


class Differencer:
    """Finite differences of ``f(*args, **kwargs)`` along the tangent spaces of its inputs.

    Parameters
    ----------
    f : callable
        The primal function. If it has a non-empty space (a callable object with fields), it is
        perturbed too, as input ``-1``.
    args : tuple
        The primal inputs.
    kwargs : dict
        Keyword arguments, passed unchanged.
    spaces : dict
        ``{index: Space}`` for the inputs to perturb (``-1`` is ``f``).
    output_space : Space
        The space of the output, used to flatten it.
    step : float
        Base step ``h`` (see the module docstring).
    """

    def __init__(
        self,
        f: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        spaces: dict[int, Space],
        output_space: Space,
        step: float = DEFAULT_STEP,
    ) -> None:
        self.f = f
        self.args = args
        self.kwargs = kwargs
        self.spaces = spaces
        self.output_space = output_space
        self.steps = {i: step * max(1.0, self._scale(i)) for i in spaces}

    def _primal(self, i: int) -> Any:
        return self.f if i == -1 else self.args[i]

    def _scale(self, i: int) -> float:
        space = self.spaces[i]
        if space.dim == 0:
            return 0.0
        entries = space.ambient(space.upcast(self._primal(i))) if i != -1 else np.zeros(0)
        finite = np.abs(entries[np.isfinite(entries)]) if entries.size else entries
        return float(finite.max()) if finite.size else 0.0

    def evaluate(self, moves: dict[int, np.ndarray]) -> np.ndarray:
        """The flattened output with each input ``i`` moved by coordinates ``moves[i]``."""
        f = self.f
        args = list(self.args)
        for i, space in self.spaces.items():
            coords = moves.get(i)
            moved = (
                space.upcast(self._primal(i))
                if coords is None
                else space.perturb(self._primal(i), coords)
            )
            if i == -1:
                f = moved
            else:
                args[i] = moved
        return self.output_space.ambient(f(*args, **self.kwargs))

    def jvp(self, directions: dict[int, np.ndarray]) -> np.ndarray:
        """The flattened directional derivative along ``directions`` (coordinates per input)."""
        h = min(self.steps[i] for i in directions) if directions else 1.0
        total: np.ndarray | float = 0.0
        for offset, weight in _STENCIL:
            moves = {i: offset * h * np.asarray(c, dtype=np.float64) for i, c in directions.items()}
            total = total + weight * self.evaluate(moves)
        return np.asarray(total) / h

    def vjp(self, y_bar_flat: np.ndarray, i: int) -> np.ndarray:
        """Coordinates of the vector-Jacobian product for input ``i``, one basis vector at a time.

        ``c_k = d/d eps <y_bar, f(x + eps e_k)>`` for the orthonormal basis ``e_k`` of the
        input's space; the cotangent is then ``sum_k c_k e_k``.
        """
        space = self.spaces[i]
        coords = np.zeros(space.dim)
        unit = np.zeros(space.dim)
        for k in range(space.dim):
            unit[k] = 1.0
            derivative = self.jvp({i: unit})
            coords[k] = float(np.real(np.vdot(y_bar_flat, derivative)))
            unit[k] = 0.0
        return coords
