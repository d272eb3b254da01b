"""The one dispatch helper: which path of a rule runs, decided in one place.

A matrix rule has up to three paths, named alike everywhere (DESIGN.md section 7):

* the **algebra path**, written with the tangent algebra only (``+``, ``-``, scalar ``*``, ``@``,
  ``.mT``, ``.conj()``, ``ProjectTo``); it takes any tangent type, a user's own included;
* the **array-formula path**, numpy/scipy array code (elementwise access, reshapes, LAPACK
  through scipy functions that have rules); for ndarrays the kernels do not cover;
* the **kernel path**, compiled code (Numba kernels, raw LAPACK calls), taken only for plain
  ndarrays of a kernel dtype: :func:`kernel_eligible` is the single gate.

:func:`paths` takes a rule's three paths and returns the one function that chooses between
them by the operands and the crossover table :mod:`kernels.crossovers`; a rule states its paths
once, at import, and calls that function. Where the derivative reuses what the forward pass
kept (det's and slogdet's LU, solve's factorization), the paths are forward passes: each is a
class that keeps its factors and carries its own pullback and pushforward, and ``paths()``
chooses the class on the primal (results that are not arrays pass through unchanged).
Traced values and other non-ndarrays never pass :func:`kernel_eligible`, so they never reach a
kernel or a raw LAPACK call: they take the algebra path, or the array-formula path, whose
operations are rules again.

Kernel operands are normalised the way kernels expect them (DESIGN.md section 2): one dtype,
C-contiguous and writable (Numba compiles a read-only array as another type), stacks flattened
to ``(b, m, n)``, so that each kernel compiles once per dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from kernels import crossovers
from tangents import unthunk

__all__ = [
    "KERNEL_DTYPES",
    "as_stack",
    "crossover",
    "flat_batch",
    "forward_stack",
    "kernel_array",
    "kernel_dtype",
    "kernel_eligible",
    "kernel_operands",
    "kernel_ready",
    "paths",
    "unstack",
]

_FLOAT32, _FLOAT64, _COMPLEX128 = (
    np.dtype(np.float32),
    np.dtype(np.float64),
    np.dtype(np.complex128),
)

KERNEL_DTYPES = (_FLOAT64, _FLOAT32, _COMPLEX128)
"""The dtypes the kernels are compiled for."""

_KERNEL_DTYPE_SET = frozenset(KERNEL_DTYPES)


# --- the gate ------------------------------------------------------------------------------------


def kernel_eligible(x: Any) -> bool:
    """Whether ``x`` may take a kernel path at all: a plain ndarray of a kernel dtype.

    The single gate of the kernel path and of raw LAPACK calls: subclasses, traced values,
    structured matrices, zeros and thunks fail it. Layout (contiguity, writability) is not
    part of the gate; :func:`kernel_operands` normalises it and :func:`kernel_ready` checks it.
    """
    return type(x) is np.ndarray and x.dtype in _KERNEL_DTYPE_SET


def kernel_ready(*arrays: Any) -> bool:
    """Whether the arrays can go to a kernel as they are: eligible, one dtype, C order, writable.

    The hot paths check this before anything else, so a small contiguous input pays no copies.
    """
    first = arrays[0]
    if not kernel_eligible(first):
        return False
    dtype = first.dtype
    for a in arrays:  # noqa: SIM110 (a loop: a generator per call costs as much as a 4x4 kernel)
        if not _ready_as(a, dtype):
            return False
    return True


def _ready_as(a: Any, dtype: np.dtype[Any]) -> bool:
    """``a`` is a plain ndarray of ``dtype`` (a kernel dtype), C-contiguous, aligned, writable.

    ``flags.carray`` is the three layout flags in one (Numba compiles read-only arrays as
    another type).
    """
    return type(a) is np.ndarray and a.dtype == dtype and a.flags.carray


def kernel_dtype(*dtypes: Any) -> np.dtype[Any] | None:
    """The kernel dtype for operands of these dtypes, or ``None`` when no kernel applies.

    float32 only when every operand is float32 (so float32 stays float32); float64 for real
    operands otherwise; complex128 when one is complex. float16 and complex64 have no kernels.
    """
    result = _FLOAT32
    for d in dtypes:
        if d == _COMPLEX128:
            result = _COMPLEX128
        elif d == _FLOAT64:
            if result is _FLOAT32:
                result = _FLOAT64
        elif d != _FLOAT32:
            return None
    return result


def kernel_operands(*xs: Any, dtype: Any = None) -> tuple[np.ndarray, ...] | None:
    """The operands as C-contiguous arrays of one kernel dtype, or ``None``: no kernel path.

    Thunks are evaluated. Anything that is not a plain ndarray (a user's tangent type, a
    structured matrix, a zero, a traced value) gives ``None``. ``dtype`` forces the kernel
    dtype (e.g. the primal's, so that a float64 cotangent of a float32 input is cast); a forced
    dtype that has no kernels (complex64, say) also gives ``None``. A complex operand cast to a
    real ``dtype`` keeps its real part (the cotangent of a real primal) instead of raising
    numpy's ComplexWarning. Read-only arrays (``np.broadcast_to`` views, say) are copied.
    """
    values = tuple(x if type(x) is np.ndarray else unthunk(x) for x in xs)
    for v in values:
        if type(v) is not np.ndarray:
            return None
    target = kernel_dtype(*(v.dtype for v in values)) if dtype is None else np.dtype(dtype)
    if target not in _KERNEL_DTYPE_SET:
        return None
    return tuple(
        v
        if v.dtype == target and v.flags.c_contiguous and v.flags.writeable
        else np.array(v.real if target.kind != "c" else v, dtype=target, order="C")
        for v in values
    )


def kernel_array(x: np.ndarray) -> np.ndarray:
    """``x`` C-contiguous and writable, copied only when it is not (see :func:`kernel_ready`)."""
    if x.flags.c_contiguous and x.flags.writeable:
        return x
    return _c_copy(x)


def _c_copy(x: np.ndarray) -> np.ndarray:
    """A C-ordered copy of ``x``; rows that are contiguous are copied as one item each.

    numpy's strided copy runs its inner loop along the last axis, 4 entries long on a stack of
    4x4 matrices whose matrices interleave (``np.take_along_axis`` over the rows returns one):
    copying the rows as ``void`` items of a row's size took half the time (10000 x (4x4)
    float64, the input of bench case ``lu.pullback``).
    """
    if x.ndim >= 2 and x.size and x.strides[-1] == x.itemsize:
        row = np.dtype((np.void, x.shape[-1] * x.itemsize))
        out = np.empty(x.shape, dtype=x.dtype)
        out.view(row)[..., 0] = x.view(row)[..., 0]
        return out
    return np.array(x, order="C")


# --- stacks --------------------------------------------------------------------------------------


def as_stack(x: np.ndarray) -> np.ndarray:
    """``(..., m, n)`` as a C-contiguous ``(b, m, n)`` stack (a view when already contiguous)."""
    if type(x) is np.ndarray and x.flags.c_contiguous and 2 <= x.ndim <= 3:
        return x.view() if x.ndim == 3 else x[None]  # views as below, without the reshapes
    return flat_batch(x if x.flags.c_contiguous else _c_copy(x), 2)


def flat_batch(x: np.ndarray, core: int) -> np.ndarray:
    """``x`` with its batch axes (all but the last ``core``) flattened into one: ``(b, *core)``.

    ``b`` is the product of the batch axes, not ``-1``: with a zero-size core (a ``(3, 0, 0)``
    stack) numpy cannot infer it.
    """
    if type(x) is np.ndarray and core <= x.ndim <= core + 1:  # one, or already one batch axis
        return x.view() if x.ndim > core else x[None]  # a view, as the reshape below
    shape = x.shape[x.ndim - core :]
    return x.reshape(math.prod(x.shape[: x.ndim - core]), *shape)


def unstack(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A ``(b, m, n)`` kernel result back in the batch shape ``shape[:-2]``."""
    return x.reshape(*shape[:-2], *x.shape[-2:])


def _unbatch(x: Any, batch: tuple[int, ...]) -> Any:
    """A ``(b, ...)`` result (or a tuple of them) with ``b`` split back into ``batch``.

    Results that are not arrays (a forward pass's object holding its factors) pass unchanged.
    """
    if isinstance(x, tuple):
        return tuple(_unbatch(part, batch) for part in x)
    if not isinstance(x, np.ndarray):
        return x
    return x.reshape(*batch, *x.shape[1:])


def _stack_results(results: list[Any]) -> Any:
    """One result per matrix (arrays, or tuples of arrays) stacked into ``(b, ...)`` results.

    A stack of one comes back as views of its C-contiguous results, copied only when they are
    not (a rule that treats one large matrix as a stack of one would otherwise copy every
    result: at n = 256 the copies of solve_triangular's two cotangents took a third of its
    pullback).
    """
    if len(results) == 1:
        first = results[0]
        if isinstance(first, tuple):
            return tuple(_one_of_a_stack(part) for part in first)
        return _one_of_a_stack(first)
    if results and isinstance(results[0], tuple):
        return tuple(np.stack(parts) for parts in zip(*results, strict=True))
    return np.stack(results)


def _one_of_a_stack(x: Any) -> np.ndarray:
    """``np.stack([x])`` without its copy when ``x`` is C-contiguous (0-d results too)."""
    x = np.asarray(x)
    return (x if x.flags.c_contiguous else x.copy())[None]


# --- the crossovers ------------------------------------------------------------------------------


def crossover(name: str) -> Any:
    """The entry ``name`` of :mod:`kernels.crossovers`, read now (tests may lower it).

    An int, or a dict by dtype kind (``"f"``, ``"c"``) for the entries that differ by kind.
    """
    return getattr(crossovers, name)


def forward_stack(
    a: Any, entry: str, *, min_n: int = 1, single: str | None = None, strided: bool = False
) -> np.ndarray | None:
    """``a`` as a ``(b, m, n)`` stack (C-contiguous unless ``strided``) for a batched forward kernel.

    ``None`` when no batched forward kernel takes it.

    The forward factorizations (kernels.cholesky_factor, lu_unpacked, inverse, eigh_forward,
    svd_forward, qr_forward) replace numpy's and scipy's one-LAPACK-call-per-matrix loop for a
    stack of small matrices: a plain ndarray (:func:`kernel_eligible`) with at least one batch
    axis, no empty axis, and ``min_n <= max(m, n) <=`` the crossover entry ``entry`` (an int, or
    a dict by dtype kind, ``"f"`` real and ``"c"`` complex). One matrix takes LAPACK, unless
    ``single`` names the entry for one matrix: up to it, ``a`` comes back as a stack of one
    (the kernel then skips numpy's or scipy's Python wrapper, which costs more than the
    factorization of a small matrix).

    ``strided``: the kernel reads any strides (Numba compiles it once more for them), so a
    writable ``(b, m, n)`` or ``(m, n)`` array comes back as a view, not a C-ordered copy. The
    copy of a 10000 x (4x4) stack that ``np.take_along_axis`` made took a tenth of qr's whole
    call, more in page faults of its fresh memory.
    """
    if not kernel_eligible(a) or a.size == 0:
        return None
    if a.ndim == 2:
        if single is None:
            return None
        entry = single
    elif a.ndim < 2:
        return None
    limit = getattr(crossovers, entry)
    if isinstance(limit, dict):
        limit = limit[a.dtype.kind]
    if not min_n <= max(a.shape[-2:]) <= limit:
        return None
    if strided and a.ndim <= 3 and a.flags.writeable:
        return a.view() if a.ndim == 3 else a[None]
    return as_stack(kernel_array(a))  # writable: a read-only array would compile again


# --- the helper ----------------------------------------------------------------------------------


def paths(
    *,
    formula: Callable[..., Any],
    algebra: Callable[..., Any] | None = None,
    single: Callable[..., Any] | None = None,
    batched: Callable[..., Any] | None = None,
    large: Callable[..., Any] | None = None,
    stacked: Callable[..., Any] | None = None,
    single_max_n: str | None,
    stack_max_n: str,
    stacked_max_n: str | None = None,
    large_takes_stacks: bool = False,
    common_dtype: bool = False,
) -> Callable[..., Any]:
    """The paths of one derivative (a pullback or a pushforward), as one function that chooses.

    Parameters
    ----------
    formula : callable
        The array-formula path, ``formula(*operands)``, for ndarrays without a kernel (the first
        operand of a dtype without kernels: complex64, float16, integers) and whatever
        ``algebra`` does not take.
    algebra : callable or None
        The algebra path, ``algebra(*operands)`` for operands that are not all ndarrays (a user's
        tangent type, a structured matrix). ``None`` when the math needs elementwise access:
        such operands then go to ``formula``, which converts or refuses them by name.
    single, batched, large : callable or None
        The kernel path: ``single`` for one matrix (2-D operands) up to ``single_max_n``,
        ``batched`` for a ``(b, m, n)`` stack up to ``stack_max_n``, ``large`` above (for one
        matrix; for a stack it is called per matrix unless ``large_takes_stacks``). A missing
        kernel falls to the next: ``single`` to ``batched`` (on a stack of one), ``large`` to
        ``formula``.
    stacked : callable or None
        For stacks above ``stack_max_n`` up to ``stacked_max_n``: one call on the whole
        ``(b, m, n)`` stack that loops in C (numpy's batched gufuncs), before ``large``.
    single_max_n, stack_max_n, stacked_max_n : str
        Names of entries of :mod:`kernels.crossovers`, read at each call. ``single_max_n`` may
        be ``None``: one matrix takes no loop kernel at any order (``large``, else ``formula``).
    large_takes_stacks : bool
        ``large`` broadcasts over stacks itself (numpy matmul): it gets the normalised operands.
    common_dtype : bool
        The kernel dtype is the common kernel dtype of all operands (a product of two primals,
        which numpy promotes), not the first operand's.

    Returns
    -------
    callable
        ``choose(*operands, n=None, index=())``. The first operand is the primal (a factor, an
        inverse): every other operand is cast to its dtype on the kernel path. ``n`` is the
        order compared with the crossovers (default: the last axis of the first operand);
        ``index`` holds integer arrays with one core axis (LU's permutations), passed to every
        path after the operands and flattened with the stack. ``choose.given(*primals, n=None,
        index=())`` fixes the leading operands once (in a forward pass) and returns the function
        of the remaining ones, with the gate and the crossover of the primals decided already.
    """
    for name in (single_max_n, stack_max_n, stacked_max_n):  # an unknown name fails at import
        if name is not None:
            crossover(name)
    if single is not None and single_max_n is None:
        raise ValueError("paths(): a single-matrix kernel needs its crossover single_max_n")
    if stacked is not None and stacked_max_n is None:
        raise ValueError("paths(): a stacked path needs its crossover stacked_max_n")

    def choose(*operands: Any, n: int | None = None, index: tuple[Any, ...] = ()) -> Any:
        first = operands[0]
        # the hot path: one small matrix whose operands fit a kernel as they are, no copies
        if (
            single is not None
            and kernel_ready(*operands)
            and first.ndim == 2
            and (first.shape[-1] if n is None else n) <= getattr(crossovers, single_max_n)
        ):
            return single(*operands, *index)
        for x in operands:
            if type(x) is not np.ndarray:
                if algebra is not None:
                    return algebra(*operands, *index)
                break
        dtype = None if common_dtype else getattr(first, "dtype", None)
        kernel = kernel_operands(*operands, dtype=dtype)
        if kernel is None:
            return formula(*operands, *index)
        return _kernel_path(kernel, first.shape[-1] if n is None else n, index)

    def _kernel_path(operands: tuple[np.ndarray, ...], n: int, index: tuple[Any, ...]) -> Any:
        first = operands[0]
        if first.ndim == 2:
            small = n <= _single_max()
            if small and single is not None:
                return single(*operands, *index)
            if small and batched is not None:
                results = batched(*(x[None] for x in operands), *(i[None] for i in index))
                return _unbatch(results, ())
            if large is not None:
                return large(*operands, *index)
            return formula(*operands, *index)
        batch = first.shape[:-2]
        if n <= crossover(stack_max_n) and batched is not None:
            stacks = tuple(as_stack(x) for x in operands)
            indices = tuple(flat_batch(i, 1) for i in index)
            return _unbatch(batched(*stacks, *indices), batch)
        if stacked is not None and n <= crossover(stacked_max_n):  # type: ignore[arg-type]
            stacks = tuple(as_stack(x) for x in operands)
            indices = tuple(flat_batch(i, 1) for i in index)
            return _unbatch(stacked(*stacks, *indices), batch)
        if large is None:
            return formula(*operands, *index)
        if large_takes_stacks:
            return large(*operands, *index)
        stacks = tuple(as_stack(x) for x in operands)
        indices = tuple(flat_batch(i, 1) for i in index)
        results = [
            large(*(x[t] for x in stacks), *(i[t] for i in indices)) for t in range(len(stacks[0]))
        ]
        return _unbatch(_stack_results(results), batch)

    def given(
        *primals: Any, n: int | None = None, index: tuple[Any, ...] = ()
    ) -> Callable[..., Any]:
        """``choose`` with the leading (primal) operands fixed: ``given(*primals)(*cotangents)``.

        A rule calls this in its forward pass, so that the pullback only checks what it is
        given: the primals are tested against the gate and the crossover once, here. When they
        take the single-matrix kernel, a cotangent that fits it as it is goes straight there;
        anything else goes through ``choose``.
        """
        first = primals[0]
        kernel = None
        ready = kernel_ready(*primals)
        order = first.shape[-1] if n is None else n
        if ready and first.ndim == 2:
            kernel = single if order <= _single_max() else large  # None: no single kernel
            if kernel is None and single_max_n is None:
                kernel = large
        elif ready and first.ndim == 3 and batched is not None:
            # a (b, m, n) stack is its own flattened stack: no reshapes, straight to the kernel
            kernel = batched if order <= crossover(stack_max_n) else None
        if kernel is None:
            return lambda *rest: choose(*primals, *rest, n=n, index=index)
        dtype, ndim = first.dtype, first.ndim
        if not index and len(primals) == 1:
            (primal,) = primals

            def bound_one(*rest: Any) -> Any:  # one primal, no index: the commonest, fastest
                for a in rest:  # _ready_as, inlined: this is the hot path of small pullbacks
                    if (
                        type(a) is not np.ndarray
                        or a.dtype != dtype
                        or not a.flags.carray
                        or a.ndim != ndim
                    ):
                        return choose(primal, *rest, n=n)
                return kernel(primal, *rest)

            return bound_one

        def bound(*rest: Any) -> Any:
            for a in rest:  # _ready_as, inlined, as in bound_one
                if (
                    type(a) is not np.ndarray
                    or a.dtype != dtype
                    or not a.flags.carray
                    or a.ndim != ndim
                ):
                    return choose(*primals, *rest, n=n, index=index)
            return kernel(*primals, *rest, *index)

        return bound

    def _single_max() -> float:
        """The single-matrix crossover now; ``-1`` when one matrix takes no loop kernel."""
        return -1 if single_max_n is None else getattr(crossovers, single_max_n)

    choose.given = given  # type: ignore[attr-defined]
    return choose
