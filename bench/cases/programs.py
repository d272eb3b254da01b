r"""Whole programs for ``rules.autodiff``: the gradient of a loss, not one rule.

Each program is a loss written once against a numpy-like namespace ``xp`` (``xp.np`` is numpy,
``autograd.numpy`` or ``jax.numpy``; ``xp.solve_triangular`` the matching scipy function), so
the driver, HIPS autograd and JAX time the same code. The baseline is the same gradient with the
library's ``rrule`` pullbacks chained by hand (what ``examples/affine_layer.py`` does): the
driver's cost is the difference. Every column computes the value and the gradient of the first
argument from the inputs.

* ``mlp``: a 3-layer tanh MLP, batch 64, width 32, mean squared error.
* ``gp``: the Gaussian-process negative log marginal likelihood
  ``y^T K^{-1} y / 2 + sum log diag L`` (``K = L L^T``, squared-exponential kernel plus noise,
  the three log hyperparameters differentiated), n = 200 and n = 2000 (C. E. Rasmussen and
  C. K. I. Williams, *Gaussian Processes for Machine Learning*, 2006, algorithm 2.1).
* ``batched``: ``sum_i logdet(A_i) + trace(A_i^{-1} B_i)`` over 10000 3x3 SPD matrices.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from rules import rrule
from tangents import Tangent, ZeroTangent, unthunk

__all__ = ["PROGRAMS", "Program", "numpy_namespace"]


@dataclass(frozen=True)
class Program:
    """One loss: its inputs, its code over a namespace, the hand-chained gradient, torch's."""

    name: str
    build: Callable[[np.random.Generator], tuple[Any, ...]]
    loss: Callable[..., Any]  # loss(xp, *args)
    hand: Callable[..., tuple[Any, Any]]  # hand(*args) -> (value, gradient of args[0])
    torch: Callable[..., Any] | None = None  # torch(torch_module, *tensors) -> loss tensor


def numpy_namespace() -> SimpleNamespace:
    """The namespace the driver runs the losses in: numpy, and scipy through the mirror."""
    import rules.autodiff.scipy.linalg as sla

    return SimpleNamespace(np=np, solve_triangular=sla.solve_triangular)


# --- a 3-layer tanh MLP -------------------------------------------------------------------------


def _mlp_build(rng: np.random.Generator) -> tuple[Any, ...]:
    width, batch = 32, 64
    params = (
        rng.standard_normal((width, width)) / np.sqrt(width),
        np.zeros(width),
        rng.standard_normal((width, width)) / np.sqrt(width),
        np.zeros(width),
        rng.standard_normal((width, 1)) / np.sqrt(width),
        np.zeros(1),
    )
    return params, rng.standard_normal((batch, width)), rng.standard_normal((batch, 1))


def mlp_loss(xp: Any, params: Any, x: Any, y: Any) -> Any:
    np_ = xp.np
    W1, b1, W2, b2, W3, b3 = params
    h = np_.tanh(x @ W1 + b1)
    h = np_.tanh(h @ W2 + b2)
    return np_.mean(np_.square(h @ W3 + b3 - y))


def mlp_hand(params: Any, x: Any, y: Any) -> tuple[Any, Any]:
    """The MLP's value and parameter gradient, the library's pullbacks chained by hand."""
    W1, b1, W2, b2, W3, b3 = params
    a1, pb_a1 = rrule(np.matmul, x, W1)
    z1, pb_z1 = rrule(np.add, a1, b1)
    h1, pb_h1 = rrule(np.tanh, z1)
    a2, pb_a2 = rrule(np.matmul, h1, W2)
    z2, pb_z2 = rrule(np.add, a2, b2)
    h2, pb_h2 = rrule(np.tanh, z2)
    a3, pb_a3 = rrule(np.matmul, h2, W3)
    out, pb_out = rrule(np.add, a3, b3)
    r, pb_r = rrule(np.subtract, out, y)
    s, pb_s = rrule(np.square, r)
    loss, pb_loss = rrule(np.mean, s)
    _, s_bar = pb_loss(1.0)
    _, r_bar = pb_s(s_bar)
    _, out_bar, _ = pb_r(r_bar)
    _, a3_bar, b3_bar = pb_out(out_bar)
    _, h2_bar, W3_bar = pb_a3(a3_bar)
    _, z2_bar = pb_h2(h2_bar)
    _, a2_bar, b2_bar = pb_z2(z2_bar)
    _, h1_bar, W2_bar = pb_a2(a2_bar)
    _, z1_bar = pb_h1(h1_bar)
    _, a1_bar, b1_bar = pb_z1(z1_bar)
    _, _, W1_bar = pb_a1(a1_bar)
    return loss, Tangent(tuple, W1_bar, b1_bar, W2_bar, b2_bar, W3_bar, b3_bar)


def mlp_torch(torch: Any, params: Any, x: Any, y: Any) -> Any:
    W1, b1, W2, b2, W3, b3 = params
    h = torch.tanh(x @ W1 + b1)
    h = torch.tanh(h @ W2 + b2)
    return torch.mean(torch.square(h @ W3 + b3 - y))


# --- a Gaussian-process negative log marginal likelihood ----------------------------------------


def _gp_build(n: int) -> Callable[[np.random.Generator], tuple[Any, ...]]:
    def build(rng: np.random.Generator) -> tuple[Any, ...]:
        X = rng.uniform(-3.0, 3.0, (n, 3))
        D2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)  # constant: not timed
        y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
        theta = np.array([0.0, 0.0, np.log(0.1)])  # log length scale, log variance, log noise
        return theta, D2, y, np.eye(n)

    return build


def gp_loss(xp: Any, theta: Any, D2: Any, y: Any, eye: Any) -> Any:
    np_ = xp.np
    K = np_.exp(theta[1] - 0.5 * D2 / np_.exp(2.0 * theta[0])) + np_.exp(theta[2]) * eye
    L = np_.linalg.cholesky(K)
    alpha = xp.solve_triangular(L, y, lower=True)
    return 0.5 * np_.dot(alpha, alpha) + np_.sum(np_.log(np_.diag(L)))


def gp_hand(theta: Any, D2: Any, y: Any, eye: Any) -> tuple[Any, Any]:
    """The GP loss's value and hyperparameter gradient, pullbacks chained by hand."""
    import operator

    import scipy.linalg

    t0, pb_t0 = rrule(operator.getitem, theta, 0)
    t1, pb_t1 = rrule(operator.getitem, theta, 1)
    t2, pb_t2 = rrule(operator.getitem, theta, 2)
    u, pb_u = rrule(np.multiply, 2.0, t0)
    ell2, pb_ell2 = rrule(np.exp, u)
    q = -0.5 * D2  # a constant: plain numpy, as in the traced program
    r, pb_r = rrule(np.divide, q, ell2)
    s, pb_s = rrule(np.add, t1, r)
    k, pb_k = rrule(np.exp, s)
    noise, pb_noise = rrule(np.exp, t2)
    nI, pb_nI = rrule(np.multiply, noise, eye)
    K, pb_K = rrule(np.add, k, nI)
    L, pb_L = rrule(np.linalg.cholesky, K)
    alpha, pb_alpha = rrule(scipy.linalg.solve_triangular, L, y, lower=True)
    aa, pb_aa = rrule(np.dot, alpha, alpha)
    half, pb_half = rrule(np.multiply, 0.5, aa)
    d, pb_d = rrule(np.diag, L)
    logd, pb_logd = rrule(np.log, d)
    sl, pb_sl = rrule(np.sum, logd)
    loss, pb_loss = rrule(np.add, half, sl)

    _, half_bar, sl_bar = pb_loss(1.0)
    _, logd_bar = pb_sl(sl_bar)
    _, d_bar = pb_logd(logd_bar)
    _, L_bar_diag = pb_d(d_bar)
    _, _, aa_bar = pb_half(half_bar)
    _, alpha_bar1, alpha_bar2 = pb_aa(aa_bar)
    _, L_bar_solve, _ = pb_alpha(alpha_bar1 + alpha_bar2)
    _, K_bar = pb_L(L_bar_diag + L_bar_solve)
    _, k_bar, nI_bar = pb_K(K_bar)
    _, noise_bar, _ = pb_nI(nI_bar)
    _, t2_bar = pb_noise(noise_bar)
    _, s_bar = pb_k(k_bar)
    _, t1_bar, r_bar = pb_s(s_bar)
    _, _, ell2_bar = pb_r(r_bar)
    _, u_bar = pb_ell2(ell2_bar)
    _, _, t0_bar = pb_u(u_bar)
    theta_bar = pb_t0(t0_bar)[1] + pb_t1(t1_bar)[1] + pb_t2(t2_bar)[1]
    return loss, theta_bar


def gp_torch(torch: Any, theta: Any, D2: Any, y: Any, eye: Any) -> Any:
    K = torch.exp(theta[1] - 0.5 * D2 / torch.exp(2.0 * theta[0])) + torch.exp(theta[2]) * eye
    L = torch.linalg.cholesky(K)
    alpha = torch.linalg.solve_triangular(L, y[:, None], upper=False)[:, 0]
    return 0.5 * torch.dot(alpha, alpha) + torch.sum(torch.log(torch.diagonal(L)))


# --- a batched loss over 10000 3x3 SPD matrices -------------------------------------------------


def _batched_build(rng: np.random.Generator) -> tuple[Any, ...]:
    G = rng.standard_normal((10000, 3, 3))
    A = G @ G.transpose(0, 2, 1) + 3.0 * np.eye(3)
    return A, rng.standard_normal((10000, 3, 3))


def batched_loss(xp: Any, A: Any, B: Any) -> Any:
    # A^{-1} B as a solve, not inv(A) @ B: the same number with one factorization (every
    # column runs this code); the trace as einsum, which autograd differentiates on stacks.
    np_ = xp.np
    _, logdet = np_.linalg.slogdet(A)
    return np_.sum(logdet + np_.einsum("...ii->...", np_.linalg.solve(A, B)))


def batched_hand(A: Any, B: Any) -> tuple[Any, Any]:
    """The batched loss's value and gradient in ``A``, pullbacks chained by hand."""
    (_, logdet), pb_slogdet = rrule(np.linalg.slogdet, A)
    X, pb_X = rrule(np.linalg.solve, A, B)
    t, pb_t = rrule(np.einsum, "...ii->...", X)
    u, pb_u = rrule(np.add, logdet, t)
    loss, pb_loss = rrule(np.sum, u)
    _, u_bar = pb_loss(1.0)
    _, logdet_bar, t_bar = pb_u(u_bar)
    _, _, X_bar = pb_t(t_bar)
    _, A_bar_solve, _ = pb_X(unthunk(X_bar))
    _, A_bar_det = pb_slogdet((ZeroTangent(), logdet_bar))
    return loss, unthunk(A_bar_solve) + unthunk(A_bar_det)


def batched_torch(torch: Any, A: Any, B: Any) -> Any:
    _, logdet = torch.linalg.slogdet(A)
    return torch.sum(logdet + torch.einsum("...ii->...", torch.linalg.solve(A, B)))


PROGRAMS = (
    Program("mlp 64x32", _mlp_build, mlp_loss, mlp_hand, mlp_torch),
    Program("gp n=200", _gp_build(200), gp_loss, gp_hand, gp_torch),
    Program("gp n=2000", _gp_build(2000), gp_loss, gp_hand, gp_torch),
    Program("batched 10000x3", _batched_build, batched_loss, batched_hand, batched_torch),
)
