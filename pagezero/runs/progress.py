"""Progress of a long run on stderr, lines or a tqdm bar (docs/measuring.rst, "Progress")."""

from __future__ import annotations

import math
import sys
import time
from typing import IO, Any

__all__ = ["Progress", "current", "format_duration", "run_finished"]

# Notes and points (a sweep's cells) print at most one line per NOTE_INTERVAL_S seconds: a
# sweep of a thousand 10 ms points is a line every few seconds, not a thousand lines.
NOTE_INTERVAL_S = 10.0

_ambient: list[Progress] = []


def format_duration(seconds: float) -> str:
    """A duration for people: "8 s", "2 min 05 s", "1 h 04 min"."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Progress:
    """Where a long run stands, a line per step; in a ``with`` block, the ambient one (for runs).

    Parameters
    ----------
    what : str
        What runs, the head of every line: ``"pagezero report"``.
    total : float
        The work to do, in the caller's units: steps, runs, points, reference seconds.
    stream : file, optional
        Where the lines go (default: ``sys.stderr``).
    counts_runs : bool
        Each run ending in the block (run_finished()) is a step of one unit; else a note.
    seconds_per_unit : float or None
        The pace assumed before the first step ends (None: time left unknown till then).
    terminal : bool or None
        A tqdm bar (True) or plain lines (False); None: a bar where `stream` is a terminal.
    """

    def __init__(
        self,
        what: str,
        total: float,
        stream: IO[str] | None = None,
        counts_runs: bool = False,
        seconds_per_unit: float | None = None,
        terminal: bool | None = None,
    ) -> None:
        self.what = what
        self.total = float(total)
        self.stream = stream if stream is not None else sys.stderr
        self.counts_runs = counts_runs
        self.done = 0.0
        self.under_way: str | None = None  # the step begun (begin()), which notes name
        self._prior = seconds_per_unit
        self._step_units = 0.0  # the units of the step begun, 0 when none is
        self._start = self._last_step = time.monotonic()
        self._last_line = -math.inf
        self.lines: list[str] = []  # every line shown, for the caller's record
        if terminal is None:
            isatty = getattr(self.stream, "isatty", None)
            terminal = bool(isatty and isatty())
        # Drawn at the first step or note: a line the caller prints to the stream before
        # (advise's opening line) would otherwise land on the bar's.
        self._terminal = terminal
        self._bar: Any = None

    def __enter__(self) -> Progress:
        _ambient.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if _ambient and _ambient[-1] is self:
            _ambient.pop()
        self.close()

    @property
    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self._start

    def left(self) -> tuple[float, bool] | None:
        """(seconds to go, whether the step under way is past its share), or None without a pace."""
        now = time.monotonic()
        pace = (self._last_step - self._start) / self.done if self.done > 0 else self._prior
        if pace is None:
            return None
        units = self._step_units or min(1.0, self.total - self.done)
        this = pace * units - (now - self._last_step)
        rest = pace * (self.total - self.done - units)
        return rest + max(0.0, this), this < 0

    def line(self, text: str) -> str:
        """`text` as a progress line: what runs, the step, the time so far and left."""
        left = self.left()
        if self.done >= self.total:
            when = "finishing"
        elif left is None:
            when = "time left unknown yet"
        elif left[1]:
            then = f", then about {format_duration(left[0])}" if left[0] >= 1 else ""
            when = f"this step is past its estimate{then}"
        else:
            when = f"about {format_duration(left[0])} left"
        return f"{self.what}: {text}; {format_duration(self.elapsed)} so far, {when}"

    def begin(self, name: str, units: float = 1.0) -> None:
        """A step of `units` starts: the notes until it ends are its."""
        self.under_way, self._step_units = name, min(units, self.total - self.done)

    def reestimate(self, left: float) -> None:
        """The work still to do is `left` units from now on (a caller that knows better)."""
        self.total = self.done + left
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def say(self, text: str) -> None:
        """`text` on its own line, as it is (an opening line, a reservation)."""
        self._show(f"{self.what}: {text}")

    def step(self, text: str, units: float = 1.0) -> None:
        """A step ended, `units` of the work: its line, always."""
        self.under_way, self._step_units = None, 0.0
        self._advance(units)
        self._show(self.line(text))

    def tick(self, text: str, units: float = 1.0) -> None:
        """A small part ended (a sweep's point): its line when one is due."""
        self._advance(units)
        self.note(text)

    def note(self, text: str) -> None:
        """Something inside the current step ended (a run of a study): a line when due."""
        if self.under_way:
            text = f"{self.under_way}: {text}"
        if self._drawn() is not None:
            self._bar.set_postfix_str(text)
        elif time.monotonic() - self._last_line >= NOTE_INTERVAL_S or self.done >= self.total:
            self._show(self.line(text))

    def close(self) -> None:
        """Take the bar off the terminal (plain lines stay as printed)."""
        if self._bar is not None:
            self._bar.close()
        self._bar, self._terminal = None, False

    def _drawn(self) -> Any:
        """The tqdm bar, drawn now if it is due and not yet shown (None: plain lines)."""
        if self._terminal and self._bar is None:
            from tqdm import tqdm

            class Bar(tqdm):  # type: ignore[type-arg]  # generic in its stub only: tqdm[Any] fails at runtime
                # No monitor thread: tqdm starts one even for a disabled bar and leaves it running.
                monitor_interval = 0

            fmt = "{desc}: {percentage:3.0f}%|{bar}| {postfix} [{elapsed}<{remaining}]"
            self._bar = Bar(total=self.total, desc=self.what, file=self.stream, bar_format=fmt)
            self._bar.leave, self._bar.n = False, self.done
        return self._bar

    def _advance(self, units: float) -> None:
        self.done = min(self.total, self.done + units)
        self._last_step = time.monotonic()
        if self._drawn() is not None:
            self._bar.n = self.done
            self._bar.refresh()

    def _show(self, line: str) -> None:
        self.lines.append(line)
        self._last_line = time.monotonic()
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)


def current() -> Progress | None:
    """The ambient Progress (the innermost `with Progress(...)` block), or None."""
    return _ambient[-1] if _ambient else None


def shown(progress: Progress | bool | None, what: str, total: float) -> Progress | None:
    """The Progress a sweep advances itself, from its `progress` (as sweep() takes it)."""
    if isinstance(progress, Progress):
        return progress
    if progress is None:
        if current() is not None or not sys.stderr.isatty():
            return None
        return Progress(what, total, terminal=True)
    return Progress(what, total) if progress else None


def run_finished(text: str) -> None:
    """A run ended: a step of an ambient Progress that counts runs, else a note of one."""
    p = current()
    if p is not None:
        (p.step if p.counts_runs else p.note)(text)


class NoProgress(Progress):
    """A Progress that shows nothing and is no ambient one: for a caller asked for no lines."""

    def __init__(self) -> None:
        super().__init__("", 0, terminal=False)

    def __enter__(self) -> Progress:
        return self

    def _show(self, line: str) -> None:
        pass
