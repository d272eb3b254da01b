"""Every benchmark case, one file per rule topic; :func:`select` picks cases and sizes.

Adding an operation: write its cases in the topic file (``CASES = [pullback_case(...), ...]``,
see :mod:`bench.case`), and for a new topic file, add it to ``_TOPICS`` below.
"""

from __future__ import annotations

from collections.abc import Iterable

from bench.case import QUICK_SIZES, SIZES, Case, Size
from bench.cases import (
    adapters,
    cholesky,
    determinant,
    eigh,
    expm,
    inverse,
    lu,
    products,
    qr,
    solve,
    svd,
    triangular,
)

__all__ = ["CASES", "operation_names", "select"]

_TOPICS = (
    products,
    solve,
    triangular,
    inverse,
    determinant,
    cholesky,
    expm,
    eigh,
    svd,
    qr,
    lu,
    adapters,
)

CASES: tuple[Case, ...] = tuple(case for topic in _TOPICS for case in topic.CASES)
"""All cases, in table order: by topic, then as their file lists them."""


def operation_names(cases: Iterable[Case] = CASES) -> list[str]:
    """The names ``--ops`` accepts: each operation (``cholesky``) and each case (``cholesky.pullback``)."""
    names: dict[str, None] = {}
    for case in cases:
        names[case.op] = None
    for case in cases:
        names[case.name] = None
    return list(names)


def select(
    ops: Iterable[str] | None = None, sizes: Iterable[str] | None = None, *, full: bool = False
) -> list[tuple[Case, Size]]:
    """The ``(case, size)`` rows to run, in table order.

    ``ops``: operation or case names (all when ``None``). ``sizes``: size labels; by default the
    quick set, or every size with ``full``. Unknown names raise ``ValueError`` listing the valid
    ones.
    """
    cases = list(CASES)
    if ops is not None:
        wanted = list(ops)
        unknown = [name for name in wanted if name not in operation_names()]
        if unknown:
            raise ValueError(
                f"unknown operation(s) {', '.join(unknown)}; valid: {', '.join(operation_names())}"
            )
        cases = [c for c in cases if c.op in wanted or c.name in wanted]
    all_labels = [s.label for s in SIZES]
    if sizes is not None:
        labels = list(sizes)
        unknown = [label for label in labels if label not in all_labels]
        if unknown:
            raise ValueError(
                f"unknown size(s) {', '.join(unknown)}; valid: {', '.join(all_labels)}"
            )
    else:
        labels = all_labels if full else list(QUICK_SIZES)
    return [(case, size) for case in cases for size in case.sizes if size.label in labels]
