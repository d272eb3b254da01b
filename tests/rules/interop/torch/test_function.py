"""rules.interop.torch.wrap: conventions, torch.func transforms, gradcheck, a training loop."""

import numpy as np
import pytest

from rules import rrule
from tangents import NoTangent, ZeroTangent

torch = pytest.importorskip("torch")
from rules.interop.torch import linalg as rlinalg
from rules.interop.torch import wrap

func = torch.func


def spd(rng, *shape, dtype=torch.float64):
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    a = torch.from_numpy(a).to(dtype)
    return a @ a.mH + shape[-1] * torch.eye(shape[-1], dtype=dtype)


def sym(A):
    return (A + A.mH) / 2


# --- a recording rule: what reached the pullback, and with which arrays -----------------------


def two_outputs(x):
    return 2 * x, np.sin(x)


@pytest.fixture
def recorded(registered):
    seen = {"calls": [], "cotangents": []}

    def two_outputs_rrule(x):
        seen["calls"].append(x)

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
    return seen


def test_an_unused_output_reaches_the_pullback_as_zero_tangent(recorded, rng):
    x = torch.from_numpy(rng.standard_normal(3)).requires_grad_()
    _a, b = wrap(two_outputs)(x)
    b.sum().backward()
    (y_bar,) = recorded["cotangents"]
    assert y_bar[0] is ZeroTangent()
    assert torch.allclose(x.grad, torch.cos(x.detach()))


def test_no_gradient_from_the_rule_is_none_in_torch(registered, rng):
    def constant(x):
        return np.ones_like(x)

    registered(rrule, constant)(lambda x: (constant(x), lambda y_bar: (NoTangent(), ZeroTangent())))
    x = torch.from_numpy(rng.standard_normal(3)).requires_grad_()
    (grad,) = torch.autograd.grad(wrap(constant)(x).sum(), x, allow_unused=True)
    assert grad is None


def test_the_rule_sees_the_tensor_memory_and_one_call_per_stack(recorded, rng):
    x = torch.from_numpy(rng.standard_normal((5, 3)))
    wrap(two_outputs)(x)
    assert recorded["calls"][-1].ctypes.data == x.data_ptr()  # zero-copy
    func.vmap(wrap(two_outputs))(x)
    assert len(recorded["calls"]) == 2
    assert recorded["calls"][-1].shape == (5, 3)


def test_lazy_conjugate_negative_and_transposed_views(rng):
    A = spd(rng, 4, 4, dtype=torch.complex128)
    for view in (A.conj(), -A, A.mT, A.conj().mT):
        assert torch.allclose(
            rlinalg.inv(view), torch.linalg.inv(view.resolve_conj().resolve_neg())
        )


def test_integer_outputs_are_not_differentiable(rng):
    A = torch.from_numpy(rng.standard_normal((4, 4))).requires_grad_()
    LU, pivots = rlinalg.lu_factor(A)
    assert pivots.dtype == torch.int32
    assert not pivots.requires_grad
    assert LU.requires_grad
    LU.sum().backward()
    assert A.grad is not None


def test_complex_convention_is_pytorchs(rng):
    # d|z|^2/dRe z + i d|z|^2/dIm z = 2 Re z + 2i Im z: 2+2j at z = 1+1j, by hand.
    z = torch.tensor([[1.0 + 1.0j]], dtype=torch.complex128, requires_grad=True)
    (grad,) = torch.autograd.grad(rlinalg.det(z).abs() ** 2, z)
    assert torch.allclose(grad, torch.tensor([[2.0 + 2.0j]], dtype=torch.complex128))


def test_float32_stays_float32(rng):
    # One matrix: a float32 stack would compile the batched float32 kernels for this test alone.
    A = spd(rng, 4, 4).to(torch.float32).requires_grad_()
    L = rlinalg.cholesky(A)
    L.sum().backward()
    assert L.dtype == torch.float32
    assert A.grad.dtype == torch.float32


def test_cuda_or_meta_tensor_is_refused_by_name():
    with pytest.raises(ValueError, match=r"wrap\(np.linalg.inv\).*only CPU tensors.*meta"):
        rlinalg.inv(torch.empty(2, 2, device="meta"))


def test_a_function_without_a_rule_is_refused_by_name():
    with pytest.raises(TypeError, match=r"no rrule is registered for np\.unwrap"):
        wrap(np.unwrap)(torch.ones(2, dtype=torch.float64))


def test_python_ints_pass_through_to_the_function(rng):
    A = torch.from_numpy(rng.standard_normal((2, 3, 3))).requires_grad_()
    (ours,) = torch.autograd.grad(wrap(np.linalg.matrix_power)(A, 3).sum(), A)
    (native,) = torch.autograd.grad(torch.linalg.matrix_power(A, 3).sum(), A)
    assert torch.allclose(ours, native)


def test_outputs_keep_numpys_named_tuple(rng):
    _w, V = out = wrap(np.linalg.eigh)(spd(rng, 4, 4))
    assert type(out).__name__ == "EighResult"
    assert out.eigenvectors is V


# --- gradcheck (finite differences independent of the rule), reverse and forward mode ---------


# gradcheck's forward-mode check imports torch._decomp, which warns about torch.jit.script.
TORCH_JIT_WARNING = "ignore:`torch.jit.script` is deprecated:DeprecationWarning"


@pytest.mark.filterwarnings(TORCH_JIT_WARNING)
@pytest.mark.parametrize(
    ("name", "function"),
    [
        ("cholesky", lambda A: rlinalg.cholesky(sym(A) + 4 * torch.eye(3))),
        ("eigh", lambda A: tuple(rlinalg.eigh(sym(A) + torch.diag(torch.arange(3.0))))),
        ("svd", lambda A: rlinalg.svd(A)[1]),
        ("qr", lambda A: tuple(rlinalg.qr(A))),
        ("lu", lambda A: rlinalg.lu(A)[1:]),
        ("solve", lambda A: rlinalg.solve(A + 3 * torch.eye(3), A[..., :2])),
        ("inv", lambda A: rlinalg.inv(A + 3 * torch.eye(3))),
        ("det", lambda A: rlinalg.det(A)),
        ("slogdet", lambda A: rlinalg.slogdet(A + 3 * torch.eye(3)).logabsdet),
        ("expm", lambda A: rlinalg.matrix_exp(A)),
    ],
)
def test_gradcheck(name, function, rng):
    A = torch.from_numpy(rng.standard_normal((2, 3, 3))).requires_grad_()
    if name == "eigh":  # eigenvectors: a sign gauge; compare |V|^2 and w

        def function(A, f=function):
            w, V = f(A)
            return w, V.abs() ** 2

    assert torch.autograd.gradcheck(function, (A,), check_forward_ad=True)


def test_gradcheck_complex(rng):
    A = torch.from_numpy(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)))
    A.requires_grad_()
    assert torch.autograd.gradcheck(lambda A: rlinalg.inv(A + 3 * torch.eye(3)), (A,))


# --- torch.func ---------------------------------------------------------------------------------


def loss(linalg, A):
    return torch.sin(linalg.cholesky(A)).sum()


def test_torch_func_transforms_match_native(rng):
    A = spd(rng, 3, 4, 4)
    T = sym(torch.from_numpy(rng.standard_normal((3, 4, 4))))
    ours, native = (lambda A: loss(rlinalg, A)), (lambda A: loss(torch.linalg, A))
    chol, chol_native = rlinalg.cholesky, torch.linalg.cholesky
    sym_chol = lambda A: chol(sym(A))
    sym_native = lambda A: chol_native(sym(A))
    pairs = {
        "grad": (func.grad(ours)(A), func.grad(native)(A)),
        "vjp": (func.vjp(chol, A)[1](T)[0], func.vjp(chol_native, A)[1](T)[0]),
        "jacrev": (func.jacrev(chol)(A[0]), func.jacrev(chol_native)(A[0])),
        "jvp": (func.jvp(chol, (A,), (T,))[1], func.jvp(chol_native, (A,), (T,))[1]),
        "jacfwd": (func.jacfwd(sym_chol)(A[0]), func.jacfwd(sym_native)(A[0])),
        "vmap": (func.vmap(chol)(A), chol_native(A)),
        "vmap(grad)": (func.vmap(func.grad(ours))(A), func.grad(native)(A)),
        "grad(vmap)": (func.grad(lambda A: func.vmap(ours)(A).sum())(A), func.grad(native)(A)),
        "vmap(jacrev)": (func.vmap(func.jacrev(chol))(A), func.vmap(func.jacrev(chol_native))(A)),
        "vmap(jvp)": (
            func.vmap(lambda a, t: func.jvp(chol, (a,), (t,))[1])(A, T),
            func.jvp(chol_native, (A,), (T,))[1],
        ),
    }
    for transform, (got, want) in pairs.items():
        assert torch.allclose(got, want), transform


def test_vmap_with_an_operand_that_is_not_batched(rng):
    A = spd(rng, 3, 4, 4)
    b = torch.from_numpy(rng.standard_normal((4, 2)))

    def per_slice_grad(linalg):
        g = func.grad(lambda a, b: linalg.solve(a, b).sum(), argnums=(0, 1))
        return func.vmap(g, in_dims=(0, None))(A, b)

    for got, want in zip(per_slice_grad(rlinalg), per_slice_grad(torch.linalg), strict=True):
        assert got.shape == want.shape
        assert torch.allclose(got, want)


def test_forward_ad_dual_numbers(rng):
    A, T = spd(rng, 4, 4), sym(torch.from_numpy(rng.standard_normal((4, 4))))
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        w, _V = rlinalg.eigh(fwAD.make_dual(A, T))
        w_dot = fwAD.unpack_dual(w).tangent
    assert torch.allclose(w_dot, func.jvp(torch.linalg.eigvalsh, (A,), (T,))[1])


def test_double_backward_is_refused_not_zero(rng):
    A = spd(rng, 3, 3).requires_grad_()
    (grad,) = torch.autograd.grad(loss(rlinalg, A), A, create_graph=True)
    with pytest.raises(NotImplementedError, match=r"wrap\(np\.linalg\.cholesky\).*second"):
        grad.sum().backward()


def test_second_derivatives_are_refused_by_name(rng):
    A = spd(rng, 3, 3)
    with pytest.raises(NotImplementedError, match=r"wrap\(np.linalg.cholesky\).*second"):
        func.hessian(lambda A: loss(rlinalg, A))(A)


# --- repeated eigenvalues -------------------------------------------------------------------------


def test_repeated_eigenvalue_finite_where_native_is_nan(rng):
    # L = <M, V diag((w - 1)^2) V^T>: gauge-invariant and smooth; the tie at w = 1 has
    # f'(1) = 0, so the in-tie coupling is zero, which the rule resolves exactly.
    A = torch.diag(torch.tensor([2.0, 1.0, 1.0, 3.0], dtype=torch.float64))
    M = torch.from_numpy(rng.standard_normal((4, 4)))

    def L(linalg, A):
        w, V = linalg.eigh(A)
        return (M * (V @ torch.diag_embed((w - 1) ** 2) @ V.mT)).sum()

    grads = {}
    for linalg in (rlinalg, torch.linalg):
        x = A.clone().requires_grad_()
        (grads[linalg],) = torch.autograd.grad(L(linalg, x), x)
    assert torch.isnan(grads[torch.linalg]).any()
    ours = grads[rlinalg]
    assert torch.isfinite(ours).all()
    for _ in range(3):  # central differences along symmetric directions, no rule involved
        E = sym(torch.from_numpy(rng.standard_normal((4, 4))))
        h = 1e-6
        with torch.no_grad():
            fd = (L(torch.linalg, A + h * E) - L(torch.linalg, A - h * E)) / (2 * h)
        assert torch.allclose((ours * E).sum(), fd, rtol=1e-6, atol=1e-7)


# --- a training loop --------------------------------------------------------------------------------


def train(linalg, rng_seed=0, steps=20):
    """Fit W so that the Cholesky factors of X_i W W^T X_i^T + I match targets."""
    rng = np.random.default_rng(rng_seed)
    X = torch.from_numpy(rng.standard_normal((16, 4, 4)))
    target = torch.from_numpy(rng.standard_normal((16, 4, 4))).tril()
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 4))
    model = model.double()
    torch.manual_seed(rng_seed)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        F = model(X)  # (16, 4, 4): each row mapped
        A = F @ F.mT + torch.eye(4, dtype=torch.float64)
        value = ((linalg.cholesky(A) - target) ** 2).mean()
        value.backward()
        optimizer.step()
        losses.append(value.item())
    return losses, [p.detach().clone() for p in model.parameters()]


def test_training_loop_matches_native():
    losses, params = train(rlinalg)
    native_losses, native_params = train(torch.linalg)
    assert np.allclose(losses, native_losses, rtol=1e-10)
    assert losses[-1] < losses[0]
    for p, q in zip(params, native_params, strict=True):
        assert torch.allclose(p, q, rtol=1e-9, atol=1e-12)
