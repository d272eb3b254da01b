"""The whole-program benchmark: the driver and the hand-chained pullbacks agree on every loss."""

import numpy as np
import pytest
from bench.cases.programs import PROGRAMS, numpy_namespace

from rules.autodiff import value_and_grad


@pytest.mark.parametrize(
    "program", [p for p in PROGRAMS if p.name != "gp n=2000"], ids=lambda p: p.name
)
def test_driver_and_hand_chained_pullbacks_agree(program):
    args = program.build(np.random.default_rng(1))
    value, grad = value_and_grad(lambda *a: program.loss(numpy_namespace(), *a))(*args)
    hand_value, hand_grad = program.hand(*args)
    assert value == pytest.approx(hand_value, rel=1e-12)
    ours = list(grad) if isinstance(args[0], tuple) else [grad]
    theirs = list(hand_grad) if isinstance(args[0], tuple) else [hand_grad]
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_the_batched_loss_gradient_is_right():
    # d/dA [logdet A + trace(A^-1 B)] = A^-T - A^-T B^T A^-T, per matrix (independently derived)
    program = next(p for p in PROGRAMS if p.name.startswith("batched"))
    A, B = program.build(np.random.default_rng(2))
    A, B = A[:5], B[:5]
    _, grad = value_and_grad(lambda *a: program.loss(numpy_namespace(), *a))(A, B)
    A_inv_T = np.linalg.inv(A).mT
    np.testing.assert_allclose(grad, A_inv_T - A_inv_T @ B.mT @ A_inv_T, rtol=1e-10)
