"""``python -m bench.second_order``: time ``rules.autodiff.hvp`` and ``hessian`` (docs/second-order.md).

Two rows, each timed in interleaved rounds (:mod:`bench.timing`) after a first call that is not
timed, the ratios from the same run:

* ``hvp gp n=500``: a Hessian-vector product of the Gaussian-process negative log marginal
  likelihood (bench/cases/programs.py, n = 500 points, 3 hyperparameters), forward over reverse,
  against ``grad`` of the same loss. Target: at most 4 times the gradient's time.
* ``hessian 10 params``: the full Hessian of a 10-parameter logistic-regression loss on 200
  samples (reverse over reverse), against ``jax.jit(jax.hessian(f))`` with ``--peers`` (compiled
  before timing, so compilation is excluded). Target: at most 2 times JAX's time.

Each result is checked before it is timed: the hvp against central differences of the gradient
along the vector, the Hessian against JAX's (``--peers``) or central differences of the gradient.
"""

from __future__ import annotations

import argparse
from typing import Any


def _logistic_build(rng: Any) -> tuple[Any, Any, Any]:
    X = rng.standard_normal((200, 10))
    y = (X @ rng.standard_normal(10) + 0.5 * rng.standard_normal(200) > 0).astype(float)
    return 0.1 * rng.standard_normal(10), X, y


def _logistic_loss(np_: Any, w: Any, X: Any, y: Any) -> Any:
    z = X @ w
    return np_.mean(np_.logaddexp(0.0, z) - y * z) + 0.5e-2 * np_.sum(w**2)


def _fd_of_grad(grad_f: Any, x: Any, v: Any, h: float = 1e-5) -> Any:
    return (grad_f(x + h * v) - grad_f(x - h * v)) / (2 * h)


def main(argv: list[str] | None = None) -> int:
    """Run the two second-order rows and print their times and ratios."""
    parser = argparse.ArgumentParser(prog="python -m bench.second_order", description=__doc__)
    parser.add_argument("--peers", action="store_true", help="add jax.hessian under jit")
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per column and row")
    args = parser.parse_args(argv)

    from bench.environment import allocator_line, fix_allocator, set_thread_variables

    set_thread_variables(1)  # before numpy loads: one BLAS thread, as the main bench
    print(allocator_line(fix_allocator()))  # glibc's thresholds fixed, as the main bench
    import numpy as np

    from bench.cases.programs import _gp_build, gp_loss, numpy_namespace
    from bench.environment import limit_threads
    from bench.timing import first_call, measure
    from rules.autodiff import grad, hessian, hvp

    limit_threads(1)
    failed = False
    rng = np.random.default_rng(0)
    print("second derivatives; ratios are the row's time over its baseline (same run)")

    # --- hvp of the GP loss against its gradient ---
    xp = numpy_namespace()
    theta, D2, y, eye = _gp_build(500)(rng)
    v = np.array([0.3, -0.2, 0.5])

    def loss(t: Any) -> Any:
        return gp_loss(xp, t, D2, y, eye)

    gradient = grad(loss)
    _, product = first_call(lambda: hvp(loss, (theta,), (v,)))
    reference = _fd_of_grad(gradient, theta, v)
    if not np.allclose(product, reference, rtol=1e-5, atol=1e-8 * np.max(np.abs(reference))):
        print(f"  hvp gp n=500 DISAGREES with differences of the gradient: {product} {reference}")
        failed = True
    first_call(lambda: gradient(theta))
    timings = measure(
        {"hvp": lambda: hvp(loss, (theta,), (v,)), "grad": lambda: gradient(theta)}, args.budget
    )
    ratio = timings["hvp"].best / timings["grad"].best
    print(
        f"{'hvp gp n=500':20} hvp {timings['hvp'].best * 1e3:8.2f}ms  grad "
        f"{timings['grad'].best * 1e3:8.2f}ms  hvp/grad {ratio:5.2f}x (target <= 4)"
    )

    # --- hessian of a 10-parameter loss against jax.hessian under jit ---
    w, X, labels = _logistic_build(rng)

    def logistic(w_: Any) -> Any:
        return _logistic_loss(np, w_, X, labels)

    ours = hessian(logistic)
    _, H = first_call(lambda: ours(w))
    columns = {"ours": lambda: ours(w)}
    reference = np.stack([_fd_of_grad(grad(logistic), w, e) for e in np.eye(10)], axis=1)
    if args.peers:
        try:
            import jax
            import jax.numpy as jnp

            jax.config.update("jax_enable_x64", True)
            jitted = jax.jit(jax.hessian(lambda w_: _logistic_loss(jnp, w_, X, labels)))
            jw = jnp.asarray(w)
            _, reference = first_call(lambda: np.asarray(jax.block_until_ready(jitted(jw))))
            columns["jax"] = lambda: jax.block_until_ready(jitted(jw))
        except ImportError as error:
            print(f"jax: not installed ({error})")
    if not np.allclose(H, reference, rtol=1e-6, atol=1e-9):
        print("  hessian 10 params DISAGREES with its reference")
        failed = True
    timings = measure(columns, args.budget)
    line = f"{'hessian 10 params':20} ours {timings['ours'].best * 1e3:8.2f}ms"
    if "jax" in timings:
        ratio = timings["ours"].best / timings["jax"].best
        line += f"  jax {timings['jax'].best * 1e3:8.2f}ms  ours/jax {ratio:5.2f}x (target <= 2)"
    print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
