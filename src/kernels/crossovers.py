"""The crossover table: up to which matrix order each compiled path runs.

One table, one convention: a path runs for order ``n <= NAME`` (``NAME`` ends in ``_MAX_N``, or
``_MAX_SIZE`` for a product of dimensions); above it the next path named in the entry takes over.
Each name starts with the bench case that measures it (``python -m bench --ops CASE``, e.g.
``lu.pullback`` for ``LU_*``); ``SINGLE`` entries are for one matrix, ``STACK`` entries for a
stack ``(..., n, n)``. The values were chosen where the two paths cross in those cases (float64,
one BLAS thread, 2 cores); re-measure with the bench before changing one, and keep the timings
in its output, not here.

Rules read the table through :mod:`rules.core.dispatch`, at call time, so a test may lower an
entry (``monkeypatch.setattr(crossovers, "LU_STACK_MAX_N", 0)``) to force the other path. This
module imports nothing, so kernels and rules share it without a cycle.
"""

# cholesky.pullback / cholesky.pushforward: the Numba loop kernels (one matrix and stacks) up to
# here, the blocked level-3 BLAS algorithm (kernels.cholesky.*_blocked) per matrix above.
CHOLESKY_PULLBACK_MAX_N = 47
CHOLESKY_PUSHFORWARD_MAX_N = 79

# cholesky (the rrule's forward): one matrix calls LAPACK potrf directly up to here, skipping
# numpy's wrapper, whose fixed cost matters only for small n; np.linalg.cholesky above.
CHOLESKY_FORWARD_SINGLE_MAX_N = 64

# cholesky.whole / lu.whole / inv.whole (the rrule's forward on a stack (..., n, n) of a kernel
# dtype): the batched forward kernels (kernels.cholesky_factor, kernels.lu_unpacked with
# kernels.lu, kernels.inverse) up to here, numpy's or scipy's LAPACK loop above.
CHOLESKY_FORWARD_STACK_MAX_N = 16
LU_FORWARD_STACK_MAX_N = 24
INV_FORWARD_STACK_MAX_N = 16

# lu.whole (one matrix, by dtype kind): kernels.lu_unpacked on a stack of one up to here,
# scipy.linalg.lu above (its wrapper costs several times a small factorization).
LU_FORWARD_SINGLE_MAX_N = {"f": 32, "c": 24}

# lu.whole / lu.pushforward (one real matrix, p_indices and permute_l off for the pullback): the
# fused kernels of kernels.lu_single (forward with its checks in one call, pullback in another,
# the frule in one) up to here, the general path above (at most LU_SINGLE_MAX_N, whose kernels
# give the same bits).
LU_FAST_SINGLE_MAX_N = 16

# eigh.whole / svd.whole / qr.whole (and eigvalsh, svdvals): the batched Jacobi, tridiagonal-QR
# and Householder forward kernels (kernels.eigh_forward, eigh_tridiagonal, svd_forward,
# qr_forward) up to here, by dtype kind ("f" real, "c" complex: complex arithmetic vectorises
# less well across matrices), numpy's LAPACK loop above.
EIGH_FORWARD_STACK_MAX_N = {"f": 48, "c": 24}
# Within EIGH_FORWARD_STACK_MAX_N, stacks up to here take the Jacobi kernel (lane blocks
# vectorised across matrices), larger ones tridiagonal QR, one matrix at a time. Measured on
# stacks of 16000 / n matrices, one thread. float64 (float32): at n = 8 Jacobi took 0.90x
# (0.77x) the time of tridiagonal QR, at 10 1.10x (0.90x), at 12 1.41x (1.24x); tridiagonal QR
# against numpy's syevd loop 0.52x at 16, 0.65x at 32, 0.93x at 48 and 1.2x at 64. complex128:
# Jacobi 0.61x tridiagonal QR at 2, 1.05x at 3, 1.50x at 4; tridiagonal QR against zheevd
# 0.57x at 3, 0.61x at 4, 0.85x at 16, 0.95x at 24, 1.9x at 32.
EIGH_JACOBI_STACK_MAX_N = {"f": 9, "c": 2}
SVD_FORWARD_STACK_MAX_N = {"f": 32, "c": 8}
# Within SVD_FORWARD_STACK_MAX_N (on max(m, n)), stacks take one-sided Jacobi while min(m, n)
# is at most SVD_JACOBI_STACK_MAX_N, bidiagonal QR (kernels.svd_bidiagonal) above. complex128,
# 1000 matrices: Jacobi against bidiagonal QR 0.98x at 4, 1.34x at 6; bidiagonal QR against
# zgesdd's loop 0.68x at 6, 0.83x at 8, 1.05x at 12. Measured on 16000 / n matrices (1000 from
# 16 and for the rectangles),
# one thread, float64: Jacobi against bidiagonal QR 0.70x at 6, 1.03x at 8, 1.25x at 10, 2.1x at
# 16; (m, n) = (32, 4) 0.61x, (24, 6) 0.83x, (16, 8) 1.09x, (32, 8) 1.11x, (12, 10) 1.25x;
# bidiagonal QR against numpy's gesdd loop 0.58x at 16, 0.84x at 32, 1.08x at 48, (32, 16)
# 0.75x, (48, 16) 0.99x.
SVD_JACOBI_STACK_MAX_N = {"f": 7, "c": 4}
QR_FORWARD_STACK_MAX_N = {"f": 16, "c": 12}

# qr.whole (one matrix): the Householder kernel on a stack of one up to here, numpy's or
# scipy's LAPACK above. eigh and svd keep LAPACK for one matrix (the kernels' eigenvector
# gauge is not LAPACK's).
QR_FORWARD_SINGLE_MAX_N = {"f": 15, "c": 14}

# eigvalsh.whole / svdvals.whole (one matrix; values only, the vectors stay inside the
# derivative): LAPACK syevd/heevd and gesdd through scipy's raw wrappers up to here, numpy's
# eigh and svd above (the same drivers; their wrappers' fixed cost matters only for small n).
EIGH_VALUES_SINGLE_MAX_N = 32
SVD_VALUES_SINGLE_MAX_N = 32

# lu.pullback / lu.pushforward: the loop kernels up to here, the BLAS variant
# (kernels.lu.*_blas, triangular solves with the forward's factors) above.
LU_SINGLE_MAX_N = 16
LU_STACK_MAX_N = 32

# qr.whole / qr.pushforward (one square matrix, np.linalg.qr's 'reduced' or 'complete'): the
# fused kernels of kernels.qr_single up to here, the general path above (at most QR_SINGLE_MAX_N
# and QR_FORWARD_SINGLE_MAX_N, whose kernels give the same bits).
QR_FAST_SINGLE_MAX_N = 12

# qr.pullback / qr.pushforward: the loop kernels up to here, kernels.qr.*_blas above.
QR_SINGLE_MAX_N = 12
QR_STACK_MAX_N = 16

# inv.pullback / inv.pushforward: the loop kernels up to here, two BLAS gemm above.
INV_SINGLE_MAX_N = 4
INV_STACK_MAX_N = 4
# inv's and svdvals' pullbacks of one plain real matrix: ndarray.dot up to here (its call costs
# less), matmul above (its BLAS products ran faster from 96). One process, one core (Intel Xeon,
# SkylakeX OpenBLAS), float64, the formula over each (medians of five interleaved runs):
# inv, -Y^T Y_bar Y^T: two dots and a unary minus 1.07 at 48, 1.01 at 64, 0.98 at 96 and 128; two
# matmul with the minus in place 1.01 from 48 to 256, 0.99-1.0 at 512 and 1024 (the minus inside
# scipy's gemm, alpha = -1, the path above 127 before: 0.96 at 256 and 0.97 at 160).
# svdvals, (U * s_bar) Vh: dot 1.07 at 48, 1.04 at 64, 0.98-0.99 from 96 to 512; matmul 1.04,
# 1.02, then 1.0-1.01.
PLAIN_DOT_MAX_N = 64
# inv's pullback and pushforward of one plain real matrix: one compiled call (kernels.solve.
# inv_pullback, inv_pushforward) up to here, two dots and a minus above. One process, float64,
# compiled call against the dots (ns): 770 / 1030 at 2, 830 / 1070 at 4, 1010 / 1110 at 6,
# 1130 / 1160 at 8 (the pushforward: 1110 / 1040 at 8).
INV_PLAIN_KERNEL_MAX_N = 4

# solve.pullback (k = n right-hand sides): stacks up to SOLVE_STACK_MAX_N are factored and solved
# by the batched LU (Cholesky) kernels; LU-kind stacks up to SOLVE_GUFUNC_STACK_MAX_N by numpy's
# batched np.linalg.solve (no kept factors, but no Python loop); LAPACK per matrix above, and
# for one matrix at every order.
SOLVE_STACK_MAX_N = 16
SOLVE_GUFUNC_STACK_MAX_N = 32

# solve.pullback / solve.pushforward (forward included), LAPACK per matrix with factors from
# getrf: a C-ordered matrix right-hand side with both sides above this (by dtype kind) is solved
# by rows (kernels._blas.lu_solve_rows, the transposed problem on Fortran views, C-ordered
# result), getrs below and for vectors.
SOLVE_GETRS_MAX_N = {"f": 95, "c": 47}

# solve_triangular.pullback: the batched Numba solve while n * n * k stays up to this, BLAS trsm
# per matrix above.
SOLVE_TRIANGULAR_KERNEL_MAX_SIZE = 32**3 - 1

# det.pullback: the complete-pivoting kernel up to DET_*_MAX_N; mid-size stacks up to
# DET_GUFUNC_STACK_MAX_N through numpy's batched gufuncs; LAPACK getrf with the kept LU above.
DET_SINGLE_MAX_N = 12
DET_STACK_MAX_N = 16
DET_GUFUNC_STACK_MAX_N = 32

# det.pullback at large n: an inverse from the kept LU by getri up to here, by getrs on the
# identity above. With its optimal workspace (kernels._blas.getri) getri was the faster at every
# order measured, 64 to 1024 (1024: 36 ms against 51 ms); without it, as scipy's wrapper calls
# it, getri had fallen behind from about 512. Larger orders are unmeasured and keep getrs.
DET_GETRI_MAX_N = 1024

# slogdet.pullback: stacks up to here keep the batched LU kernel's factors; LAPACK getrf above
# and for one matrix.
SLOGDET_STACK_MAX_N = 32

# eigh.pullback / svd.pullback (and eigvalsh, svdvals, matrix_norm's nuclear and 2-norms): the
# unrolled loop kernels up to here (max(m, n) for svd), the tiled BLAS kernels above.
EIGH_LOOPS_MAX_N = 8
SVD_LOOPS_MAX_N = 6

# eigh.pushforward / eigvalsh.pushforward, BLAS path: V^H herm(A_dot) V takes the general product
# A_dot V up to here, a triangular one (kernels.hermitian_products, half the multiplications, but
# OpenBLAS's trmm runs at a fraction of gemm's speed on small orders) above; by dtype character
# ('f' float32, 'd' float64, 'D' complex128; others take A_dot V). By OpenBLAS core: the Haswell
# and Zen kernels (measured on an AMD EPYC: trmm lost to gemm up to about 128 in float64 and 160
# in float32; complex128 as first measured) ...
EIGH_HERMITIAN_GEMM_MAX_N = {"f": 159, "d": 127, "D": 47}
# ... and the AVX-512 cores of kernels._blas_core.SMALL_GEMM_CORES (an Intel Xeon on the SkylakeX
# kernels, one process, one core; trmm path time / gemm time: float64 1.44 at 64, 1.02 at 96,
# 0.81 at 112; float32 1.49 at 96, 0.96 at 112, 0.90 at 128; complex128 1.03 at 48, 0.98 at 64,
# 0.94 at 80). The table the first measurement chose (float64 63, float32 95) sent orders 64 to
# 111 in float64 to the slower trmm on both kinds of core.
EIGH_HERMITIAN_GEMM_SMALL_GEMM_MAX_N = {"f": 111, "d": 103, "D": 63}

# eigvalsh.pullback (A_bar = V diag(w_bar) V^H, no division) on its own, by dtype character
# ('d' float64, 'D' complex128, 'f' float32): its loop kernel forms only the lower triangle and
# mirrors it as it goes, which beat the BLAS product, its scaling pass and its separate mirror at
# 9 and 16 on a side in float64 (1000 x (16x16): 0.86 against 1.25 ms) and complex128, in one
# process on an Intel Xeon; BLAS won from 32 on in float64 and from 16 on in float32 (sgemm).
EIGVALSH_LOOPS_MAX_N = {"d": 16, "D": 16, "f": 8}

# matmul.pullback / matmul.pushforward: stacks of matrices up to this on a side go through
# kernels.products in one compiled call; numpy's stacked matmul above.
MATMUL_STACK_MAX_N = 4

# matmul.pushforward of one real matrix by another: A_dot B + A B_dot with a separate addition up
# to here (largest side); above, A B_dot is added by gemm itself (beta = 1,
# kernels._blas.gemm_accumulate_c); below 128 the two took the same time.
MATMUL_PUSHFORWARD_ADD_MAX_N = 127

# matmul (forward, pullback, pushforward), and the products of inv's and svdvals' stacked
# derivatives: real stacks above MATMUL_STACK_MAX_N up to this on a side, by dtype char, with
# every side a multiple of 4, go through kernels.tiled_products (register tiles vectorised by
# LLVM's SLP pass); numpy's stacked matmul above and for other sides (the tiles' scalar edges
# lose to it at 6, 7 and 10). Against numpy's stacked matmul, one process, AMD EPYC with
# AVX-512 (kernels.tiled_products.WIDE) and numpy's OpenBLAS on its Haswell kernels, about
# 256,000 entries per stack (forward / with pushforward / pullback): float64 8x8 2.5 / 2.6 /
# 1.8x, 16x16 2.4 / 2.7 / 1.8x, 32x32 2.2 / 2.5 / 1.9x, 96x96 1.9 / 1.7 / 1.6x, 128x128 1.5 /
# 1.6 / 0.92x; float32 16x16 1.9 / 2.2 / 1.5x, 96x96 1.3 / 1.3 / 1.3x. Without AVX-512 (blocks
# of 4x8 only, measured on the same machine) float32 lost from 20x20 on (pullback 0.96x, its
# vectors half full): MATMUL_TILED_NARROW_MAX_N. inv's and svdvals' derivatives were measured
# with the tiles at 1000 x (16x16) float64 only (kernels.solve.inv_pullback_blas,
# rules.linalg.svd._scaled_products), where each took about 0.6 of its BLAS time as two
# separate tiled products; they now run in one pass (kernels.tiled_products.inv_pullback_tiled,
# inv_pushforward_tiled, matmul_scaled_tiled): on the Intel Xeon below, inv's pullback in one
# pass beat its two tiled products at every size measured, 8 to 48.
MATMUL_TILED_MAX_N = {"d": 96, "f": 96}
MATMUL_TILED_NARROW_MAX_N = {"d": 96, "f": 16}

# The same tiles where numpy's OpenBLAS runs a core with its small-matrix gemm
# (kernels._blas_core.SMALL_GEMM_CORES, SkylakeX's AVX-512 kernels), which is fast enough that
# the tiles pay only where they save passes over memory: by kind of product (the `kind` of
# kernels.tiled_products.fits), then dtype char; an entry of MATMUL_STACK_MAX_N (4) means never.
# Measured in one process on an Intel Xeon (AVX-512, LLVM's tuning for 256-bit vectors), 256,000
# entries per stack, tiles (with fused multiply-adds) against numpy's stacked matmul, float64
# (float32): "product" A @ B 0.99x (1.21x) at 8, 0.91x (0.70x) at 12, 0.99x (0.93x) at 16,
# 0.82x (0.85x) at 24; "pullback" (kernels.products.adjoint_operand's copy for numpy) 1.17x
# (1.58x) at 8, 1.02x (0.80x) at 12, 1.19x (1.02x) at 16, 0.96x (0.97x) at 24; "pushforward"
# (A @ B with A_dot @ B + A @ B_dot) 1.37x (1.40x) at 8, 1.13x (0.77x) at 12, 1.36x (1.26x)
# at 16, 1.03x (1.01x) at 24, 1.00x (0.85x) at 32; "scaled" (X diag(d) Y, one pass, against
# (X * d) @ Y) 1.89x (1.69x) at 8, 1.69x (1.66x) at 16, 1.10x (1.25x) at 32, 0.96x (0.90x) at 64;
# "inv_pullback" (-Y^T Y_bar Y^T in one pass, against adjoint_operand's copy and two matmuls)
# 1.53x (1.51x) at 8, 1.36x (0.95x) at 12, 1.44x (1.31x) at 16, 1.33x (1.15x) at 24, 1.22x
# (0.99x) at 32, 1.12x (0.94x) at 48; "inv_pushforward" (-Y A_dot Y) 1.37x (1.44x) at 8, 1.16x
# (0.77x) at 12, 1.25x (1.10x) at 16, 1.10x (1.06x) at 24, 1.06x (0.91x) at 32, 1.02x (0.91x)
# at 48. float32 at 12 loses in every kind (its 4x8 blocks and a 4x4 block per row of tiles).
MATMUL_TILED_SMALL_GEMM_MAX_N = {
    "product": {"d": 4, "f": 8},
    "pullback": {"d": 16, "f": 8},
    "pushforward": {"d": 24, "f": 8},
    "scaled": {"d": 32, "f": 32},
    "inv_pullback": {"d": 48, "f": 8},
    "inv_pushforward": {"d": 32, "f": 8},
}

# Products by an adjoint, X @ Y^H, of real stacks up to this on a side (the BLAS paths of the
# matmul and inv pullbacks; qr's and solve's stacked pullbacks measured within noise): numpy's
# stacked matmul by a C-ordered copy of Y^T (kernels.products.adjoint_operand), not by the view
# Y.mT, when numpy's OpenBLAS runs its SkylakeX kernels (kernels._blas_core.SMALL_GEMM_CORES),
# whose small-matrix gemm runs a transposed right operand at about half speed. With the copy,
# float64, in one process on an Intel Xeon, C_bar @ B^T: 5x5 0.58 against 1.44 ms, 8x8 0.36
# against 0.61, 16x16 0.36 against 0.44, 32x32 0.44 against 0.48, 64x64 0.68 against 0.76
# (256,000 entries per stack); 96x96 lost (0.91 against 0.76). complex128 gained nothing (its
# B^H is a copy already) and keeps the view. On the Haswell and Zen kernels the copy loses at
# every size from 5 to 64 and is not made.
MATMUL_ADJOINT_COPY_MAX_N = 64

# expm.pullback / expm.pushforward (and the rrule's forward): the lane-block kernels of
# kernels.expm (forward and Frechet derivative) up to here; the rule's numpy product chain (BLAS,
# numpy's stacked matmul) above. One matrix runs on one lane, whose loops do not vectorise:
# the kernel falls behind BLAS sooner than on stacks.
EXPM_SINGLE_MAX_N = 8
EXPM_STACK_MAX_N = 12
