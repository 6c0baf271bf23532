"""Progress of a sweep: a live bar on a terminal, periodic lines in job logs.

``ray job submit`` captures the driver's output into a log, where a bar
redrawn with carriage returns would be unreadable; there a full line is
written every ``interval_s`` instead. The ETA weighs units by their
estimated cost, because a sweep runs its most expensive units first and a
plain units-per-second rate would promise far too long an ETA at the start
and far too short one at the end.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Optional, TextIO


@dataclass(frozen=True)
class Progress:
    """A snapshot of a running sweep (units are (experiment, config, seed) runs)."""

    done: int
    failed: int
    total: int
    elapsed_s: float
    done_cost: float
    total_cost: float

    @property
    def rate_per_s(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> Optional[float]:
        """Seconds left, from the share of estimated cost done; None until known."""
        if self.done >= self.total:
            return 0.0
        if self.done_cost <= 0 or self.elapsed_s <= 0:
            return None
        remaining_cost = max(0.0, self.total_cost - self.done_cost)
        return self.elapsed_s * remaining_cost / self.done_cost


def format_duration(seconds: Optional[float]) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def format_line(progress: Progress) -> str:
    """One self-contained log line."""
    percent = 100.0 * progress.done / progress.total if progress.total else 100.0
    return (f"progress: {progress.done}/{progress.total} done ({percent:.1f}%), {progress.failed} failed, "
            f"{progress.rate_per_s:.1f} runs/s, elapsed {format_duration(progress.elapsed_s)}, "
            f"ETA {format_duration(progress.eta_s)}")


def format_bar(progress: Progress, width: int = 30) -> str:
    """A one-line bar for a terminal."""
    share = progress.done / progress.total if progress.total else 1.0
    filled = int(round(share * width))
    return (f"[{'#' * filled}{'.' * (width - filled)}] {progress.done}/{progress.total} "
            f"failed {progress.failed}  {progress.rate_per_s:.1f}/s  ETA {format_duration(progress.eta_s)}")


class ProgressPrinter:
    """Writes progress to ``stream``: a live bar when it is a terminal, else lines.

    Args:
        stream: where to write (default: stderr).
        live: redraw one line in place; default: whether ``stream`` is a terminal.
        interval_s: seconds between log lines when not live.
    """

    def __init__(self, stream: Optional[TextIO] = None, live: Optional[bool] = None, interval_s: float = 15.0):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.interval_s = interval_s
        self._last_write = float("-inf")
        self._bar_shown = False

    def update(self, progress: Progress, force: bool = False) -> None:
        now = time.monotonic()
        if self.live:
            if force or now - self._last_write >= 0.2:
                self.stream.write("\r\033[K" + format_bar(progress))
                self.stream.flush()
                self._bar_shown = True
                self._last_write = now
        elif force or now - self._last_write >= self.interval_s:
            self.stream.write(format_line(progress) + "\n")
            self.stream.flush()
            self._last_write = now

    def message(self, text: str) -> None:
        """A line of its own (e.g. a failure), without mangling the bar."""
        if self._bar_shown:
            self.stream.write("\r\033[K")
            self._bar_shown = False
            self._last_write = float("-inf")  # redraw the bar at the next update
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._bar_shown:
            self.stream.write("\n")
            self.stream.flush()
            self._bar_shown = False
