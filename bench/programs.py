"""``python -m bench.programs``: time ``rules.autodiff`` on whole programs (see bench/cases/programs.py).

Each row is one loss; the columns are the value and gradient computed by

* ``ours``: ``rules.autodiff.value_and_grad(loss)``, tracing the plain numpy code;
* ``hand``: the same library pullbacks chained by hand (the baseline: no tracing);
* with ``--peers``: HIPS autograd (``autograd.value_and_grad`` on the same code written with
  ``autograd.numpy``), JAX (``jax.jit(jax.value_and_grad)`` on ``jax.numpy``, compiled before
  timing) and PyTorch (``torch.autograd.grad`` of the same loss in torch).

Every column is first checked against ``ours`` (``allclose``, rtol 1e-6). Times are the best of
interleaved rounds (:mod:`bench.timing`); ratios are the column's time over ours, from the same
run, so a ratio above 1 means ours is faster.
"""

from __future__ import annotations

import argparse
from typing import Any


def _columns(program: Any, args: tuple[Any, ...], peers: bool) -> dict[str, Any]:
    from types import SimpleNamespace

    import numpy as np

    from bench.cases.programs import numpy_namespace
    from rules.autodiff import value_and_grad

    xp = numpy_namespace()
    ours = value_and_grad(lambda *a: program.loss(xp, *a))
    columns: dict[str, Any] = {
        "ours": lambda: ours(*args),
        "hand": lambda: program.hand(*args),
    }
    if not peers:
        return columns
    try:
        import autograd
        import autograd.numpy as anp
        import autograd.scipy.linalg as asla

        axp = SimpleNamespace(np=anp, solve_triangular=asla.solve_triangular)
        theirs = autograd.value_and_grad(lambda *a: program.loss(axp, *a))
        columns["autograd"] = lambda: theirs(*args)
    except ImportError as error:
        print(f"autograd: not installed ({error})")
    try:
        import jax
        import jax.numpy as jnp
        import jax.scipy.linalg as jsla

        jax.config.update("jax_enable_x64", True)
        jxp = SimpleNamespace(np=jnp, solve_triangular=jsla.solve_triangular)
        jitted = jax.jit(jax.value_and_grad(lambda *a: program.loss(jxp, *a)))
        jargs = jax.tree_util.tree_map(jnp.asarray, args)

        def run_jax() -> Any:
            value, grad = jitted(*jargs)
            return jax.block_until_ready((value, grad))

        columns["jax"] = run_jax
    except ImportError as error:
        print(f"jax: not installed ({error})")
    if program.torch is not None:
        try:
            import torch

            targs = [torch.tensor(np.asarray(a)) for a in args[1:]]
            first = args[0]

            def run_torch() -> Any:
                if isinstance(first, tuple):
                    leaves = [torch.tensor(p, requires_grad=True) for p in first]
                    x = tuple(leaves)
                else:
                    x = torch.tensor(first, requires_grad=True)
                    leaves = [x]
                loss = program.torch(torch, x, *targs)
                return loss, torch.autograd.grad(loss, leaves)

            columns["torch"] = run_torch
        except ImportError as error:
            print(f"torch: not installed ({error})")
    return columns


def _gradient_arrays(result: Any) -> list[Any]:
    import numpy as np

    value, grad = result
    if isinstance(grad, tuple | list) or hasattr(grad, "backing"):
        parts = list(grad)
    else:
        parts = [grad]
    out = [np.asarray(value.detach() if hasattr(value, "detach") else value, dtype=float)]
    out += [np.asarray(p.detach() if hasattr(p, "detach") else p, dtype=float) for p in parts]
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the program benchmark and print one row per program."""
    parser = argparse.ArgumentParser(prog="python -m bench.programs", description=__doc__)
    parser.add_argument("--peers", action="store_true", help="add autograd, JAX and PyTorch")
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per column and row")
    parser.add_argument("--only", help="comma-separated program names (prefixes), e.g. 'gp,mlp'")
    args = parser.parse_args(argv)

    from bench.environment import allocator_line, fix_allocator, set_thread_variables

    set_thread_variables(1)  # before numpy loads: one BLAS thread, as the main bench
    print(allocator_line(fix_allocator()))  # glibc's thresholds fixed, as the main bench
    import numpy as np

    from bench.cases.programs import PROGRAMS
    from bench.environment import limit_threads
    from bench.timing import first_call, measure

    limit_threads(1)
    if args.peers:
        from bench.peers import load_peers

        load_peers(1)  # JAX's XLA flags and torch's thread counts, as the main bench sets them
    failed = False
    names = ["ours", "hand", "autograd", "jax", "torch"]
    print("value and gradient of each loss; ratios are column time / ours (same run)")
    print(f"{'program':18} {'ours':>10} " + " ".join(f"{n:>16}" for n in names[1:]))
    for program in PROGRAMS:
        if args.only and not any(program.name.startswith(p) for p in args.only.split(",")):
            continue
        inputs = program.build(np.random.default_rng(0))
        columns = _columns(program, inputs, args.peers)
        reference = None
        usable = {}
        for name, run in columns.items():
            try:
                _, result = first_call(run)
                got = _gradient_arrays(result)
            except Exception as error:  # noqa: BLE001  (a peer that cannot run this program)
                print(f"  {program.name}: {name} failed: {type(error).__name__}: {error}")
                continue
            if reference is None:
                reference = got
            elif not all(
                np.allclose(g, r, rtol=1e-6, atol=1e-9 * np.max(np.abs(r)))
                for g, r in zip(got, reference, strict=True)
            ):
                print(f"  {program.name}: {name} DISAGREES with ours")
                failed = True
                continue
            usable[name] = run
        timings = measure(usable, args.budget)
        ours = timings["ours"].best
        cells = []
        for name in names[1:]:
            if name in timings:
                cells.append(f"{timings[name].best * 1e3:8.2f}ms {timings[name].best / ours:5.2f}x")
            else:
                cells.append(f"{'-':>16}")
        print(f"{program.name:18} {ours * 1e3:8.2f}ms " + " ".join(cells))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
