"""The batched Jacobi eigendecomposition against LAPACK (numpy's eigh) on the issue's families."""

import numpy as np
import pytest

from kernels.eigh_forward import eigh_batched, eigvalsh_batched

DTYPES = [np.float64, np.float32, np.complex128]
KINDS = ["random", "graded", "ill", "rank", "clustered", "repeated"]  # _accuracy.HERMITIAN_KINDS


def reconstruct(w, V):
    return (V * w[..., None, :]) @ V.conj().mT


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 4, 7])
def test_accuracy_within_lapack(rng, acc, dtype, kind, n):
    A = acc.hermitian(rng, kind, 37, n, dtype)  # 37: the last lane block is partly idle
    A_in = A.copy()
    w, V = eigh_batched(A)
    np.testing.assert_array_equal(A, A_in)  # the input is not written
    assert (w.dtype, V.dtype) == (np.finfo(dtype).dtype, dtype)
    assert (w.shape, V.shape) == ((37, n), (37, n, n))
    wl, Vl = np.linalg.eigh(A)
    ours, lapack = (
        acc.backward_error(A, reconstruct(w, V)),
        acc.backward_error(A, reconstruct(wl, Vl)),
    )
    assert acc.within_lapack(ours, lapack, n, dtype), (ours, lapack)
    ours, lapack = acc.orthogonality(V), acc.orthogonality(Vl)
    assert acc.within_lapack(ours, lapack, n, dtype), (ours, lapack)
    assert np.all(np.diff(w, axis=-1) >= 0)  # ascending, as numpy
    # eigenvalues: both within a small multiple of eps ||A||_2 of the exact ones (Weyl)
    scale = np.linalg.norm(A.astype(np.complex128), 2, axis=(-2, -1))[:, None]
    assert np.all(
        np.abs(w - wl) <= 20 * n * acc.eps(dtype) * np.maximum(scale, np.finfo(dtype).tiny)
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_gauge_normalisation(rng, acc, dtype):
    """Each eigenvector's first entry of largest magnitude is real and positive."""
    A = acc.hermitian(rng, "random", 50, 5, dtype)
    _, V = eigh_batched(A)
    mag = np.abs(V)
    top = np.take_along_axis(V, np.argmax(mag, axis=-2)[..., None, :], axis=-2)[..., 0, :]
    assert np.all(top.real > 0)
    np.testing.assert_array_equal(top.imag, 0)
    # the same matrices, eigenvectors multiplied by -1 (or a phase) in the input basis, give
    # the same normalised result: the choice does not depend on the rotations' path
    _, Vl = np.linalg.eigh(A)
    phase = Vl.conj()[np.arange(50)[:, None], np.argmax(np.abs(Vl), axis=-2), np.arange(5)]
    Vl = Vl * (phase / np.abs(phase))[:, None, :]
    tol = 1e-3 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(V, Vl, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_reads_one_triangle(rng, acc, dtype):
    A = acc.hermitian(rng, "random", 6, 4, dtype)
    junk = A.copy()
    iu = np.triu_indices(4, 1)
    junk[:, iu[0], iu[1]] = 99.0  # upper triangle ignored with lower=True
    np.testing.assert_allclose(eigh_batched(junk)[0], np.linalg.eigh(A)[0], atol=1e-12)
    junk = A.copy()
    junk[:, iu[1], iu[0]] = 99.0
    np.testing.assert_allclose(eigh_batched(junk, lower=False)[0], np.linalg.eigh(A)[0], atol=1e-12)
    np.testing.assert_allclose(eigvalsh_batched(A), np.linalg.eigvalsh(A), atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_in_nan_out(rng, acc, dtype):
    A = acc.hermitian(rng, "random", 40, 4, dtype)
    A[3, 2, 1] = np.nan
    w, V = eigh_batched(A)
    assert np.isnan(w[3]).all()
    assert np.isnan(V[3]).all()
    assert np.isfinite(w[np.arange(40) != 3]).all()


def test_extreme_scales(rng, acc):
    """Tiny and huge matrices: the power-of-two scaling keeps the rotations finite."""
    A = acc.hermitian(rng, "random", 5, 4, np.complex128)
    for s in (1e-200, 1e200):
        w, V = eigh_batched(A * s)
        np.testing.assert_allclose(w / s, np.linalg.eigvalsh(A), atol=1e-13)
        assert acc.orthogonality(V) < 1e-13


def test_bad_input():
    with pytest.raises(ValueError, match="eigh_batched"):
        eigh_batched(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="eigh_batched"):
        eigh_batched(np.zeros((2, 3, 3), dtype=np.complex64))


def test_imaginary_part_of_the_diagonal_is_ignored(acc, rng):
    """Ignored in the prescale too: a huge one used to scale the real entries into underflow."""
    A = acc.hermitian(rng, "random", 4, 3, np.complex128)
    junk = A.copy()
    i = np.arange(3)
    junk[:, i, i] += 1e200j
    w, V = eigh_batched(junk)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(A), atol=1e-13)
    assert acc.backward_error(A, reconstruct(w, V)) < 1e-14
    w2 = np.array([[1.0 + 1e200j, 0], [0.5 + 0.5j, 2.0]])[None]  # the reviewer's case
    np.testing.assert_allclose(eigh_batched(w2)[0], np.linalg.eigvalsh(w2), atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_a_matrix_is_not_changed_by_the_others_in_its_block(rng, acc, dtype):
    """Off-diagonal entries near 1e-160: their squares are subnormal, their phase inexact.

    A lane that did not rotate still had that phase applied whenever another lane of its block
    rotated: complex Hermitian matrices then came out with V off unitary by up to 0.24 when
    stacked with others, and exact when alone (landed bug).
    """
    n = 3
    H = acc.hermitian(rng, "random", 16, n, dtype)
    tiny = 10.0 ** rng.uniform(-170, -150, size=8)  # every other matrix; the rest rotate
    H[::2, 0, 1] *= tiny / np.abs(H[::2, 0, 1])
    H[::2, 1, 0] = H[::2, 0, 1].conj()
    H[::2, 0, 2] *= tiny
    H[::2, 2, 0] = H[::2, 0, 2].conj()
    w, V = eigh_batched(H)
    eps = np.finfo(dtype).eps
    for p in range(16):  # to rounding: a block sweeps until its last matrix has converged
        w_alone, V_alone = eigh_batched(H[p : p + 1])
        np.testing.assert_allclose(w[p], w_alone[0], rtol=0, atol=50 * eps)
        np.testing.assert_allclose(V[p], V_alone[0], rtol=0, atol=50 * eps)
    assert acc.orthogonality(V) < 20 * eps
    np.testing.assert_allclose((V * w[..., None, :]) @ V.conj().mT, H, atol=20 * n * eps)
