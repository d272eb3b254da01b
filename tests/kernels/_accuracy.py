"""Test inputs and accuracy measures shared by the forward-factorization kernel tests.

Matrix families of the issue: random, graded (rows and columns scaled over many decades),
ill-conditioned (singular values or eigenvalues over 12 decades), rank-deficient, and (for
Hermitian matrices) clustered and exactly repeated eigenvalues. Accuracy is measured as LAPACK
is judged (backward error ``||A - factors|| / ||A||`` and loss of orthogonality
``||Q^H Q - I||``, both max over the stack) and compared with LAPACK's own values on the same
matrices, with a floor of ``n eps`` so that a lucky LAPACK result does not set an impossible bar.
"""

import numpy as np

KINDS = ["random", "graded", "ill", "rank"]
HERMITIAN_KINDS = [*KINDS, "clustered", "repeated"]


def randn(rng, shape, dtype):
    """Standard normal entries of ``dtype`` (both parts random for complex)."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x


def unitary(rng, b, n, dtype):
    """A stack of ``b`` random unitary (orthogonal) ``n x n`` matrices, in double precision."""
    q, _ = np.linalg.qr(randn(rng, (b, n, n), dtype))
    return q


def general(rng, kind, b, m, n, dtype):
    """A stack (b, m, n) of ``kind``: random, graded, ill-conditioned or rank-deficient."""
    k = min(m, n)
    if kind == "random":
        A = randn(rng, (b, m, n), dtype)
    elif kind == "graded":
        A = randn(rng, (b, m, n), dtype) * np.logspace(0, -8, m)[:, None] * np.logspace(0, -4, n)
    else:
        s = (
            np.logspace(0, -12, k)
            if kind == "ill"
            else np.r_[np.ones(max(k - 2, 1)), [0.0] * 2][:k]
        )
        if kind == "rank" and k == 1:
            s = np.zeros(1)
        U = unitary(rng, b, m, dtype)[..., :k]
        V = unitary(rng, b, n, dtype)[..., :k]
        A = (U * s) @ V.conj().mT
    return np.ascontiguousarray(A.astype(dtype))


def hermitian(rng, kind, b, n, dtype):
    """A Hermitian stack (b, n, n) of ``kind`` (``HERMITIAN_KINDS``)."""
    if kind in KINDS and kind not in ("ill", "rank"):
        X = general(
            rng, kind, b, n, n, np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        )
        return np.ascontiguousarray(((X + X.conj().mT) / 2).astype(dtype))
    if kind == "ill":
        w = np.logspace(0, -12, n) * np.where(np.arange(n) % 2, -1, 1)
    elif kind == "rank":
        w = np.r_[rng.standard_normal(max(n - 2, 0)), np.zeros(2)][:n]
    elif kind == "clustered":
        w = 1.0 + 1e-10 * np.arange(n)
        w[: n // 2] = -2.0 + 1e-9 * np.arange(n // 2)
    else:  # repeated: exactly equal eigenvalues in blocks
        w = np.repeat([-1.0, 3.0], (n + 1) // 2)[:n]
    Q = unitary(rng, b, n, dtype)
    A = (Q * w) @ Q.conj().mT
    return np.ascontiguousarray(((A + A.conj().mT) / 2).astype(dtype))


def eps(dtype):
    """Machine epsilon of ``dtype``'s precision."""
    return float(np.finfo(dtype).eps)


def backward_error(A, B):
    """``max_p ||A_p - B_p||_F / ||A_p||_F`` in double precision (0/0 counts as 0)."""
    A = A.astype(np.complex128)
    num = np.linalg.norm(A - B.astype(np.complex128), axis=(-2, -1))
    den = np.linalg.norm(A, axis=(-2, -1))
    return float(np.max(np.where(den > 0, num / np.where(den > 0, den, 1), num), initial=0.0))


def orthogonality(Q):
    """``max_p ||Q_p^H Q_p - I||_F`` in double precision."""
    Q = Q.astype(np.complex128)
    k = Q.shape[-1]
    return float(np.max(np.linalg.norm(Q.conj().mT @ Q - np.eye(k), axis=(-2, -1)), initial=0.0))


def within_lapack(ours, lapack, n, dtype, factor=10.0):
    """Whether ``ours <= factor * max(lapack, n eps)``: the issue's "within 10x LAPACK's"."""
    return ours <= factor * max(lapack, n * eps(dtype))
