"""What a benchmark case is: one rule (a pullback or a pushforward) declared as data.

A :class:`Case` names the primal function, how to build inputs of a :class:`Size`, and the plain
numpy/scipy formula that computes the same derivative; the harness derives everything else
(the public ``rrule``/``frule`` call, the forward-only timing, the agreement check, the peers'
versions from a one-line function lookup). Topic files in :mod:`bench.cases` hold lists of
cases built with :func:`pullback_case` and :func:`pushforward_case`.

What is compared (the table's legend repeats it):

* pullback cases: ``y, pullback = rrule(f, *args)`` is called once, then ``pullback(y_bar)`` is
  timed, with the forward outputs given, against the reference formula given the same forward
  outputs (``Inputs.output``). ``rrule`` and the pullback together are timed too.
* pushforward cases: the whole ``frule((NoTangent(), *tangents), f, *args)`` call, which
  computes the primal and its tangent, against a reference that computes both as well.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

import numpy as np

__all__ = [
    "QUICK_SIZES",
    "SIZES",
    "Case",
    "Inputs",
    "Size",
    "pullback_case",
    "pushforward_case",
]


@dataclass(frozen=True)
class Size:
    """A square matrix order ``n``, alone (``batch is None``) or as a stack of ``batch`` matrices."""

    n: int
    batch: int | None = None

    @property
    def label(self) -> str:
        """``"256"`` for one matrix, ``"10000x4"`` for a stack of 10000 4x4 matrices."""
        return str(self.n) if self.batch is None else f"{self.batch}x{self.n}"

    @property
    def shape(self) -> tuple[int, ...]:
        """The array shape of one square operand: ``(n, n)`` or ``(batch, n, n)``."""
        return (self.n, self.n) if self.batch is None else (self.batch, self.n, self.n)


SIZES: tuple[Size, ...] = (
    Size(4),
    Size(16),
    Size(256),
    Size(1024),
    Size(4, batch=10000),
    Size(16, batch=1000),
)
"""Every size of the issue: single n = 4, 16, 256, 1024; stacks 10000 x (4x4), 1000 x (16x16)."""

QUICK_SIZES: tuple[str, ...] = ("4", "10000x4", "1000x16", "256")
"""Labels of the default quick set: small, stacked and large, without the slow n = 1024."""


@dataclass
class Inputs:
    """The operands of one timed call; builders fill ``args`` and the (co)tangents.

    ``output`` is the forward output ``f(*args, **kwargs)``, set by the harness: pullback
    references read it (the pullback is timed with the forward outputs given). ``saved`` is what
    a user's forward pass keeps beyond that output, when the reference needs more than the
    function returns (the eigenvectors behind ``eigvalsh``); the builder fills it, untimed.
    """

    args: tuple[Any, ...]
    cotangent: Any = None
    tangents: tuple[Any, ...] = ()
    output: Any = None
    saved: Any = None


InputBuilder = Callable[[Size, np.random.Generator], Inputs]
Reference = Callable[[Inputs], tuple[np.ndarray, ...]]
PeerFunction = Callable[[Any], Callable[..., Any]]


@dataclass(frozen=True)
class Case:
    """One timed rule: ``op``'s pullback or pushforward, over a set of sizes.

    Attributes
    ----------
    op
        The operation's short name (``"cholesky"``); ``--ops`` selects by it.
    kind
        ``"pullback"`` (through ``rrule``) or ``"pushforward"`` (through ``frule``).
    topic
        The rule file it belongs to (``"cholesky"`` for ``rules/linalg/cholesky.py``).
    function
        The primal function whose rule is looked up and whose call is the forward timing.
    inputs
        ``inputs(size, rng) -> Inputs``: primal arguments and a cotangent (pullback) or one
        tangent per argument (pushforward).
    reference
        The plain numpy/scipy formula, written as a user would (stacks through broadcasting):
        for a pullback, one cotangent per argument from ``Inputs.output`` and
        ``Inputs.cotangent``; for a pushforward, the primal output and its tangent.
    sizes
        The sizes this case runs at.
    kwargs
        Keyword arguments of ``function`` (never differentiated).
    jax, torch
        Given the ``jax`` (``torch``) module, the peer's version of ``function``, e.g.
        ``lambda jax: jax.numpy.linalg.cholesky``; ``None`` when the peer has none. The harness builds ``jax.vjp``/``jax.jvp`` under ``jit`` and
        ``torch.autograd.grad``/``torch.func.jvp`` from it.
    rtol
        Agreement tolerance: ``allclose(ours, reference, rtol, atol=rtol * max|reference|)``.
    align
        For pushforwards whose primal output has a gauge (the sign or phase of eigenvectors and
        singular vectors): ``align(result, reference)`` returns the flattened result moved to
        the reference's gauge before the comparison (the reference computes its own LAPACK
        forward; a kernel or a peer may fix the gauge otherwise). ``None``: compared as is.
    peer_totals_skipped
        ``(peer, size label)`` pairs whose whole call (forward and backward) is not timed, for
        a peer known to hang there (the case module says why); the pullback column still is.
    peers_use_rule
        The peers' versions call this project's rule (the ``rules.interop`` adapter rows): their
        results are checked against the reference given the rule's forward outputs, as ours
        are, since the rule's forward may fix the gauge of eigenvectors otherwise than LAPACK.
    """

    op: str
    kind: Literal["pullback", "pushforward"]
    topic: str
    function: Callable[..., Any]
    inputs: InputBuilder
    reference: Reference
    sizes: tuple[Size, ...] = SIZES
    kwargs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    jax: PeerFunction | None = None
    torch: PeerFunction | None = None
    rtol: float = 1e-7
    align: Callable[[tuple[np.ndarray, ...], tuple[np.ndarray, ...]], tuple[Any, ...]] | None = None
    peers_use_rule: bool = False
    peer_totals_skipped: frozenset[tuple[str, str]] = frozenset()

    @property
    def name(self) -> str:
        """``"<op>.<kind>"``, e.g. ``"cholesky.pullback"``."""
        return f"{self.op}.{self.kind}"

    def forward(self, inputs: Inputs) -> Any:
        """Run the primal function alone on ``inputs``."""
        return self.function(*inputs.args, **self.kwargs)


def pullback_case(op: str, topic: str, function: Callable[..., Any], **fields: Any) -> Case:
    """A :class:`Case` timing ``rrule(function, *args)``'s pullback; ``fields`` as in :class:`Case`."""
    return Case(op=op, kind="pullback", topic=topic, function=function, **fields)


def pushforward_case(op: str, topic: str, function: Callable[..., Any], **fields: Any) -> Case:
    """A :class:`Case` timing ``frule(tangents, function, *args)``; ``fields`` as in :class:`Case`."""
    return Case(op=op, kind="pushforward", topic=topic, function=function, **fields)
