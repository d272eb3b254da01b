"""A dependency-free progress bar on stderr: redrawn in place on a terminal, one line per step otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """``Progress(total)``; ``step(label)`` before each of ``total`` steps, ``close()`` after."""

    WIDTH = 24

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self.stream = sys.stderr if stream is None else stream
        self.tty = self.stream.isatty()
        self.start = time.perf_counter()

    def step(self, label: str) -> None:
        """Show that step ``done + 1`` (``label``) is starting."""
        self._draw(label)
        self.done += 1

    def close(self) -> None:
        """Show the finished bar and end its line."""
        self._draw("done")
        if self.tty:
            self.stream.write("\n")
        self.stream.flush()

    def _draw(self, label: str) -> None:
        filled = self.WIDTH * self.done // max(self.total, 1)
        elapsed = time.perf_counter() - self.start
        text = (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} "
            f"{elapsed:5.0f} s  {label}"
        )
        if self.tty:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
