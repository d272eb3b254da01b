"""rules.interop.torch.linalg: each function's values, return types and gradients are torch.linalg's."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from rules.interop.torch import linalg as rlinalg


def hermitian_part(G):
    return (G + G.mH) / 2


def square(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return torch.from_numpy(a).to(dtype)


# name: (call, input kind, reads a Hermitian matrix). Each output enters the loss through a
# gauge-invariant quantity (|V|^2 for eigenvectors and singular vectors).
CASES = {
    "cholesky": (lambda m, A, B: m.cholesky(A), "spd", True),
    "cholesky_upper": (lambda m, A, B: m.cholesky(A, upper=True), "spd", True),
    "eigh": (
        lambda m, A, B: (m.eigh(A).eigenvalues, m.eigh(A).eigenvectors.abs() ** 2),
        "spd",
        True,
    ),
    "eigvalsh": (lambda m, A, B: m.eigvalsh(A), "spd", True),
    "svd": (
        lambda m, A, B: (m.svd(A).S, m.svd(A).U.abs() ** 2, m.svd(A).Vh.abs() ** 2),
        "gen",
        False,
    ),
    "svdvals": (lambda m, A, B: m.svdvals(A), "gen", False),
    "qr": (lambda m, A, B: tuple(m.qr(A)), "gen", False),
    "lu": (lambda m, A, B: tuple(m.lu(A)), "gen", False),
    "lu_factor": (lambda m, A, B: m.lu_factor(A).LU, "gen", False),
    "solve": (lambda m, A, B: m.solve(A, B), "gen", False),
    "solve_vector": (lambda m, A, B: m.solve(A, B[..., 0]), "gen", False),
    "solve_right": (lambda m, A, B: m.solve(A, B.mT, left=False), "gen", False),
    "solve_triangular": (lambda m, A, B: m.solve_triangular(A.triu(), B, upper=True), "gen", False),
    "solve_triangular_right": (
        lambda m, A, B: m.solve_triangular(A.tril(), B.mT, upper=False, left=False),
        "gen",
        False,
    ),
    "inv": (lambda m, A, B: m.inv(A), "gen", False),
    "det": (lambda m, A, B: m.det(A), "gen", False),
    "slogdet": (lambda m, A, B: tuple(m.slogdet(A)), "gen", False),
    "matrix_exp": (lambda m, A, B: m.matrix_exp(A / 4), "gen", False),
    "matmul": (lambda m, A, B: m.matmul(A, B), "gen", False),
    "matrix_power": (lambda m, A, B: m.matrix_power(A / 4, 3), "gen", False),
    "matrix_power_negative": (lambda m, A, B: m.matrix_power(A, -2), "gen", False),
    "norm": (lambda m, A, B: m.norm(A), "gen", False),
    "norm_last_axis": (lambda m, A, B: m.norm(A, ord=3, dim=-1), "gen", False),
    "vector_norm_inf": (
        lambda m, A, B: m.vector_norm(A, ord=float("inf"), dim=(-2, -1)),
        "gen",
        False,
    ),
    "matrix_norm_2": (lambda m, A, B: m.matrix_norm(A, ord=2), "gen", False),
    "matrix_norm_nuc_keepdim": (
        lambda m, A, B: m.matrix_norm(A, ord="nuc", keepdim=True),
        "gen",
        False,
    ),
    "lu_solve": (lambda m, A, B: m.lu_solve(*m.lu_factor(A), B), "gen", False),
    "lu_solve_adjoint": (
        lambda m, A, B: m.lu_solve(*m.lu_factor(A), B, adjoint=True),
        "gen",
        False,
    ),
    "lu_solve_right": (lambda m, A, B: m.lu_solve(*m.lu_factor(A), B.mT, left=False), "gen", False),
    "lu_solve_right_adjoint": (
        lambda m, A, B: m.lu_solve(*m.lu_factor(A), B.mT, left=False, adjoint=True),
        "gen",
        False,
    ),
}


def loss(outputs, weights):
    total = 0
    for y, w in zip(outputs, weights, strict=True):
        total = total + (w * y.real).sum() + ((w * y.imag).sum() if y.is_complex() else 0)
    return total


# Single matrices and stacks in float64; float32 and complex128 on single matrices: the adapter's
# dtype handling does not depend on the shape, and stacks of every dtype would compile every
# batched kernel once more per dtype (the rules' own tests cover the kernels' dtypes).
SIGNATURES = [
    ((4, 4), torch.float64),
    ((3, 4, 4), torch.float64),
    ((4, 4), torch.float32),
    ((4, 4), torch.complex128),
]


@pytest.mark.parametrize(("shape", "dtype"), SIGNATURES, ids=str)
@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_torch(name, shape, dtype, rng):
    call, kind, hermitian = CASES[name]
    A = square(rng, shape, dtype)
    if kind == "spd":
        A = A @ A.mH + 4 * torch.eye(4, dtype=dtype)
    else:
        A = A + 4 * torch.eye(4, dtype=dtype)  # well conditioned, no pivot ties
    B = square(rng, shape[:-1] + (2,), dtype)
    results = {}
    for linalg in (rlinalg, torch.linalg):
        x = A.clone().requires_grad_()
        outputs = call(linalg, x, B)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        weights = [
            torch.from_numpy(np.random.default_rng(1).standard_normal(y.shape)) for y in outputs
        ]
        (grad,) = torch.autograd.grad(loss(outputs, weights), x)
        results[linalg] = outputs, grad
    (ours, grad), (native, native_grad) = results[rlinalg], results[torch.linalg]
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 1e-8, "atol": 1e-9}
    for y, z in zip(ours, native, strict=True):
        assert y.dtype == z.dtype
        assert y.shape == z.shape
        assert torch.allclose(y, z, **tol)
    assert grad.dtype == dtype
    if hermitian:  # only the Hermitian part is defined (DESIGN.md section 3); ours is Hermitian
        assert torch.allclose(grad, hermitian_part(grad))
        native_grad = hermitian_part(native_grad)
    assert torch.allclose(grad, native_grad, **tol)


def test_return_types_are_torchs(rng):
    A = square(rng, (4, 4), torch.float64) + 4 * torch.eye(4, dtype=torch.float64)
    S = A @ A.mT
    pairs = [
        (rlinalg.qr(A), torch.linalg.qr(A)),
        (rlinalg.lu(A), torch.linalg.lu(A)),
        (rlinalg.lu_factor(A), torch.linalg.lu_factor(A)),
        (rlinalg.slogdet(A), torch.linalg.slogdet(A)),
    ]
    for ours, native in pairs:
        assert type(ours) is type(native)
        for y, z in zip(ours, native, strict=True):
            assert y.dtype == z.dtype
            assert torch.allclose(y, z)  # lu_factor's 1-based pivots included
    # Vector signs are a gauge: values are compared through |V|^2 in test_values_and_gradients.
    assert type(rlinalg.svd(A)) is type(torch.linalg.svd(A))
    assert type(rlinalg.eigh(S)) is type(torch.linalg.eigh(S))


def test_qr_mode_r_and_complete(rng):
    A = square(rng, (5, 3), torch.float64)
    Q, R = rlinalg.qr(A, mode="r")
    assert Q.numel() == 0
    assert torch.allclose(R, torch.linalg.qr(A, mode="r").R)
    for y, z in zip(
        rlinalg.qr(A, mode="complete"), torch.linalg.qr(A, mode="complete"), strict=True
    ):
        assert torch.allclose(y, z)


def test_pivot_false_is_refused():
    with pytest.raises(ValueError, match="pivot=False"):
        rlinalg.lu(torch.eye(2, dtype=torch.float64), pivot=False)
