r"""Rules for products of many factors: ``np.linalg.multi_dot`` and ``np.linalg.matrix_power``.

Both evaluate a product as a sequence of matrix products ``C = X Y``, and both pullbacks run
that same sequence backwards, each node passing on

.. math:: \bar X \mathrel{+}= \bar C\, Y^H, \qquad \bar Y \mathrel{+}= X^H \bar C

(Giles 2008, section 2.2.2; the cotangent of a complex ``z`` is ``dL/dRe z + i dL/dIm z``). A
node's two products cost exactly what its forward product costs, so a pullback costs twice the
forward pass, in the forward pass's order: for ``multi_dot`` that is the optimal parenthesisation
numpy picks (the same dynamic programme, same tie-breaking); for ``matrix_power`` numpy's binary
powering, so ``A^n`` costs ``O(log n)`` products forward and back instead of the ``n`` terms of
:math:`\bar A = \sum_{k=0}^{n-1} (A^H)^k \bar Y (A^H)^{n-1-k}`. The pushforwards run the sequence
forward with :math:`\dot C = \dot X Y + X \dot Y`.

Algebra path: only ``@``, ``+``, unary ``-`` and :func:`rules.linalg._stacks.adjoint`, so any
cotangent type with ``@`` flows through (a low-rank cotangent of ``multi_dot`` stays low rank and
makes the pullback cheaper), and so does a tangent type through the pushforwards; a vector first or
last factor of ``multi_dot`` needs an array (co)tangent (it is reshaped). Kernel path:
``matrix_power`` of a stack of matrices up to 4x4 runs each node through the batched product kernels
(``kernels.products``) and a negative power's inverse through ``kernels.solve``. ``multi_dot`` takes
single matrices only, so it is BLAS-bound.

References
----------
.. [1] M. B. Giles, "An extended collection of matrix derivative results for forward and reverse
   mode algorithmic differentiation", Oxford NA report 08/01, 2008.
.. [2] T. H. Cormen et al., "Introduction to Algorithms", section 15.2 (matrix-chain order).
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from kernels import crossovers
from kernels import products as kproducts
from kernels import solve as ksolve
from rules.core.cotangents import as_array_cotangent, is_user_tangent
from rules.core.dispatch import kernel_eligible
from rules.core.nesting import as_array, contiguous
from rules.core.options import refuse
from rules.core.registry import frule, rrule, split_cotangent
from rules.linalg._stacks import (
    adjoint,
    as_stack,
    check_shape,
    kernel_operands,
    square_matrices,
    unstack,
)
from rules.linalg.products import _matmul
from tangents import AbstractZero, NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk

# --- np.linalg.multi_dot -------------------------------------------------------------------------


def _chain_split(dims: list[int]) -> list[list[int]]:
    """``split[i][j]``: where the optimal product of factors ``i..j`` splits (numpy's programme).

    Factor ``i`` is ``dims[i] x dims[i + 1]``. The first split of least cost wins, as in numpy's
    ``_multi_dot_matrix_chain_order`` (and its three-factor shortcut), so the order is numpy's.
    """
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, k
            cost[i][j] = best
    return split


def _chain_factors(name: str, arrays: Any) -> tuple[list[Any], bool, bool]:
    """The factors as matrices (a 1-D first one a row, a 1-D last one a column), checked."""
    factors = list(arrays)
    if len(factors) < 2:
        raise ValueError(f"{name}: needs at least two arrays, got {len(factors)}")
    shapes = [np.shape(f) for f in factors]
    first_vector, last_vector = len(shapes[0]) == 1, len(shapes[-1]) == 1
    if first_vector:
        factors[0] = as_array(factors[0])[None, :]
    if last_vector:
        factors[-1] = as_array(factors[-1])[:, None]
    for f in factors:
        if np.ndim(f) != 2:
            raise ValueError(
                f"{name}: the arrays must be 2-D (the first and last may be 1-D), "
                f"got shapes {shapes}"
            )
    for left, right in itertools.pairwise(factors):
        if np.shape(left)[1] != np.shape(right)[0]:
            raise ValueError(f"{name}: arrays of shapes {shapes} do not chain")
    return factors, first_vector, last_vector


class _Chain:
    """The factors of a ``multi_dot``, its split table and the products of its subchains."""

    def __init__(self, factors: list[Any]) -> None:
        self.factors = factors
        dims = [np.shape(factors[0])[0]] + [np.shape(f)[1] for f in factors]
        self.split = _chain_split(dims)
        self.products: dict[tuple[int, int], Any] = {}

    def value(self, i: int, j: int) -> Any:
        """The product of factors ``i..j``, computed once (in the optimal order) and kept."""
        if i == j:
            return self.factors[i]
        if (i, j) not in self.products:
            k = self.split[i][j]
            left, right = self.value(i, k), self.value(k + 1, j)
            self.products[(i, j)] = _matmul(left, right, "np.linalg.multi_dot")
        return self.products[(i, j)]

    def pullback(self, i: int, j: int, C_bar: Any, bars: list[Any]) -> None:
        """Write the cotangents of factors ``i..j`` into ``bars`` from their product's ``C_bar``."""
        if i == j:
            bars[i] = C_bar
            return
        k = self.split[i][j]
        X, Y = self.value(i, k), self.value(k + 1, j)
        self.pullback(i, k, _matmul(C_bar, adjoint(Y), "np.linalg.multi_dot"), bars)
        self.pullback(k + 1, j, _matmul(adjoint(X), C_bar, "np.linalg.multi_dot"), bars)

    def pushforward(self, i: int, j: int, dots: list[Any]) -> Any:
        """The tangent of the product of factors ``i..j``: ``X_dot Y + X Y_dot`` per node."""
        if i == j:
            return dots[i]
        k = self.split[i][j]
        X_dot, Y_dot = self.pushforward(i, k, dots), self.pushforward(k + 1, j, dots)
        return _matmul(X_dot, self.value(k + 1, j)) + _matmul(self.value(i, k), Y_dot)


def _vector_ends(y: Any, first_vector: bool, last_vector: bool) -> Any:
    """The ``(m, n)`` chain product as numpy returns it when an end factor was a vector."""
    if first_vector and last_vector:
        return y[0, 0]
    if first_vector:
        return y[0]
    return y[:, 0] if last_vector else y


@rrule.register(np.linalg.multi_dot)
def multi_dot_rrule(arrays: Any, *, out: Any = None) -> tuple[Any, Any]:
    r"""Reverse rule for ``y = np.linalg.multi_dot([A_1, ..., A_k])``.

    .. math:: \bar A_i = (A_1 \cdots A_{i-1})^H\, \bar y\, (A_{i+1} \cdots A_k)^H,

    computed by running numpy's optimal parenthesisation backwards (module docstring): twice the
    forward flops, and no prefix/suffix products beyond those the forward pass already formed.
    A 1-D first (last) array is a row (column) vector, as in numpy. The cotangent of the list is
    a ``Tangent(tuple, A_1_bar, ..., A_k_bar)``; structured factors get structured cotangents.
    ``out=`` is refused.
    """
    name = "np.linalg.multi_dot"
    refuse(name, out=out)
    factors, first_vector, last_vector = _chain_factors(name, arrays)
    projectors = [ProjectTo(A) for A in arrays]
    chain = _Chain(factors)
    k = len(factors)
    product = chain.value(0, k - 1)
    y = _vector_ends(as_array(product), first_vector, last_vector)
    y_shape = np.shape(y)

    def multi_dot_pullback(y_bar: Any) -> tuple[Any, Any]:
        y_bar = unthunk(y_bar)
        check_shape(f"{name} pullback", "the cotangent", y_bar, y_shape)
        if first_vector or last_vector:
            y_bar = np.reshape(
                as_array_cotangent(y_bar, f"{name}'s pullback with a vector end"), np.shape(product)
            )
        bars: list[Any] = [ZeroTangent()] * k
        chain.pullback(0, k - 1, y_bar, bars)
        if first_vector:
            bars[0] = as_array_cotangent(bars[0], name)[0]
        if last_vector:
            bars[-1] = as_array_cotangent(bars[-1], name)[:, 0]
        return NoTangent(), Tangent(tuple, *(p(b) for p, b in zip(projectors, bars, strict=True)))

    return y, multi_dot_pullback


@frule.register(np.linalg.multi_dot)
def multi_dot_frule(tangents: tuple[Any, Any], arrays: Any, *, out: Any = None) -> tuple[Any, Any]:
    r"""Forward rule for ``np.linalg.multi_dot``.

    :math:`\dot y = \sum_i A_1 \cdots \dot A_i \cdots A_k`.

    The tangent of the list is a ``Tangent(tuple, ...)`` or a tuple/list of the factors' tangents.
    """
    name = "np.linalg.multi_dot"
    refuse(name, out=out)
    factors, first_vector, last_vector = _chain_factors(name, arrays)
    chain = _Chain(factors)
    k = len(factors)
    y = _vector_ends(as_array(chain.value(0, k - 1)), first_vector, last_vector)
    dots = [unthunk(t) for t in split_cotangent(tangents[1], k)]
    if first_vector and not isinstance(dots[0], AbstractZero):
        dots[0] = as_array_cotangent(dots[0], f"{name}'s frule")[None, :]
    if last_vector and not isinstance(dots[-1], AbstractZero):
        dots[-1] = as_array_cotangent(dots[-1], f"{name}'s frule")[:, None]
    y_dot = chain.pushforward(0, k - 1, dots)
    if (first_vector or last_vector) and not isinstance(y_dot, AbstractZero):
        y_dot = _vector_ends(as_array_cotangent(y_dot, name), first_vector, last_vector)
    return y, ProjectTo(y)(y_dot)


# --- np.linalg.matrix_power ----------------------------------------------------------------------


def _power_program(n: int) -> tuple[list[tuple[int, int]], int]:
    """The steps of numpy's evaluation of ``B^n`` (``n >= 1``): products ``values[l] @ values[r]``.

    ``values[0]`` is ``B``; each step appends one product; returns the steps and the index of the
    result. The same steps as ``np.linalg.matrix_power``: ``B``, ``B B``, ``(B B) B`` for
    ``n <= 3``, binary powering (squares, and the result times the current square) beyond.
    """
    if n <= 3:
        steps = [(0, 0), (1, 0)][: n - 1]
        return steps, n - 1
    steps: list[tuple[int, int]] = []
    z = result = None
    while n > 0:
        if z is None:
            z = 0
        else:
            steps.append((z, z))
            z = len(steps)
        n, bit = divmod(n, 2)
        if bit:
            if result is None:
                result = z
            else:
                steps.append((result, z))
                result = len(steps)
    assert result is not None
    return steps, result


def _small_matrices(X: np.ndarray) -> bool:
    """A stack of matrices at most ``crossovers.MATMUL_STACK_MAX_N`` on a side (one shape for all)."""
    return X.ndim >= 3 and X.shape[-1] <= crossovers.MATMUL_STACK_MAX_N


def _inverse(name: str, A: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.inv(A)
    except np.linalg.LinAlgError as error:
        raise np.linalg.LinAlgError(
            f"{name}: a negative power of a singular matrix ({error}; input of shape {A.shape})"
        ) from None


def _power_values(B: np.ndarray, steps: list[tuple[int, int]]) -> list[np.ndarray]:
    values = [B]
    for left, right in steps:
        values.append(np.matmul(values[left], values[right]))
    return values


def _node_pullback(X: Any, Y: Any, C_bar: Any) -> tuple[Any, Any]:
    """``(C_bar Y^H, X^H C_bar)``: one batched kernel call for small stacks, ``@`` otherwise."""
    operands = None
    if type(C_bar) is np.ndarray and C_bar.dtype == X.dtype and _small_matrices(X):
        operands = kernel_operands(X, Y, C_bar)  # copies of read-only arrays (the caller's A)
    if operands is not None:
        X_bar, Y_bar = kproducts.matmul_pullback_batched(*map(as_stack, operands))
        return unstack(X_bar, X.shape), unstack(Y_bar, X.shape)
    return C_bar @ adjoint(Y), adjoint(X) @ C_bar


def _node_pushforward(X: Any, Y: Any, X_dot: Any, Y_dot: Any) -> Any:
    """``X_dot Y + X Y_dot``: one batched kernel call for small stacks, ``@`` otherwise."""
    dtype = X.dtype
    if (
        type(X_dot) is np.ndarray
        and type(Y_dot) is np.ndarray
        and X_dot.dtype == Y_dot.dtype == dtype
        and _small_matrices(X)
    ):
        operands = kernel_operands(X, Y, X_dot, Y_dot)  # copies of read-only arrays
        if operands is not None:
            C_dot = kproducts.matmul_pushforward_batched(*map(as_stack, operands))
            return unstack(C_dot, X.shape)
    return X_dot @ Y + X @ Y_dot


def _accumulate(bars: list[Any], owned: list[bool], i: int, x: Any) -> None:
    """``bars[i] += x``: in place into an array the pullback made itself, else with ``+``.

    ``x`` is a new array (or a user's tangent type) from :func:`_node_pullback`; the cotangent the
    caller passed in is never written to.
    """
    if isinstance(bars[i], AbstractZero):
        bars[i], owned[i] = x, type(x) is np.ndarray
    elif owned[i] and type(x) is np.ndarray and x.dtype == bars[i].dtype:
        bars[i] += x
    else:
        bars[i] = bars[i] + x
        owned[i] = type(bars[i]) is np.ndarray


def _in_dtype_of(B: np.ndarray, X: Any) -> Any:
    """An ndarray (co)tangent ``X`` in ``B``'s kernel dtype (the real part for a real ``B``).

    So float32 stays float32 and every product of the sequence has one dtype; the result is
    projected onto ``A``'s tangent space anyway, and with a real ``B`` the rule commutes with
    taking the real part.
    """
    if type(X) is not np.ndarray or not kernel_eligible(B) or X.dtype == B.dtype:
        return X
    if np.iscomplexobj(X) and not np.iscomplexobj(B):
        X = X.real
    return X.astype(B.dtype)


@rrule.register(np.linalg.matrix_power)
def matrix_power_rrule(a: Any, n: int) -> tuple[np.ndarray, Any]:
    r"""Reverse rule for ``Y = np.linalg.matrix_power(A, n)``, stacks ``(..., m, m)`` too.

    For ``n >= 1``, :math:`\bar A = \sum_{k=0}^{n-1} (A^H)^k\, \bar Y\, (A^H)^{n-1-k}`, computed by
    running numpy's binary powering backwards (module docstring): ``O(log n)`` products. ``n = 0``
    gives the identity, whose cotangent is ``ZeroTangent()``. For ``n < 0``, ``Y = B^{|n|}`` with
    ``B = A^{-1}`` (numpy's ``inv``) and :math:`\bar A = -B^H \bar B B^H`. The exponent gets
    ``NoTangent()``. A singular ``A`` with ``n < 0`` and non-square input raise ``LinAlgError``.
    """
    name = "np.linalg.matrix_power"
    n = operator.index(n)
    A = square_matrices(name, a)
    project_a = ProjectTo(a)
    if n == 0:
        Y = np.empty_like(A)
        Y[...] = np.eye(A.shape[-1], dtype=Y.dtype)

        def matrix_power_zero_pullback(Y_bar: Any) -> tuple[Any, Any]:
            check_shape(f"{name} pullback", "the cotangent", unthunk(Y_bar), Y.shape)
            return NoTangent(), ZeroTangent()

        return Y, matrix_power_zero_pullback
    B = contiguous(_inverse(name, A) if n < 0 else A)
    steps, result = _power_program(abs(n))
    values = _power_values(B, steps)
    Y = values[result].copy() if result == 0 else values[result]

    def matrix_power_pullback(Y_bar: Any) -> tuple[Any, Any]:
        Y_bar = unthunk(Y_bar)
        check_shape(f"{name} pullback", "the cotangent", Y_bar, Y.shape)
        Y_bar = _in_dtype_of(B, Y_bar)
        bars: list[Any] = [ZeroTangent()] * len(values)
        bars[result] = Y_bar
        owned = [False] * len(values)  # bars[i] is an array this pullback made: add in place
        for out in range(len(steps), 0, -1):  # the steps backwards; step out - 1 made values[out]
            C_bar = bars[out]
            if isinstance(C_bar, AbstractZero):
                continue
            left, right = steps[out - 1]
            X_bar, Z_bar = _node_pullback(values[left], values[right], C_bar)
            _accumulate(bars, owned, left, X_bar)
            _accumulate(bars, owned, right, Z_bar)
        B_bar = bars[0]
        if n > 0:
            return NoTangent(), project_a(B_bar)
        operands = None
        if type(B_bar) is np.ndarray and B_bar.dtype == B.dtype and _small_matrices(B):
            operands = kernel_operands(B, B_bar)  # B_bar may be the caller's read-only array
        if operands is not None:
            A_bar = unstack(ksolve.inv_pullback_batched(*map(as_stack, operands)), B.shape)
        else:
            B_h = adjoint(B)
            A_bar = -(B_h @ (B_bar @ B_h))
        return NoTangent(), project_a(A_bar)

    return Y, matrix_power_pullback


@frule.register(np.linalg.matrix_power)
def matrix_power_frule(tangents: tuple[Any, Any, Any], a: Any, n: int) -> tuple[np.ndarray, Any]:
    r"""Forward rule for ``np.linalg.matrix_power``: :math:`\dot C = \dot X Y + X \dot Y` per step.

    For ``n < 0`` the base is ``B = A^{-1}`` with :math:`\dot B = -B \dot A B`; ``n = 0`` gives a
    zero tangent.
    """
    name = "np.linalg.matrix_power"
    n = operator.index(n)
    A = square_matrices(name, a)
    if n == 0:
        return np.linalg.matrix_power(A, 0), ZeroTangent()
    A_dot = unthunk(tangents[1])
    if not is_user_tangent(A_dot):  # a user's tangent type takes the algebra path: @, +, -
        A_dot = as_array_cotangent(A_dot, f"{name}'s frule")
    B = contiguous(_inverse(name, A) if n < 0 else A)
    A_dot = _in_dtype_of(B, A_dot)
    operands = None
    if n < 0 and type(A_dot) is np.ndarray and A_dot.dtype == B.dtype and _small_matrices(B):
        operands = kernel_operands(B, A_dot)  # A_dot may be the caller's read-only array
    if n > 0:
        B_dot = A_dot
    elif operands is not None:
        B_dot = unstack(ksolve.inv_pushforward_batched(*map(as_stack, operands)), B.shape)
    else:
        B_dot = -(B @ (A_dot @ B))
    steps, result = _power_program(abs(n))
    values = _power_values(B, steps)
    dots = [B_dot]
    for left, right in steps:
        dots.append(_node_pushforward(values[left], values[right], dots[left], dots[right]))
    Y = values[result].copy() if result == 0 else values[result]
    return Y, ProjectTo(Y)(dots[result])
