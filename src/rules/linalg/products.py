"""Rules for products of two arrays: ``np.matmul`` (and ``@``), ``dot``, ``vdot``, ``inner``.

``outer`` and ``kron``, which contract nothing, are in :mod:`rules.linalg.outer_products`.

Conventions (DESIGN.md section 3): the cotangent of a complex ``z`` is ``dL/dRe z + i dL/dIm z``,
so ``C = A B`` gives ``A_bar = C_bar B^H`` and ``B_bar = A^H C_bar`` (Giles 2008, section 2.2.2).
Every product here is bilinear, ``y = P(a, b)``, and its pullback is the adjoint of each partial
map with the other operand conjugated; its pushforward is ``P(a_dot, b) + P(a, b_dot)``.

Paths (chosen for matmul by :func:`rules.core.dispatch.paths`):

* algebra path: where a pullback is a plain matrix product (matmul of matrices or of stacks of
  one batch shape, ``dot`` of matrices, ``inner`` of matrices, ``outer`` of vectors) it is
  written with the tangent algebra, so any cotangent type with ``@`` (and ``.mT``, ``.conj()``)
  flows through: a low-rank cotangent stays low rank. The pushforwards of matmul, and of ``dot``
  and ``inner`` of matrices, take the algebra path in the same way.
* array-formula path: the other cases (matmul with vectors or broadcast batch axes, N-D
  contractions, scalars, ``vdot``, ``kron``) need elementwise access or reshapes and take their
  cotangent through :func:`rules.core.cotangents.as_array_cotangent`.
* kernel path: stacks of matrices up to ``kernels.crossovers.MATMUL_STACK_MAX_N`` on a side with
  equal batch shapes go through ``kernels.products`` in one compiled call (faster than numpy's
  stacked matmul there, slower beyond); one plain matrix and larger stacks are numpy's BLAS
  matmul. For C-contiguous stacks of a kernel dtype the forward product ``C`` is the kernels'
  too (``matmul_batched``; the frule's ``C`` and ``C_dot`` in one pass), equal to numpy's to
  rounding: numpy's stacked matmul costs more than the whole pullback there. Real stacks above
  that, up to ``kernels.crossovers.MATMUL_TILED_MAX_N`` with every side a multiple of 4, take
  ``kernels.tiled_products`` (register tiles) for the product, the pullback and the
  pushforward. The other products have no stacked small-matrix form and are BLAS-bound, so
  they have no kernels.

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import scipy.sparse as sp

from kernels import crossovers
from kernels import products as kproducts
from kernels import tiled_products as ktiled
from kernels._blas import gemm_accumulate_c
from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent, conj
from rules.core.dispatch import kernel_ready, paths
from rules.core.nesting import as_array
from rules.core.options import refuse
from rules.core.registry import frule, rrule
from rules.linalg._stacks import PLAIN_REAL, adjoint, check_shape
from rules.sparse.products import sparse_matmul_frule, sparse_matmul_rrule
from tangents import AbstractZero, NoTangent, ProjectTo, ZeroTangent, unthunk


def _call(name: str, f: Any, a: Any, b: Any) -> Any:
    """``f(a, b)`` with a ``ValueError`` naming ``name`` and the shapes when they do not fit."""
    try:
        return f(a, b)
    except ValueError as error:
        raise ValueError(
            f"{name}: operands of shapes {np.shape(a)} and {np.shape(b)} do not match ({error})"
        ) from None


def _matmul(A: Any, B: Any, name: str = "np.matmul") -> Any:
    """``A @ B`` with an error naming the shapes (structured operands use their own ``@``)."""
    return _call(name, operator.matmul, A, B)


def _as_matrices(A: Any, B: Any) -> tuple[Any, Any, bool, bool]:
    """Promote 1-D operands to matrices as ``np.matmul`` does: a row on the left, a column on the right."""
    a_vector, b_vector = np.ndim(A) == 1, np.ndim(B) == 1
    return (A[None, :] if a_vector else A), (B[:, None] if b_vector else B), a_vector, b_vector


# --- np.matmul: the paths ----------------------------------------------------------------------
# ``C = A B``: A_bar = C_bar B^H, B_bar = A^H C_bar; C_dot = A_dot B + A B_dot (module docstring).


def _pullback_algebra(A: Any, B: Any, C_bar: Any) -> tuple[Any, Any]:
    """Algebra path (matrices, or stacks of one batch shape): ``(C_bar B^H, A^H C_bar)``.

    Any cotangent type with ``@`` (and ``.mT``, ``.conj()``) flows through: a low-rank cotangent
    stays low rank. Also the BLAS path of plain matrices and of stacks above the crossover.
    """
    return _matmul(C_bar, adjoint(B)), _matmul(adjoint(A), C_bar)


def _pullback_formula(A: Any, B: Any, C_bar: Any) -> tuple[Any, Any]:
    """Array-formula path: ``C_bar B^H`` and ``A^H C_bar`` with vectors and broadcast batch axes."""
    C_bar = as_array_cotangent(C_bar, "np.matmul's pullback with broadcasting or vectors")
    A2, B2, a_vector, b_vector = _as_matrices(as_array(A), as_array(B))
    if a_vector and b_vector:
        C_bar = np.reshape(C_bar, (1, 1))
    elif a_vector:
        C_bar = C_bar[..., None, :]
    elif b_vector:
        C_bar = C_bar[..., :, None]
    A_bar = unbroadcast(C_bar @ adjoint(B2), A2.shape)
    B_bar = unbroadcast(adjoint(A2) @ C_bar, B2.shape)
    return (A_bar[0] if a_vector else A_bar), (B_bar[:, 0] if b_vector else B_bar)


def _pullback_large(A: np.ndarray, B: np.ndarray, C_bar: np.ndarray) -> tuple[Any, Any]:
    """BLAS path (C-ordered arrays of one kernel dtype above the stack kernels' crossover).

    Real ``(b, m, k) @ (b, k, n)`` stacks that ``kernels.tiled_products.fits`` takes go to its
    tiled pullback. Otherwise :func:`_pullback_algebra`, except that ``C_bar B^H`` multiplies by
    ``kernels.products.adjoint_operand(B)``: for real stacks of small matrices a C-ordered copy
    of ``B^T`` where numpy's OpenBLAS runs its SkylakeX kernels, whose small-matrix gemm takes
    about twice as long with the transposed view as its right operand (1000 x (16x16) float64,
    one process on an Intel Xeon: 0.59 against 0.62 ms for the pullback, 4000 x (8x8) 0.59
    against 0.71, 10000 x (5x5) 1.00 against 1.40); the view elsewhere.
    """
    if _tiled_stacks(A, B, "pullback") and kernel_ready(A, C_bar) and C_bar.ndim == 3:
        return ktiled.matmul_pullback_tiled(A, B, C_bar)
    return _matmul(C_bar, kproducts.adjoint_operand(B)), _matmul(adjoint(A), C_bar)


def _pushforward_algebra(A: Any, B: Any, A_dot: Any, B_dot: Any) -> Any:
    """Algebra path (and array formula): ``A_dot B + A B_dot``; numpy's ``@`` broadcasts.

    A zero tangent stays symbolic: ``ZeroTangent() @ B`` is ``ZeroTangent()``, the identity of +.
    """
    return _matmul(A_dot, B) + _matmul(A, B_dot)


def _pushforward_large(A: np.ndarray, B: np.ndarray, A_dot: np.ndarray, B_dot: np.ndarray) -> Any:
    """BLAS path of the pushforward, or the tiled kernel for the stacks it takes (``_tiled_stacks``)."""
    if (
        _tiled_stacks(A, B, "pushforward")
        and kernel_ready(A, A_dot, B_dot)
        and A_dot.shape == A.shape
        and B_dot.shape == B.shape
    ):
        return ktiled.matmul_pushforward_tiled(A, B, A_dot, B_dot)
    return _pushforward_algebra(A, B, A_dot, B_dot)


def _pullback_kernel(A: np.ndarray, B: np.ndarray, C_bar: np.ndarray) -> tuple[Any, Any]:
    """Kernel path: a ``(b, m, k) @ (b, k, p)`` stack in one compiled call."""
    return kproducts.matmul_pullback_batched(A, B, C_bar)


def _pushforward_kernel(
    A: np.ndarray, B: np.ndarray, A_dot: np.ndarray, B_dot: np.ndarray
) -> np.ndarray:
    """Kernel path: ``A_dot B + A B_dot`` for a stack in one compiled call (tangents shaped as the operands)."""
    if A_dot.shape != A.shape or B_dot.shape != B.shape:  # numpy broadcasts them; the kernel not
        return _pushforward_algebra(A, B, A_dot, B_dot)
    return kproducts.matmul_pushforward_batched(A, B, A_dot, B_dot)


# Kernel path: stacks up to the crossover on a side in one compiled call; one matrix and larger
# stacks are numpy's (BLAS) matmul, the algebra path on the normalised operands. Vectors and
# broadcast batch axes take the array formula (the rule sends them there by shape).
_PULLBACK = paths(
    algebra=_pullback_algebra,
    formula=_pullback_formula,
    batched=_pullback_kernel,
    large=_pullback_large,
    large_takes_stacks=True,
    single_max_n=None,
    stack_max_n="MATMUL_STACK_MAX_N",
    common_dtype=True,
)
_PUSHFORWARD = paths(
    algebra=_pushforward_algebra,
    formula=_pushforward_algebra,
    batched=_pushforward_kernel,
    large=_pushforward_large,
    large_takes_stacks=True,
    single_max_n=None,
    stack_max_n="MATMUL_STACK_MAX_N",
    common_dtype=True,
)


def _paths_of(paths_: Any, A: Any, B: Any) -> Any:
    """The function of the (co)tangents of ``A @ B``, or ``None``: take the array formula.

    ``None`` for vectors and broadcast batch axes (a shape question, settled in the forward
    pass); else ``paths_.given(A, B)`` (:func:`rules.core.dispatch.paths`).
    """
    a_shape, b_shape = np.shape(A), np.shape(B)
    if len(a_shape) < 2 or len(b_shape) < 2 or a_shape[:-2] != b_shape[:-2]:
        return None
    n = max(*a_shape[-2:], *b_shape[-2:])  # the kernels' crossover is on the largest side
    return paths_.given(A, B, n=n)


# --- np.matmul: one plain real matrix by another ------------------------------------------------
# The commonest call, and one where the rule's layers cost more than the products: 4x4 BLAS
# products take a third of a microsecond through ``ndarray.dot`` but a microsecond through ``@``
# (matmul's ufunc machinery), more with a transposed operand. ``dot`` of 2-D arrays is the same
# BLAS gemm, and gives the same bits; it takes syrk instead when one operand is the other's
# transpose, so the primal product only uses it when both operands own their data.


def _plain_real_matrices(A: Any, B: Any) -> bool:
    """Both are plain 2-D ndarrays of one real float dtype (float64 or float32)."""
    return (
        type(A) is np.ndarray
        and type(B) is np.ndarray
        and A.ndim == 2
        and B.ndim == 2
        and A.dtype is B.dtype
        and A.dtype in PLAIN_REAL
        and A.shape[1] == B.shape[0]
    )


def _plain_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A @ B`` of plain real matrices (:func:`_plain_real_matrices`), with matmul's bits."""
    if A.base is None and B.base is None:  # neither can be the other's transpose: gemm
        return A.dot(B)
    return A @ B


def _matmul_rrule_plain(A: np.ndarray, B: np.ndarray) -> tuple[Any, Any]:
    """:func:`matmul_rrule` for plain real matrices: the general pullback for other cotangents."""
    C = _plain_product(A, B)
    general = _matmul_rrule_general(A, B, C)
    no_tangent, dtype, shape = NoTangent(), A.dtype, C.shape

    def matmul_pullback(C_bar: Any) -> tuple[Any, Any, Any]:
        if type(C_bar) is np.ndarray and C_bar.dtype is dtype and C_bar.shape == shape:
            return no_tangent, C_bar.dot(B.T), A.T.dot(C_bar)  # (C_bar B^T, A^T C_bar)
        return general(C_bar)

    return C, matmul_pullback


@rrule.register(np.matmul)
@rrule.register(operator.matmul)
def matmul_rrule(A: Any, B: Any) -> tuple[Any, Any]:
    r"""Reverse rule for ``C = A @ B`` (``np.matmul``, and the ``@`` operator).

    .. math:: \bar A = \bar C B^H, \qquad \bar B = A^H \bar C,

    summed over broadcast batch axes; 1-D operands are treated as a row (left) or a column
    (right) vector, as numpy does. Structured operands (``Diagonal``, ``Symmetric``, triangular)
    are accepted and get cotangents of their structure through ``ProjectTo``. A scipy.sparse
    operand takes :func:`rules.sparse.products.sparse_matmul_rrule` (its cotangent stays on its
    pattern).
    """
    if _plain_real_matrices(A, B):
        return _matmul_rrule_plain(A, B)
    if sp.issparse(A) or sp.issparse(B):
        return sparse_matmul_rrule(A, B)
    if _small_stacks(A, B):
        C = kproducts.matmul_batched(A, B)
    elif _tiled_stacks(A, B, "product"):
        C = ktiled.matmul_tiled(A, B)
    else:
        C = _matmul(A, B)
    return C, _matmul_rrule_general(A, B, C)


def _matmul_rrule_general(A: Any, B: Any, C: Any) -> Any:
    """The pullback of ``C = A @ B`` for any operands and cotangents (not sparse ones)."""
    project_A, project_B = ProjectTo(A), ProjectTo(B)
    C_shape = np.shape(C)
    pullback_of = _paths_of(_PULLBACK, A, B)  # the path of A and B decided once, here
    no_tangent = NoTangent()

    def matmul_pullback(C_bar: Any) -> tuple[Any, Any, Any]:
        C_bar = unthunk(C_bar)
        check_shape("np.matmul pullback", "the cotangent", C_bar, C_shape)
        if pullback_of is None:
            A_bar, B_bar = _pullback_formula(A, B, C_bar)
        else:
            A_bar, B_bar = pullback_of(C_bar)
        return no_tangent, project_A(A_bar), project_B(B_bar)

    return matmul_pullback


def _small_stacks(A: Any, B: Any) -> bool:
    """Both are C-contiguous ``(b, m, k)``, ``(b, k, n)`` stacks of one kernel dtype, sides small.

    Up to ``kernels.crossovers.MATMUL_STACK_MAX_N`` on a side, where the kernels' product beats
    numpy's stacked matmul (several times at 10000 x (4x4)): the forward product of the rules.
    """
    return (
        kernel_ready(A, B)
        and A.ndim == 3
        and B.ndim == 3
        and A.shape[0] == B.shape[0]
        and A.shape[2] == B.shape[1]
        and max(A.shape[1], A.shape[2], B.shape[2]) <= crossovers.MATMUL_STACK_MAX_N
    )


def _tiled_stacks(A: Any, B: Any, kind: str) -> bool:
    """``(b, m, k)``, ``(b, k, n)`` stacks that ``kernels.tiled_products`` takes (``fits``) for ``kind``."""
    if type(A) is not np.ndarray or type(B) is not np.ndarray or A.ndim != 3 or B.ndim != 3:
        return False
    (b, m, k), (b_, k_, n) = A.shape, B.shape
    return b == b_ and k == k_ and ktiled.fits((m, k, n), A, B, kind=kind)


_NDARRAY = np.ndarray  # a module global: one dictionary lookup, not two
_FLOAT64, _FLOAT32 = np.dtype(np.float64), np.dtype(np.float32)  # numpy's own dtype objects


@frule.register_lane(np.matmul)
@frule.register_lane(operator.matmul)
def matmul_frule_lane(tangents: Any, A: Any, B: Any) -> tuple[Any, Any] | None:
    r""":func:`matmul_frule` for two real matrices of one dtype and ndarray tangents, or ``None``.

    The whole 4x4 call (bench case ``matmul.pushforward``): ``_plain_real_matrices`` and the
    registry's checks of the tangents, inlined, then :math:`\dot A B + A \dot B`.
    """
    if type(tangents) is not tuple or len(tangents) != 3:
        return None
    f_dot, A_dot, B_dot = tangents
    ndarray = _NDARRAY
    if (
        type(A) is ndarray
        and type(B) is ndarray
        and type(A_dot) is ndarray
        and type(B_dot) is ndarray
        and f_dot is not None
    ):
        # each check once, cheapest first: this is most of the 4x4 call's cost beyond the products
        dtype, a_shape, b_shape = A.dtype, A.shape, B.shape
        if (
            (dtype is _FLOAT64 or dtype is _FLOAT32)  # PLAIN_REAL, without hashing the dtype
            and len(a_shape) == 2
            and len(b_shape) == 2
            and B.dtype is dtype
            and A_dot.dtype is dtype
            and B_dot.dtype is dtype
            and a_shape[1] == b_shape[0]
            and A_dot.shape == a_shape
            and B_dot.shape == b_shape
        ):
            C = A.dot(B) if A.base is None and B.base is None else A @ B  # _plain_product
            C_dot = A_dot.dot(B)
            (m, k), n, large = a_shape, b_shape[1], crossovers.MATMUL_PUSHFORWARD_ADD_MAX_N
            if (
                (m > large or k > large or n > large)  # not max(): a 4x4 call's 0.1 us
                and C_dot.size > 0
                and A.flags.c_contiguous
                and B_dot.flags.c_contiguous
            ):  # A B_dot added inside gemm (beta = 1): no temporary, no pass over C_dot
                return C, gemm_accumulate_c(A, B_dot, C_dot)
            C_dot += A.dot(B_dot)  # A_dot B + A B_dot
            return C, C_dot
        if (
            dtype in PLAIN_REAL
            and len(a_shape) == 3
            and len(b_shape) == 3
            and a_shape[0] == b_shape[0]
            and a_shape[2] == b_shape[1]
            and max(a_shape[1], a_shape[2], b_shape[2]) > crossovers.MATMUL_STACK_MAX_N
            and B.dtype is dtype
            and A_dot.dtype is dtype
            and B_dot.dtype is dtype
            and A_dot.shape == a_shape
            and B_dot.shape == b_shape
        ):  # a real stack above the loop kernels: tiles, or numpy's stacked matmul
            if _tiled_stacks(A, B, "pushforward") and kernel_ready(A, A_dot, B_dot):
                return ktiled.matmul_with_pushforward_tiled(A, B, A_dot, B_dot)
            C = A @ B
            C_dot = A_dot @ B
            C_dot += A @ B_dot
            return C, C_dot
    else:
        return None  # the stack kernel below takes ndarrays only (kernel_ready)
    if (
        _small_stacks(A, B)
        and kernel_ready(A, A_dot, B_dot)
        and A_dot.shape == A.shape
        and B_dot.shape == B.shape
    ):  # product and tangent in one compiled pass (f_dot is not None: checked above)
        return kproducts.matmul_with_pushforward_batched(A, B, A_dot, B_dot)
    return None


@frule.register(np.matmul)
@frule.register(operator.matmul)
def matmul_frule(tangents: tuple[Any, Any, Any], A: Any, B: Any) -> tuple[Any, Any]:
    r"""Forward rule for ``C = A @ B``: :math:`\dot C = \dot A B + A \dot B`."""
    result = matmul_frule_lane(tangents, A, B)
    if result is not None:
        return result
    if sp.issparse(A) or sp.issparse(B):
        return sparse_matmul_frule(tangents, A, B)
    _, A_dot, B_dot = (unthunk(t) for t in tangents)
    C = _matmul(A, B)
    pushforward_of = _paths_of(_PUSHFORWARD, A, B)
    if pushforward_of is None:
        return C, ProjectTo(C)(_pushforward_algebra(A, B, A_dot, B_dot))
    return C, ProjectTo(C)(pushforward_of(A_dot, B_dot))


# --- shared helpers of the bilinear products -----------------------------------------------------


def _product_tangent(
    product: Any, a: Any, b: Any, tangents: tuple[Any, Any, Any], name: str
) -> Any:
    """``product(a_dot, b) + product(a, b_dot)``, skipping zero tangents (a bilinear pushforward)."""
    _, a_dot, b_dot = (unthunk(t) for t in tangents)
    operation = f"{name}'s frule"
    y_dot: Any = ZeroTangent()
    if not isinstance(a_dot, AbstractZero):
        y_dot = y_dot + product(as_array_cotangent(a_dot, operation), b)
    if not isinstance(b_dot, AbstractZero):
        y_dot = y_dot + product(a, as_array_cotangent(b_dot, operation))
    return y_dot


def _contraction_pullback(
    a: Any, b: Any, g: Any, a_axis: int, b_axis: int
) -> tuple[np.ndarray, np.ndarray]:
    """Cotangents of ``y = tensordot(a, b, ([a_axis], [b_axis]))``, or of ``y = a * b`` for a scalar.

    ``y``'s axes are ``a``'s free axes, then ``b``'s (both in order), so
    ``a_bar = tensordot(y_bar, conj(b))`` over ``b``'s free axes and
    ``b_bar = tensordot(conj(a), y_bar)`` over ``a``'s, each with the contracted axis moved back.
    """
    a, b, g = as_array(a), as_array(b), as_array(g)
    if a.ndim == 0 or b.ndim == 0:  # a product with a scalar: the scalar's cotangent is a sum
        a_bar, b_bar = g * conj(b), conj(a) * g
        return (np.sum(a_bar) if a.ndim == 0 else a_bar), (np.sum(b_bar) if b.ndim == 0 else b_bar)
    a_free = [i for i in range(a.ndim) if i != a_axis]
    b_free = [i for i in range(b.ndim) if i != b_axis]
    n_a = len(a_free)
    a_bar = np.tensordot(g, conj(b), axes=(list(range(n_a, g.ndim)), b_free))
    b_bar = np.tensordot(conj(a), g, axes=(a_free, list(range(n_a))))
    return np.moveaxis(a_bar, -1, a_axis), np.moveaxis(b_bar, 0, b_axis)


# --- np.dot --------------------------------------------------------------------------------------


@rrule.register(np.dot)
def dot_rrule(a: Any, b: Any, out: Any = None) -> tuple[Any, Any]:
    r"""Reverse rule for ``y = np.dot(a, b)``, in all of numpy's cases.

    ``dot`` sums over the last axis of ``a`` and the second-to-last axis of ``b`` (its only axis
    when ``b`` is 1-D); it multiplies when either is a scalar. With ``I`` the free axes of ``a``
    and ``J = (J_1, J_2)`` those of ``b`` (before and after the contracted one):

    .. math:: \bar a_{I l} = \sum_J \bar y_{I J}\, \overline{b_{J_1 l J_2}}, \qquad
              \bar b_{J_1 l J_2} = \sum_I \overline{a_{I l}}\, \bar y_{I J},

    which for matrices is :math:`\bar a = \bar y b^H`, :math:`\bar b = a^H \bar y`: that case is
    written with the tangent algebra (any cotangent type with ``@``); the others need an array
    cotangent. Structured operands are accepted and get structured cotangents. ``out=`` is refused.
    """
    refuse("np.dot", out=out)
    y = _call("np.dot", np.dot, a, b)
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    y_shape, a_ndim, b_ndim = np.shape(y), np.ndim(a), np.ndim(b)

    def dot_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        y_bar = unthunk(y_bar)
        check_shape("np.dot pullback", "the cotangent", y_bar, y_shape)
        if a_ndim == b_ndim == 2:
            a_bar = _matmul(y_bar, adjoint(b), "np.dot")
            return NoTangent(), project_a(a_bar), project_b(_matmul(adjoint(a), y_bar, "np.dot"))
        g = as_array_cotangent(y_bar, "np.dot's pullback (vector, N-D or scalar operands)")
        a_bar, b_bar = _contraction_pullback(a, b, g, a_ndim - 1, max(b_ndim - 2, 0))
        return NoTangent(), project_a(a_bar), project_b(b_bar)

    return y, dot_pullback


@frule.register(np.dot)
def dot_frule(tangents: tuple[Any, Any, Any], a: Any, b: Any, out: Any = None) -> tuple[Any, Any]:
    r"""Forward rule for ``y = np.dot(a, b)``: :math:`\dot y = \mathrm{dot}(\dot a, b) + \mathrm{dot}(a, \dot b)`.

    For matrices that is :math:`\dot a b + a \dot b`, written with the tangent algebra.
    """
    refuse("np.dot", out=out)
    y = _call("np.dot", np.dot, a, b)
    if np.ndim(a) == np.ndim(b) == 2:  # matrices: the tangent algebra, any tangent type with @
        _, a_dot, b_dot = (unthunk(t) for t in tangents)
        return y, ProjectTo(y)(_matmul(a_dot, b, "np.dot") + _matmul(a, b_dot, "np.dot"))
    return y, ProjectTo(y)(_product_tangent(np.dot, a, b, tangents, "np.dot"))


# --- np.vdot -------------------------------------------------------------------------------------


@rrule.register(np.vdot)
def vdot_rrule(a: Any, b: Any, /) -> tuple[Any, Any]:
    r"""Reverse rule for ``y = np.vdot(a, b) = \sum_i \overline{a_i} b_i`` over the flattened operands.

    ``y`` is antilinear in ``a`` and linear in ``b``, so

    .. math:: \bar a = \overline{\bar y}\, b, \qquad \bar b = \bar y\, a,

    each reshaped to its operand's shape (the operands need equal sizes, not shapes). For real
    operands this is the gradient of the plain inner product.
    """
    y = _call("np.vdot", np.vdot, a, b)
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    a_shape, b_shape = np.shape(a), np.shape(b)

    def vdot_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        g = as_array_cotangent(y_bar, "np.vdot's pullback")
        check_shape("np.vdot pullback", "the cotangent", g, ())
        a_bar = np.reshape(np.conj(g) * as_array(b), a_shape)
        b_bar = np.reshape(g * as_array(a), b_shape)
        return NoTangent(), project_a(a_bar), project_b(b_bar)

    return y, vdot_pullback


@frule.register(np.vdot)
def vdot_frule(tangents: tuple[Any, Any, Any], a: Any, b: Any, /) -> tuple[Any, Any]:
    r"""Forward rule for ``np.vdot``: :math:`\dot y = \mathrm{vdot}(\dot a, b) + \mathrm{vdot}(a, \dot b)`."""
    y = _call("np.vdot", np.vdot, a, b)
    return y, ProjectTo(y)(_product_tangent(np.vdot, a, b, tangents, "np.vdot"))


# --- np.inner ------------------------------------------------------------------------------------


@rrule.register(np.inner)
def inner_rrule(a: Any, b: Any, /) -> tuple[Any, Any]:
    r"""Reverse rule for ``y = np.inner(a, b)``: a sum over the last axes of both (no conjugation).

    .. math:: y_{IJ} = \sum_l a_{Il} b_{Jl}, \qquad
              \bar a_{Il} = \sum_J \bar y_{IJ}\, \overline{b_{Jl}}, \qquad
              \bar b_{Jl} = \sum_I \bar y_{IJ}\, \overline{a_{Il}};

    for matrices :math:`y = a b^T`, :math:`\bar a = \bar y \bar b`, :math:`\bar b = \bar y^T \bar a`
    (bars over operands meaning conjugates), written with the tangent algebra. A scalar operand
    makes it a product. Other cases need an array cotangent.
    """
    y = _call("np.inner", np.inner, a, b)
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    y_shape, a_ndim, b_ndim = np.shape(y), np.ndim(a), np.ndim(b)

    def inner_pullback(y_bar: Any) -> tuple[Any, Any, Any]:
        y_bar = unthunk(y_bar)
        check_shape("np.inner pullback", "the cotangent", y_bar, y_shape)
        if a_ndim == b_ndim == 2:
            a_bar = _matmul(y_bar, conj(b), "np.inner")
            return NoTangent(), project_a(a_bar), project_b(_matmul(y_bar.mT, conj(a), "np.inner"))
        g = as_array_cotangent(y_bar, "np.inner's pullback (vector, N-D or scalar operands)")
        a_bar, b_bar = _contraction_pullback(a, b, g, a_ndim - 1, b_ndim - 1)
        return NoTangent(), project_a(a_bar), project_b(b_bar)

    return y, inner_pullback


@frule.register(np.inner)
def inner_frule(tangents: tuple[Any, Any, Any], a: Any, b: Any, /) -> tuple[Any, Any]:
    r"""Forward rule for ``np.inner``: :math:`\dot y = \mathrm{inner}(\dot a, b) + \mathrm{inner}(a, \dot b)`.

    For matrices :math:`\dot y = \dot a b^T + a \dot b^T`, written with the tangent algebra.
    """
    y = _call("np.inner", np.inner, a, b)
    if np.ndim(a) == np.ndim(b) == 2:
        _, a_dot, b_dot = (unthunk(t) for t in tangents)
        y_dot: Any = ZeroTangent()
        if not isinstance(a_dot, AbstractZero):
            y_dot = y_dot + _matmul(a_dot, as_array(b).mT, "np.inner")
        if not isinstance(b_dot, AbstractZero):
            y_dot = y_dot + _matmul(a, b_dot.mT, "np.inner")
        return y, ProjectTo(y)(y_dot)
    return y, ProjectTo(y)(_product_tangent(np.inner, a, b, tangents, "np.inner"))
