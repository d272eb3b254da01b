"""The rules inside PyTorch and JAX (``rules.interop``): the adapters against the peers' own.

Each case repeats a pullback case of its topic with the peers' columns computed through the
adapters, ``rules.interop.torch.linalg.<op>`` and ``rules.interop.jax.numpy.linalg.<op>``,
timed by the same peer runners (``torch.autograd.grad``; ``jax.vjp`` with the pullback under
``jit``). In one run, the row ``<op>.pullback`` holds the native peers' times and the row
``<op>-adapter.pullback`` the adapters', both against this project's pullback called
directly: at 10000 x (4x4) the two rows compare the adapters' backward with the peers' own, and
at n = 4 the adapter row shows the adapters' per-call overhead over a direct pullback call.
The adapters' results are checked given the rule's forward outputs (``peers_use_rule``): the
rule's batched ``eigh`` may choose other eigenvector signs than numpy's LAPACK call.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from bench.case import Case, Size
from bench.cases import cholesky, eigh

__all__ = ["CASES"]

_SIZES = (Size(4), Size(4, batch=10000))


def _via_adapters(case: Case) -> Case:
    def torch_version(torch: Any) -> Any:
        return getattr(importlib.import_module("rules.interop.torch.linalg"), case.op)

    def jax_version(jax: Any) -> Any:
        return getattr(importlib.import_module("rules.interop.jax.numpy.linalg"), case.op)

    return dataclasses.replace(
        case,
        op=f"{case.op}-adapter",
        sizes=_SIZES,
        jax=jax_version,
        torch=torch_version,
        peers_use_rule=True,
    )


CASES = [
    _via_adapters(case)
    for case in (*cholesky.CASES, *eigh.CASES)
    if case.kind == "pullback" and case.op in ("cholesky", "eigh")
]
