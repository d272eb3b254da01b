"""rules.interop.jax.wrap and wrap_forward: conventions, transforms, the pullback cache, a training loop."""

import numpy as np
import pytest

from rules import rrule
from tangents import NoTangent, ZeroTangent

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from jax.test_util import check_grads

import rules.interop.jax.function as adapter
from rules.interop.jax import numpy as rnp
from rules.interop.jax import wrap, wrap_forward

rlinalg = rnp.linalg


def spd(rng, *shape):
    a = rng.standard_normal(shape)
    return jnp.asarray(a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1]))


def sym(A):
    return (A + jnp.swapaxes(A, -1, -2)) / 2


# --- a recording rule -------------------------------------------------------------------------------

PRIMAL_CALLS = []


def two_outputs(x):
    PRIMAL_CALLS.append(np.shape(x))
    return 2 * x, np.sin(x)


@pytest.fixture
def recorded(registered):
    seen = {"calls": [], "cotangents": []}

    def two_outputs_rrule(x):
        seen["calls"].append(np.shape(x))

        def two_outputs_pullback(y_bar):
            seen["cotangents"].append(y_bar)
            a_bar, b_bar = y_bar
            total = ZeroTangent()
            if not isinstance(a_bar, ZeroTangent):
                total = total + 2 * a_bar
            if not isinstance(b_bar, ZeroTangent):
                total = total + np.cos(x) * b_bar
            return NoTangent(), total

        return two_outputs(x), two_outputs_pullback

    registered(rrule, two_outputs)(two_outputs_rrule)
    PRIMAL_CALLS.clear()
    return seen


def test_a_symbolic_zero_reaches_the_pullback_as_zero_tangent(recorded, rng):
    x = jnp.asarray(rng.standard_normal(3))
    grad = jax.grad(lambda x: wrap(two_outputs)(x)[1].sum())(x)
    (y_bar,) = recorded["cotangents"]
    assert y_bar[0] is ZeroTangent()
    assert np.allclose(grad, np.cos(x))


def test_vmap_hands_the_whole_stack_to_one_call(recorded, rng):
    x = jnp.asarray(rng.standard_normal((5, 3)))
    jax.vmap(wrap(two_outputs))(x)
    assert PRIMAL_CALLS[-1] == (5, 3)
    jax.vmap(jax.grad(lambda x: wrap(two_outputs)(x)[1].sum()))(x)
    assert recorded["calls"] == [(5, 3)]


def test_the_backward_pass_reuses_the_forward_pullback(recorded, rng, monkeypatch):
    x = jnp.asarray(rng.standard_normal(3))
    y, vjp = jax.vjp(wrap(two_outputs), x)
    first, second = vjp((y[0], y[1])), vjp((y[0], y[1]))
    assert np.array_equal(first[0], second[0])
    assert len(recorded["calls"]) == 1  # the pullback came from the host's cache, twice
    monkeypatch.setattr(adapter, "KEPT_PULLBACKS", 0)  # nothing kept: rrule runs again
    y, vjp = jax.vjp(wrap(two_outputs), x)
    assert np.allclose(vjp((y[0], y[1]))[0], first[0])
    assert len(recorded["calls"]) == 3


def test_complex_gradients_are_jaxs_conjugate_convention():
    # JAX: d|z|^2/dRe z - i d|z|^2/dIm z = 2 - 2i at z = 1 + 1i, by hand (the rules': 2 + 2i).
    z = jnp.asarray([[1.0 + 1.0j]])
    grad = jax.grad(lambda z: jnp.abs(rlinalg.det(z)) ** 2)(z)
    assert np.allclose(grad, [[2.0 - 2.0j]])


def test_float32_stays_float32(rng):
    # One matrix: a float32 stack would compile the batched float32 kernels for this test alone.
    A = spd(rng, 4, 4).astype(jnp.float32)
    L = rlinalg.cholesky(A)
    assert L.dtype == jnp.float32
    assert jax.grad(lambda A: rlinalg.cholesky(A).sum())(A).dtype == jnp.float32


def test_integer_outputs_get_float0_cotangents(rng):
    A = jnp.asarray(rng.standard_normal((4, 4)) + 4 * np.eye(4))
    lu_and_piv = wrap(__import__("scipy.linalg").linalg.lu_factor)
    (lu, piv), vjp = jax.vjp(lu_and_piv, A)
    assert piv.dtype == jnp.int32
    (grad,) = vjp((jnp.ones_like(lu), np.zeros(piv.shape, jax.dtypes.float0)))
    native = jax.vjp(jax.scipy.linalg.lu_factor, A)[1]
    assert np.allclose(grad, native((jnp.ones_like(lu), np.zeros(piv.shape, jax.dtypes.float0)))[0])


def test_python_ints_are_static_options(rng):
    A = jnp.asarray(rng.standard_normal((3, 3)))
    power = wrap(np.linalg.matrix_power)
    ours = jax.jit(jax.grad(lambda A: power(A, 3).sum()))(A)
    assert np.allclose(ours, jax.grad(lambda A: jnp.linalg.matrix_power(A, 3).sum())(A))


def test_a_non_cpu_backend_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    with pytest.raises(ValueError, match=r"wrap\(np\.linalg\.inv\).*only CPU arrays.*gpu"):
        jax.jit(rlinalg.inv)(jnp.ones(2))


def test_a_function_without_a_rule_is_refused_by_name():
    with pytest.raises(TypeError, match=r"no rrule is registered for np\.unwrap"):
        jax.grad(lambda A: wrap(np.unwrap)(A))(jnp.ones(2))


# --- transforms --------------------------------------------------------------------------------------


def loss(linalg, A):
    return jnp.sin(linalg.cholesky(A)).sum()


def test_transforms_match_native(rng):
    A = spd(rng, 3, 4, 4)
    ours, native = (lambda A: loss(rlinalg, A)), (lambda A: loss(jnp.linalg, A))
    chol, chol_native = rlinalg.cholesky, jnp.linalg.cholesky
    pairs = {
        "jit": (jax.jit(chol)(A), chol_native(A)),
        "grad": (jax.grad(ours)(A), jax.grad(native)(A)),
        "jit(grad)": (jax.jit(jax.grad(ours))(A), jax.grad(native)(A)),
        "jacrev": (jax.jacrev(chol)(A[0]), jax.jacrev(chol_native)(A[0])),
        "vmap": (jax.vmap(chol)(A), chol_native(A)),
        "vmap(grad)": (jax.vmap(jax.grad(ours))(A), jax.grad(native)(A)),
        "grad(vmap)": (jax.grad(lambda A: jax.vmap(ours)(A).sum())(A), jax.grad(native)(A)),
        "jit(vmap(grad))": (jax.jit(jax.vmap(jax.grad(ours)))(A), jax.grad(native)(A)),
        "vmap(jacrev)": (jax.vmap(jax.jacrev(chol))(A), jax.vmap(jax.jacrev(chol_native))(A)),
    }
    for transform, (got, want) in pairs.items():
        assert np.allclose(got, want), transform


def test_vmap_with_an_operand_that_is_not_batched(rng):
    A = spd(rng, 3, 4, 4)
    b = jnp.asarray(rng.standard_normal(4))

    def per_slice_grad(linalg):
        g = jax.grad(lambda a, b: linalg.solve(a, b).sum(), argnums=(0, 1))
        return jax.vmap(g, in_axes=(0, None))(A, b)

    for got, want in zip(per_slice_grad(rlinalg), per_slice_grad(jnp.linalg), strict=True):
        assert got.shape == want.shape
        assert np.allclose(got, want)


def test_check_grads_reverse_mode(rng):
    A = spd(rng, 2, 3, 3)
    check_grads(lambda A: rlinalg.cholesky(sym(A)), (A,), order=1, modes=["rev"])
    check_grads(lambda A: rlinalg.slogdet(A).logabsdet, (A,), order=1, modes=["rev"])


def test_forward_mode_of_a_custom_vjp_is_jaxs_error(rng):
    A = spd(rng, 3, 3)
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(rlinalg.inv, (A,), (A,))


def test_wrap_forward_jvp_jacfwd_vmap_jit(rng):
    A, T = spd(rng, 3, 4, 4), jnp.asarray(rng.standard_normal((3, 4, 4)))
    inv = wrap_forward(np.linalg.inv)
    pairs = {
        "jvp": (jax.jvp(inv, (A,), (T,)), jax.jvp(jnp.linalg.inv, (A,), (T,))),
        "jit(jvp)": (
            jax.jit(lambda a, t: jax.jvp(inv, (a,), (t,)))(A, T),
            jax.jvp(jnp.linalg.inv, (A,), (T,)),
        ),
        "jacfwd": ((jax.jacfwd(inv)(A[0]),), (jax.jacfwd(jnp.linalg.inv)(A[0]),)),
        "vmap(jvp)": (
            jax.vmap(lambda a, t: jax.jvp(inv, (a,), (t,)))(A, T),
            jax.jvp(jnp.linalg.inv, (A,), (T,)),
        ),
    }
    for transform, (got, want) in pairs.items():
        for g, w in zip(got, want, strict=True):
            assert np.allclose(g, w), transform
    check_grads(inv, (A,), order=1, modes=["fwd"])


# --- repeated eigenvalues -------------------------------------------------------------------------


def test_repeated_eigenvalue_finite_where_native_is_nan(rng):
    # L = <M, V diag((w - 1)^2) V^T>: gauge-invariant and smooth; the tie at w = 1 has
    # f'(1) = 0, so the in-tie coupling is zero, which the rule resolves exactly.
    A = jnp.diag(jnp.asarray([2.0, 1.0, 1.0, 3.0]))
    M = jnp.asarray(rng.standard_normal((4, 4)))

    def L(linalg, A):
        w, V = linalg.eigh(A)
        return (M * (V @ jnp.diag((w - 1) ** 2) @ V.T)).sum()

    native = jax.grad(lambda A: L(jnp.linalg, A))(A)
    ours = jax.grad(lambda A: L(rlinalg, A))(A)
    assert np.isnan(native).any()
    assert np.isfinite(ours).all()
    for _ in range(3):  # central differences along symmetric directions, no rule involved
        E = sym(jnp.asarray(rng.standard_normal((4, 4))))
        h = 1e-6
        fd = (L(jnp.linalg, A + h * E) - L(jnp.linalg, A - h * E)) / (2 * h)
        assert np.allclose((ours * E).sum(), fd, rtol=1e-6, atol=1e-7)


# --- a training loop -------------------------------------------------------------------------------


def train(linalg, steps=20):
    """Fit an MLP so that the Cholesky factors of F_i F_i^T + I match targets (plain SGD)."""
    rng = np.random.default_rng(0)
    X = jnp.asarray(rng.standard_normal((16, 4, 4)))
    target = jnp.tril(jnp.asarray(rng.standard_normal((16, 4, 4))))
    params = [jnp.asarray(0.3 * rng.standard_normal(s)) for s in [(4, 8), (8,), (8, 4), (4,)]]

    def objective(params):
        W1, b1, W2, b2 = params
        F = jnp.tanh(X @ W1 + b1) @ W2 + b2
        A = F @ jnp.swapaxes(F, -1, -2) + jnp.eye(4)
        return ((linalg.cholesky(A) - target) ** 2).mean()

    step = jax.jit(jax.value_and_grad(objective))
    losses = []
    for _ in range(steps):
        value, grads = step(params)
        params = [p - 0.1 * g for p, g in zip(params, grads, strict=True)]
        losses.append(float(value))
    return losses, params


def test_training_loop_matches_native():
    losses, params = train(rlinalg)
    native_losses, native_params = train(jnp.linalg)
    assert np.allclose(losses, native_losses, rtol=1e-10)
    assert losses[-1] < losses[0]
    for p, q in zip(params, native_params, strict=True):
        assert np.allclose(p, q, rtol=1e-9, atol=1e-12)


def test_pure_callback_transport_before_jax_0_7(monkeypatch, rng):
    # JAX without jax.experimental.buffer_callback: the same methods through jax.pure_callback.
    monkeypatch.setattr(adapter, "_buffer_callback", None)
    inv = wrap(np.linalg.inv)  # a new wrap: its callbacks are built with the patched transport
    A = jnp.asarray(rng.standard_normal((3, 4, 4)) + 4 * np.eye(4))

    def loss(inv, A):
        return jnp.sin(jax.vmap(inv)(A)).sum()

    ours = jax.jit(jax.value_and_grad(lambda A: loss(inv, A)))(A)
    native = jax.value_and_grad(lambda A: loss(jnp.linalg.inv, A))(A)
    for y, z in zip(ours, native, strict=True):
        assert np.allclose(y, z)
