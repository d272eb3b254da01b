r"""Rules of shape functions: reshape, transpose, broadcast_to, tile, pad and the like.

The functions: reshape, ravel, transpose, moveaxis, swapaxes, squeeze, expand_dims, broadcast_to,
flip, roll, tile, repeat, pad. Each is linear in its array argument, so its pushforward is the function applied to the tangent
(:func:`rules.core.linear_frules.register_linear_frule`) and its pullback is the adjoint, written out here:

* reshape, ravel, squeeze, expand_dims: reshape the cotangent back (in the same index order);
* transpose, moveaxis, swapaxes, flip, roll: the inverse permutation (``roll`` by ``-shift``);
  a swap of the last two axes pulls back (and pushes forward) as ``.mT``, so a user's
  matrix-like tangent type flows through those three unconverted (every other rule here needs
  an ndarray);
* broadcast_to, tile, repeat: sum the copies (``unbroadcast``; the tiles; the repeats, with
  ``np.add.at`` for per-entry repeat counts);
* pad (``mode="constant"`` only; other modes reuse entries and are refused): the interior of
  the cotangent. ``constant_values`` is a keyword argument and, like all of them, constant.

Complex arrays need nothing special: these maps are real-linear and commute with conjugation,
so the adjoint of ``L`` is the same map as for real arrays. Option arguments (shapes, axes,
counts) get ``NoTangent()``.

References
----------
ChainRules.jl ``src/rulesets/Base/array.jl`` (``reshape``, ``permutedims``, ``repeat``,
``reverse``, ``circshift``, ``fill``); reference notes ``chainrules-linalg-and-testutils.md``
section 2.5.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rules.core.broadcasting import unbroadcast
from rules.core.cotangents import as_array_cotangent, is_user_tangent
from rules.core.linear_frules import register_linear_frule
from rules.core.nesting import as_array
from rules.core.options import normalize_axes, refuse, rrule_with_options
from rules.core.registry import frule
from tangents import NoTangent, ProjectTo, unthunk

__all__: list[str] = []


def _cotangent(y_bar: Any, name: str) -> np.ndarray:
    return as_array(as_array_cotangent(y_bar, f"np.{name}'s pullback"))


class _ReadOrder:
    """The order in which ``reshape``/``ravel`` with ``order`` read the entries of ``a``.

    ``"A"`` and ``"K"`` depend on ``a``'s memory layout, which its tangents and cotangents need not
    share, so the order is fixed once from ``a``: ``ravel(a, order)`` equals
    ``ravel(transpose(a, perm), index_order)`` with ``index_order`` ``"C"`` or ``"F"``. For
    ``"K"``, ``perm`` sorts the axes by decreasing stride magnitude (each axis is still read in
    increasing index order: numpy "reverses the data when strides are negative").
    """

    def __init__(self, a: Any, order: str) -> None:
        a = as_array(a)
        self.perm = tuple(range(a.ndim))
        if order == "K":
            self.perm = tuple(
                sorted(self.perm, key=lambda i: -abs(a.strides[i]) if a.shape[i] > 1 else 0)
            )
            self.index_order = "C"
        elif order == "A":
            self.index_order = "F" if np.isfortran(a) else "C"
        else:
            self.index_order = order
        self.read_shape = tuple(a.shape[i] for i in self.perm)

    def read(self, t: Any, shape: Any) -> np.ndarray:
        """``t`` (shaped like ``a``) reshaped to ``shape`` in this order: the forward map."""
        return np.reshape(np.transpose(t, self.perm), shape, order=self.index_order)  # type: ignore[call-overload]

    def write(self, g: Any) -> np.ndarray:
        """``g`` put back in ``a``'s shape: the adjoint (and inverse) of :meth:`read`."""
        t = np.reshape(g, self.read_shape, order=self.index_order)  # type: ignore[call-overload]
        return np.transpose(t, np.argsort(self.perm))


# --- reshape, ravel, squeeze, expand_dims ------------------------------------------------------


@rrule_with_options(np.reshape)
def reshape_rrule(a: Any, shape: Any, order: str = "C", **kwargs: Any) -> Any:
    """``y = reshape(a, shape, order)``: ``ā = reshape(ȳ, a.shape, order)``."""
    y = np.reshape(a, shape, order=order, **kwargs)
    read_order = _ReadOrder(a, order)
    project_a = ProjectTo(a)

    def reshape_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_a(read_order.write(_cotangent(y_bar, "reshape")))

    return y, reshape_pullback


@frule.register(np.reshape)
def reshape_frule(
    tangents: tuple[Any, ...], a: Any, shape: Any, order: str = "C", **kwargs: Any
) -> Any:
    """``ẏ = reshape(ȧ, shape, order)``, reading ``ȧ`` in the order ``a`` was read."""
    y = np.reshape(a, shape, order=order, **kwargs)
    a_dot = as_array_cotangent(tangents[1], "np.reshape's frule")
    return y, ProjectTo(y)(_ReadOrder(a, order).read(a_dot, np.shape(y)))


@rrule_with_options(np.ravel)
def ravel_rrule(a: Any, order: str = "C") -> Any:
    """``y = ravel(a, order)``: ``ā = reshape(ȳ, a.shape, order)`` (``"K"``: in memory order)."""
    y = np.ravel(a, order=order)
    read_order = _ReadOrder(a, order)
    project_a = ProjectTo(a)

    def ravel_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_a(read_order.write(_cotangent(y_bar, "ravel")))

    return y, ravel_pullback


@frule.register(np.ravel)
def ravel_frule(tangents: tuple[Any, ...], a: Any, order: str = "C") -> Any:
    """``ẏ = ravel(ȧ, order)``, reading ``ȧ`` in the order ``a`` was read."""
    y = np.ravel(a, order=order)
    a_dot = as_array_cotangent(tangents[1], "np.ravel's frule")
    return y, ProjectTo(y)(_ReadOrder(a, order).read(a_dot, -1))


@rrule_with_options(np.squeeze)
def squeeze_rrule(a: Any, axis: Any = None) -> Any:
    """``y = squeeze(a, axis)``: ``ā = reshape(ȳ, a.shape)``."""
    y = np.squeeze(a, axis=axis)
    shape = np.shape(a)
    project_a = ProjectTo(a)

    def squeeze_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_a(np.reshape(_cotangent(y_bar, "squeeze"), shape))

    return y, squeeze_pullback


@rrule_with_options(np.expand_dims)
def expand_dims_rrule(a: Any, axis: Any) -> Any:
    """``y = expand_dims(a, axis)``: ``ā = reshape(ȳ, a.shape)``."""
    y = np.expand_dims(a, axis)
    shape = np.shape(a)
    project_a = ProjectTo(a)

    def expand_dims_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_a(np.reshape(_cotangent(y_bar, "expand_dims"), shape))

    return y, expand_dims_pullback


# --- permutations: transpose, moveaxis, swapaxes, flip, roll -----------------------------------


def _is_matrix_transpose(perm: Any) -> bool:
    """Whether the axis permutation ``perm`` swaps the last two axes only (``y = a.mT``).

    Such a permutation is its own inverse, so both its pushforward and its pullback are ``.mT``,
    an operation of the tangent algebra, which a user's matrix-like tangent type has.
    """
    n = len(perm)
    return n >= 2 and tuple(perm) == (*range(n - 2), n - 1, n - 2)


def _transposes_matrices(a: Any, axes: Any = None) -> bool:
    """Whether ``np.transpose(a, axes)`` is ``a.mT``."""
    ndim = np.ndim(a)
    return _is_matrix_transpose(
        tuple(range(ndim))[::-1] if axes is None else normalize_axes(tuple(axes), ndim)
    )


def _moves_matrix_axes(a: Any, source: Any, destination: Any) -> bool:
    """Whether ``np.moveaxis(a, source, destination)`` is ``a.mT``."""
    ndim = np.ndim(a)
    perm = [i for i in range(ndim) if i not in normalize_axes(source, ndim)]
    moves = zip(normalize_axes(destination, ndim), normalize_axes(source, ndim), strict=True)
    for to, origin in sorted(moves):  # numpy's own construction of the permutation
        perm.insert(to, origin)
    return _is_matrix_transpose(perm)


def _swaps_matrix_axes(a: Any, axis1: int, axis2: int) -> bool:
    """Whether ``np.swapaxes(a, axis1, axis2)`` is ``a.mT``."""
    ndim = np.ndim(a)
    perm = list(range(ndim))
    (i,), (j,) = normalize_axes(axis1, ndim), normalize_axes(axis2, ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return _is_matrix_transpose(perm)


def _matrix_transposed(y_bar: Any, matrix_transpose: bool) -> Any:
    """``ȳ.mT`` for a user's tangent type when the pullback is a matrix transpose, else ``None``.

    ndarrays (and the library's other cotangents) keep the rule's numpy path, unchanged.
    """
    if matrix_transpose and is_user_tangent(y_bar):
        return y_bar.mT
    return None


@rrule_with_options(np.transpose)
def transpose_rrule(a: Any, axes: Any = None) -> Any:
    """``y = transpose(a, axes)``: ``ā = transpose(ȳ, argsort(axes))``.

    A transpose of the last two axes only (``axes=None`` for a matrix) pulls back as ``ȳ.mT``
    for a user's tangent type, which then never becomes an ndarray; other permutations need an
    ndarray cotangent.
    """
    y = np.transpose(a, axes)
    inverse = None if axes is None else np.argsort(normalize_axes(tuple(axes), np.ndim(a)))
    matrix_transpose = _transposes_matrices(a, axes)
    project_a = ProjectTo(a)

    def transpose_pullback(y_bar: Any) -> tuple[Any, Any]:
        y_bar = unthunk(y_bar)
        generic = _matrix_transposed(y_bar, matrix_transpose)
        if generic is not None:
            return NoTangent(), project_a(generic)
        return NoTangent(), project_a(np.transpose(_cotangent(y_bar, "transpose"), inverse))

    return y, transpose_pullback


@rrule_with_options(np.moveaxis)
def moveaxis_rrule(a: Any, source: Any, destination: Any) -> Any:
    """``y = moveaxis(a, source, destination)``: ``ā = moveaxis(ȳ, destination, source)``.

    ``ȳ.mT`` for a user's tangent type when the move swaps the last two axes only.
    """
    y = np.moveaxis(a, source, destination)
    matrix_transpose = _moves_matrix_axes(a, source, destination)
    project_a = ProjectTo(a)

    def moveaxis_pullback(y_bar: Any) -> tuple[Any, Any]:
        y_bar = unthunk(y_bar)
        generic = _matrix_transposed(y_bar, matrix_transpose)
        if generic is not None:
            return NoTangent(), project_a(generic)
        g = _cotangent(y_bar, "moveaxis")
        return NoTangent(), project_a(np.moveaxis(g, destination, source))

    return y, moveaxis_pullback


@rrule_with_options(np.swapaxes)
def swapaxes_rrule(a: Any, axis1: int, axis2: int) -> Any:
    """``y = swapaxes(a, i, j)``: ``ā = swapaxes(ȳ, i, j)``.

    ``ȳ.mT`` for a user's tangent type when the last two axes are swapped.
    """
    y = np.swapaxes(a, axis1, axis2)
    matrix_transpose = _swaps_matrix_axes(a, axis1, axis2)
    project_a = ProjectTo(a)

    def swapaxes_pullback(y_bar: Any) -> tuple[Any, Any]:
        y_bar = unthunk(y_bar)
        generic = _matrix_transposed(y_bar, matrix_transpose)
        if generic is not None:
            return NoTangent(), project_a(generic)
        g = _cotangent(y_bar, "swapaxes")
        return NoTangent(), project_a(np.swapaxes(g, axis1, axis2))

    return y, swapaxes_pullback


@rrule_with_options(np.flip)
def flip_rrule(m: Any, axis: Any = None) -> Any:
    """``y = flip(m, axis)``: ``m̄ = flip(ȳ, axis)``."""
    y = np.flip(m, axis)
    project_m = ProjectTo(m)

    def flip_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_m(np.flip(_cotangent(y_bar, "flip"), axis))

    return y, flip_pullback


@rrule_with_options(np.roll)
def roll_rrule(a: Any, shift: Any, axis: Any = None) -> Any:
    """``y = roll(a, shift, axis)``: ``ā = roll(ȳ, -shift, axis)``."""
    y = np.roll(a, shift, axis)
    shape = np.shape(a)
    back = np.negative(shift)
    project_a = ProjectTo(a)

    def roll_pullback(y_bar: Any) -> tuple[Any, Any]:
        a_bar = np.roll(_cotangent(y_bar, "roll"), back, axis)
        return NoTangent(), project_a(np.reshape(a_bar, shape))

    return y, roll_pullback


# --- copies: broadcast_to, tile, repeat ---------------------------------------------------------


@rrule_with_options(np.broadcast_to)
def broadcast_to_rrule(array: Any, shape: Any, subok: bool = False) -> Any:
    """``y = broadcast_to(x, shape)``: ``x̄ = unbroadcast(ȳ, x.shape)``, the sum over the copies."""
    y = np.broadcast_to(array, shape, subok=subok)
    x_shape = np.shape(array)
    project_x = ProjectTo(array)

    def broadcast_to_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_x(unbroadcast(_cotangent(y_bar, "broadcast_to"), x_shape))

    return y, broadcast_to_pullback


@rrule_with_options(np.tile)
def tile_rrule(A: Any, reps: Any) -> Any:
    """``y = tile(A, reps)``: ``Ā`` sums the ``reps`` tiles of ``ȳ``."""
    y = np.tile(A, reps)
    shape = np.shape(A)
    reps_tuple = tuple(np.atleast_1d(reps).tolist())
    d = max(len(shape), len(reps_tuple))
    tile_shape = (1,) * (d - len(shape)) + shape
    counts = (1,) * (d - len(reps_tuple)) + reps_tuple
    # ȳ as (count_0, size_0, count_1, size_1, ...): the copies along the even axes.
    interleaved = tuple(n for pair in zip(counts, tile_shape, strict=True) for n in pair)
    project_a = ProjectTo(A)

    def tile_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = _cotangent(y_bar, "tile").reshape(interleaved)
        a_bar = g.sum(axis=tuple(range(0, 2 * d, 2))).reshape(shape)
        return NoTangent(), project_a(a_bar)

    return y, tile_pullback


@rrule_with_options(np.repeat)
def repeat_rrule(a: Any, repeats: Any, axis: Any = None) -> Any:
    """``y = repeat(a, repeats, axis)``: ``ā_i`` sums the ``repeats_i`` copies of entry ``i``."""
    y = np.repeat(a, repeats, axis)
    shape = np.shape(a)
    flat = axis is None
    along = 0 if flat else normalize_axes(axis, len(shape))[0]
    source_shape = (int(np.prod(shape)),) if flat else shape
    project_a = ProjectTo(a)

    def repeat_pullback(y_bar: Any) -> tuple[Any, Any]:
        g = _cotangent(y_bar, "repeat")
        n = source_shape[along]
        if np.ndim(repeats) == 0 or np.size(repeats) == 1:
            r = int(np.reshape(repeats, -1)[0])
            split = (*source_shape[:along], n, r, *source_shape[along + 1 :])
            a_bar = g.reshape(split).sum(axis=along + 1)
        else:
            # A count per entry: scatter-add each copy back to its entry.
            owner = np.repeat(np.arange(n), repeats)
            a_bar = np.zeros(source_shape, dtype=g.dtype)
            np.add.at(a_bar, (slice(None),) * along + (owner,), g)
        return NoTangent(), project_a(a_bar.reshape(shape))

    return y, repeat_pullback


# --- pad ----------------------------------------------------------------------------------------


@rrule_with_options(np.pad)
def pad_rrule(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """``y = pad(x, pad_width)`` (constant mode): ``x̄`` is the interior of ``ȳ``."""
    if mode != "constant":
        refuse("pad", mode=repr(mode))
    y = np.pad(array, pad_width, mode, **kwargs)
    shape = np.shape(array)
    # Where the input sits inside the output, whatever form pad_width takes.
    interior = np.pad(np.ones(shape, dtype=bool), pad_width, "constant")
    project_x = ProjectTo(array)

    def pad_pullback(y_bar: Any) -> tuple[Any, Any]:
        return NoTangent(), project_x(_cotangent(y_bar, "pad")[interior].reshape(shape))

    return y, pad_pullback


@frule.register(np.pad)
def pad_frule(
    tangents: tuple[Any, ...], array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any
) -> Any:
    """``ẏ = pad(ẋ, pad_width)`` with zeros: ``constant_values`` does not move."""
    if mode != "constant":
        refuse("pad", mode=repr(mode))
    y = np.pad(array, pad_width, mode, **kwargs)
    x_dot = as_array_cotangent(tangents[1], "np.pad's frule")
    return y, ProjectTo(y)(np.pad(x_dot, pad_width, "constant"))


register_linear_frule(np.transpose, "transpose", is_matrix_transpose=_transposes_matrices)
register_linear_frule(np.moveaxis, "moveaxis", is_matrix_transpose=_moves_matrix_axes)
register_linear_frule(np.swapaxes, "swapaxes", is_matrix_transpose=_swaps_matrix_axes)
for _f, _name in (
    (np.squeeze, "squeeze"),
    (np.expand_dims, "expand_dims"),
    (np.flip, "flip"),
    (np.roll, "roll"),
    (np.broadcast_to, "broadcast_to"),
    (np.tile, "tile"),
    (np.repeat, "repeat"),
):
    register_linear_frule(_f, _name)
