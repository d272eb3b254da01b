"""rules.interop.jax.scipy.linalg: values and gradients are jax.scipy.linalg's."""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax.test_util import check_grads

from rules.interop.jax.scipy import linalg as rlinalg

# Compilation dominates these tests; XLA's cheapest optimisation level keeps the numbers.
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def square(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return jnp.asarray(a.astype(dtype))


def hermitian_part(G):
    return (G + jnp.conj(jnp.swapaxes(G, -1, -2))) / 2


CASES = {
    "expm": (lambda m, A, B: m.expm(A / 4), False),
    "lu": (lambda m, A, B: tuple(m.lu(A)), False),
    "lu_permute_l": (lambda m, A, B: tuple(m.lu(A, permute_l=True)), False),
    "lu_factor": (lambda m, A, B: m.lu_factor(A)[0], False),
    "solve_triangular": (lambda m, A, B: m.solve_triangular(jnp.triu(A), B), False),
    "solve_triangular_lower_trans": (
        lambda m, A, B: m.solve_triangular(jnp.tril(A), B, trans=1, lower=True),
        False,
    ),
    "solve_triangular_vector": (lambda m, A, B: m.solve_triangular(jnp.triu(A), B[:, 0]), False),
    "cholesky": (lambda m, A, B: m.cholesky(A @ A.conj().T + 4 * jnp.eye(4)), True),
    "eigh_values": (lambda m, A, B: m.eigh(A @ A.conj().T, eigvals_only=True), True),
    "eigh": (
        lambda m, A, B: (m.eigh(A @ A.conj().T)[0], jnp.abs(m.eigh(A @ A.conj().T)[1]) ** 2),
        True,
    ),
    "svd": (lambda m, A, B: (m.svd(A)[1], jnp.abs(m.svd(A)[0]) ** 2), False),
    "qr": (lambda m, A, B: tuple(m.qr(A)), False),
    "inv": (lambda m, A, B: m.inv(A), False),
    "solve": (lambda m, A, B: m.solve(A, B), False),
    "solve_vector": (lambda m, A, B: m.solve(A, B[:, 0]), False),
    "det": (lambda m, A, B: m.det(A), False),
    "lu_solve": (lambda m, A, B: m.lu_solve(m.lu_factor(A), B), False),
    "lu_solve_trans_vector": (lambda m, A, B: m.lu_solve(m.lu_factor(A), B[:, 0], trans=1), False),
    "cho_factor": (lambda m, A, B: m.cho_factor(A @ A.conj().T + 4 * jnp.eye(4))[0], True),
    "cho_factor_lower": (
        lambda m, A, B: m.cho_factor(A @ A.conj().T + 4 * jnp.eye(4), lower=True)[0],
        True,
    ),
    # the factor from JAX's own cho_factor for both, so that only cho_solve's rule is compared
    "cho_solve": (
        lambda m, A, B: m.cho_solve(jsl.cho_factor(A @ A.conj().T + 4 * jnp.eye(4)), B),
        False,
    ),
    "cho_solve_lower_vector": (
        lambda m, A, B: m.cho_solve(
            jsl.cho_factor(A @ A.conj().T + 4 * jnp.eye(4), lower=True), B[:, 0]
        ),
        False,
    ),
}


def outputs_and_gradients(linalg, A, B):
    """For every case: its outputs and the gradient of a weighted sum of them, in one program."""
    results = {}
    for name, (call, _) in CASES.items():

        def outputs(A, call=call):
            y = call(linalg, A, B)
            return y if isinstance(y, tuple) else (y,)

        def loss(A, outputs=outputs):
            total = 0
            for y in outputs(A):
                w = jnp.cos(jnp.arange(y.size).reshape(y.shape) + 0.5)
                total = total + (w * jnp.real(y)).sum()
                total = total + ((w * jnp.imag(y)).sum() if jnp.iscomplexobj(y) else 0)
            return total

        results[name] = outputs(A), jax.grad(loss)(A)
    return results


# One jitted program per dtype holds every case (JAX compiles each new program).
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_values_and_gradients_match_jax(dtype, rng):
    A = square(rng, (4, 4), dtype) + 4 * jnp.eye(4, dtype=dtype)
    B = square(rng, (4, 2), dtype)
    ours = jax.jit(
        lambda A, B: outputs_and_gradients(rlinalg, A, B), compiler_options=FAST_COMPILE
    )(A, B)
    native = jax.jit(lambda A, B: outputs_and_gradients(jsl, A, B), compiler_options=FAST_COMPILE)(
        A, B
    )
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-8, "atol": 1e-9}
    for name in CASES:
        (ys, grad), (zs, native_grad) = ours[name], native[name]
        for y, z in zip(ys, zs, strict=True):
            assert y.dtype == z.dtype, name
            assert np.allclose(y, z, **tol), name
        assert grad.dtype == dtype, name
        assert np.allclose(grad, native_grad, **tol), name


def test_stacks_match_vmap_of_jax(rng):
    # jax.scipy.linalg.lu and expm take one matrix; ours take a stack in one call.
    A = square(rng, (3, 4, 4), np.float64) + 4 * jnp.eye(4)

    def both(linalg, batched):
        lu = linalg.lu if not batched else jax.vmap(linalg.lu)
        expm = linalg.expm if not batched else jax.vmap(linalg.expm)
        grad = jax.grad(lambda A: expm(A / 4).sum() + lu(A)[2].sum())(A)
        return (*lu(A), expm(A / 4), grad)

    ours = jax.jit(lambda A: both(rlinalg, False), compiler_options=FAST_COMPILE)(A)
    native = jax.jit(lambda A: both(jsl, True), compiler_options=FAST_COMPILE)(A)
    for y, z in zip(ours, native, strict=True):
        assert np.allclose(y, z)


def test_check_grads(rng):
    A = square(rng, (2, 3, 3), np.float64) + 3 * jnp.eye(3)
    check_grads(lambda A: rlinalg.expm(A / 4), (A,), order=1, modes=["rev"])
    check_grads(lambda A: rlinalg.lu(A)[1:], (A,), order=1, modes=["rev"])
