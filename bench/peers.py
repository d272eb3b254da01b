"""JAX and PyTorch as peers: loaded lazily, thread counts fixed, runners built from a case.

A case names the peer's version of its function (``jax=lambda jax: jax.numpy.linalg.cholesky``);
:class:`Peer` turns that into a timed runner the same way for every case:

* pullback, forward outputs given (like ours): JAX ``y, vjp = jax.vjp(f, *args)`` once, then
  ``jax.jit(lambda vjp, g: vjp(g))`` (the residuals are arguments of the jitted function);
  PyTorch ``y = f(*args)`` once, then ``torch.autograd.grad(y, args, g, retain_graph=True)``.
* pushforward, primal and tangent together (like ``frule``): ``jax.jit(jax.jvp)`` and
  ``torch.func.jvp``.
* the whole call of a pullback case, forward and backward (like ``rrule`` plus its pullback,
  :meth:`Peer.total_runner`): JAX ``jax.jit(lambda x, g: jax.vjp(f, *x)[1](g))``; PyTorch
  ``y = f(*args)`` on fresh leaf tensors, then ``torch.autograd.grad(y, args, g)``.

Both peers run in float64 (``jax_enable_x64``). Threads: PyTorch through
``torch.set_num_threads``; JAX through ``XLA_FLAGS`` set before jax is imported
(``--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1`` for one thread; with more
threads XLA keeps its default). These flags do not bound XLA's intra-op pool, which has one
thread per usable CPU and runs batched LAPACK calls in parallel (JAX 0.10.2: 14 ms wall and
20 ms CPU for ``eigh`` of a 1000 x (16x16) stack on 2 cores, 19.6 ms pinned to one), so a
one-thread run pins the process first (:func:`bench.environment.pin_one_cpu`). Runners return
results only after the computation finished (``block_until_ready``).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.case import Case, Inputs

__all__ = ["PEER_NAMES", "Peer", "Runner", "load_peers"]

PEER_NAMES = ("jax", "torch")

Runner = tuple[Callable[[], Any], Callable[[Any], tuple[np.ndarray, ...]]]
"""``(run, fetch)``: ``run()`` computes (synchronously); ``fetch(run())`` gives numpy arrays."""

_XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


@dataclass
class Peer:
    """A loaded peer library: ``name`` (``"jax"`` or ``"torch"``), its module and settings."""

    name: str
    module: Any
    version: str
    threads: str

    def report(self) -> dict[str, Any]:
        """JSON-ready: name, version, thread setting and a one-line status."""
        return {
            "name": self.name,
            "version": self.version,
            "threads": self.threads,
            "status": f"{self.version}, threads: {self.threads}",
        }

    def supports(self, case: Case) -> bool:
        """Whether ``case`` names a version of its function for this peer."""
        return getattr(case, self.name) is not None

    def runner(self, case: Case, inputs: Inputs) -> Runner:
        """The timed runner of ``case`` on ``inputs`` (see the module docstring)."""
        function = getattr(case, self.name)(self.module)
        if case.kwargs:
            function = functools.partial(function, **case.kwargs)
        build = {
            ("jax", "pullback"): _jax_pullback,
            ("jax", "pushforward"): _jax_pushforward,
            ("torch", "pullback"): _torch_pullback,
            ("torch", "pushforward"): _torch_pushforward,
        }[self.name, case.kind]
        return build(self.module, function, inputs)

    def total_runner(self, case: Case, inputs: Inputs) -> Runner | None:
        """The whole call (forward and backward) of a pullback case; ``None`` for pushforwards."""
        if case.kind != "pullback":
            return None
        function = getattr(case, self.name)(self.module)
        if case.kwargs:
            function = functools.partial(function, **case.kwargs)
        build = _jax_total if self.name == "jax" else _torch_total
        return build(self.module, function, inputs)


def load_peers(threads: int) -> tuple[list[Peer], list[dict[str, Any]]]:
    """Import the peers that are installed, with their threads fixed.

    Returns the loaded peers and one report per peer (loaded or not, with the reason), for the
    environment section.
    """
    peers, reports = [], []
    for name, load in (("jax", _load_jax), ("torch", _load_torch)):
        try:
            peer = load(threads)
        except ImportError as error:
            reports.append(
                {
                    "name": name,
                    "version": None,
                    "threads": None,
                    "status": f"not installed ({error}); "
                    "its column is left out (pip install '.[peers]')",
                }
            )
            continue
        peers.append(peer)
        reports.append(peer.report())
    return peers, reports


def _load_jax(threads: int) -> Peer:
    if threads == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        if "xla_cpu_multi_thread_eigen" not in flags:
            os.environ["XLA_FLAGS"] = f"{flags} {_XLA_ONE_THREAD}".strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy
    import jax.scipy.linalg  # cases name e.g. jax.scipy.linalg.expm

    jax.config.update("jax_enable_x64", True)
    setting = f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}" if threads == 1 else "XLA default"
    return Peer("jax", jax, jax.__version__, f"{setting}, backend {jax.default_backend()}")


def _load_torch(threads: int) -> Peer:
    import torch

    torch.set_num_threads(threads)
    with contextlib.suppress(RuntimeError):  # settable only before the first parallel work
        torch.set_num_interop_threads(threads)
    setting = f"{torch.get_num_threads()} intra-op, {torch.get_num_interop_threads()} inter-op"
    return Peer("torch", torch, torch.__version__.split("+")[0], setting)


def _jax_fetch(out: Any) -> tuple[np.ndarray, ...]:
    import jax

    return tuple(np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(out))


def _jax_pullback(jax: Any, function: Callable[..., Any], inputs: Inputs) -> Runner:
    primals = tuple(jax.numpy.asarray(a) for a in inputs.args)
    y, vjp = jax.vjp(function, *primals)
    # Multi-output functions: the tuple cotangent takes the output's structure (EighResult, ...).
    parts = inputs.cotangent if isinstance(inputs.cotangent, tuple) else (inputs.cotangent,)
    cotangent = jax.tree_util.tree_unflatten(
        jax.tree_util.tree_structure(y), [jax.numpy.asarray(c) for c in parts]
    )
    pull = jax.jit(lambda vjp, g: vjp(g))

    def run() -> Any:
        return jax.block_until_ready(pull(vjp, cotangent))

    return run, _jax_fetch


def _jax_total(jax: Any, function: Callable[..., Any], inputs: Inputs) -> Runner:
    primals = tuple(jax.numpy.asarray(a) for a in inputs.args)
    y = jax.eval_shape(function, *primals)
    parts = inputs.cotangent if isinstance(inputs.cotangent, tuple) else (inputs.cotangent,)
    cotangent = jax.tree_util.tree_unflatten(
        jax.tree_util.tree_structure(y), [jax.numpy.asarray(c) for c in parts]
    )
    whole = jax.jit(lambda p, g: jax.vjp(function, *p)[1](g))

    def run() -> Any:
        return jax.block_until_ready(whole(primals, cotangent))

    return run, _jax_fetch


def _jax_pushforward(jax: Any, function: Callable[..., Any], inputs: Inputs) -> Runner:
    primals = tuple(jax.numpy.asarray(a) for a in inputs.args)
    tangents = tuple(jax.numpy.asarray(t) for t in inputs.tangents)
    push = jax.jit(lambda p, t: jax.jvp(function, p, t))

    def run() -> Any:
        return jax.block_until_ready(push(primals, tangents))

    return run, _jax_fetch


def _torch_fetch(out: Any) -> tuple[np.ndarray, ...]:
    if isinstance(out, tuple | list):
        return tuple(a for o in out for a in _torch_fetch(o))
    # force=True: torch.func.jvp gives the tangent of a real slogdet's sign as a ZeroTensor,
    # which .numpy() refuses (not timed: fetch runs once, for the agreement check)
    return (out.numpy(force=True),)


def _torch_pullback(torch: Any, function: Callable[..., Any], inputs: Inputs) -> Runner:
    primals = tuple(torch.from_numpy(np.array(a)).requires_grad_(True) for a in inputs.args)
    y = function(*primals)
    # Multi-output functions: one cotangent per output, in order.
    outputs = tuple(y) if isinstance(y, tuple) else (y,)
    cotangents = inputs.cotangent if isinstance(inputs.cotangent, tuple) else (inputs.cotangent,)
    grads = tuple(torch.from_numpy(np.array(c)) for c in cotangents)

    def run() -> Any:
        return torch.autograd.grad(outputs, primals, grad_outputs=grads, retain_graph=True)

    return run, _torch_fetch


def _torch_total(torch: Any, function: Callable[..., Any], inputs: Inputs) -> Runner:
    base = tuple(torch.from_numpy(np.array(a)) for a in inputs.args)
    cotangents = inputs.cotangent if isinstance(inputs.cotangent, tuple) else (inputs.cotangent,)
    grads = tuple(torch.from_numpy(np.array(c)) for c in cotangents)

    def run() -> Any:
        primals = tuple(b.detach().requires_grad_(True) for b in base)
        y = function(*primals)
        outputs = tuple(y) if isinstance(y, tuple) else (y,)
        return torch.autograd.grad(outputs, primals, grad_outputs=grads)

    return run, _torch_fetch


def _torch_pushforward(torch: Any, function: Callable[..., Any], inputs: Inputs) -> Runner:
    primals = tuple(torch.from_numpy(np.array(a)) for a in inputs.args)
    tangents = tuple(torch.from_numpy(np.array(t)) for t in inputs.tangents)

    def run() -> Any:
        return torch.func.jvp(function, primals, tangents)

    return run, _torch_fetch
