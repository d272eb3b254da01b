"""Random inputs for linear-algebra rule tests, in the dtypes the rules claim."""

import numpy as np
import pytest

from rules import frule, rrule, split_cotangent
from tangents import AbstractZero, Tangent, unthunk

DTYPES = [np.float64, np.float32, np.complex128]


@pytest.fixture(params=DTYPES, ids=["float64", "float32", "complex128"])
def dtype(request):
    return np.dtype(request.param)


@pytest.fixture
def randn(rng):
    """``randn(dtype, *shape)``: standard normal entries (complex: both parts)."""

    def randn(dtype, *shape):
        x = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(dtype)

    return randn


@pytest.fixture
def spd(randn):
    """``spd(dtype, *shape)``: well-conditioned Hermitian positive definite (stacks of) matrices."""

    def spd(dtype, *shape):
        X = randn(dtype, *shape)
        n = shape[-1]
        return (X @ X.conj().swapaxes(-1, -2) + n * np.eye(n)).astype(dtype)

    return spd


@pytest.fixture
def dominant(randn):
    """``dominant(dtype, *shape)``: ``randn / 2 + 3 I`` (rectangular ``I`` for non-square shapes).

    Householder QR changes the sign of a diagonal entry of ``R`` where the real part of a pivot
    crosses zero (a jump of numpy's output); a dominant diagonal keeps finite differences away
    from those points. Also well conditioned.
    """

    def dominant(dtype, *shape):
        return (randn(dtype, *shape) / 2 + 3 * np.eye(*shape[-2:])).astype(dtype)

    return dominant


@pytest.fixture
def pivoted(dominant, rng):
    """``pivoted(dtype, *shape)``: a ``dominant`` matrix with its rows shuffled (each of a stack).

    Partial pivoting then picks the dominant entries: a non-trivial permutation with no near-ties
    between candidate pivots, so finite differences of ``scipy.linalg.lu`` stay on one branch.
    """

    def pivoted(dtype, *shape):
        X = dominant(dtype, *shape).reshape(-1, *shape[-2:])
        for i in range(len(X)):
            X[i] = X[i][rng.permutation(shape[-2])]
        return X.reshape(shape)

    return pivoted


class FirstRowPhase:
    """Test-only gauge fixing: scale each column ``v_i`` by ``c_i`` so that ``v_i[0]`` is real >= 0.

    ``c_i = conj(v_i[0]) / |v_i[0]|`` (a sign for real vectors) is smooth in ``V`` while
    ``v_i[0] != 0``, so eigenvectors (singular vectors) in this gauge are smooth functions of the
    matrix that finite differences can follow, unlike LAPACK's, whose signs jump under tiny
    perturbations. The adjoint of the fixing maps any cotangent to a gauge-invariant one.
    """

    @staticmethod
    def factor(V):
        """``c`` (..., n) such that ``V * c[..., None, :]`` has a real non-negative first row."""
        first = V[..., 0, :]
        return np.sign(first) if first.dtype.kind != "c" else first.conj() / np.abs(first)

    @staticmethod
    def dtheta(V, V_dot):
        """The rate of change of ``arg v_i[0]``; 0 for real vectors."""
        if V.dtype.kind != "c":
            return np.zeros(V.shape[:-2] + V.shape[-1:])
        return (V_dot[..., 0, :] / V[..., 0, :]).imag

    @staticmethod
    def pushforward(V, c, V_dot):
        """Tangent of ``V c``: ``(V_dot - i V dtheta) c``."""
        theta = FirstRowPhase.dtheta(V, V_dot)
        return (V_dot - 1j * V * theta[..., None, :] if V.dtype.kind == "c" else V_dot) * c[
            ..., None, :
        ]

    @staticmethod
    def theta_cotangent(V, r):
        """The cotangent of ``V`` from the cotangent ``r`` (..., n) of ``arg v_i[0]``."""
        out = np.zeros(V.shape, dtype=np.result_type(V.dtype, np.complex64))
        out[..., 0, :] = r * 1j / V[..., 0, :].conj()
        return out

    @staticmethod
    def pullback(V, c, Y_bar, r_extra=0.0):
        """Cotangent of ``V`` from that of ``Y = V c`` (plus ``r_extra`` on the phase angle)."""
        V_bar = Y_bar * c.conj()[..., None, :]
        if V.dtype.kind != "c":
            return V_bar
        r = np.real(np.sum(Y_bar.conj() * (-1j) * V * c[..., None, :], axis=-2)) + r_extra
        return V_bar + FirstRowPhase.theta_cotangent(V, r)


@pytest.fixture
def first_row_phase():
    """The :class:`FirstRowPhase` gauge fixing (test helper)."""
    return FirstRowPhase


@pytest.fixture
def with_spectrum(rng):
    """``with_spectrum(dtype, w, batch=())``: Hermitian ``Q diag(w) Q^H`` with a random unitary ``Q``."""

    def with_spectrum(dtype, w, batch=()):
        n = len(w)
        X = rng.standard_normal((*batch, n, n))
        if np.dtype(dtype).kind == "c":
            X = X + 1j * rng.standard_normal((*batch, n, n))
        Q, _ = np.linalg.qr(X)
        A = (Q * np.asarray(w, dtype=float)) @ Q.conj().swapaxes(-1, -2)
        return (0.5 * (A + A.conj().swapaxes(-1, -2))).astype(dtype)

    return with_spectrum


@pytest.fixture
def gauge_fixed(first_row_phase):
    """``gauge_fixed(f)``: ``f`` returning ``(w, V)``, with ``V`` in the first-row gauge.

    The returned function has an rrule and an frule composed from ``f``'s rules under test and
    the gauge fixing, so ``check_rrule``/``check_frule`` can run on it with random output
    tangents; the registrations are removed after the test.
    """
    fix = first_row_phase
    registered = []

    def gauge_fixed(f):
        def fixed(A, *args, **kwargs):
            w, V = f(A, *args, **kwargs)
            return w, V * fix.factor(V)[..., None, :]

        def fixed_rrule(A, *args, **kwargs):
            (w, V), pullback = rrule(f, A, *args, **kwargs)
            c = fix.factor(V)

            def fixed_pullback(y_bar):
                w_bar, Y_bar = (unthunk(t) for t in split_cotangent(y_bar, 2))
                if not isinstance(Y_bar, AbstractZero):
                    Y_bar = fix.pullback(V, c, Y_bar)
                return pullback((w_bar, Y_bar))[:2]

            return (w, V * c[..., None, :]), fixed_pullback

        def fixed_frule(tangents, A, *args, **kwargs):
            (w, V), y_dot = frule(tangents, f, A, *args, **kwargs)
            w_dot, V_dot = (unthunk(t) for t in split_cotangent(y_dot, 2))
            c = fix.factor(V)
            return (w, V * c[..., None, :]), Tangent(tuple, w_dot, fix.pushforward(V, c, V_dot))

        rrule.register(fixed)(fixed_rrule)
        frule.register(fixed)(fixed_frule)
        registered.append(fixed)
        return fixed

    yield gauge_fixed
    for fixed in registered:
        rrule.unregister(fixed)
        frule.unregister(fixed)


class LowRank:
    """A user's tangent type: the matrix ``U @ V^H`` kept factored (``@ + - .mT .conj()``).

    It is not an array (``__array_ufunc__ = None`` makes numpy defer to it), so it reaches a rule
    only through the algebra path; a product with a matrix stays low rank.
    """

    __array_ufunc__ = None

    def __init__(self, U, V):
        self.U, self.V = U, V
        self.shape = (U.shape[0], V.shape[0])

    def dense(self):
        return self.U @ self.V.conj().T

    def __matmul__(self, X):  # (U V^H) X = U (X^H V)^H
        if X.ndim == 1:
            return self.U @ (self.V.conj().T @ X)
        return LowRank(self.U, X.conj().T @ self.V)

    def __rmatmul__(self, X):  # X (U V^H) = (X U) V^H
        if X.ndim == 1:
            return (X @ self.U) @ self.V.conj().T
        return LowRank(X @ self.U, self.V)

    def __add__(self, other):
        if isinstance(other, LowRank):
            return LowRank(np.hstack([self.U, other.U]), np.hstack([self.V, other.V]))
        return NotImplemented

    def __neg__(self):
        return LowRank(-self.U, self.V)

    def __sub__(self, other):
        return self + (-other) if isinstance(other, LowRank) else NotImplemented

    @property
    def mT(self):  # (U V^H)^T = conj(V) U^T
        return LowRank(self.V.conj(), self.U.conj())

    def conj(self):
        return LowRank(self.U.conj(), self.V.conj())


@pytest.fixture
def low_rank():
    """The class of a low-rank tangent type, for generic-path tests."""
    return LowRank


@pytest.fixture
def well_conditioned(randn):
    """``well_conditioned(dtype, *shape)``: ``I + 0.3 X / sqrt(n)``, far from singular, powers tame."""

    def well_conditioned(dtype, *shape):
        n = shape[-1]
        return (np.eye(n) + 0.3 * randn(dtype, *shape) / np.sqrt(n)).astype(dtype)

    return well_conditioned


class MatrixTangent:
    """A user's matrix tangent type: ``@`` (both sides), ``+``, ``-``, scalar ``*``, ``.mT``,
    ``.conj()`` and a shape; no array conversion, so rules must keep to the tangent algebra.
    """

    __array_ufunc__ = None

    def __init__(self, values):
        self.values = np.asarray(values)
        self.shape = self.values.shape

    def __add__(self, other):
        other = other.values if isinstance(other, MatrixTangent) else other
        return MatrixTangent(self.values + other)

    __radd__ = __add__

    def __sub__(self, other):
        other = other.values if isinstance(other, MatrixTangent) else other
        return MatrixTangent(self.values - other)

    def __rsub__(self, other):
        return MatrixTangent(other - self.values)

    def __neg__(self):
        return MatrixTangent(-self.values)

    def __mul__(self, scalar):
        return MatrixTangent(self.values * scalar)

    __rmul__ = __mul__

    def __matmul__(self, other):
        return MatrixTangent(self.values @ other)

    def __rmatmul__(self, other):
        return MatrixTangent(other @ self.values)

    @property
    def mT(self):
        return MatrixTangent(self.values.mT)

    def conj(self):
        return MatrixTangent(self.values.conj())


@pytest.fixture
def matrix_tangent():
    """The class of a user-defined matrix tangent type, for generic-path tests."""
    return MatrixTangent


def _central_gradient(loss, A, h=1e-4):
    """``dL/dRe A + i dL/dIm A`` of the real ``loss`` by central differences (5 points)."""
    G = np.zeros(A.shape, dtype=A.dtype)
    units = [1.0, 1j] if A.dtype.kind == "c" else [1.0]
    for index in np.ndindex(A.shape):
        for unit in units:
            E = np.zeros(A.shape, dtype=A.dtype)
            E[index] = unit
            values = [loss(A + t * h * E) for t in (-2, -1, 1, 2)]
            G[index] += unit * (values[0] - 8 * values[1] + 8 * values[2] - values[3]) / (12 * h)
    return G


@pytest.fixture
def gradient():
    """``gradient(loss, A, h=1e-4)``: the gradient of a real ``loss`` by central differences."""
    return _central_gradient


# --- single-matrix lanes against the general path -------------------------------------------------


@pytest.fixture
def call_counts(monkeypatch):
    """``call_counts(module, names)``: a dict counting calls of ``module.<name>`` for each name.

    Keys drop an ``_into`` suffix; the functions still run. A lane test's spy: it fails when a
    lane that should be taken silently stops being taken.
    """

    def call_counts(module, names):
        calls = {}
        for name in names:
            function, short = getattr(module, name), name.removesuffix("_into")

            def counted(*args, _function=function, _name=short):
                calls[_name] = calls.get(_name, 0) + 1
                return _function(*args)

            monkeypatch.setattr(module, name, counted)
        return calls

    return call_counts


@pytest.fixture
def lane_off(monkeypatch):
    """``lane_off(target, name, value)``: ``general(f)``, which returns ``f()`` with
    ``target.<name>`` set to ``value`` for that call only (the lane switched off).
    """

    def lane_off(target, name, value):
        def general(f):
            with monkeypatch.context() as patch:
                patch.setattr(target, name, value)
                return f()

        return general

    return lane_off


def _assert_same(a, b, tol=0.0):
    """``a`` and ``b`` alike in type, nesting, dtype and shape; arrays equal (within ``tol``)."""
    assert type(a) is type(b)
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y, tol)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        assert a.shape == b.shape
        if tol:
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(a, b)
    else:
        assert a == b


@pytest.fixture
def assert_same():
    """``assert_same(a, b, tol=0.0)``: a lane's result against the general path's, recursively."""
    return _assert_same
