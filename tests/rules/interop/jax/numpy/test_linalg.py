"""rules.interop.jax.numpy.linalg: values, return types and gradients are jax.numpy.linalg's."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

from rules.interop.jax.numpy import linalg as rlinalg

# Compilation dominates these tests; XLA's cheapest optimisation level keeps the numbers.
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}
DTYPES = [np.float64, np.float32, np.complex128]
SHAPES = [(4, 4), (3, 4, 4)]


def hermitian_part(G):
    return (G + jnp.conj(jnp.swapaxes(G, -1, -2))) / 2


def square(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return jnp.asarray(a.astype(dtype))


def mT(A):
    return jnp.conj(jnp.swapaxes(A, -1, -2))


# name: (call, input kind, reads a Hermitian matrix); eigenvectors and singular vectors enter
# the loss through |V|^2 (gauge-invariant).
CASES = {
    "cholesky": (lambda m, A, B: m.cholesky(A), "spd", True),
    "cholesky_upper": (lambda m, A, B: m.cholesky(A, upper=True), "spd", True),
    "eigh": (lambda m, A, B: (m.eigh(A)[0], jnp.abs(m.eigh(A)[1]) ** 2), "spd", True),
    "eigvalsh": (lambda m, A, B: m.eigvalsh(A), "spd", True),
    "svd": (
        lambda m, A, B: (m.svd(A)[1], jnp.abs(m.svd(A)[0]) ** 2, jnp.abs(m.svd(A)[2]) ** 2),
        "gen",
        False,
    ),
    "svd_values": (lambda m, A, B: m.svd(A, compute_uv=False), "gen", False),
    "svdvals": (lambda m, A, B: m.svdvals(A), "gen", False),
    "qr": (lambda m, A, B: tuple(m.qr(A)), "gen", False),
    "qr_r": (lambda m, A, B: m.qr(A, mode="r"), "gen", False),
    "solve": (lambda m, A, B: m.solve(A, B), "gen", False),
    "solve_vector": (
        lambda m, A, B: m.solve(A, B[(0,) * (B.ndim - 2) + (slice(None), 0)]),
        "gen",
        False,
    ),
    "inv": (lambda m, A, B: m.inv(A), "gen", False),
    "det": (lambda m, A, B: m.det(A), "gen", False),
    "slogdet": (lambda m, A, B: tuple(m.slogdet(A)), "gen", False),
    "matmul": (lambda m, A, B: m.matmul(A, B), "gen", False),
    "matrix_power": (lambda m, A, B: m.matrix_power(A / 4, 3), "gen", False),
    "norm": (lambda m, A, B: m.norm(A), "gen", False),
    "norm_last_axis": (lambda m, A, B: m.norm(A, ord=3, axis=-1), "gen", False),
    "vector_norm_inf": (lambda m, A, B: m.vector_norm(A, ord=np.inf, axis=(-2, -1)), "gen", False),
    "matrix_norm_2": (lambda m, A, B: m.matrix_norm(A, ord=2), "gen", False),
    "matrix_norm_nuc": (lambda m, A, B: m.matrix_norm(A, ord="nuc", keepdims=True), "gen", False),
}


def loss(outputs, weights):
    return sum(
        (w * jnp.real(y)).sum() + ((w * jnp.imag(y)).sum() if jnp.iscomplexobj(y) else 0)
        for y, w in zip(outputs, weights, strict=True)
    )


def outputs_and_gradients(linalg, A, B):
    """For every case: its outputs and the gradient of a weighted sum of them, in one program."""
    results = {}
    for name, (call, kind, _) in CASES.items():
        X = (
            A @ mT(A) + 4 * jnp.eye(4, dtype=A.dtype)
            if kind == "spd"
            else A + 4 * jnp.eye(4, dtype=A.dtype)
        )

        def outputs(X, call=call):
            y = call(linalg, X, B)
            return y if isinstance(y, tuple) else (y,)

        def weighted(X, outputs=outputs):
            ys = outputs(X)
            weights = [jnp.cos(jnp.arange(y.size).reshape(y.shape) + 0.5) for y in ys]
            return loss(ys, weights)

        results[name] = outputs(X), jax.grad(weighted)(X)
    return results


# JAX compiles each new program (seconds on a busy CPU); one jitted program per signature
# holds every case, ours and native, so the whole table costs two compilations per signature.
@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        ((3, 4, 4), np.float64),
        ((4, 4), np.float32),
        ((4, 4), np.complex128),
    ],
    ids=str,
)
def test_values_and_gradients_match_jax(shape, dtype, rng):
    A, B = square(rng, shape, dtype), square(rng, shape[:-1] + (2,), dtype)
    ours = jax.jit(
        lambda A, B: outputs_and_gradients(rlinalg, A, B), compiler_options=FAST_COMPILE
    )(A, B)
    native = jax.jit(
        lambda A, B: outputs_and_gradients(jnp.linalg, A, B), compiler_options=FAST_COMPILE
    )(A, B)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-8, "atol": 1e-9}
    for name, (_, _, hermitian) in CASES.items():
        (ys, grad), (zs, native_grad) = ours[name], native[name]
        for y, z in zip(ys, zs, strict=True):
            assert y.dtype == z.dtype, name
            assert y.shape == z.shape, name
            assert np.allclose(y, z, **tol), name
        assert grad.dtype == dtype, name
        if hermitian:  # only the Hermitian part is defined (DESIGN.md section 3)
            assert np.allclose(grad, hermitian_part(grad)), name
            native_grad = hermitian_part(native_grad)
        assert np.allclose(grad, native_grad, **tol), name


def test_return_types_are_jaxs(rng):
    A = square(rng, (4, 4), np.float64) + 4 * jnp.eye(4)
    S = A @ A.T
    pairs = [
        (rlinalg.eigh(S), jnp.linalg.eigh(S)),
        (rlinalg.svd(A), jnp.linalg.svd(A)),
        (rlinalg.qr(A), jnp.linalg.qr(A)),
        (rlinalg.slogdet(A), jnp.linalg.slogdet(A)),
    ]
    for ours, native in pairs:
        assert type(ours) is type(native)
        assert ours._fields == native._fields


def test_symmetrize_input_as_jax(rng):
    A = square(rng, (4, 4), np.float64)
    S = A @ A.T + 4 * jnp.eye(4)
    N = S + jnp.triu(jnp.ones((4, 4)), 1)  # not symmetric: JAX reads (N + N^T) / 2
    assert np.allclose(rlinalg.cholesky(N), jnp.linalg.cholesky(N))
    assert np.allclose(rlinalg.eigvalsh(N), jnp.linalg.eigvalsh(N))
    assert np.allclose(
        jax.grad(lambda N: rlinalg.cholesky(N).sum())(N),
        jax.grad(lambda N: jnp.linalg.cholesky(N).sum())(N),
    )
