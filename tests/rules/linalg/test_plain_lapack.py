"""The LAPACK forward passes of eigvalsh and svdvals for one plain real matrix, against numpy."""

import numpy as np
import pytest

from rules import frule, rrule
from rules.linalg import plain_lapack
from tangents import NoTangent


@pytest.mark.parametrize("UPLO", ["L", "U"])
@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_eigh_values_forward_agrees_with_numpy(real, UPLO):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 5)).astype(real)  # not symmetric: only the UPLO triangle is read
    w, V = plain_lapack.eigh_values_forward(a, UPLO)
    w_np, V_np = np.linalg.eigh(a, UPLO)
    tol = 1e-4 if real == np.float32 else 1e-12
    assert w.dtype == V.dtype == real
    assert V.flags.c_contiguous
    np.testing.assert_allclose(w, w_np, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.abs(V.T @ V_np), np.eye(5), atol=10 * tol)  # up to signs
    y, _ = rrule(np.linalg.eigvalsh, a, UPLO)
    np.testing.assert_allclose(y, np.linalg.eigvalsh(a, UPLO), rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6)])
@pytest.mark.parametrize("real", [np.float64, np.float32])
def test_svd_values_forward_agrees_with_numpy(real, shape):
    a = np.random.default_rng(4).standard_normal(shape).astype(real)
    U, s, Vh = plain_lapack.svd_values_forward(a)
    tol = 1e-4 if real == np.float32 else 1e-12
    assert U.dtype == s.dtype == Vh.dtype == real
    np.testing.assert_allclose(s, np.linalg.svdvals(a), rtol=tol, atol=tol)
    np.testing.assert_allclose((U * s) @ Vh, a, rtol=10 * tol, atol=10 * tol)


def test_what_the_helpers_leave_to_the_general_path():
    a = np.eye(3)
    assert plain_lapack.eigh_values_forward(a, "l") is None  # numpy's spelling rules apply
    assert plain_lapack.eigh_values_forward(np.ones((2, 3)), "L") is None
    assert plain_lapack.eigh_values_forward(np.eye(3, dtype=np.complex128), "L") is None
    assert plain_lapack.eigh_values_forward(np.zeros((0, 0)), "L") is None
    assert plain_lapack.svd_values_forward(np.zeros((0, 3))) is None
    assert plain_lapack.svd_values_forward(np.eye(3)[None]) is None
    nan = np.full((3, 3), np.nan)
    assert plain_lapack.eigh_values_forward(nan, "L") is None
    assert plain_lapack.svd_values_forward(nan) is None
    # NaN: the general paths raise numpy's errors, named
    for f in (np.linalg.eigvalsh, np.linalg.svdvals):
        with pytest.raises(np.linalg.LinAlgError, match=f.__name__):
            rrule(f, nan)
        with pytest.raises(np.linalg.LinAlgError, match=f.__name__):
            frule((NoTangent(), np.ones((3, 3))), f, nan)
