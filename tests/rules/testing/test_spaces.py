"""Tangent spaces used by the checker: orthonormal bases, coordinates, perturbations."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from rules.testing.finite_differences import Differencer
from rules.testing.spaces import EmptySpace, inner, space_of
from tangents import (
    Diagonal,
    Hermitian,
    LowerTriangular,
    ProjectTo,
    Symmetric,
    Tangent,
    UpperTriangular,
)


@dataclasses.dataclass
class Pair:
    a: np.ndarray
    b: float


PRIMALS = {
    "real array": (np.zeros((2, 3)), {}, 6),
    "complex array": (np.zeros(3, np.complex64), {}, 6),
    "int array": (np.arange(3), {}, 3),
    "float": (1.0, {}, 1),
    "complex": (1j, {}, 2),
    "symmetric flag": (np.zeros((2, 3, 3)), {"symmetric": True}, 12),
    "hermitian flag": (np.zeros((3, 3), complex), {"symmetric": True}, 9),
    "Diagonal": (Diagonal(np.ones(3)), {}, 3),
    "Symmetric": (Symmetric(np.eye(3), uplo="L"), {}, 6),
    "complex Symmetric": (Symmetric(np.eye(2, dtype=complex)), {}, 6),
    "Hermitian": (Hermitian(np.eye(3, dtype=complex)), {}, 9),
    "UpperTriangular": (UpperTriangular(np.eye(3)), {}, 6),
    "LowerTriangular complex": (LowerTriangular(np.eye(2, dtype=complex)), {}, 6),
    "sparse": (sp.csc_array(np.eye(3)), {}, 3),
    "dataclass": (Pair(np.zeros(2), 1.0), {}, 3),
    "tuple": ((np.zeros(2), 3, "x"), {}, 2),
}


@pytest.mark.parametrize("name", list(PRIMALS))
def test_basis_is_orthonormal_and_coordinates_invert_it(name):
    primal, options, dim = PRIMALS[name]
    space = space_of(primal, **options)
    assert space.dim == dim
    basis = [space.ambient(space.tangent(np.eye(dim)[k])) for k in range(dim)]
    gram = np.array([[inner(u, v) for v in basis] for u in basis])
    np.testing.assert_allclose(gram, np.eye(dim), atol=1e-12)
    c = np.random.default_rng(0).standard_normal(dim)
    np.testing.assert_allclose(space.coordinates(space.tangent(c)), c, atol=1e-12)


@pytest.mark.parametrize("name", list(PRIMALS))
def test_tangents_lie_in_the_projected_tangent_space(name):
    primal, options, dim = PRIMALS[name]
    space = space_of(primal, **options)
    t = space.tangent(np.random.default_rng(1).standard_normal(dim))
    projected = ProjectTo(primal)(t)
    np.testing.assert_allclose(space.ambient(projected), space.ambient(t), atol=1e-6)


@pytest.mark.parametrize("name", list(PRIMALS))
def test_perturbation_moves_the_primal_by_the_tangent(name):
    primal, options, dim = PRIMALS[name]
    space = space_of(primal, **options)
    c = np.random.default_rng(2).standard_normal(dim)
    moved = space.perturb(primal, c)
    assert type(moved) is type(primal) or isinstance(primal, np.ndarray | float | complex)
    np.testing.assert_allclose(
        space.ambient(moved) - space.ambient(space.upcast(primal)),
        space.ambient(space.tangent(c)),
        atol=1e-12,
    )


def test_perturbation_is_in_double_precision():
    moved = space_of(np.zeros(2, np.float32)).perturb(
        np.zeros(2, np.float32), np.array([1e-9, 0.0])
    )
    assert moved.dtype == np.float64
    assert moved[0] == 1e-9


def test_no_tangent_space():
    for x in (True, 3, "s", None, np.ones(2, bool), print):
        assert isinstance(space_of(x), EmptySpace)


def test_symmetric_flag_needs_square_matrices():
    with pytest.raises(ValueError, match="square"):
        space_of(np.zeros((2, 3)), symmetric=True)


def test_finite_differences_of_a_polynomial_are_accurate():
    x = np.array([0.3, -1.2, 2.0])
    space = space_of(x)
    differ = Differencer(lambda v: v**3, (x,), {}, {0: space}, space)
    jvp = differ.jvp({0: np.array([1.0, 0.0, 0.0])})
    np.testing.assert_allclose(jvp, [3 * 0.3**2, 0, 0], atol=1e-10)
    vjp = differ.vjp(np.ones(3), 0)
    np.testing.assert_allclose(vjp, 3 * x**2, rtol=1e-9)


def test_namedtuple_tangent_by_position_or_by_name():
    y = np.linalg.eigh(np.diag([1.0, 2.0]))
    space = space_of(y)
    by_name = Tangent(type(y), eigenvalues=np.ones(2), eigenvectors=np.eye(2))
    by_position = Tangent(type(y), np.ones(2), np.eye(2))
    np.testing.assert_array_equal(space.ambient(by_position), space.ambient(by_name))


def test_namedtuple_outputs_accept_plain_tuples_as_tangents():
    result = np.linalg.eigh(np.eye(2))
    space = space_of(result)
    t = (np.ones(2), np.zeros((2, 2)))
    np.testing.assert_array_equal(space.ambient(t), np.concatenate([np.ones(2), np.zeros(4)]))
    with pytest.raises(ValueError, match="3 components"):
        space.ambient((np.ones(2), np.zeros((2, 2)), 1.0))
