"""Central finite differences for the rule checker, computed without any rule.

Each derivative ``g'(0)`` of ``g(eps) = f(x + eps d)`` comes from Ridders' method: central
differences ``D(h) = (g(h) - g(-h)) / 2h`` at steps ``h, h/2, h/4, ...``, Richardson-extrapolated
in a Neville tableau. ``D(h) = g'(0) + c_2 h^2 + c_4 h^4 + ...``, so the first extrapolation
``(4 D(h/2) - D(h)) / 3`` is the five-point stencil

    g'(0) ~ (g(-h) - 8 g(-h/2) + 8 g(h/2) - g(h)) / (6 h),

and each further column removes the next even power of ``h``. The step shrinks until the
estimates stop improving (round-off takes over), and the estimate with the smallest error
estimate is returned. So a function that bends sharply on a scale far below ``h`` (``np.std`` of
nearly equal numbers, ``|x|**0.5`` near a small entry) still gets an accurate reference, and a
smooth one costs three or four central differences.

The initial step is relative to the size ``m`` of the entries the direction moves (one entry,
or a symmetric pair, for the basis directions of a vector-Jacobian product): ``step * max(1,
m)``, and when ``0 < m < 1`` also ``step * m``, of which the extrapolation with the smaller
error estimate wins. The first suits a function that varies on the scale 1 (``exp``, ``sin``;
a step ``1e-3 * 1e-20`` would drown in round-off), the second one that varies on the scale of
the entry itself (``1 / x`` at ``x = 1e-6``); for ``m >= 1`` ``step * m`` suits both
(``log x`` at ``x = 1e6``). A derivative along a direction that moves entries of very different
sizes (a random tangent) is the sum of those along its parts of similar size, each with its own
steps. A step that gives a non-finite value is halved until it does not. The function is
evaluated on double precision copies of the inputs (float32 -> float64, complex64 ->
complex128), so the reference is accurate even for single-precision rules.

References
----------
C. J. F. Ridders, "Accurate computation of F'(x) and F'(x) F''(x)", Advances in Engineering
Software 4(2), 75-76 (1982); W. H. Press et al., Numerical Recipes, 3rd ed., section 5.7
(``dfridr``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rules.testing.spaces import Space

__all__ = ["DEFAULT_STEP", "Differencer", "extrapolate"]

DEFAULT_STEP = 1e-3
_SHRINK = 2.0  # each level of the tableau halves the step
_LEVELS = 10  # at most this many steps: h, h/2, ..., h/512
_OUT_OF_DOMAIN = 30  # halvings allowed for a step whose differences are not finite
_SAFE = 2.0  # stop when the newest extrapolation is this much worse than the best error estimate
_CONVERGED = 1e-10  # an error estimate this small relative to the estimate needs no second step
_GROUP = 16.0  # a direction's parts: entries whose sizes lie within this factor of each other


def _largest(a: np.ndarray) -> float:
    return float(np.max(np.abs(a), initial=0.0))


def extrapolate(central: Callable[[float], Any], h: float) -> tuple[Any, float]:
    """Ridders' extrapolation of ``central(h) -> D(h)`` to ``h -> 0``: ``(estimate, error)``.

    See the module docstring; ``error`` is the estimate's error estimate (``inf`` when no
    extrapolation was possible).
    """
    best: Any = None
    best_error = np.inf
    previous: list[Any] = []
    for _ in range(_OUT_OF_DOMAIN):  # halve a step that leaves f's domain, at no level's cost
        estimate = np.asarray(central(h))
        if np.all(np.isfinite(estimate)):
            break
        h /= _SHRINK
    else:
        return estimate, np.inf  # no finite difference anywhere: reported as such
    for level in range(_LEVELS):
        if level:
            h /= _SHRINK
            estimate = np.asarray(central(h))
            if not np.all(np.isfinite(estimate)):
                break
        row = [estimate]
        factor = 1.0
        for j, earlier in enumerate(previous, start=1):
            factor *= _SHRINK**2  # column j removes the h^(2j) term
            row.append((factor * row[j - 1] - earlier) / (factor - 1.0))
            error = max(_largest(row[j] - row[j - 1]), _largest(row[j] - earlier))
            if error <= best_error:
                best, best_error = row[j], error
        if previous and _largest(row[-1] - previous[-1]) >= _SAFE * best_error:
            break  # round-off has taken over
        previous = row
    return (previous[0], np.inf) if best is None else (best, best_error)


def _group_key(m: float) -> float:
    """Entries of sizes within a factor ``_GROUP`` share a key; zero (and non-finite) its own."""
    return np.floor(np.log(m) / np.log(_GROUP)) if m > 0 else -np.inf


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
        Relative initial step (see the module docstring).
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
        self.step = step
        self.magnitudes = {i: self._magnitudes(i) for i in spaces}
        self._coordinate_sizes: dict[int, np.ndarray] = {}

    def _primal(self, i: int) -> Any:
        return self.f if i == -1 else self.args[i]

    def _magnitudes(self, i: int) -> np.ndarray:
        """``|x|`` entry by entry, in the ambient layout of input ``i`` (0 where not finite)."""
        space = self.spaces[i]
        if i == -1:  # a callable object's fields: the base step
            return np.zeros(space.ambient_size)
        entries = np.abs(space.ambient(space.upcast(self._primal(i))))
        return np.where(np.isfinite(entries), entries, 0.0)

    def size(self, i: int, coords: np.ndarray) -> float:
        """The largest ``|x_j|`` among the entries of input ``i`` that ``coords`` moves."""
        moved = self.spaces[i].ambient(self.spaces[i].tangent(np.asarray(coords, float))) != 0
        return float(np.max(self.magnitudes[i][moved], initial=0.0))

    def coordinate_sizes(self, i: int) -> np.ndarray:
        """``size(i, e_k)`` for each basis vector ``e_k`` of input ``i``'s space (cached)."""
        if i not in self._coordinate_sizes:
            unit = np.zeros(self.spaces[i].dim)
            sizes = np.zeros(self.spaces[i].dim)
            for k in range(unit.size):
                unit[k] = 1.0
                sizes[k] = self.size(i, unit)
                unit[k] = 0.0
            self._coordinate_sizes[i] = sizes
        return self._coordinate_sizes[i]

    def initial_steps(self, smallest: float, largest: float) -> list[float]:
        """``step * max(1, largest)``, then ``step * smallest`` if ``0 < smallest < 1``."""
        steps = [self.step * max(1.0, largest)]
        if 0.0 < smallest < 1.0:
            steps.append(self.step * smallest)
        return steps

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
        with np.errstate(all="ignore"):  # a step out of f's domain is retried, not an error
            return self.output_space.ambient(f(*args, **self.kwargs))

    def _derivative(
        self,
        directions: dict[int, np.ndarray],
        reduce: Callable[[np.ndarray], Any],
        sizes: tuple[float, float],
    ) -> Any:
        """``reduce`` of the flattened directional derivative, extrapolated as a whole.

        ``sizes`` is ``(smallest, largest)`` of the entries the direction moves; each initial
        step is tried until one converges, and the one with the smallest error estimate wins.
        """
        c = {i: np.asarray(v, dtype=np.float64) for i, v in directions.items()}

        def central(h: float) -> Any:
            plus = self.evaluate({i: h * v for i, v in c.items()})
            minus = self.evaluate({i: -h * v for i, v in c.items()})
            return reduce((plus - minus) / (2.0 * h))

        best, best_error = None, np.inf
        for h in self.initial_steps(*sizes):
            estimate, error = extrapolate(central, h)
            if best is None or error < best_error:
                best, best_error = estimate, error
            if best_error <= _CONVERGED * _largest(best):
                break
        return best

    def jvp(self, directions: dict[int, np.ndarray]) -> np.ndarray:
        """The flattened directional derivative along ``directions`` (coordinates per input).

        The sum of the derivatives along the direction's parts that move entries of similar
        size (within a factor ``_GROUP``), each part with steps fit for its size.
        """
        if not directions:
            return 0.0 * self.evaluate({})
        parts: dict[float, dict[int, np.ndarray]] = {}
        sizes: dict[float, list[float]] = {}
        for i, v in directions.items():
            v = np.asarray(v, dtype=np.float64)
            coordinate_sizes = self.coordinate_sizes(i)
            keys = np.array([_group_key(m) for m in coordinate_sizes])
            for key in np.unique(keys[v != 0]):
                in_part = keys == key
                parts.setdefault(key, {})[i] = np.where(in_part, v, 0.0)
                sizes.setdefault(key, []).extend(coordinate_sizes[in_part & (v != 0)])
        if not parts:  # coordinates that are all zero
            return 0.0 * self.evaluate({})
        return sum(
            self._derivative(part, lambda d: d, (min(sizes[key]), max(sizes[key])))
            for key, part in parts.items()
        )

    def vjp(self, y_bar_flat: np.ndarray, i: int) -> np.ndarray:
        """Coordinates of the vector-Jacobian product for input ``i``, one basis vector at a time.

        ``c_k = d/d eps <y_bar, f(x + eps e_k)>`` for the orthonormal basis ``e_k`` of the
        input's space (each extrapolated on its own, so the step fits each entry's size); the
        cotangent is then ``sum_k c_k e_k``.
        """
        space = self.spaces[i]
        coords = np.zeros(space.dim)
        unit = np.zeros(space.dim)
        for k, m in enumerate(self.coordinate_sizes(i)):
            unit[k] = 1.0
            coords[k] = float(
                self._derivative({i: unit}, lambda d: np.real(np.vdot(y_bar_flat, d)), (m, m))
            )
            unit[k] = 0.0
        return coords
