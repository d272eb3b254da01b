"""A user's own layer with a structural tangent, composed by hand with library rules.

``Affine(W, b)`` is a dataclass that is also a function: ``layer(x) = W @ x + b``. Its rrule
returns a structural ``Tangent(Affine, W=..., b=...)`` as the cotangent of the layer itself.
Chaining it with the library's rules for ``np.tanh`` and ``np.sum`` by hand gives the gradient
of ``loss(layer, x) = sum(tanh(layer(x)))``, which ``rules.testing`` then checks against finite
differences (it perturbs the layer's fields and ``x``).

Run it: ``python examples/affine_layer.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rules import rrule
from rules.testing import check_rrule
from tangents import NoTangent, ProjectTo, Tangent, unthunk


@dataclasses.dataclass
class Affine:
    """The map ``x -> W @ x + b``."""

    W: np.ndarray
    b: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.W @ x + self.b


@rrule.register_call(Affine)
def affine_rrule(layer: Affine, x: np.ndarray):
    """``y = W x + b``: ``W_bar = y_bar x^T``, ``b_bar = y_bar``, ``x_bar = W^T y_bar``."""
    project_x = ProjectTo(x)

    def affine_pullback(y_bar):
        y_bar = unthunk(y_bar)
        layer_bar = Tangent(Affine, W=np.outer(y_bar, x), b=y_bar)
        return layer_bar, project_x(layer.W.T @ y_bar)

    return layer(x), affine_pullback


def loss(layer: Affine, x: np.ndarray) -> float:
    """The scalar ``sum(tanh(layer(x)))``."""
    return float(np.sum(np.tanh(layer(x))))


@rrule.register(loss)
def loss_rrule(layer: Affine, x: np.ndarray):
    """Reverse mode by hand: each step's rrule, then the pullbacks in reverse order."""
    h, affine_pullback = rrule(layer, x)
    a, tanh_pullback = rrule(np.tanh, h)
    total, sum_pullback = rrule(np.sum, a)

    def loss_pullback(total_bar):
        _, a_bar = sum_pullback(total_bar)
        _, h_bar = tanh_pullback(a_bar)
        layer_bar, x_bar = affine_pullback(h_bar)
        return NoTangent(), layer_bar, x_bar

    return float(total), loss_pullback


def main(seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    layer = Affine(rng.standard_normal((3, 4)) / 2, rng.standard_normal(3) / 2)
    x = rng.standard_normal(4)

    _, pullback = rrule(loss, layer, x)
    _, layer_bar, x_bar = pullback(1.0)
    print("d loss / d W =\n", layer_bar.W)
    print("d loss / d b =", layer_bar.b)
    print("d loss / d x =", x_bar)

    check_rrule(layer, x)  # the layer's own rule, including its structural cotangent
    report = check_rrule(loss, layer, x)  # the composed gradient against finite differences
    worst = max(v for k, v in report.errors.items() if "finite differences" in k)
    print(f"checked against finite differences: worst relative error {worst:.1e}")

    stepped = layer + (-0.1) * layer_bar  # a gradient step builds a new Affine
    assert isinstance(stepped, Affine)
    assert loss(stepped, x) < loss(layer, x)


if __name__ == "__main__":
    main()
