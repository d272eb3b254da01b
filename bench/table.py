"""The comparison table printed by ``python -m bench``, with its legend and notes."""

from __future__ import annotations

from collections.abc import Sequence

from bench.harness import Row

__all__ = ["LEGEND", "format_ratio", "format_table", "format_time"]

LEGEND = """\
ours       pullback rows: the pullback returned by rrule(f, *args), forward outputs given;
           pushforward rows: the whole frule call (primal and tangent).
numpy      the same derivative by the plain numpy/scipy formula (stacks by broadcasting);
           pushforward rows include the forward, as frule does.
speed-up   numpy / ours, both timed in the same interleaved rounds.
A/A        (--noise) numpy / numpy timed again: the formula against itself in the same rounds,
           what a tie looks like in that row. A row is below the formula beyond noise (listed
           after the table) when ours over the formula in its best round exceeds the formula
           timed again over the formula in its worst round (for a tie whose R rounds are
           alike, a chance of 1 / C(2R, R)).
forward    f(*args) alone; ours/fwd = ours / forward.
first call this project's first call in this process minus its steady state: compilation on a
           cold Numba cache, loading from it on a warm one (never part of the timings).
rrule+pb   rrule(f, *args) and the pullback together: the user's whole call.
jax, torch jax.vjp under jit / torch.autograd.grad for pullbacks (forward outputs given),
           jit(jax.jvp) / torch.func.jvp for pushforwards; (Nx) = peer / ours.
jax+fwd,   pullback rows: the peer's whole call, forward and backward (jit(vjp) of the function;
torch+fwd  forward then torch.autograd.grad); (Nx) = peer / our rrule+pb.
Times are the best of the interleaved rounds (medians are in the JSON). Every row's result was
checked against the numpy formula before it was timed; a disagreement shows FAILED, not a time."""


def format_time(seconds: float | None) -> str:
    """``"2.41 us"``, ``"404 us"``, ``"26.0 ms"``, ``"1.23 s"``; ``"-"`` for ``None``."""
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{_three_digits(seconds / scale)} {unit}"
    return f"{_three_digits(seconds / 1e-9)} ns"


def _three_digits(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_ratio(ratio: float | None) -> str:
    """``"16.4x"``, ``"0.93x"``; ``"-"`` for ``None``."""
    return "-" if ratio is None else f"{_three_digits(ratio)}x"


def _peer_cell(row: Row, name: str) -> str:
    result = row.peers.get(name)
    if result is None:
        return "-"
    if result.status != "ok":
        return result.status
    return f"{format_time(row.best(name))} ({format_ratio(row.peer_ratio(name))})"


def _peer_total_cell(row: Row, name: str) -> str:
    seconds = row.best(f"{name}_total")
    if seconds is None:
        return "-"
    return f"{format_time(seconds)} ({format_ratio(row.peer_total_ratio(name))})"


def _cells(row: Row, peer_names: Sequence[str], noise: bool) -> list[str]:
    head = [row.case.name, row.size.label]
    if row.status != "ok":
        return head + [row.status] + ["-"] * (6 + int(noise) + 2 * len(peer_names))
    first = row.first_call()
    return [
        *head,
        format_time(row.best("ours")),
        format_time(row.best("numpy")),
        format_ratio(row.speedup),
        *([format_ratio(row.noise)] if noise else []),
        format_time(row.best("forward")),
        format_ratio(row.forward_ratio),
        "-" if first is None else f"{first:.2f} s",
        format_time(row.best("total")),
        *(_peer_cell(row, name) for name in peer_names),
        *(_peer_total_cell(row, name) for name in peer_names),
    ]


def format_table(rows: Sequence[Row], peer_names: Sequence[str] = ()) -> str:
    """The table, then a note for each FAILED/ERROR row and each peer that did not agree.

    When some row timed the formula twice (``--noise``), an ``A/A`` column follows the speed-up
    and the rows below the formula beyond that noise are listed.
    """
    noise = any(row.noise is not None for row in rows)
    header = [
        "operation",
        "size",
        "ours",
        "numpy",
        "speed-up",
        *(["A/A"] if noise else []),
        "forward",
        "ours/fwd",
        "first call",
        "rrule+pb",
        *peer_names,
        *(f"{name}+fwd" for name in peer_names),
    ]
    body = [_cells(row, peer_names, noise) for row in rows]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        parts = [
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in body)]
    notes = [
        f"{row.case.name} {row.size.label}: {row.status}: {row.message}"
        for row in rows
        if row.status != "ok"
    ]
    notes += [
        f"{row.case.name} {row.size.label}: {name} {result.status}: {result.message}"
        for row in rows
        for name, result in row.peers.items()
        if result.status not in ("ok", "n/a")
    ]
    if noise:
        below = [f"{row.case.name} {row.size.label}" for row in rows if row.below_beyond_noise]
        notes.append(
            "Below the formula beyond noise (ours/numpy in every round above numpy again/numpy in "
            "any round): " + (", ".join(below) if below else "none") + "."
        )
    if notes:
        out += ["", *notes]
    return "\n".join(out)
