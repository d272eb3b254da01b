"""Numba-compiled numeric kernels for pullbacks and pushforwards of matrix operations.

Kernels take plain C-contiguous ndarrays and return ndarrays: no tangent types, no Python
objects, no imports from ``tangents`` or ``rules``. Rules normalise dtype and layout before
calling them, so each kernel compiles once per supported dtype (float64, float32, complex128).
All Numba options are set in :mod:`kernels._jit`; the crossover table of every path is
:mod:`kernels.crossovers`.

Forward factorizations of stacks ``(b, n, n)`` of small matrices, for users who only want the
fast forward (one compiled call where numpy and scipy call LAPACK once per matrix; the rules use
them up to the ``*_FORWARD_STACK_MAX_N`` entries of :mod:`kernels.crossovers`):

* :func:`kernels.eigh_forward.eigh_batched` (cyclic Jacobi; complex too) and
  :func:`kernels.eigh_tridiagonal.eigh_tridiagonal_batched` (tridiagonal QR; faster from about
  10 on a side, 3 for complex128) -- ``(w, V)`` of ``np.linalg.eigh``, with a fixed eigenvector sign;
  :func:`kernels.svd_forward.svd_batched` (one-sided Jacobi) and
  :func:`kernels.svd_bidiagonal.svd_bidiagonal_batched` (bidiagonal QR; faster from about 8
  on the smaller side, 5 for complex128) -- ``(U, s, Vh)`` of ``np.linalg.svd``;
  :func:`kernels.qr_forward.qr_batched`;
* :func:`kernels.cholesky_factor.cholesky_factor_batched` -- ``A = L L^H`` (``np.linalg.cholesky``),
  returns ``(L, info)``;
* :func:`kernels.lu_unpacked.lu_batched` -- ``(perm, L, U)`` of ``scipy.linalg.lu(A, p_indices=True)``;
  :func:`kernels.lu_unpacked.plu_batched` -- ``(P, perm, L, U, info)``, ``P`` of ``scipy.linalg.lu(A)``;
* :func:`kernels.lu.lu_factor_batched` -- ``(lu, piv)`` of ``scipy.linalg.lu_factor``, and
  :func:`kernels.lu.lu_solve_batched` -- ``scipy.linalg.lu_solve`` with them;
* :func:`kernels.inverse.inv_batched` -- ``(Y, info)``, ``Y = A^-1`` (``np.linalg.inv``);
* :func:`kernels.determinant_value.det_batched` -- ``np.linalg.det``;
  :func:`kernels.determinant_lu.lu_det_batched` -- ``(lu, piv, det, ok)``, the factors kept for
  the det rule's pullback, and :func:`kernels.determinant_lu.lu_slogdet_batched` --
  ``(lu, piv, sign, logabsdet)`` (``np.linalg.slogdet``);
* :func:`kernels.triangular.solve_triangular_batched` -- ``scipy.linalg.solve_triangular``.

They never raise for singular or indefinite input: ``info`` (LAPACK's, 1-based, 0 for success)
says where numpy would raise ``LinAlgError``; NaN in gives NaN out. Example::

    import numpy as np
    from kernels.cholesky_factor import cholesky_factor_batched

    X = np.random.default_rng(0).standard_normal((10000, 4, 4))
    L, info = cholesky_factor_batched(X @ X.transpose(0, 2, 1) + 4 * np.eye(4), True)
    assert not info.any()

Products of stacks of small real matrices: :func:`kernels.tiled_products.matmul_tiled`
(``A @ B`` of C-ordered, writable float64 or float32 ``(b, m, k)`` and ``(b, k, n)`` stacks,
fastest with sides that are multiples of 4; ``kernels.tiled_products.fits`` says where they
beat numpy's matmul), with the product's pullback and pushforward beside it.

``V^H herm(A) V`` in half the multiplications of the plain product (``A`` any square matrix,
read through its Hermitian part): :func:`kernels.hermitian_products.hermitian_part_times`.
"""

__tangent_algebra__ = True
"""Marks this package as tangent-algebra's ``kernels`` (Hugging Face's ``kernels`` has the name too)."""
