"""``--plot PATH``: a PNG bar chart of the speed-ups over plain numpy (matplotlib, ``plot`` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.harness import Row

__all__ = ["check_matplotlib", "plot_speedups"]


def check_matplotlib() -> str | None:
    """``None`` when matplotlib can be imported, else a message saying how to install it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "--plot needs matplotlib: python -m pip install '.[plot]'"
    return None


def plot_speedups(rows: Sequence[Row], path: str | Path, peer_names: Sequence[str] = ()) -> None:
    """Horizontal bars, log scale: numpy time / each contender's time, one group per row.

    Bars right of the 1x line are faster than the numpy formula. Rows without timings
    (FAILED/ERROR) are left out.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [row for row in rows if row.status == "ok"]
    contenders = ["ours", *peer_names]
    labels = {"ours": "this project", "jax": "JAX", "torch": "PyTorch"}
    height = 0.8 / len(contenders)
    fig, ax = plt.subplots(figsize=(8, 1.5 + 0.45 * len(timed) * max(1, len(contenders) / 2)))
    for k, name in enumerate(contenders):
        ys, xs = [], []
        for i, row in enumerate(timed):
            best, numpy_best = row.best(name), row.best("numpy")
            if best and numpy_best:
                ys.append(i + (k - (len(contenders) - 1) / 2) * height)
                xs.append(numpy_best / best)
        ax.barh(ys, xs, height=height, label=labels.get(name, name))
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yticks(range(len(timed)), [f"{r.case.name} {r.size.label}" for r in timed])
    ax.invert_yaxis()
    ax.set_xlabel("speed-up over the plain numpy/scipy formula (numpy time / time, log scale)")
    ax.set_title("Pullbacks and pushforwards, float64, same-run ratios")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
