r"""Rules of ``np.einsum`` with a subscripts string: any labels, repeated labels, ellipsis, broadcasting.

``y = einsum(s_1, ..., s_n -> s_y)`` is linear in each operand, so

* the pushforward sums one einsum per moving operand, with the operand replaced by its tangent;
* the cotangent of operand ``k`` contracts the output cotangent with the *conjugated* other
  operands (``einsum`` is holomorphic in each): :math:`\bar x_k = \operatorname{einsum}(s_y,
  s_{j \ne k} \to s_k)(\bar y, \overline{x_j})`.

The second step needs care where ``s_k`` is not a valid einsum output:

* a label repeated in ``s_k`` (``"ii"``, a diagonal or trace): the contraction is formed over the
  distinct labels and written onto the diagonal of a zero array;
* a label only in ``s_k`` (summed over by the forward pass): the cotangent is constant along it,
  so it is broadcast;
* a label of size 1 in ``x_k`` that broadcast against a larger size elsewhere: summed back.

The subscripts are first made explicit: ``...`` becomes fresh labels (right-aligned, as numpy
broadcasts them) and an implicit output (no ``->``) becomes numpy's (the broadcast labels, then
the labels that appear once, in ASCII order). The ``optimize=`` option is passed to the
pullback's and pushforward's contractions as well. The operand-list form
``einsum(a, [0, 1], b, [1, 2])`` has no rule (``rrule`` returns ``None``).

With several operands each cotangent is a ``Thunk``, computed only if used.

References
----------
The matrix-product rules of ChainRules.jl ``src/rulesets/Base/arraymath.jl`` generalised to
tensor contractions; reference notes ``chainrules-linalg-and-testutils.md`` section 1.3.1.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from rules.core.cotangents import as_array_cotangent
from rules.core.nesting import contiguous
from rules.core.options import refuse
from rules.core.registry import frule, rrule
from tangents import AbstractZero, NoTangent, ProjectTo, Thunk, ZeroTangent, unthunk

__all__: list[str] = []


def explicit_subscripts(subscripts: str, operands: tuple[Any, ...]) -> tuple[list[str], str]:
    """The input terms and output term of ``subscripts`` without ``...`` and with ``->``."""
    s = subscripts.replace(" ", "")
    inputs, arrow, output = s.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(
            f"einsum subscripts {subscripts!r} name {len(terms)} operands, got {len(operands)}"
        )
    widths = [
        np.ndim(x) - (len(t) - 3) if "..." in t else 0 for t, x in zip(terms, operands, strict=True)
    ]
    n_broadcast = max(widths, default=0)
    fresh = [c for c in string.ascii_letters if c not in s][:n_broadcast]
    terms = [
        t.replace("...", "".join(fresh[n_broadcast - w :]))
        for t, w in zip(terms, widths, strict=True)
    ]
    if arrow:
        output = output.replace("...", "".join(fresh))
    else:  # numpy's implicit output: broadcast labels, then labels seen once, in ASCII order
        labels = "".join(terms)
        once = sorted(c for c in set(labels) if labels.count(c) == 1 and c not in fresh)
        output = "".join(fresh) + "".join(once)
    return terms, output


def _distinct(term: str) -> str:
    """The labels of ``term`` in order of first appearance."""
    return "".join(dict.fromkeys(term))


def _operand_cotangent(
    k: int,
    terms: list[str],
    output: str,
    operands: tuple[Any, ...],
    g: Any,
    optimize: Any,
) -> np.ndarray:
    r""":math:`\bar x_k` (before projection); see the module docstring."""
    term, x = terms[k], operands[k]
    shape = np.shape(x)
    sizes = {c: shape[term.index(c)] for c in term}
    others = [np.conj(operands[j]) for j in range(len(operands)) if j != k]
    other_terms = [terms[j] for j in range(len(operands)) if j != k]
    seen = set("".join(other_terms) + output)
    distinct = _distinct(term)
    present = "".join(c for c in distinct if c in seen)
    spec = ",".join([*other_terms, output]) + "->" + present
    contracted = np.einsum(spec, *others, g, optimize=optimize)
    # Labels summed within x_k alone: the cotangent is constant along them.
    for axis, c in enumerate(distinct):
        if c not in seen:
            contracted = np.expand_dims(contracted, axis)
    # Labels where x_k had size 1 against a larger size elsewhere: sum the broadcast copies.
    stretched = tuple(
        i for i, c in enumerate(distinct) if sizes[c] == 1 and contracted.shape[i] != 1
    )
    if stretched:
        contracted = contracted.sum(axis=stretched, keepdims=True)
    contracted = np.broadcast_to(contracted, tuple(sizes[c] for c in distinct))
    if distinct == term:
        return contiguous(contracted)
    # A repeated label: write onto the diagonal of zeros (einsum's "ii->i" view is writable).
    x_bar = np.zeros(shape, dtype=contracted.dtype)
    np.einsum(f"{term}->{distinct}", x_bar)[...] = contracted
    return x_bar


@rrule.register(np.einsum)
def einsum_rrule(subscripts: Any, *operands: Any, **kwargs: Any) -> Any:
    r"""``y = einsum(subscripts, *operands)``: :math:`\bar x_k = \operatorname{einsum}(\bar y, \overline{x_{j \ne k}})`.

    The cotangent of ``subscripts`` is ``NoTangent()``; see the module docstring.
    """
    if not isinstance(subscripts, str):
        return None
    refuse("einsum", out=kwargs.get("out"))
    y = np.einsum(subscripts, *operands, **kwargs)
    terms, output = explicit_subscripts(subscripts, operands)
    optimize = kwargs.get("optimize", False)
    projectors = tuple(ProjectTo(x) for x in operands)

    def einsum_pullback(y_bar: Any) -> tuple[Any, ...]:
        g = as_array_cotangent(y_bar, "np.einsum's pullback")

        def cotangent(k: int) -> Any:
            return projectors[k](_operand_cotangent(k, terms, output, operands, g, optimize))

        if len(operands) == 1:
            return NoTangent(), NoTangent(), cotangent(0)
        lazy = tuple(Thunk(lambda k=k: cotangent(k)) for k in range(len(operands)))
        return (NoTangent(), NoTangent(), *lazy)

    return y, einsum_pullback


@frule.register(np.einsum)
def einsum_frule(tangents: tuple[Any, ...], subscripts: Any, *operands: Any, **kwargs: Any) -> Any:
    """``ẏ = sum_k einsum(subscripts, x_1, ..., ẋ_k, ..., x_n)``."""
    if not isinstance(subscripts, str):
        return None
    refuse("einsum", out=kwargs.get("out"))
    y = np.einsum(subscripts, *operands, **kwargs)
    terms, output = explicit_subscripts(subscripts, operands)
    spec = ",".join(terms) + "->" + output
    optimize = kwargs.get("optimize", False)
    y_dot: Any = ZeroTangent()
    for k, x_dot in enumerate(tangents[2:]):
        x_dot = unthunk(x_dot)
        if isinstance(x_dot, AbstractZero):
            continue
        moved = list(operands)
        moved[k] = as_array_cotangent(x_dot, "np.einsum's frule")
        y_dot = y_dot + np.einsum(spec, *moved, optimize=optimize)
    if isinstance(y_dot, AbstractZero):
        return y, ZeroTangent()
    return y, ProjectTo(y)(y_dot)
